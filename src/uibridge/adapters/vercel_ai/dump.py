"""`dump_messages`: a neutral history as the `UIMessage[]` a `useChat` client stores.

Layout (the inverse of `load.py`):

- each `SystemPromptPart` is a `system` message with one `text` part; each `UserPromptPart` a `user`
  message with `text` and `file` parts (binary content as a data URL);
- model responses are `assistant` messages, one `step-start` per response; responses separated only by
  requests of tool results share one message, as the client builds it from a multi-step stream;
- a tool call is one `tool-{name}` part (`dynamic-tool` for a call in the response's
  `uibridge_dynamic_tools`: a tool the UI does not know by name) merged with its result: `output-available`,
  `output-error` (a failed tool, or a tool-bound `RetryPromptPart`: `errorText` without the "Fix the errors"
  directive, the exact part kept in `resultProviderMetadata.uibridge.retry`), `output-denied`; a call still waiting is
  `input-available`, or `approval-requested` / `approval-responded` when the stream asked for an approval;
- a `RetryFeedbackPart` is a `system` message whose one `text` part holds `render_retry_feedback(part)` and the marker
  `providerMetadata.uibridge.retry_feedback` (`uibridge.core.feedback`); a legacy tool-less `RetryPromptPart` (the
  older form of that feedback) the same, its `model_response()` the text and its marker's `part_kind` `retry-prompt`.

Every part the server authors carries its signature (`keyring.sign_part`) as `sig` in its `uibridge`
metadata (see `provider_metadata.py`), so the history verifies when a client sends it back. Parts a client
wrote without uibridge's metadata (a `bare` step or result, kept so in the sidecar) stay unsigned: dumping
them again gives the client's parts back, and signing them would vouch for what the client wrote.

Ids are the ones a loaded message came with, else derived from the message's position and parts, so the
same history always dumps to the same bytes. What else rides along is described in `provider_metadata.py`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from typing_extensions import TypeIs

from ...core.events import STATE_METADATA_KEY, dynamic_calls
from ...core.factories import new_list
from ...core.feedback import retry_text
from ...core.media import MediaUrl, kind_name, media_kind
from ...core.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    OpaqueContent,
    OpaquePart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from ...core.metadata import answered_by, app_metadata, custom_data_items
from ...core.provenance import Keyring
from ...core.trusted import construct
from ._message_info import message_metadata, part_record, state_part, state_placement
from ._native_tools import native_tool_part
from ._provider_metadata import (
    denial_text,
    derived_message_id,
    feedback_marker,
    iso,
    jsonable,
    part_metadata,
    sidecar,
    tool_call_metadata,
    tool_input,
    tool_result,
    wrap_metadata,
)
from ._sdk_versions import SdkVersion, downgrade_messages
from ._sources import source_parts
from ._ui_fields import kept_ui_fields, with_ui_fields
from .types import (
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    ProviderMetadata,
    ReasoningUIPart,
    SteeringMessageUIPart,
    StepStartUIPart,
    TextUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessage,
    UIMessagePart,
    UIMessagePartAdapter,
)

# ----------------------------------------------------------------------------------------------------
# The parts `dump_messages` builds: a user prompt's content, tool calls with their results or approval, and
# the UI-only parts a client's step held (custom data, kept `data-*` and other parts), in their places.


def with_request(fields: dict[str, Any], request_info: dict[str, Any] | None) -> dict[str, Any]:
    if request_info is not None:
        fields['request'] = request_info
    return fields


def user_content_parts(part: UserPromptPart, request_info: dict[str, Any] | None, *, bare: bool) -> list[UIMessagePart]:
    first: dict[str, Any] = with_request({} if bare else {'timestamp': iso(part.timestamp)}, request_info)
    content = part.content
    if isinstance(content, str):
        return [construct(TextUIPart, {'text': content, 'provider_metadata': wrap_metadata(first)})]
    # Kept in history, shown nowhere: opaque content, and a provider's file handle that came from no UI file part
    # (a UI file part needs a URL).
    content = [
        item
        for item in content
        if not isinstance(item, OpaqueContent)
        and (not isinstance(item, UploadedFile) or uploaded_file_part(item, {}) is not None)
    ]
    # A list that load would read back as a plain string (one text item), or as nothing, says so.
    if not content or (len(content) == 1 and isinstance(content[0], str)):
        first['list'] = True
    if not content:
        return [construct(TextUIPart, {'text': '', 'provider_metadata': wrap_metadata({**first, 'empty': True})})]
    parts: list[UIMessagePart] = []
    for item in content:
        fields: dict[str, Any] = first if not parts else {}
        parts.append(_dump_user_item(item, fields))
    return parts


def media_type_of(item: MediaUrl) -> str:
    """The part's media type; without one, its kind name (`application` for a document): a UI file needs one."""
    if item.media_type:
        return item.media_type
    name = kind_name(item)
    return 'application' if name == 'document' else name


def uploaded_file_part(item: UploadedFile, fields: dict[str, Any]) -> FileUIPart | None:
    """The UI file part a provider file came from (`_load_parts.user_file`): its `url`, and as its
    `providerReference` the whole reference it kept, else its own provider and id. `None` for a file no UI part
    gave (no `url` kept, or no media type): a UI file part needs both."""
    extra = item.model_extra or {}
    url, kept = extra.get('url'), extra.get('provider_reference')
    if not isinstance(url, str) or item.media_type is None:
        return None
    if isinstance(kept, dict) and all(isinstance(v, str) for v in cast('dict[Any, Any]', kept).values()):
        reference = cast('dict[str, str]', kept)
    elif item.provider_name is not None:
        reference = {item.provider_name: item.file_id}
    else:
        return None
    values: dict[str, Any] = {'media_type': item.media_type, 'url': url, 'provider_reference': reference}
    if item.filename is not None:
        values['filename'] = item.filename
    return construct(FileUIPart, {**values, 'provider_metadata': wrap_metadata(fields)})


def _dump_user_item(
    item: str | ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent | UploadedFile, fields: dict[str, Any]
) -> UIMessagePart:
    if isinstance(item, str):
        return construct(TextUIPart, {'text': item, 'provider_metadata': wrap_metadata(fields)})
    if isinstance(item, UploadedFile):
        part = uploaded_file_part(item, fields)
        assert part is not None  # `user_content_parts` keeps no other
        return part
    named = {'filename': item.filename} if item.filename is not None else {}
    if isinstance(item, BinaryContent):
        return construct(
            FileUIPart,
            {'media_type': item.media_type, 'url': item.data_url, **named, 'provider_metadata': wrap_metadata(fields)},
        )
    media_type = media_type_of(item)
    if item.media_type is None:
        fields = {**fields, 'media_type': None}
    if media_kind(media_type) != kind_name(item):
        fields = {**fields, 'kind': item.kind}
    return construct(
        FileUIPart, {'media_type': media_type, 'url': item.url, **named, 'provider_metadata': wrap_metadata(fields)}
    )


def ui_only_part(data: Any) -> UIMessagePart | None:
    """A UI-only part kept in the sidecar, validated again (it came from a client)."""
    try:
        return UIMessagePartAdapter.validate_python(data)
    except ValueError:
        return None


def add_ui_only(parts: list[UIMessagePart], part: UIMessagePart) -> None:
    """A `data-*` part with the `id` of one already in the message updates that one, as the client does."""
    if isinstance(part, DataUIPart) and part.id is not None:
        for existing in parts:
            if isinstance(existing, DataUIPart) and existing.type == part.type and existing.id == part.id:
                existing.data = part.data
                return
    parts.append(part)


def tool_part(
    call: ToolCallPart,
    result: tuple[ToolReturnPart | RetryPromptPart, int] | None,
    approval: Any,
    response: dict[str, Any] | None,
    *,
    bare_result: bool = False,
    request: dict[str, Any] | None = None,
    signatures: tuple[str | None, str | None] = (None, None),
    mark: Any = None,
    dynamic: bool = False,
) -> ToolUIPart | DynamicToolUIPart:
    """One `tool-{name}` part (a `dynamic-tool` part for a tool the UI does not know by name): the call, merged
    with its result or its approval state. `bare_result`: the result came from a client (a client tool's output)
    without uibridge's metadata, so no timestamp is added. `signatures`: the call's and the result's; `mark`: who
    answers the call, when it is not the server."""
    call_sig, result_sig = signatures
    call_fields = tool_call_metadata(call, response, call_sig, mark)
    approval_ui = ToolApprovalUI.model_validate(approval) if isinstance(approval, dict) else None
    base: dict[str, Any] = tool_kind(call.tool_name, dynamic=dynamic)
    base['tool_call_id'] = call.tool_call_id
    base['input'] = tool_input(call)
    if result is None:
        if approval_ui is None:
            state = 'input-available'
        else:
            state = 'approval-requested' if approval_ui.approved is None else 'approval-responded'
        return _tool_ui_part(
            **base, state=state, approval=approval_ui, call_provider_metadata=wrap_metadata(call_fields)
        )
    state, value, result_fields = tool_result(*result, sig=result_sig)
    if bare_result:
        result_fields.pop('timestamp', None)
        result_fields.pop('index', None)
    if request is not None:
        result_fields['request'] = request
    if state == 'output-denied':
        if approval_ui is None or approval_ui.approved is not False:
            approval_ui = ToolApprovalUI(id=call.tool_call_id, approved=False, reason=value)
        denial_text(result_fields, value, approval_ui.reason)
        if result_fields:
            call_fields['result'] = result_fields
        return _tool_ui_part(
            **base, state=state, approval=approval_ui, call_provider_metadata=wrap_metadata(call_fields)
        )
    if approval_ui is not None and approval_ui.approved is not True:
        approval_ui = None
    extra = {'output': value} if state == 'output-available' else {'error_text': value}
    return _tool_ui_part(
        **base,
        **extra,
        state=state,
        approval=approval_ui,
        call_provider_metadata=wrap_metadata(call_fields),
        result_provider_metadata=wrap_metadata(result_fields),
    )


def tool_kind(tool_name: str, *, dynamic: bool) -> dict[str, Any]:
    """The fields that name a tool part's tool: its `type` (`tool-{name}`), or `dynamic-tool` and `tool_name`."""
    if dynamic:
        return {'type': 'dynamic-tool', 'tool_name': tool_name}
    return {'type': f'tool-{tool_name}'}


def _tool_ui_part(**fields: Any) -> ToolUIPart | DynamicToolUIPart:
    """The tool part for fields `tool_part` made, whose state and fields always agree (`_ToolFields` checks
    that on validation). Only the type can fail the model's checks, for a tool name it refuses (`tool-`
    then nothing, or a line break): validation raises for those, as it always has."""
    if fields['type'] == 'dynamic-tool':
        return construct(DynamicToolUIPart, fields)
    if fields['type'][5:6] in ('', '\n'):
        return ToolUIPart(**fields)
    return construct(ToolUIPart, fields)


def ui_only_sequence(response: ModelResponse) -> list[tuple[int, UIMessagePart]]:
    """The step's UI-only parts, in the order the UI had them, each with the response position it sits at."""
    if not response.metadata:
        return []  # most steps: neither custom data nor a sidecar
    custom: list[tuple[int, UIMessagePart]] = []
    for item in custom_data_items(response.metadata):
        name, position = item.get('name'), item.get('position')
        if not isinstance(name, str) or not isinstance(position, int):
            continue
        item_id = item.get('id')
        custom.append(
            (
                position,
                DataUIPart(
                    type=f'data-{name}', data=item.get('data'), id=item_id if isinstance(item_id, str) else None
                ),
            )
        )
    kept = sidecar(response.metadata).get('parts')
    slotted: dict[int, tuple[int, UIMessagePart]] = {}
    for entry in cast('list[Any]', kept) if isinstance(kept, list) else []:
        if not isinstance(entry, dict):
            continue
        entry = cast('dict[str, Any]', entry)
        slot, position, part = entry.get('slot'), entry.get('position'), ui_only_part(entry.get('part'))
        if isinstance(slot, int) and isinstance(position, int) and part is not None:
            slotted[slot] = (position, part)
    # `slot` is where a kept part sat among all the step's UI-only parts; the custom data fills the rest in order.
    sequence: list[tuple[int, UIMessagePart]] = []
    remaining = iter(custom)
    total = len(custom) + len(slotted)
    for slot in range(total):
        if slot in slotted:
            sequence.append(slotted[slot])
        else:
            sequence.extend(next_item for next_item in [next(remaining, None)] if next_item is not None)
    sequence.extend(remaining)
    sequence.extend(slotted[slot] for slot in sorted(slotted) if slot >= total)
    return sequence


_Role = Literal['system', 'user', 'assistant']


@dataclass
class _Draft:
    role: _Role
    parts: list[UIMessagePart] = field(default_factory=new_list)
    id: str | None = None
    metadata: Any = None
    inserts: list[tuple[int, UIMessagePart]] = field(default_factory=new_list)
    """UI-only parts of a user or system message, each at the index it had in the message."""
    responses: list[ModelResponse] = field(default_factory=new_list)
    """The responses an assistant message is made of (its metadata is theirs)."""


def dump_messages(
    messages: Sequence[ModelMessage], *, keyring: Keyring | None = None, sdk_version: SdkVersion = 7
) -> list[UIMessage]:
    """The UI messages for `messages`; deterministic (same history and keys, same ids and bytes).

    Signs what the server authored with `keyring` (`None`: the process default, `default_keyring()`).
    `sdk_version`: the client's `ai` major version; what 5 and 6 do not take is degraded (`_sdk_versions`).
    """
    signer = Keyring.of(keyring)
    results: dict[str, tuple[ToolReturnPart | RetryPromptPart, int]] = {}
    # A request that opens with a tool result carries its own fields on that result's tool part.
    result_request_info: dict[str, dict[str, Any]] = {}
    holds_state = False
    for message in messages:
        if isinstance(message, ModelRequest):
            for index, part in enumerate(message.parts):
                if _is_tool_result(part):
                    results.setdefault(part.tool_call_id, (part, index))
                    info = _request_info(message, new=False) if index == 0 else None
                    if info is not None:
                        result_request_info.setdefault(part.tool_call_id, info)
        elif not holds_state:
            holds_state = _holds_state(message)

    states = _state_parts(messages) if holds_state else {}  # most histories hold no state: skip the pass
    drafts: list[_Draft] = []
    assistant: _Draft | None = None
    dumped_calls: set[str] = set()
    previous_was_request = False
    for message in messages:
        if isinstance(message, ModelResponse):
            info = sidecar(message.metadata).get('message')
            opens = isinstance(info, dict) and cast('dict[str, Any]', info).get('new') is True
            if assistant is None or opens:
                assistant = _Draft('assistant')
                _apply_message_info(assistant, info)
                drafts.append(assistant)
            assistant.responses.append(message)
            state = states.get(id(message)) if states else None
            _dump_response(message, assistant.parts, results, dumped_calls, result_request_info, signer, state)
            previous_was_request = False
            continue
        opens_with_result = bool(message.parts) and _is_tool_result(message.parts[0])
        request_info = None if opens_with_result else _request_info(message, new=previous_was_request)
        messages_info = sidecar(message.metadata).get('messages')
        for index, part in enumerate(message.parts):
            if _is_tool_result(part):
                if part.tool_call_id not in dumped_calls:
                    warnings.warn(
                        f'a tool result for {part.tool_call_id!r} answers no call in the history; it was left out',
                        UserWarning,
                        stacklevel=2,
                    )
                continue
            if isinstance(part, OpaquePart):
                continue  # kept in the history, shown to no UI
            info = cast('dict[str, Any]', messages_info).get(str(index)) if isinstance(messages_info, dict) else None
            bare = isinstance(info, dict) and cast('dict[str, Any]', info).get('bare') is True
            steering = cast('dict[str, Any]', info).get('steering') if isinstance(info, dict) else None
            if (
                isinstance(steering, str)
                and isinstance(part, UserPromptPart)
                and assistant is not None
                and request_info is None
                and sdk_version == 7
            ):
                # A user message that joined the running answer (`ai` 7's steering): back inside it, in place.
                sub_parts = user_content_parts(part, None, bare=bare)
                if all(isinstance(sub, TextUIPart | FileUIPart) for sub in sub_parts):
                    assistant.parts.append(construct(SteeringMessageUIPart, {'id': steering, 'parts': sub_parts}))
                    continue
            assistant = None
            draft = _dump_prompt(part, request_info, signer, bare=bare)
            request_info = None
            _apply_message_info(draft, info)
            drafts.append(draft)
        previous_was_request = True

    return downgrade_messages([_finish(index, draft, signer) for index, draft in enumerate(drafts)], sdk_version)


def _is_tool_result(part: Any) -> TypeIs[ToolReturnPart | RetryPromptPart]:
    return isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None)


def _state_parts(messages: Sequence[ModelMessage]) -> dict[int, tuple[int, int, UIMessagePart]]:
    """The `data-state` part of each assistant message that holds state, by the `id()` of the response whose
    step it sits in, with its `(slot, position)` there (see `_message_info`)."""
    groups: list[list[ModelResponse]] = []
    current: list[ModelResponse] | None = None
    for message in messages:
        if isinstance(message, ModelResponse):
            info = sidecar(message.metadata).get('message')
            if current is None or (isinstance(info, dict) and cast('dict[str, Any]', info).get('new') is True):
                current = []
                groups.append(current)
            current.append(message)
        elif any(not _is_tool_result(part) and not isinstance(part, OpaquePart) for part in message.parts):
            current = None  # the layout `dump_messages` gives: a prompt ends the assistant message
    found: dict[int, tuple[int, int, UIMessagePart]] = {}
    for group in groups:
        holders = [response for response in group if _holds_state(response)]
        if not holders:
            continue
        holder = holders[-1]
        part = state_part((holder.metadata or {})[STATE_METADATA_KEY])
        placement = state_placement(holder)
        if placement is not None and placement[0] < len(group):
            step, position, slot = placement
            found[id(group[step])] = (slot, position, part)
        else:
            found[id(holder)] = (len(holder.parts) + 1_000_000, len(holder.parts), part)  # the step's end
    return found


def _holds_state(response: ModelResponse) -> bool:
    return response.metadata is not None and STATE_METADATA_KEY in response.metadata


def _finish(index: int, draft: _Draft, keyring: Keyring) -> UIMessage:
    if draft.role == 'assistant':
        draft.metadata = message_metadata(draft.responses, draft.metadata, keyring)
    if draft.inserts:
        for at, part in sorted(draft.inserts, key=lambda item: item[0]):
            draft.parts.insert(at, part)
    message_id = draft.id
    if message_id is None:
        message_id = derived_message_id(index, draft.role, draft.parts)
    return construct(
        UIMessage, {'id': message_id, 'role': draft.role, 'parts': draft.parts, 'metadata': draft.metadata}
    )


def _apply_message_info(draft: _Draft, info: Any) -> None:
    """Restore what load kept of a UI message: its own id, its metadata, and parts only the UI uses."""
    if not isinstance(info, dict):
        return
    info = cast('dict[str, Any]', info)
    if isinstance(info.get('id'), str):
        draft.id = info['id']
    if 'metadata' in info:
        draft.metadata = info['metadata']
    extra = info.get('parts')
    for entry in cast('list[Any]', extra) if isinstance(extra, list) else []:
        if isinstance(entry, dict):
            entry = cast('dict[str, Any]', entry)
            at, part = entry.get('at'), ui_only_part(entry.get('part'))
            if isinstance(at, int) and part is not None:
                draft.inserts.append((at, part))


def _request_info(request: ModelRequest, *, new: bool) -> dict[str, Any] | None:
    info: dict[str, Any] = {}
    if request.instructions is not None:
        info['instructions'] = request.instructions
    metadata = app_metadata(request.metadata)
    if metadata is not None:
        info['metadata'] = jsonable(metadata)
    if new:
        info['new'] = True
    return info or None


def _dump_prompt(
    part: SystemPromptPart | UserPromptPart | RetryFeedbackPart | RetryPromptPart,
    request_info: dict[str, Any] | None,
    keyring: Keyring,
    *,
    bare: bool,
) -> _Draft:
    """`bare`: the message came from a client without uibridge's metadata, so none is added back."""
    if isinstance(part, SystemPromptPart):
        fields: dict[str, Any] = {} if bare else {'timestamp': iso(part.timestamp)}
        if part.dynamic_ref is not None:
            fields['dynamic_ref'] = part.dynamic_ref
        text = construct(
            TextUIPart, {'text': part.content, 'provider_metadata': wrap_metadata(with_request(fields, request_info))}
        )
        return _Draft('system', [text])
    if isinstance(part, RetryFeedbackPart | RetryPromptPart):
        fields = {'retry_feedback': feedback_marker(part, keyring)}
        text = construct(
            TextUIPart,
            {
                'text': retry_text(part),
                'provider_metadata': wrap_metadata(with_request(fields, request_info)),
            },
        )
        return _Draft('system', [text])
    return _Draft('user', user_content_parts(part, request_info, bare=bare))


def _dump_response(
    response: ModelResponse,
    parts: list[UIMessagePart],
    results: dict[str, tuple[ToolReturnPart | RetryPromptPart, int]],
    dumped_calls: set[str],
    result_request_info: dict[str, dict[str, Any]],
    keyring: Keyring,
    state: tuple[int, int, UIMessagePart] | None,
) -> None:
    parts.append(construct(StepStartUIPart, {}))
    extras = ui_only_sequence(response)
    if state is not None:
        slot, position, state_ui = state
        extras.insert(min(slot, len(extras)), (position, state_ui))
    side = sidecar(response.metadata)
    approvals = side.get('approvals')
    approvals = cast('dict[str, Any]', approvals) if isinstance(approvals, dict) else {}
    bare_step = side.get('bare') is True
    # A step a client wrote without uibridge's metadata is not the server's to sign.
    signer: Keyring | None = None if bare_step else keyring
    marks = answered_by(response.metadata)
    info: dict[str, Any] | None = None if bare_step else part_record(response)
    kept_ids = side.get('reasoning_ids')
    reasoning_ids: dict[str, Any] = cast('dict[str, Any]', kept_ids) if isinstance(kept_ids, dict) else {}
    kept_bare = side.get('bare_results')
    bare_results: set[Any] = set(cast('list[Any]', kept_bare)) if isinstance(kept_bare, list) else set()
    dynamic = dynamic_calls(response)
    ui_fields = kept_ui_fields(side)
    returns: dict[str, tuple[int, NativeToolReturnPart]] | None = None  # built at the step's first native call
    texts = 0
    pending = 0
    for position, part in enumerate(response.parts):
        while pending < len(extras) and extras[pending][0] <= position:
            add_ui_only(parts, extras[pending][1])
            pending += 1
        if isinstance(part, ToolCallPart):  # first: the most common part
            dumped_calls.add(part.tool_call_id)
            result = results.get(part.tool_call_id)
            bare = part.tool_call_id in bare_results
            request = result_request_info.get(part.tool_call_id)
            mark = marks.get(part.tool_call_id)
            call_sig = None if signer is None else signer.sign_part(part, client=mark == 'client')
            result_sig = None if result is None or bare else keyring.sign_part(result[0])
            tool = tool_part(
                part,
                result,
                approvals.get(part.tool_call_id),
                info,
                bare_result=bare,
                request=request,
                signatures=(call_sig, result_sig),
                mark=mark,
                dynamic=part.tool_call_id in dynamic,
            )
            parts.append(with_ui_fields(tool, ui_fields.get(str(position))) if ui_fields else tool)
        elif isinstance(part, TextPart | ThinkingPart | FilePart):
            fields = part_metadata(part, info, None if signer is None else signer.sign_part(part))
            kept = ui_fields.get(str(position)) if ui_fields else None
            if isinstance(kept, dict) and 'filename' in kept:
                fields.pop('filename', None)  # the UI had it on the part itself: it goes back there
            content = _content_part(part, wrap_metadata(fields), reasoning_ids, position)
            parts.append(with_ui_fields(content, kept) if kept is not None else content)
            if isinstance(part, TextPart):
                if part.citations:
                    parts.extend(source_parts(part, texts))
                texts += 1
        elif isinstance(part, NativeToolCallPart):
            if returns is None:
                returns = _native_returns(response)
            at, returned = returns.get(part.tool_call_id, (None, None))
            sigs: tuple[str | None, str | None] = (None, None)
            if signer is not None:
                sigs = (signer.sign_part(part), None if returned is None else signer.sign_part(returned))
            native = native_tool_part(
                part, returned, info, sigs, None if at == position + 1 else at, dynamic=part.tool_call_id in dynamic
            )
            parts.append(with_ui_fields(native, ui_fields.get(str(position))) if ui_fields else native)
        else:
            continue  # a native return rides with its call; an opaque part is shown to no UI
        info = None
    for _, extra in extras[pending:]:
        add_ui_only(parts, extra)


def _native_returns(response: ModelResponse) -> dict[str, tuple[int, NativeToolReturnPart]]:
    """The response's native tool returns by call id, each with its position."""
    return {
        part.tool_call_id: (position, part)
        for position, part in enumerate(response.parts)
        if isinstance(part, NativeToolReturnPart)
    }


def _content_part(
    part: TextPart | ThinkingPart | FilePart,
    metadata: ProviderMetadata | None,
    reasoning_ids: dict[str, Any],
    position: int,
) -> UIMessagePart:
    """The UI part for a response's text, thinking or file part, with its `uibridge` metadata. A reasoning part
    gets back the UI's own id for it, kept by position in the sidecar."""
    if isinstance(part, TextPart):
        return construct(TextUIPart, {'text': part.content, 'state': 'done', 'provider_metadata': metadata})
    if isinstance(part, ThinkingPart):
        kept_id = reasoning_ids.get(str(position))
        fields = {
            'text': part.content,
            'id': kept_id if isinstance(kept_id, str) else None,
            'state': 'done',
            'provider_metadata': metadata,
        }
        return construct(ReasoningUIPart, fields)
    fields = {'media_type': part.content.media_type, 'url': part.content.data_url, 'provider_metadata': metadata}
    return construct(FileUIPart, fields)
