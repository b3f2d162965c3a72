"""The parts `dump_messages` builds: a user prompt's content, tool calls with their results or approval, and
the UI-only parts a client's step held (custom data, kept `data-*` and other parts), in their places.

`dump.py` walks the messages and assembles the `UIMessage`s; the pieces live here, as `load_parts.py` holds
the pieces `load.py` reads.
"""

from __future__ import annotations

from typing import Any, cast

from ...core.media import MediaUrl, kind_name, media_kind
from ...core.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelResponse,
    OpaqueContent,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from ...core.metadata import custom_data_items
from ...core.trusted import construct
from ._provider_metadata import (
    denial_text,
    iso,
    sidecar,
    tool_call_metadata,
    tool_input,
    tool_result,
    wrap_metadata,
)
from .types import (
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    TextUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessagePart,
    UIMessagePartAdapter,
)


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
