"""`load_messages`: the `UIMessage[]` a `useChat` client sends, as a neutral history.

The inverse of `dump.py`, and also the reader of histories the client built itself from the live stream:

- `system` messages become a `SystemPromptPart` (texts joined, as `convertToModelMessages` joins them), or a
  `RetryFeedbackPart` when the one text part carries a valid marker at `providerMetadata.uibridge.retry_feedback`
  (`uibridge.core.feedback`) and the text is exactly what that marker renders (the legacy tool-less
  `RetryPromptPart` when the marker's `part_kind` says so, its text its `model_response()`); a broken marker or
  edited text leaves it a system prompt, and a marker on any other role is ignored;
- `user` messages become a `UserPromptPart` (one text part is a plain string; `file` parts become media);
- `assistant` messages become responses split at each `step-start`: tool parts become a `ToolCallPart`, and
  their results a request of `ToolReturnPart`s / `RetryPromptPart`s after that response. A `data-retry-feedback`
  part whose data is a valid marker (the live stream's form) ends the response there and becomes a
  `RetryFeedbackPart` (or legacy `RetryPromptPart`) in the request that follows; an invalid one is only UI data.

A part the model cannot take (a `file` part in a system message, a tool part in a user message) raises
`InputError` naming the message and part; a part type this version does not know is skipped with a
`UserWarning`. What only the UI needs is kept in the sidecar (`_provider_metadata.py`) for `dump_messages`:
among it, what `convertToModelMessages` shows no model either (a reasoning part in a user message, a tool part
still `input-streaming`, sources, `custom` and `reasoning-file` parts).

Given `claims`, the signature each part carries (`sig` in its `uibridge` metadata, with the `client` mark of
a tool call) is recorded there for the part built, for `verify_history`; the messages are the same either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ...core.diagnostics import warn
from ...core.errors import InputError
from ...core.events import DYNAMIC_TOOLS_METADATA_KEY
from ...core.feedback import retry_marker_part
from ...core.messages import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    UserContent,
)
from ...core.metadata import ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY, custom_data_item
from ...core.records import read_thinking_fields
from ...core.trusted import construct
from ...core.verification import SignatureClaims
from . import types as t
from ._load_parts import (
    NO_CLAIMS,
    apply_request_info,
    apply_response_info,
    derived_denial,
    ours,
    request_sidecar,
    response_sidecar,
    result_fields,
    result_part,
    system_part,
    tool_call,
    user_file,
    user_part,
)
from ._message_info import is_state_part, keep_state, read_message_metadata, read_state
from ._native_tools import native_call, native_return
from ._peer_history import feedback_extras, part_extras, peer_messages, result_extras, with_extras
from ._provider_metadata import DERIVED_ID, SIDECAR_KEY, SIG_KEY, derived_message_id
from ._sources import CitedSource, read_source, with_citations
from ._ui_fields import keep_ui_fields, ui_fields_of
from ._validation import validate_ui_message
from .types import (
    CustomUIPart,
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    ReasoningFileUIPart,
    ReasoningUIPart,
    SourceDocumentUIPart,
    SourceUrlUIPart,
    SteeringMessageUIPart,
    TextUIPart,
    ToolUIPart,
    UIMessage,
    UnknownUIPart,
)

# ----------------------------------------------------------------------------------------------------
# What the loader gathers over one step before the response it becomes is complete: the sources its text parts
# cite (a source part comes after its text part, perhaps after other parts) and native tool returns that sat
# further on in the response than right after their call.


class Step:
    # A plain class with slots: the loader makes one per response, and a dataclass's factories cost more.
    __slots__ = ('later', 'sources', 'texts')

    def __init__(self) -> None:
        self.texts: list[tuple[int, Any]] = []
        """Each text part of the step: its slot in the response, and the signature it came with."""
        self.sources: dict[int, list[CitedSource]] = {}
        """The sources cited, by the index of the citing text part among `texts`."""
        self.later: list[tuple[int, NativeToolReturnPart]] = []
        """Native returns that sat further on than right after their call, with their position."""

    def cite(self, cited: CitedSource) -> None:
        """A source of the text part it names, else of the nearest text part before it."""
        text = cited.text if cited.text is not None and cited.text < len(self.texts) else len(self.texts) - 1
        self.sources.setdefault(text, []).append(cited)

    def add_native(
        self,
        response: ModelResponse,
        part: ToolUIPart | DynamicToolUIPart,
        call_fields: dict[str, Any],
        claims: SignatureClaims,
        extras: tuple[dict[str, Any], dict[str, Any]] | None = None,
    ) -> None:
        """A provider-executed call and its return, both in the response (see `_native_tools`); `extras`: the
        extra keys of each, for a part pydantic-ai stored (`_peer_history`)."""
        call = native_call(part, call_fields)
        if extras is not None and extras[0]:
            call = call.model_copy(update=extras[0])
        claims.add(call, call_fields.get(SIG_KEY))
        response.parts.append(call)
        fields = result_fields(part, call_fields)  # an `ai` 5 client keeps it under the call's `result`
        returned = native_return(part, fields)
        if returned is None:
            return
        if extras is not None and extras[1]:
            returned = returned.model_copy(update=extras[1])
        claims.add(returned, fields.get(SIG_KEY))
        position = fields.get('position')
        if isinstance(position, int) and position > len(response.parts):
            self.later.append((position, returned))
        else:
            response.parts.append(returned)

    def finish(self, response: ModelResponse, claims: SignatureClaims) -> None:
        """Put the step's citations on their text parts (signed, if at all, by the last source sent with a
        signature, else by the text's own) and its later returns in their places."""
        for text, cited in self.sources.items():
            slot, own = self.texts[text]
            part = response.parts[slot]
            assert isinstance(part, TextPart)
            cited_part = with_citations(part, cited)
            sigs = [item.sig for item in cited if isinstance(item.sig, str)]
            claims.add(cited_part, sigs[-1] if sigs else own)
            response.parts[slot] = cited_part
        for position, returned in sorted(self.later, key=lambda item: item[0]):
            response.parts.insert(min(position, len(response.parts)), returned)


# ----------------------------------------------------------------------------------------------------
# Which branch of the loader's assistant loop a UI part takes, told by its exact class first.
#
# An `isinstance` that fails on a pydantic model class takes the slow ABCMeta path, and the loop's chain tried up
# to five of them per part (and one more per part to see whether a message has steps). `KINDS` answers for each
# part class `types.py` declares; any other class (a subclass) goes through `kind_of`, the same checks in the same
# order, so every part lands where the chain would send it.

STEP, TEXT, FILE, TOOL, OTHER = 'step', 'text', 'file', 'tool', 'other'
KINDS: dict[type[Any], str] = {
    t.StepStartUIPart: STEP,
    t.TextUIPart: TEXT,
    t.ReasoningUIPart: TEXT,
    t.FileUIPart: FILE,
    t.ToolUIPart: TOOL,
    t.DynamicToolUIPart: TOOL,
    t.DataUIPart: OTHER,
    t.SourceUrlUIPart: OTHER,
    t.SourceDocumentUIPart: OTHER,
    t.CustomUIPart: OTHER,
    t.ReasoningFileUIPart: OTHER,
    t.SteeringMessageUIPart: OTHER,
    t.UnknownUIPart: OTHER,
}


def kind_of(part: object) -> str:
    if isinstance(part, t.StepStartUIPart):
        return STEP
    if isinstance(part, t.TextUIPart | t.ReasoningUIPart):
        return TEXT
    if isinstance(part, t.FileUIPart):
        return FILE
    if isinstance(part, t.ToolUIPart | t.DynamicToolUIPart):
        return TOOL
    return OTHER


def has_step_start(parts: Sequence[object]) -> bool:
    classes = set(map(type, parts))
    if t.StepStartUIPart in classes:
        return True
    # Only a class outside `KINDS` (none of which is a step start) can be a subclass of one.
    return not classes <= KINDS.keys() and any(isinstance(part, t.StepStartUIPart) for part in parts)


_UIOnly = CustomUIPart | SourceUrlUIPart | SourceDocumentUIPart | ReasoningFileUIPart | DataUIPart


def load_messages(
    ui_messages: Sequence[UIMessage | Mapping[str, Any]], *, claims: SignatureClaims | None = None
) -> list[ModelMessage]:
    """The neutral history for `ui_messages` (models or plain dicts). Raises `InputError` at `<i>.parts.<j>`.

    `claims`, when given, receives the signature the client sent beside each part (see the module docstring).
    """
    loader = _Loader(claims if claims is not None else NO_CLAIMS)
    for index, data in enumerate(ui_messages):
        message = validate_ui_message(data, index)
        migrated = peer_messages(message)  # a history pydantic-ai's own adapter stored (`_peer_history`)
        if migrated is None:
            loader.add(index, message)
        else:
            loader.add_peer(index, migrated)
    loader.end_step()
    return loader.out


def _warn_unknown(part: UnknownUIPart, path: str) -> None:
    warn(f'{path}: skipped a {part.type[:40]!r} part, a type this version does not know', stacklevel=3)


class _Loader:
    def __init__(self, claims: SignatureClaims) -> None:
        self.claims = claims
        self.out: list[ModelMessage] = []
        self.request: ModelRequest | None = None
        self.response: ModelResponse | None = None
        self.results: list[tuple[int | None, ModelRequestPart]] = []
        """The current step's tool results, with their place in the request when the UI says it."""
        self.previous_role: str | None = None
        self.results_request: Any = None
        """The fields of the request the current step's results open (`request` on a result)."""
        self.message_info: dict[str, Any] | None = None
        self.ui_only_slot = 0
        self.message_responses: list[ModelResponse] = []
        self.step = Step()
        self.peer = False
        """Loading a message pydantic-ai stored: its parts take the extra keys its records give (`_peer_history`)."""

    # ------------------------------------------------------------------------------------- messages

    def add(self, index: int, message: UIMessage) -> None:
        if message.role == 'assistant':
            self._add_assistant(index, message)
        else:
            self.end_step()
            self._add_prompt(index, message)
        self.previous_role = message.role

    def add_peer(self, index: int, messages: list[UIMessage]) -> None:
        """A message pydantic-ai stored, respelled (`peer_messages`): it claims no signature at all, whatever it
        holds (pydantic-ai signs nothing, and the extra keys its records give a part are covered by none), and its
        last step ends with it, so nothing of it is claimed later either."""
        claims, self.claims, self.peer = self.claims, NO_CLAIMS, True
        try:
            for one in messages:
                self.add(index, one)
            self.end_step()
        finally:
            self.claims, self.peer = claims, False

    def _message_info(self, index: int, message: UIMessage, *, new: bool) -> dict[str, Any]:
        info: dict[str, Any] = {}
        # Only an id shaped like a derived one can be one; the check dumps the parts, so others skip it.
        if not DERIVED_ID.fullmatch(message.id) or message.id != derived_message_id(index, message.role, message.parts):
            info['id'] = message.id
        if message.metadata is not None and not (message.role == 'assistant' and isinstance(message.metadata, dict)):
            info['metadata'] = message.metadata  # an assistant message's object metadata is read into its responses
        if new:
            info['new'] = True
        return info

    def _add_prompt(self, index: int, message: UIMessage) -> None:
        inserts: list[dict[str, Any]] = []
        texts: list[TextUIPart] = []
        content: list[UserContent] = []
        # The part's path (`<i>.parts.<j>`) is written only where it is used: most parts never need it.
        for j, part in enumerate(message.parts):
            if isinstance(part, TextUIPart):
                texts.append(part)
                content.append(part.text)
            elif isinstance(part, FileUIPart) and message.role == 'user':
                content.append(user_file(part, f'{index}.parts.{j}'))
            elif isinstance(part, _UIOnly) or (isinstance(part, ReasoningUIPart) and message.role == 'user'):
                # `convertToModelMessages` shows a model none of these (a user's reasoning part neither): kept for
                # the UI, in place.
                inserts.append({'at': j, 'part': part.model_dump(mode='json')})
            elif isinstance(part, UnknownUIPart):
                _warn_unknown(part, f'{index}.parts.{j}')
            else:
                raise InputError(f'a {part.type!r} part cannot be in a {message.role} message', f'{index}.parts.{j}')
        first = ours(texts[0].provider_metadata) if texts else {}
        prompt = system_part(texts, first) if message.role == 'system' else user_part(content, message.parts, first)
        if isinstance(prompt, RetryFeedbackPart | RetryPromptPart):
            if self.peer and isinstance(prompt, RetryFeedbackPart):
                prompt = with_extras(prompt, feedback_extras(texts[0]))
            self.claims.add(prompt, cast('dict[str, Any]', first['retry_feedback']).get(SIG_KEY))
        request = self._request_for(first.get('request'))
        info = self._message_info(index, message, new=False)
        no_stamp: dict[str, Any] = {}
        stamped = next(
            (ours(p.provider_metadata) for p in message.parts if isinstance(p, TextUIPart | FileUIPart)), no_stamp
        )
        if not isinstance(prompt, RetryFeedbackPart | RetryPromptPart) and 'timestamp' not in stamped:
            info['bare'] = True
        if inserts:
            info['parts'] = inserts
        if info:
            side = request_sidecar(request)
            messages = cast('dict[str, Any]', side.setdefault('messages', {}))
            messages[str(len(request.parts))] = info
        request.parts.append(prompt)

    def _request_for(self, info: Any) -> ModelRequest:
        info = cast('dict[str, Any]', info) if isinstance(info, dict) else {}
        if self.request is None or info.get('new') is True:
            self.request = construct(ModelRequest, {'parts': []})
            self.out.append(self.request)
        apply_request_info(self.request, info)
        return self.request

    # ------------------------------------------------------------------------------------ assistant

    def _add_assistant(self, index: int, message: UIMessage) -> None:
        self.end_step()
        self.request = None
        self.message_info = self._message_info(index, message, new=self.previous_role == 'assistant')
        self.message_responses = []
        state: tuple[Any, tuple[int, int, int]] | None = None
        stepped = has_step_start(message.parts)
        for j, part in enumerate(message.parts):
            kind = KINDS.get(type(part)) or kind_of(part)
            if kind is STEP:
                self.end_step()
                self._start_response()
            elif kind is TEXT:
                if not stepped and self.results:
                    self.end_step()
                self._add_text(cast('TextUIPart | ReasoningUIPart', part))
            elif kind is FILE:
                if not stepped and self.results:
                    self.end_step()
                self._add_file(cast('FileUIPart', part), f'{index}.parts.{j}')
            elif kind is TOOL:
                self._add_tool(cast('ToolUIPart | DynamicToolUIPart', part))
            elif isinstance(part, DataUIPart) and is_state_part(part):
                state = (part.data, self._state_placement())  # the latest one wins, as in the client
            elif isinstance(part, DataUIPart):
                self._add_data(part)
            elif (
                isinstance(part, SourceUrlUIPart | SourceDocumentUIPart)
                and self.step.texts
                and ours(part.provider_metadata)
            ):
                # uibridge's sources become citations; a client's own (no `uibridge` metadata) stay UI-only
                self.step.cite(read_source(part, ours(part.provider_metadata)))
            elif isinstance(part, _UIOnly):
                self._keep_ui_only(part)
            elif isinstance(part, SteeringMessageUIPart):
                self._add_steering(part, f'{index}.parts.{j}')
            else:
                _warn_unknown(cast('UnknownUIPart', part), f'{index}.parts.{j}')
        self.end_step()
        metadata: Any = message.metadata
        if state is not None or isinstance(metadata, dict):
            if not self.message_responses:
                self._start_response()
                self.end_step()
            if isinstance(metadata, dict):
                read_message_metadata(cast('dict[str, Any]', metadata), self.message_responses, self.claims)
            if state is not None:
                value, signature = read_state(metadata, state[0])
                keep_state(self.message_responses, value, state[1], signed=isinstance(signature, str))
                self.claims.add_state(self.message_responses[-1], signature)

    def _state_placement(self) -> tuple[int, int, int]:
        """Where a `data-state` part sits: its step in the message, its position and UI-only slot there."""
        if self.response is None:  # outside any step: at the end of the last one
            last = self.message_responses[-1].parts if self.message_responses else []
            return max(len(self.message_responses) - 1, 0), len(last), 1_000_000
        return len(self.message_responses) - 1, len(self.response.parts), self.ui_only_slot

    def _start_response(self) -> ModelResponse:
        response = construct(ModelResponse, {'parts': []})
        if self.message_info:
            response.metadata = {SIDECAR_KEY: {'message': self.message_info}}
        self.message_info = None
        self.out.append(response)
        self.message_responses.append(response)
        self.response = response
        self.request = None
        self.ui_only_slot = 0
        return response

    def _current_response(self) -> ModelResponse:
        return self.response if self.response is not None else self._start_response()

    def end_step(self) -> None:
        """Close the current response; its tool results become the request that follows it."""
        if self.response is not None:
            step = self.step
            if step.sources or step.later:  # most steps cite nothing and keep no return apart
                step.finish(self.response, self.claims)
            if step.texts or step.sources or step.later:
                self.step = Step()  # only a step with a response gathers anything; an empty one is reused
        self.response = None
        if self.results:
            if len(self.results) > 1 and all(index is not None for index, _ in self.results):
                self.results.sort(key=lambda item: cast('int', item[0]))
            self.request = construct(ModelRequest, {'parts': [part for _, part in self.results]})
            self.out.append(self.request)
            apply_request_info(self.request, self.results_request)
            self.results_request = None
            self.results = []

    def _add_text(self, part: TextUIPart | ReasoningUIPart) -> None:
        response = self._current_response()
        fields = ours(part.provider_metadata)
        apply_response_info(response, fields.get('response'))
        part_id = fields.get('id') if isinstance(fields.get('id'), str) else None
        if isinstance(part, TextUIPart):
            text = construct(TextPart, {'content': part.text, 'id': part_id})
            if self.peer:
                text = with_extras(text, part_extras(part))
            self.claims.add(text, fields.get(SIG_KEY))
            self.step.texts.append((len(response.parts), fields.get(SIG_KEY)))
            if part.citations is not None:  # `ai` 7's own citations: the UI's, beside the part (`_ui_fields`)
                keep_ui_fields(response_sidecar(response), len(response.parts), ui_fields_of(part))
            response.parts.append(text)
            return
        if part.id is not None:
            # The UI's own id for the part (a stream chunk id), not the provider's: kept beside, not in, the part.
            ids = cast('dict[str, Any]', response_sidecar(response).setdefault('reasoning_ids', {}))
            ids[str(len(response.parts))] = part.id
        values: dict[str, Any] = {'content': part.text, 'id': None, 'signature': None, 'provider_name': None}
        values.update(read_thinking_fields(fields))
        thinking = construct(ThinkingPart, values)
        if self.peer:
            thinking = with_extras(thinking, part_extras(part))
        self.claims.add(thinking, fields.get(SIG_KEY))
        response.parts.append(thinking)

    def _add_file(self, part: FileUIPart, path: str) -> None:
        if not part.url.startswith('data:'):
            self._keep_ui_only(part)
            return
        response = self._current_response()
        fields = ours(part.provider_metadata)
        apply_response_info(response, fields.get('response'))
        try:
            content = BinaryContent.from_data_url(part.url)
        except ValueError as e:
            raise InputError(str(e), f'{path}.url') from None
        # The file's name: the part's own field (a client's, kept there too), else uibridge's (a stream's `file`
        # chunk has no field for it). The signature covers it: it is the file's as much as its bytes are.
        filename = part.filename if part.filename is not None else fields.get('filename')
        if isinstance(filename, str):
            content.filename = filename
        if part.filename is not None or part.provider_reference is not None:
            keep_ui_fields(response_sidecar(response), len(response.parts), ui_fields_of(part))
        part_id = fields.get('id') if isinstance(fields.get('id'), str) else None
        file = construct(FilePart, {'content': content, 'id': part_id})
        if self.peer:
            file = with_extras(file, part_extras(part))
        self.claims.add(file, fields.get(SIG_KEY))
        response.parts.append(file)

    def _add_tool(self, part: ToolUIPart | DynamicToolUIPart) -> None:
        if part.state == 'input-streaming':
            # An unfinished call, which `convertToModelMessages` skips: nothing a model could be shown. The UI
            # keeps it, so it is kept for the UI, in its place.
            self._keep_ui_only(part)
            return
        response = self._current_response()
        call_fields = ours(part.call_provider_metadata)
        apply_response_info(response, call_fields.get('response'))
        position = len(response.parts)
        if part.type == 'dynamic-tool':
            # A tool the UI does not know by name: nothing the model sees, so no signature covers the mark.
            metadata = response.metadata if response.metadata is not None else {}
            dynamic = cast('list[str]', metadata.setdefault(DYNAMIC_TOOLS_METADATA_KEY, []))
            dynamic.append(part.tool_call_id)
            response.metadata = metadata
        values = part.__dict__  # a `dynamic` field only on a `dynamic-tool` part
        if (
            values['title'] is not None
            or values['tool_metadata'] is not None
            or values['preliminary']
            or (values.get('dynamic') is False)
        ):
            found = ui_fields_of(part)
            if found:
                keep_ui_fields(response_sidecar(response), position, found)
        if part.provider_executed is True:
            extras = (part_extras(part), result_extras(part)) if self.peer else None
            self.step.add_native(response, part, call_fields, self.claims, extras)
            return
        call = tool_call(part, call_fields)
        if self.peer:
            call = with_extras(call, part_extras(part))
        client = call_fields.get('client') is True
        self.claims.add(call, call_fields.get(SIG_KEY), client=client)
        response.parts.append(call)
        if client or call_fields.get('approval') is True:
            if response.metadata is None:
                response.metadata = {}
            marks = cast('dict[str, Any]', response.metadata.setdefault(ANSWERED_BY_METADATA_KEY, {}))
            marks[part.tool_call_id] = 'client' if client else 'approval'
        if part.approval is not None and part.approval != derived_denial(part, call_fields):
            approvals = cast('dict[str, Any]', response_sidecar(response).setdefault('approvals', {}))
            approvals[part.tool_call_id] = part.approval.model_dump(mode='json')
        fields = result_fields(part, call_fields)
        result = result_part(part, fields)
        if result is not None:
            if self.peer:
                result = with_extras(result, result_extras(part))
            self.claims.add(result, fields.get(SIG_KEY))
            index = fields.get('index')
            if 'request' in fields:
                self.results_request = fields['request']
            self.results.append((index if isinstance(index, int) else None, result))
            if 'timestamp' not in fields:
                bare = cast('list[str]', response_sidecar(response).setdefault('bare_results', []))
                bare.append(part.tool_call_id)

    def _add_data(self, part: DataUIPart) -> None:
        if part.name == 'retry-feedback':
            feedback = retry_marker_part(part.data)
            if feedback is not None:
                self.claims.add(feedback, cast('dict[str, Any]', part.data).get(SIG_KEY))
                self._add_feedback(feedback)
                return
        response = self._current_response()
        metadata = response.metadata if response.metadata is not None else {}
        items = cast('list[dict[str, Any]]', metadata.setdefault(CUSTOM_DATA_METADATA_KEY, []))
        items.append(custom_data_item(part.name, part.data, part.id, len(response.parts)))
        response.metadata = metadata
        self.ui_only_slot += 1

    def _add_feedback(self, feedback: RetryFeedbackPart | RetryPromptPart) -> None:
        self.end_step()
        if self.request is None:
            self.request = ModelRequest(parts=[])
            self.out.append(self.request)
        self.request.parts.append(feedback)

    def _keep_ui_only(self, part: _UIOnly | FileUIPart | ToolUIPart | DynamicToolUIPart) -> None:
        response = self._current_response()
        metadata = response.metadata if response.metadata is not None else {}
        side = cast('dict[str, Any]', metadata.setdefault(SIDECAR_KEY, {}))
        kept = cast('list[dict[str, Any]]', side.setdefault('parts', []))
        kept.append({'slot': self.ui_only_slot, 'position': len(response.parts), 'part': part.model_dump(mode='json')})
        response.metadata = metadata
        self.ui_only_slot += 1

    def _add_steering(self, part: SteeringMessageUIPart, path: str) -> None:
        # A user message that joined a running response: it ends the step, as `convertToModelMessages` has it.
        # It stays a steering message for the UI (its id kept beside the prompt), so a dump gives it back in place.
        self.end_step()
        content: list[UserContent] = []
        for k, sub in enumerate(part.parts):
            content.append(sub.text if isinstance(sub, TextUIPart) else user_file(sub, f'{path}.parts.{k}'))
        first = ours(part.parts[0].provider_metadata) if part.parts else {}
        prompt = user_part(content, list(part.parts), first)
        if self.request is None:
            self.request = construct(ModelRequest, {'parts': []})
            self.out.append(self.request)
        info: dict[str, Any] = {'steering': part.id}
        if 'timestamp' not in first:
            info['bare'] = True
        messages = cast('dict[str, Any]', request_sidecar(self.request).setdefault('messages', {}))
        messages[str(len(self.request.parts))] = info
        self.request.parts.append(prompt)
