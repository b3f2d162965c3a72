"""`VercelAIEventStream`: neutral agent events as the Vercel AI SDK UI message stream (SSE, protocol v1).

Every chunk the stream sends is written in this module. The chunk layout is the one `dump_messages` gives for
the same messages, so the message a client builds from the stream equals the dumped one (ids aside):

- one `start` with a server-chosen `messageId` (unique per response; the id of the assistant message the run
  continues when the request answered an approval or a client tool); a `start-step` / `finish-step` pair per
  model response, so an answer that failed validation and its replacement stay apart;
- text, reasoning and tool-input parts as `*-start` / `*-delta` / `*-end` (`tool-input-available` ends a call;
  each chunk of a call `PartStart(dynamic=True)` opened says `dynamic: true`, so the client builds a
  `dynamic-tool` part),
  with the same `providerMetadata.uibridge` that `dump_messages` writes; tool results as `tool-output-*` in the
  step of their call; a denial the client never asked for as an approval request answered `false` then
  `tool-output-denied`, since the client keeps a denied part only with its approval;
- `ToolCallReady(answered_by='approval')` as `tool-approval-request` with the approval id
  `keyring.approval_id(thread_id, call)`, which only this server can mint, for this call in this chat;
- retry feedback between steps as a `data-retry-feedback` part holding the retry-feedback marker
  (`load_messages` reads it back as a `RetryFeedbackPart`); a legacy tool-less `RetryPromptPart`, the older form
  of that feedback, the same way, its marker's `part_kind` `retry-prompt` (read back as that part);
- what a run shows beside its parts, in the layout `dump_messages` writes (`_message_info`, `_sources`,
  `_native_tools`), so that the message a client builds loads as the run's new messages:
  - the shared state as one `data-state` part (id `state`, data = the whole state after the event), sent at the
    event inside a step, else when the next step starts (or at the end); message metadata as
    `message-metadata` with the application's keys at top level; late response info (usage) as
    `message-metadata` under `uibridge`: the step's entry by its index within the message (counting the
    continued message's steps) and the message's new totals, which the client's deep merge adds to what it
    holds (`MessageCarrier`, which also amends the collector's messages the way loading reads the client's
    message back);
  - citations as `source-url` / `source-document` after their `text-end`, or one late citation, signed with the
    text it now completes;
  - provider-executed (native) calls as tool chunks with `providerExecuted: true`, sent at their end (never
    held, never an approval), their return as `tool-output-available`;
  - activity as a transient `data-activity` part (id: the activity's message id), shown, never kept;
  - named steps (`StepStarted` / `StepFinished`) and raw events are not sent: the UI message stream has no chunk
    for a named step within a model step, and a raw provider event is for a protocol that forwards them
    (AG-UI's RAW); the collector keeps neither either;
- four chunk types of `ai` 7 are never sent: `reset-step`, `steering-message`, `custom`, `reasoning-file`
  (`_conformance` says why, for each); a client's parts of those types load and dump back, kept for its UI;
- `finish` with the Vercel `finishReason` (`tool-calls` while a call waits for the client or an approval);
  a `RunError` closes what is open, sends `error` with its (already safe) message, then `finish`; a
  `RunCancelled` sends `abort`. Every stream ends with `data: [DONE]`.

Signatures (`uibridge.core.provenance`) ride where the `ai` client keeps them, so the message it builds holds
exactly what `dump_messages` writes, `sig` included: a part's final metadata is sent in the chunk whose
metadata replaces the part's (`text-end`, `reasoning-end`: the text is only known there, so they always carry
the whole metadata; `file`); a call's in `tool-input-available` (`callProviderMetadata`), a result's in
`tool-output-available` / `tool-output-error` (`resultProviderMetadata`); a denial's under `result` in the
call metadata of a `tool-approval-response` (`tool-output-denied` carries no metadata); retry feedback's in
its marker. `ToolCallReady` comes after the call's end, and the client-tool mark is signed with the call, so
a finished call's `tool-input-available` waits for whichever comes first: its `ToolCallReady` (sent marked),
its result, a new call reusing its id, or the end of its step (sent unmarked); re-sending it would run a client
tool twice (`onToolCall`). Each part is signed once, when it is complete; deltas cost nothing more.

The run's state (started and ended, the collector, open parts, held calls, dispatch) is `core.encoder`'s; this
module writes the chunks: each through the writer `core.encoder.frame_writer` derives from its model in
`chunks.py` (the bytes the model serializes to, written by pydantic-core without building the model), but the
deltas, written by hand: each open part keeps its delta chunk's text up to the delta, so a text delta costs one
string escape.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, cast

from ...core import events as ev
from ...core.encoder import OpenPart, StreamEncoder, frame_writer
from ...core.events import MESSAGE_METADATA_KEY, ActivityDelta, ActivitySnapshot
from ...core.factories import new_dict
from ...core.json_text import json_string, utf8_json, wire_json
from ...core.messages import (
    FinishReason,
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from ...core.provenance import Keyring
from ...core.stream import encode_all
from ._message_info import (
    STATE_ID,
    STATE_TYPE,
    is_state_part,
    late_info,
    part_record,
    state_fields,
    state_placement,
    summary,
)
from ._native_tools import native_call_fields, native_input, native_result_fields
from ._provider_metadata import (
    PROVIDER_KEY,
    SIDECAR_KEY,
    SIG_KEY,
    denial_text,
    feedback_marker,
    file_metadata,
    sidecar,
    text_metadata,
    thinking_metadata,
    tool_call_metadata,
    tool_result,
    wrap_metadata,
)
from ._sdk_versions import ChunkDowngrade, SdkVersion
from ._sources import source_parts
from .chunks import (
    AbortChunk,
    DataChunk,
    ErrorChunk,
    FileChunk,
    FinishChunk,
    FinishReasonUI,
    FinishStepChunk,
    MessageMetadataChunk,
    ReasoningEndChunk,
    ReasoningStartChunk,
    SourceDocumentChunk,
    SourceUrlChunk,
    StartChunk,
    StartStepChunk,
    TextEndChunk,
    TextStartChunk,
    ToolApprovalRequestChunk,
    ToolApprovalResponseChunk,
    ToolInputAvailableChunk,
    ToolInputErrorChunk,
    ToolInputStartChunk,
    ToolOutputAvailableChunk,
    ToolOutputDeniedChunk,
    ToolOutputErrorChunk,
)
from .types import DynamicToolUIPart, SourceUrlUIPart, StepStartUIPart, ToolUIPart, UIMessage, UIModel

VERCEL_AI_HEADERS: Mapping[str, str] = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-vercel-ai-ui-message-stream': 'v1',
    'x-accel-buffering': 'no',
}

_DONE = b'data: [DONE]\n\n'

_P = ParamSpec('_P')


def chunk_writer(chunk: Callable[_P, UIModel], optional: Collection[str] | None = None) -> Callable[_P, bytes]:
    """The writer of a chunk model (`chunks.py`), which says what it keeps as `null` (`UIModel._keep_null`);
    `optional`: the optional fields it takes, when not all (`frame_writer`)."""
    model: object = chunk
    if not (isinstance(model, type) and issubclass(model, UIModel)):
        raise TypeError(f'{chunk!r} is not a chunk model')
    return frame_writer(chunk, optional=optional, keep_null=model._keep_null)  # pyright: ignore[reportPrivateUsage]


# Each chunk the stream sends, with the optional fields it sets.
_START_STEP = chunk_writer(StartStepChunk, ())()
_FINISH_STEP = chunk_writer(FinishStepChunk, ())()
_start = chunk_writer(StartChunk, {'message_id'})
_part_start = {
    'text': chunk_writer(TextStartChunk, {'provider_metadata'}),
    'reasoning': chunk_writer(ReasoningStartChunk, {'provider_metadata'}),
}
_part_end = {
    'text': chunk_writer(TextEndChunk, {'provider_metadata'}),
    'reasoning': chunk_writer(ReasoningEndChunk, {'provider_metadata'}),
}
_tool_input_start = chunk_writer(ToolInputStartChunk, {'provider_executed', 'dynamic'})
_tool_input_available = chunk_writer(ToolInputAvailableChunk, {'provider_executed', 'provider_metadata', 'dynamic'})
_tool_input_error = chunk_writer(ToolInputErrorChunk, {'provider_executed', 'provider_metadata', 'dynamic'})
_approval_request = chunk_writer(ToolApprovalRequestChunk, ())
_approval_response = chunk_writer(ToolApprovalResponseChunk, {'reason', 'provider_metadata'})
_output_available = chunk_writer(ToolOutputAvailableChunk, {'provider_executed', 'provider_metadata', 'dynamic'})
_output_error = chunk_writer(ToolOutputErrorChunk, {'provider_metadata', 'dynamic'})
_output_denied = chunk_writer(ToolOutputDeniedChunk, ())
_file = chunk_writer(FileChunk, {'provider_metadata'})
_data = chunk_writer(DataChunk, {'id', 'transient'})
_metadata = chunk_writer(MessageMetadataChunk, ())
_source_url = chunk_writer(SourceUrlChunk, {'title', 'provider_metadata'})
_source_document = chunk_writer(SourceDocumentChunk, {'filename', 'provider_metadata'})
_error = chunk_writer(ErrorChunk, ())
_finish = chunk_writer(FinishChunk, {'finish_reason'})
_abort = chunk_writer(AbortChunk, {'reason'})


# The per-delta chunks, by hand: each is its chunk's text up to the delta (`TextDeltaChunk`, `ReasoningDeltaChunk`,
# `ToolInputDeltaChunk`: the id, then the delta, then nothing the stream sets), which the open part keeps, then the
# delta as one string escape (`_part_delta`). Tests hold them to the models, byte for byte.


def _delta_prefix(kind: Literal['text', 'reasoning'], chunk_id: str) -> str:
    return f'data: {{"type":"{kind}-delta","id":{json_string(chunk_id)},"delta":'


def _tool_input_prefix(tool_call_id: str) -> str:
    return f'data: {{"type":"tool-input-delta","toolCallId":{json_string(tool_call_id)},"inputTextDelta":'


_FINISH_REASONS: dict[FinishReason, FinishReasonUI] = {
    'stop': 'stop',
    'length': 'length',
    'content_filter': 'content-filter',
    'tool_call': 'tool-calls',
    'error': 'error',
}


def _json(value: Any) -> str:
    return json_string(value) if isinstance(value, str) else wire_json(value)


def _as_is(value: Any) -> Any:
    # The writers write any value as `provider_metadata.jsonable` + JSON would: no JSON-ready copy is needed.
    return value


@dataclass(eq=False, slots=True)
class _OpenPart(OpenPart):
    kind: Literal['text', 'reasoning', 'tool', 'native']
    id: str
    """The chunk id (text, reasoning) or the tool call id."""
    delta_prefix: str
    metadata: dict[str, Any] = field(default_factory=new_dict)
    """The `uibridge` provider metadata sent at start (text, reasoning) or due at the end (the response info)."""


class VercelAIEventStream(StreamEncoder[_OpenPart]):
    """Encodes one run. Sans-IO: `start()`, then `encode(event)` per event, then `close()`; each returns bytes.

    - `message_id`: the id of the assistant message the run continues (an approval or a client tool answered),
      else a fresh one;
    - `continued`: that message itself, as the client sent it: a denial of one of its calls is then sent with
      the call metadata the client holds plus the denial's signed result (else the client keeps no trace of the
      result's metadata); its id is the `message_id` when none is given;
    - `keyring`: signs every part and mints approval ids (`None`: `default_keyring()`);
    - `thread_id`: the chat id, which approval ids are bound to;
    - `sdk_version`: the major version of the client's `ai` (5, 6 or 7): what older ones do not take is
      degraded (`_sdk_versions`).
    """

    def __init__(
        self,
        *,
        message_id: str | None = None,
        continued: UIMessage | None = None,
        keyring: Keyring | None = None,
        thread_id: str = '',
        sdk_version: SdkVersion = 7,
        state: Any = None,
    ) -> None:
        super().__init__(keyring, state)  # the state a delta before any snapshot patches (`run.state`)
        self.sdk_version = sdk_version
        if sdk_version != 7:
            # The `ai` 7 path stays as it is: only an older client's stream goes through the downgrade.
            self._downgrade = ChunkDowngrade(sdk_version, continued)
            self.start, self.encode = self._downgraded_start, self._downgraded_encode
        if message_id is None and continued is not None:
            message_id = continued.id
        self.message_id = message_id if message_id is not None else f'msg_{uuid.uuid4().hex}'
        self._continues = message_id is not None
        self._continued = continued
        self._thread_id = thread_id
        self._chunk_ids = 0
        self._request_slot = 0
        """Where the next tool result lands in its request (the collector's layout, for `index`)."""
        self._step_open = False
        self._info_pending = False
        self._current: ModelResponse | None = None
        self._message = MessageCarrier(continued, self._keyring)
        self._text_slots: dict[int, int] = {}
        """The slot of each text part of the current response, by its event index (for a late citation)."""
        self._native_slots: dict[str, int] = {}
        """The slot of each native call of the current response, by its id (where its return sits)."""
        self._results_after_end: dict[str, bytes] = {}
        """The provider's results for native calls still streaming their input, by call id: sent after the
        call's `tool-input-available`, which would otherwise reset the client's part to no output."""
        self._started_calls: dict[str, dict[str, Any]] = {}
        """Calls started in this stream, with the call metadata sent for each."""
        self._approvals: dict[str, dict[str, Any]] = {}
        """The approvals asked for in this stream, as the client holds them, by tool call id."""
        self._waiting: set[str] = set()
        self._dynamic: set[str] = {
            part.tool_call_id
            for part in (continued.parts if continued is not None else ())
            if isinstance(part, DynamicToolUIPart)
        }
        """Calls to tools the UI does not know by name (`PartStart(dynamic=True)`, or a `dynamic-tool` part of the
        continued message): `dynamic: true` on their chunks, as the client decides the part's kind (`dynamic-tool`)
        at each input chunk, and `ai` 5 looks a dynamic call's part up for its output only when the chunk says so."""

    def _downgraded_start(self) -> bytes:
        return self._downgrade(super().start())

    def _downgraded_encode(self, event: ev.AgentEvent) -> bytes:
        return self._downgraded_start() + self._downgrade(super().encode(event))

    # ---------------------------------------------------------------------------------- protocol

    @property
    def headers(self) -> Mapping[str, str]:
        return VERCEL_AI_HEADERS

    @property
    def new_messages(self) -> list[ModelMessage]:
        messages = self._message.amend(self._collector.messages)
        if not self._approvals:
            return messages
        # The approvals asked for, kept as `load_messages` keeps them, so the dump shows `approval-requested`.
        result: list[ModelMessage] = []
        for message in messages:
            if isinstance(message, ModelResponse):
                asked = {
                    part.tool_call_id: self._approvals[part.tool_call_id]
                    for part in message.parts
                    if isinstance(part, ToolCallPart) and part.tool_call_id in self._approvals
                }
                if asked:
                    metadata = dict(message.metadata or {})
                    metadata[SIDECAR_KEY] = {**metadata.get(SIDECAR_KEY, {}), 'approvals': asked}
                    message = message.model_copy(update={'metadata': metadata})
            result.append(message)
        return result

    def _stream_started(self) -> bytes:
        return _start(message_id=self.message_id)

    # ------------------------------------------------------------------------------------- steps

    def _response_started(self) -> bytes:
        out = self._close_step()
        self._step_open = True
        self._request_slot = 0
        current = self._collector.last_message
        assert isinstance(current, ModelResponse)
        self._current = current
        self._info_pending = True
        if self._text_slots:  # a new table only when the last step used it: most steps have no late citation
            self._text_slots = {}
        if self._native_slots:
            self._native_slots = {}
        return out + _START_STEP + self._message.step_started(current, self._collector.state)

    def _close_step(self) -> bytes:
        if not self._step_open:
            return b''
        self._step_open = False
        # The client places a call's chunks in the step it is in: what is held goes before the step ends.
        return self._release_held() + _FINISH_STEP

    def _take_response_info(self) -> dict[str, Any] | None:
        """The step's response record, for its first part: what the response says when that part starts."""
        if not self._info_pending or self._current is None:
            return None
        self._info_pending = False
        return part_record(self._current, with_finish_reason=False)

    # ------------------------------------------------------------------------------------- parts

    def _part_started(self, event: ev.PartStart, response: ModelResponse, slot: int) -> tuple[_OpenPart, bytes]:
        part = event.part
        info = self._take_response_info()
        if isinstance(part, ToolCallPart):
            call_id = part.tool_call_id
            prefix = _tool_input_prefix(call_id)
            opened = _OpenPart(response, slot, 'tool', call_id, prefix, {'response': info} if info else {})
            if event.dynamic:
                self._dynamic.add(call_id)
                out = _tool_input_start(tool_call_id=call_id, tool_name=part.tool_name, dynamic=True)
            else:
                out = _tool_input_start(tool_call_id=call_id, tool_name=part.tool_name)
            if isinstance(part.args, str) and part.args:
                out += utf8_json(f'{prefix}{_json(part.args)}}}\n\n')
            return opened, out
        if isinstance(part, NativeToolCallPart):
            # Streamed as a call is, marked provider-executed; it ends in `_part_ended`, never held.
            call_id = part.tool_call_id
            prefix = _tool_input_prefix(call_id)
            self._native_slots[call_id] = slot
            self._results_after_end[call_id] = b''
            opened = _OpenPart(response, slot, 'native', call_id, prefix, {'response': info} if info else {})
            if event.dynamic:
                self._dynamic.add(call_id)
            dynamic = True if event.dynamic else None
            out = _tool_input_start(
                tool_call_id=call_id, tool_name=part.tool_name, provider_executed=True, dynamic=dynamic
            )
            if isinstance(part.args, str) and part.args:
                out += utf8_json(f'{prefix}{_json(part.args)}}}\n\n')
            return opened, out
        if isinstance(part, TextPart):
            self._text_slots[event.index] = slot
        kind: Literal['text', 'reasoning'] = 'text' if isinstance(part, TextPart) else 'reasoning'
        self._chunk_ids += 1
        chunk_id = f'{kind[0]}{self._chunk_ids}'
        prefix = _delta_prefix(kind, chunk_id)
        fields = text_metadata(part, info) if isinstance(part, TextPart) else thinking_metadata(part, info)
        out = _part_start[kind](id=chunk_id, provider_metadata=wrap_metadata(fields))
        if part.content:
            out += utf8_json(f'{prefix}{_json(part.content)}}}\n\n')
        return _OpenPart(response, slot, kind, chunk_id, prefix, fields), out

    def _part_delta(self, event: ev.PartDelta) -> bytes:
        # The hot path: one string escape into the prefix the part keeps.
        return utf8_json(f'{self._open[event.index].delta_prefix}{_json(event.delta)}}}\n\n')

    def _part_ended(self, opened: _OpenPart, error: str | None) -> bytes:
        if opened.kind == 'tool':
            self._started_calls[opened.id] = {}
            return self._call_ended(opened.id, opened, error)
        part = opened.finished
        if isinstance(part, NativeToolCallPart):
            sig = self._keyring.sign_part(part)
            dynamic = part.tool_call_id in self._dynamic
            out = native_call_end(part, opened.metadata.get('response'), sig, error, dynamic=dynamic)
            return out + self._results_after_end.pop(part.tool_call_id, b'')
        assert isinstance(part, TextPart | ThinkingPart)
        # The client replaces the part's metadata with the end chunk's: sent whole, with the signature.
        sig = self._keyring.sign_part(part)
        if isinstance(part, ThinkingPart):
            fields = thinking_metadata(part, opened.metadata.get('response'), sig)
            return _part_end['reasoning'](id=opened.id, provider_metadata={PROVIDER_KEY: fields})
        out = _part_end['text'](id=opened.id, provider_metadata={PROVIDER_KEY: {**opened.metadata, SIG_KEY: sig}})
        return out + source_chunks(opened.response, opened.slot) if part.citations else out

    def _send_call(self, held: _OpenPart, mark: ev.AnsweredBy | None, error: str | None = None) -> bytes:
        """`tool-input-available` (or `tool-input-error`) for a finished call, signed with its mark; the
        approval request after it when an approval answers the call."""
        call = held.finished
        assert isinstance(call, ToolCallPart)
        sig = self._keyring.sign_part(call, client=mark == 'client')
        fields = tool_call_metadata(call, held.metadata.get('response'), sig, mark)
        self._started_calls[call.tool_call_id] = fields
        # `provider_metadata.tool_input` without its JSON-ready copy: the writer writes the same JSON from the dict.
        args = call.args_as_dict()
        metadata = {PROVIDER_KEY: fields}
        dynamic = True if call.tool_call_id in self._dynamic else None
        if error is not None:
            return _tool_input_error(
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                error_text=error,
                input=args,
                provider_metadata=metadata,
                dynamic=dynamic,
            )
        out = _tool_input_available(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            input=args,
            provider_metadata=metadata,
            dynamic=dynamic,
        )
        return out + self._ask_approval(call) if mark == 'approval' else out

    def _text_open(self, index: int) -> bool:
        return index in self._open

    def _file_output(self, event: ev.FileOutput) -> bytes:
        part = event.part
        metadata = wrap_metadata(file_metadata(part, self._take_response_info(), self._keyring.sign_part(part)))
        return _file(url=part.content.data_url, media_type=part.content.media_type, provider_metadata=metadata)

    def _custom_data(self, event: ev.CustomData) -> bytes:
        if not event.transient:
            self._message.ui_only_sent()
        return _data(type=f'data-{event.name}', id=event.id, data=event.data, transient=event.transient or None)

    # ------------------------------------------------------------- who answers a call, tool results

    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        call_id = event.tool_call_id
        self._waiting.add(call_id)
        if not late:
            return b''
        if event.answered_by == 'client':
            if call_id in self._started_calls:
                warnings.warn(
                    f'ToolCallReady for {call_id!r} came after its step ended: the client already holds the call '
                    'without the client-tool mark, so its result will not verify on the next turn',
                    UserWarning,
                    stacklevel=4,
                )
            return b''
        call = self._collector.tool_call(call_id)
        if call is None:
            warnings.warn(f'no tool call {call_id!r} to ask an approval for', UserWarning, stacklevel=4)
            return b''
        return self._ask_approval(call)

    def _ask_approval(self, call: ToolCallPart) -> bytes:
        approval_id = self._keyring.approval_id(self._thread_id, call)
        self._approvals[call.tool_call_id] = {'id': approval_id}
        return _approval_request(approval_id=approval_id, tool_call_id=call.tool_call_id)

    def _retry_prompt(self, part: RetryPromptPart) -> bytes:
        # The older form of retry feedback: sent as feedback is, its marker saying which form it is.
        self._request_slot += 1
        out = self._close_step()
        return out + _data(type='data-retry-feedback', data=feedback_marker(part, self._keyring))

    def _tool_result(self, event: ev.ToolResult) -> bytes:
        part = event.part
        slot = self._request_slot
        self._request_slot += 1
        call_id = part.tool_call_id
        self._waiting.discard(call_id)
        started = call_id in self._started_calls
        if not started and not self._continues:
            warnings.warn(
                f'a result for tool call {call_id!r}, which this stream did not send and does not continue; '
                'the client could not place it, so it was not sent',
                UserWarning,
                stacklevel=4,
            )
            return b''
        state, value, fields = tool_result(part, slot, json_ready=_as_is, sig=self._keyring.sign_part(part))
        # `ai` 5 finds a dynamic call's part for its output only when the output says it is dynamic.
        dynamic = True if call_id in self._dynamic else None
        if state == 'output-available':
            return _output_available(
                tool_call_id=call_id, output=value, provider_metadata={PROVIDER_KEY: fields}, dynamic=dynamic
            )
        if state == 'output-error':
            return _output_error(
                tool_call_id=call_id, error_text=value, provider_metadata={PROVIDER_KEY: fields}, dynamic=dynamic
            )
        sent = self._started_calls[call_id] if started else None
        out = _denial(call_id, value, fields, sent, self._approvals, self._continued)
        return out + _output_denied(tool_call_id=call_id)

    # -------------------------------------------------------------------------- beside the parts

    def _native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        part = event.part
        response = self._current
        assert response is not None  # the skeleton opened one
        slot = len(response.parts) - 1  # the collector (fed first) has just appended the return
        at = self._native_slots.get(part.tool_call_id)
        position = None if at is not None and slot == at + 1 else slot
        out = native_result(part, self._keyring.sign_part(part), position, dynamic=part.tool_call_id in self._dynamic)
        if part.tool_call_id not in self._results_after_end:
            return out
        self._results_after_end[part.tool_call_id] += out  # its call is still streaming: after its end, then
        return b''

    def _citation_added(self, event: ev.CitationAdded) -> bytes:
        slot = self._text_slots.get(event.index)
        if self._text_open(event.index) or self._current is None or slot is None:
            return b''  # still streaming: its sources follow its `text-end`
        return source_chunks(self._current, slot, self._keyring)

    def _response_info(self, event: ev.ResponseInfo) -> bytes:
        return self._message.response_info()

    def _message_metadata(self, event: ev.MessageMetadata) -> bytes:
        return self._message.message_metadata(event.metadata)

    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes:
        return self._message.state(self._collector.state, step_open=self._step_open)

    def _state_delta(self, event: ev.StateDelta) -> bytes:
        return self._message.state(self._collector.state, step_open=self._step_open)

    def _step_started(self, event: ev.StepStarted) -> bytes:
        return b''

    def _step_finished(self, event: ev.StepFinished) -> bytes:
        return b''

    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes:
        return activity(event)

    def _activity_delta(self, event: ev.ActivityDelta) -> bytes:
        return activity(event)

    def _raw_event(self, event: ev.RawEvent) -> bytes:
        return b''

    # ------------------------------------------------------------------------------ request side

    def _retry_feedback(self, event: ev.RetryFeedback) -> bytes:
        self._request_slot += 1
        out = self._close_step()
        return out + _data(type='data-retry-feedback', data=feedback_marker(event.part, self._keyring))

    # -------------------------------------------------------------------------------------- ends

    def _run_finished(self, event: ev.RunFinished) -> bytes:
        reason = 'tool-calls' if self._waiting else _FINISH_REASONS.get(event.finish_reason or 'stop', 'other')
        out = self._close_step() + self._message.at_end(self._collector.state)
        return out + _finish(finish_reason=reason) + _DONE

    def _run_error(self, event: ev.RunError) -> bytes:
        out = self._close_step() + self._message.at_end(self._collector.state) + _error(error_text=event.message)
        return out + _finish(finish_reason='error') + _DONE

    def _run_cancelled(self, event: ev.RunCancelled) -> bytes:
        return self._close_step() + _abort(reason=event.reason) + _DONE


# ------------------------------------------------------------------------------------------ denials
# `tool-output-denied` carries no metadata, and the client keeps a denied tool part only with its approval; the
# one place it keeps anything of a denial's result is the call metadata, which `tool-approval-response` replaces.
# So a denial goes out as that answer (with the call metadata the client holds plus the result's under `result`),
# then `tool-output-denied`; a denial the client never asked for is first an approval request answered `false`.


def _denial(
    call_id: str,
    reason: str,
    fields: dict[str, Any],
    sent_call: dict[str, Any] | None,
    approvals: dict[str, dict[str, Any]],
    continued: UIMessage | None,
) -> bytes:
    """The approval answer for a denial of `call_id` (`fields`: its signed result metadata). `sent_call` is the
    call metadata this stream sent, when it sent the call; `approvals` the approvals it asked for (the answer is
    recorded there); `continued` the message the run continues, which holds a call this stream did not send."""
    if sent_call is not None:
        metadata: dict[str, Any] = {PROVIDER_KEY: {**sent_call, 'result': fields}}
        asked = approvals.get(call_id)
        if asked is None:
            return _asked_and_denied(call_id, reason, metadata)  # a denial the client never asked for
        approvals[call_id] = {**asked, 'approved': False, 'reason': reason}
        return _denied(asked['id'], reason, metadata)
    part = _continued_call(continued, call_id)
    if part is None:
        return b''  # the client holds the call, but this stream was not given it: the result stays bare
    approval = part.approval
    if approval is not None and approval.approved is False:
        # The client's own answer stays as it wrote it, its reason included; the denial's text goes beside.
        fields = denial_text(fields, reason, approval.reason)
    held = part.call_provider_metadata or {}
    metadata = {**held, PROVIDER_KEY: {**held.get(PROVIDER_KEY, {}), 'result': fields}}
    if approval is None:
        return _asked_and_denied(call_id, reason, metadata)
    return _denied(approval.id, None if approval.approved is False else reason, metadata)


def _continued_call(continued: UIMessage | None, tool_call_id: str) -> ToolUIPart | DynamicToolUIPart | None:
    if continued is None:
        return None
    for part in continued.parts:
        if isinstance(part, ToolUIPart | DynamicToolUIPart) and part.tool_call_id == tool_call_id:
            return part
    return None


def _denied(approval_id: str, reason: str | None, metadata: dict[str, Any]) -> bytes:
    return _approval_response(approval_id=approval_id, approved=False, reason=reason, provider_metadata=metadata)


def _asked_and_denied(call_id: str, reason: str, metadata: dict[str, Any]) -> bytes:
    """An approval request answered `false` at once: the client keeps a denied call only with its approval."""
    request = _approval_request(approval_id=call_id, tool_call_id=call_id)
    return request + _denied(call_id, reason, metadata)


# --------------------------------------------------------------------------- the message's carriers


class MessageCarrier:
    """The message-wide state of one stream: steps counted, the state's place, the steps' late info sent."""

    def __init__(self, continued: UIMessage | None, keyring: Keyring | None = None) -> None:
        self._continued = continued
        self._keyring = keyring
        self._state_sent = False
        self._offset = 0
        self._steps: dict[int, dict[str, Any]] = {}
        """Each step's late info as the client holds it (the continued message's, then this run's)."""
        if continued is not None:
            self._offset = sum(isinstance(part, StepStartUIPart) for part in continued.parts)
            held: Any = continued.metadata
            ours = cast('dict[str, Any]', held).get(PROVIDER_KEY) if isinstance(held, dict) else None
            kept = cast('dict[str, Any]', ours).get('steps') if isinstance(ours, dict) else None
            for key, entry in cast('dict[str, Any]', kept).items() if isinstance(kept, dict) else ():
                if key.isdigit() and isinstance(entry, dict):
                    self._steps[int(key)] = cast('dict[str, Any]', entry)
        self._response: ModelResponse | None = None
        self._responses = 0
        self._ui_only = 0
        """UI-only parts (kept custom data) sent in the current step: the state part's slot among them."""
        self._state_due = False
        self._info_due = False
        self._state_at: tuple[int, int, int] | None = None
        """Where the client holds the state part: (step, position, slot), as `state_placement` reads it."""

    @property
    def _step(self) -> int:
        return self._offset + self._responses - 1

    def step_started(self, response: ModelResponse, state: Any) -> bytes:
        """A step starts (`response`, the collector's): what waited for one goes out in it, and the step before it
        has its final entry (its finish reason's signature covers every part it ended with)."""
        out = self.response_info() if self._response is not None else b''
        self._response = response
        self._responses += 1
        self._ui_only = 0
        if self._state_due:
            out += self.state(state, step_open=True)
        if self._info_due:
            self._info_due = False
            out += self.response_info()
        return out

    def ui_only_sent(self) -> None:
        self._ui_only += 1

    def state(self, state: Any, *, step_open: bool) -> bytes:
        if not step_open or self._response is None:
            self._state_due = True
            return b''
        self._state_due = False
        self._state_sent = True
        if self._state_at is None:
            self._state_at = self._continued_state_at() or (self._step, len(self._response.parts), self._ui_only)
        return _data(type=STATE_TYPE, id=STATE_ID, data=state)

    def _continued_state_at(self) -> tuple[int, int, int] | None:
        """The place of the state part the continued message holds: the client replaces its data in place."""
        continued = self._continued
        if continued is None or not any(is_state_part(part) for part in continued.parts):
            return None
        from .load import load_messages  # load imports nothing of the stream; only a continued state needs it

        loaded = [m for m in load_messages([continued.model_dump(mode='json')]) if isinstance(m, ModelResponse)]
        return state_placement(loaded[-1]) if loaded else None

    def message_metadata(self, metadata: dict[str, Any]) -> bytes:
        return _metadata(message_metadata=metadata)

    def response_info(self) -> bytes:
        """The current step's late info, when it changed, with the message's new totals."""
        if self._response is None:
            self._info_due = True  # the collector keeps it for the first response too
            return b''
        entry = late_info(self._response, self._keyring)
        if entry is None or self._steps.get(self._step) == entry:
            return b''
        self._steps[self._step] = entry
        totals = summary(self._steps[step] for step in sorted(self._steps))
        return _metadata(message_metadata={PROVIDER_KEY: {**totals, 'steps': {str(self._step): entry}}})

    def at_end(self, state: Any) -> bytes:
        """The run ends: the state still due (sent at the end of the last step), and the last step's late info
        if the run's end changed it (its finish reason)."""
        out = b''
        if self._state_due and self._response is not None:
            self._state_due = False
            self._state_sent = True
            if self._state_at is None:
                self._state_at = self._continued_state_at() or (self._step, len(self._response.parts), self._ui_only)
            out += _data(type=STATE_TYPE, id=STATE_ID, data=state)
        if self._state_sent and self._keyring is not None:
            # The state the message now holds, signed once it is final (`_message_info.state_fields`).
            out += _metadata(message_metadata={PROVIDER_KEY: state_fields(state, self._keyring)})
        return out + self.response_info() if self._response is not None else out

    def amend(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The collector's messages as loading reads the client's message back: the application's message
        metadata merged onto the last response, and there the state part's place (`state_at`)."""
        indexes = [index for index, message in enumerate(messages) if isinstance(message, ModelResponse)]
        if not indexes:
            return messages
        merged: dict[str, Any] = {}
        for index in indexes:
            metadata = messages[index].metadata or {}
            if MESSAGE_METADATA_KEY in metadata and index != indexes[-1]:
                merged.update(metadata[MESSAGE_METADATA_KEY])
                rest = {key: value for key, value in metadata.items() if key != MESSAGE_METADATA_KEY}
                messages[index] = messages[index].model_copy(update={'metadata': rest or None})
        last = messages[indexes[-1]]
        metadata = dict(last.metadata or {})
        if merged:
            metadata[MESSAGE_METADATA_KEY] = {**merged, **metadata.get(MESSAGE_METADATA_KEY, {})}
        if self._state_at is not None:
            step, position, slot = self._state_at
            metadata[SIDECAR_KEY] = {
                **sidecar(metadata),
                'state_at': {'step': step, 'position': position, 'slot': slot},
            }
        if merged or self._state_at is not None:
            messages[indexes[-1]] = last.model_copy(update={'metadata': metadata})
        return messages


def source_chunks(response: ModelResponse, slot: int, keyring: Keyring | None = None) -> bytes:
    """The sources of the text part at `response.parts[slot]`: all of them at its end, or (with `keyring`) only
    its last citation's, signed with the text it completes (its `text-end` signed the citations known then)."""
    part = response.parts[slot]
    assert isinstance(part, TextPart) and part.citations
    text_index = sum(isinstance(other, TextPart) for other in response.parts[:slot])
    if keyring is None:
        parts = source_parts(part, text_index)
    else:
        parts = source_parts(part, text_index, len(part.citations) - 1, keyring.sign_part(part))
    out = b''
    for source in parts:
        if isinstance(source, SourceUrlUIPart):
            metadata = source.provider_metadata
            out += _source_url(
                source_id=source.source_id, url=source.url, title=source.title, provider_metadata=metadata
            )
        else:
            out += _source_document(
                source_id=source.source_id,
                media_type=source.media_type,
                title=source.title,
                filename=source.filename,
                provider_metadata=source.provider_metadata,
            )
    return out


def native_call_end(
    call: NativeToolCallPart, response: dict[str, Any] | None, sig: str, error: str | None, *, dynamic: bool = False
) -> bytes:
    """A native call's arguments are complete: sent at once (a provider runs it; nothing waits for a mark)."""
    fields: dict[str, Any] = {
        'tool_call_id': call.tool_call_id,
        'tool_name': call.tool_name,
        'input': native_input(call),
        'provider_executed': True,
        'provider_metadata': {PROVIDER_KEY: native_call_fields(call, response, sig)},
        'dynamic': True if dynamic else None,
    }
    return _tool_input_available(**fields) if error is None else _tool_input_error(**fields, error_text=error)


def native_result(part: NativeToolReturnPart, sig: str, position: int | None, *, dynamic: bool = False) -> bytes:
    """`position`: where the return sits in its response, when not right after its call (as the dump keeps it)."""
    return _output_available(
        tool_call_id=part.tool_call_id,
        output=part.content,
        provider_executed=True,
        provider_metadata={PROVIDER_KEY: native_result_fields(part, sig, position)},
        dynamic=True if dynamic else None,
    )


def activity(event: ActivitySnapshot | ActivityDelta) -> bytes:
    """The fields of AG-UI's ACTIVITY_SNAPSHOT / ACTIVITY_DELTA, so a UI handles both protocols' alike."""
    data: dict[str, Any] = {'activityType': event.activity_type}
    if isinstance(event, ActivitySnapshot):
        data.update(content=event.content, replace=event.replace)
    else:
        data['patch'] = event.patch
    return _data(type='data-activity', id=event.message_id, data=data, transient=True)


def encode_events(events: Iterable[ev.AgentEvent], **kwargs: Any) -> bytes:
    """A whole stream for `events` (for tests and benchmarks): start, every event, close."""
    return encode_all(VercelAIEventStream(**kwargs), events)
