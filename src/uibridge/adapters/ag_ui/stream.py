"""`AGUIEventStream`: neutral agent events as an AG-UI 1.0 event stream (SSE bytes).

The stream is built so that the messages `@ag-ui/client`'s reducer assembles from it are the messages
`dump_messages(stream.new_messages)` gives, ids included:

- Every model response gets fresh message ids (`<runId>.<n>`: unique as long as run ids are, which the
  TS client makes uuids). Parts are grouped exactly as `dump_messages` groups them: a text part opens an
  assistant message (`TEXT_MESSAGE_*`); a tool call joins the assistant message announced just before it
  when that one has text or calls, or the stream announces one (`TEXT_MESSAGE_START` + `END`, empty
  content) so `parentMessageId` always names a message the client already has; a thinking part is
  `REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_ENCRYPTED_VALUE` (signature and provider, when
  there are any) and `REASONING_END`. The first message of a response carries the response record in its
  START event's `metadata`, which the reducer merges into the message (see `_wire`).
- `TOOL_CALL_RESULT`'s `messageId` is the id `dump_messages` gives that `ToolMessage`; its `metadata`
  holds the part record. The reducer has no way to set a tool message's `error`, so the live message
  lacks it; the record's `kind` / `outcome` keep what is needed to rebuild the part.
- Retry feedback, and its older form (a legacy tool-less `RetryPromptPart`), is a `role: system` text message plus
  a `REASONING_ENCRYPTED_VALUE` (`subtype: message`) carrying the retry-feedback marker, so the reducer builds the
  very `SystemMessage` dump gives.
- `CustomData` is a `CUSTOM` event (shown live, kept only in the response's metadata); a `FileOutput` is an
  `ACTIVITY_SNAPSHOT` building the `pydantic_ai_file` activity message dump writes, its record in the event's
  `metadata`.
- Signatures (see `dump`): each part's END event carries its message's whole `uibridge` record again with
  the part's `sig` added (`TEXT_MESSAGE_END`, `REASONING_MESSAGE_END`; the reducer merges an event's
  `metadata` into the message one top-level key at a time, so a record sent in part would replace the
  whole); `TOOL_CALL_END` carries the call's `metadata.uibridge` (`sig`), which the reducer merges into the
  tool call; `TOOL_CALL_RESULT` the tool message's record with its `sig`; the retry-feedback marker its
  `sig`. Each is computed once, from the part as the collector finished it, so it signs exactly what the
  client built from the deltas.
- A finished call's `TOOL_CALL_END` is held until the encoder knows who answers it (`core.encoder`): a server
  tool's END arrives with its result, the reducer having built the call from START and ARGS. (Sending END at
  once and the mark later would mean a second `TOOL_CALL_START`: the 1.0 reducer updates the call it holds,
  but ag-ui-validate reports a duplicate call id, and an older reducer may add a second call.)
- Provider-run (native) tool calls stream like tool calls, their START and END `metadata` saying
  `native: true`; the END (signed) is sent at once, never held, and the provider's result follows as a
  `TOOL_CALL_RESULT` whose message belongs to the response (as in a dump), after its call's END in any case.
- What a run shows beside its messages:
  - `StateSnapshot` / `StateDelta` -> `STATE_SNAPSHOT` / `STATE_DELTA`, the patch as the agent wrote it: the
    client applies it with its own JSON Patch to the state it holds, which then equals `collector.state` (the
    collector applied the same patch first, so a patch that does not apply fails the run before it is sent).
  - `StepStarted` / `StepFinished` -> `STEP_STARTED` / `STEP_FINISHED`. The client refuses a step started twice,
    a step finished that is not open, and a `RUN_FINISHED` while a step is open; so a second start of an open
    step and the end of a step that is not open are not sent, and the steps still open when the run finishes
    (or is cancelled) are finished first, in the order they started.
  - `ActivitySnapshot` / `ActivityDelta` -> `ACTIVITY_SNAPSHOT` / `ACTIVITY_DELTA`; `RawEvent` -> `RAW`. UI only.
  - A source a text part cites: a `CUSTOM` event `uibridge.source`, `{"messageId", "source"}` (`source` is the
    citation source's JSON, `core.citations`), once per source; the citations themselves ride, signed, in the
    text message's part record (see `dump`).
  - `MessageMetadata`: `CUSTOM` `uibridge.message_metadata`, `{"messageId", "metadata"}` with the event's own
    keys (the client merges them over what it has, key by key, as the collector does).
  - `ResponseInfo`: `CUSTOM` `uibridge.response_info`, `{"messageId", <field>: ...}` with the fields the event
    sets other than `usage` (`finish_reason`, `provider_response_id`, `model_name`, `provider_name`,
    `provider_details`). `messageId` is the response's first AG-UI message, the one whose record a dump writes
    them in. Usage goes in the run's end instead.
- The run ends with `RUN_FINISHED`: outcome `interrupt` when calls await approval (one interrupt per call,
  `id` from `keyring.approval_id(thread_id, call)`: only this server can mint it, for this call in this
  thread; `reason: "tool_approval"`), else `success` with `pendingToolCallIds` for calls the client's own tools
  must answer. Approval wins when both are pending: an interrupt outcome has no pending list. A provider-run
  (native) call is never pending nor awaiting approval: the provider answers it. A `RunCancelled` becomes
  outcome `cancelled` only for a client that declared protocol 1.0 or later; an older client (or one that
  declared nothing) gets a plain `RUN_FINISHED`, which every version reads as a finished run, instead of an
  outcome it may not know. A `RunError` closes everything open and ends with `RUN_ERROR`. Both carry the run's
  token usage (`usage`): one `TokenUsage` per provider and model, over the run's responses (`usage_by_model`);
  a finished run first finishes the steps still open (the client refuses a `RUN_FINISHED` while one is).

One order the stream cannot reproduce: the reducer files each `TOOL_CALL_RESULT` right after the assistant
message that owns the call, while a dump keeps a response's messages together and its tool results after
them. The two agree whenever a response's tool calls share one assistant message (calls after the
response's last text or thinking part, the usual shape); when text or thinking comes between a response's
calls, the client holds the same messages with the tool messages placed earlier.

The run's state (started and ended, the collector, open parts, held calls, dispatch) is `core.encoder`'s; this
module writes every event, in one of three ways, each writing exactly the bytes `ag_ui.encoder.EventEncoder`
writes for the same event (`data: <json>\\n\\n`, LF only; an integer millisecond `timestamp`, since the TS client
rejects a float; no optional field ever `null`):

- `sdk_frame`: the SDK model through `EventEncoder` itself, for the events a run sends once (`RUN_STARTED`,
  `RUN_FINISHED`, `RUN_ERROR`) or beside its messages (state, steps, activity, raw events, `CUSTOM`), whose
  values get the SDK's own validation and serialization;
- the events sent per message, part and tool call: the writer `core.encoder.frame_writer` derives from the SDK
  model class, which takes the field order, the camelCase names and the defaults from the class, so the layout
  is the SDK's, never re-declared here, and writes them with pydantic-core without building the model;
- `delta_frame`, by hand, for the `*_CONTENT` and `TOOL_CALL_ARGS` events sent per delta.

Tests hold the last two to `EventEncoder`, byte for byte.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    BaseEvent,
    CustomEvent,
    Interrupt,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core import RawEvent as SdkRawEvent
from ag_ui.core.version import PROTOCOL_VERSION
from ag_ui.encoder import EventEncoder

from ...core import events as ev
from ...core import messages as m
from ...core.citations import Citation
from ...core.encoder import OpenPart, StreamEncoder, frame_writer
from ...core.json_text import compact_json, json_string, parse_json, utf8_json
from ...core.messages import ModelResponse, ToolCallPart
from ...core.provenance import Keyring
from ...core.stream import encode_all
from ...core.usage import Usage, usage_by_model
from ._drafts import (
    call_record,
    citations_json,
    feedback_message,
    file_message,
    finish_marker,
    native_tool_message,
    state_marker,
    thinking_marker,
    tool_message,
)
from ._peer_history import FILE_ACTIVITY
from ._wire import CUT_RESULT_KEY, METADATA_KEY, SIG_KEY, WIRE_KEY
from .dump import response_record

_encoder = EventEncoder()

CONTENT_TYPE = _encoder.get_content_type()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


_VERSION = re.compile(r'(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?')


def declares_1_0(version: str | None) -> bool:
    """Whether a client's declared `protocolVersion` is 1.0 or later: `major.minor` or a semantic version
    (`1.0.0`, `1.2.3+build`); a pre-release of 1.0.0 (`1.0.0-rc.1`) comes before it, and anything else is no."""
    if version is None:
        return False
    match = _VERSION.fullmatch(version)
    if match is None:
        return False
    major, minor, patch, prerelease = int(match[1]), int(match[2]), int(match[3] or 0), match[4]
    if major == 1 and minor == 0 and patch == 0 and prerelease:
        return False
    return major >= 1


def sdk_frame(event: BaseEvent) -> bytes:
    return utf8_json(_encoder.encode(event))


def delta_frame(event_type: str, id_key: str, entity_id: str, delta: str) -> bytes:
    """A `*_CONTENT` / `TOOL_CALL_ARGS` frame, byte for byte what the SDK model serializes to: `type`,
    `timestamp`, then the event's own fields, compact, non-ASCII as UTF-8."""
    return utf8_json(
        f'data: {{"type":"{event_type}","timestamp":{now_ms()},"{id_key}":{json_string(entity_id)},'
        f'"delta":{json_string(delta)}}}\n\n'
    )


# The events a run sends per message, part and tool call, written from their values (`frame_writer`), with the
# optional fields the stream sets.
_text_start = frame_writer(TextMessageStartEvent, optional={'timestamp', 'role', 'metadata'})
_text_end = frame_writer(TextMessageEndEvent, optional={'timestamp', 'metadata'})
_reasoning_start = frame_writer(ReasoningStartEvent, optional={'timestamp'})
_reasoning_message_start = frame_writer(ReasoningMessageStartEvent, optional={'timestamp', 'metadata'})
_reasoning_message_end = frame_writer(ReasoningMessageEndEvent, optional={'timestamp', 'metadata'})
_reasoning_encrypted_value = frame_writer(ReasoningEncryptedValueEvent, optional={'timestamp'})
_reasoning_end = frame_writer(ReasoningEndEvent, optional={'timestamp'})
_tool_call_start = frame_writer(ToolCallStartEvent, optional={'timestamp', 'parent_message_id', 'metadata'})
_tool_call_end = frame_writer(ToolCallEndEvent, optional={'timestamp', 'metadata'})
_tool_call_result = frame_writer(ToolCallResultEvent, optional={'timestamp', 'metadata'})


SOURCE_EVENT = 'uibridge.source'
MESSAGE_METADATA_EVENT = 'uibridge.message_metadata'
RESPONSE_INFO_EVENT = 'uibridge.response_info'
_LATE_FIELDS = ('finish_reason', 'provider_response_id', 'model_name', 'provider_name', 'provider_details')


@dataclass(eq=False, slots=True)
class _Open(OpenPart):
    kind: Literal['text', 'thinking', 'call', 'native']
    id: str
    """The message id (text, thinking) or the tool call id."""
    span_id: str = ''
    held_args: str | None = None
    """A tool call's dict arguments, held back until we know no streamed argument text replaces them."""
    record: dict[str, Any] | None = None
    """The `uibridge` record a text or thinking message's START sent: its END sends it whole again, signed."""
    citations: list[Citation] | None = None
    """The citations a text part started with, whose sources follow its END."""
    held_result: bytes = b''
    """A provider's result that came before its call's END: sent right after the END, as a client expects."""


class AGUIEventStream(StreamEncoder[_Open]):
    """Implements `uibridge.core.stream.EventStreamEncoder` for AG-UI 1.0."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        parent_run_id: str | None = None,
        client_protocol_version: str | None = None,
        keyring: Keyring | None = None,
        state: Any = None,
    ) -> None:
        """`keyring` signs what the stream sends and mints approval ids (`None`: `default_keyring()`); `state` is
        the client's (`RunAgentInput.state`), which a `STATE_DELTA` before any snapshot patches."""
        super().__init__(keyring, state)
        self.thread_id = thread_id
        self.run_id = run_id
        self.parent_run_id = parent_run_id  # echoed in `RUN_STARTED`
        self.client_protocol_version = client_protocol_version
        self._counter = 0
        self._record_due = False  # the current response's record goes with its first message
        self._responses: list[m.ModelResponse] = []  # as the collector holds (and completes) them
        self._response_ids: list[str] | None = None  # the AG-UI message ids of the run's last response
        self._finishes: dict[str, str] = {}  # the first-message markers sent, by the message they went to
        self._late_state = False  # the state changed after the last response's record went out
        self._text_ids: dict[int, str] = {}  # the response's text messages by part index (for a late citation)
        self._native_ids: set[str] = set()
        """The provider-run calls of this run."""
        self._calls: dict[str, _Open] = {}  # the calls whose END is still to go, by id (a result waits for it)
        self._file_first: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        """The file activity messages that open a response, by id: their content and record (see `_finish`)."""
        self._cut: dict[str, dict[str, Any]] = {}  # the calls a failure cut off mid-argument (no END): their records
        self._open_steps: dict[str, None] = {}
        """The steps started and not finished, in the order they started."""
        self._last_kind: Literal['assistant', 'reasoning'] | None = None
        self._last_assistant_id = ''
        self._joinable = False
        """Whether a tool call may join the last assistant message: it has text or calls (dump's rule)."""
        self._ids: list[list[str]] = []
        self._last_side: Literal['request', 'response'] | None = None
        self._approvals: list[str] = []
        self._client_calls: list[str] = []
        self._answered: set[str] = set()
        """The calls a `ToolResult` of this run answered."""

    # ------------------------------------------------------------------------------ the protocol

    @property
    def headers(self) -> Mapping[str, str]:
        return {'content-type': CONTENT_TYPE, 'cache-control': 'no-cache', 'x-accel-buffering': 'no'}

    @property
    def new_messages(self) -> list[m.ModelMessage]:
        """The run's messages, each carrying the AG-UI ids the stream gave it (so dump reuses them)."""
        messages = self._collector.messages
        result: list[m.ModelMessage] = []
        for message, ids in zip(messages, self._ids, strict=False):
            if ids:
                metadata = {**(message.metadata or {}), METADATA_KEY: {'messages': [{'id': i} for i in ids]}}
                message = message.model_copy(update={'metadata': metadata})
            result.append(message)
        result.extend(messages[len(result) :])
        return result

    def _stream_started(self) -> bytes:
        return sdk_frame(
            RunStartedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                parent_run_id=self.parent_run_id,
                protocol_version=PROTOCOL_VERSION,
                timestamp=now_ms(),
            )
        )

    # ------------------------------------------------------------------------------- messages

    def _new_id(self) -> str:
        self._counter += 1
        return f'{self.run_id}.{self._counter}'

    def _response_started(self) -> bytes:
        out = self._finish()  # the response before it is complete: its reason's signature covers every part
        self._last_kind = None
        self._response_ids = []
        self._ids.append(self._response_ids)
        self._last_side = 'response'
        last = self._collector.last_message
        assert isinstance(last, m.ModelResponse)
        self._responses.append(last)
        self._record_due = True
        self._late_state = False  # the collector moved the state to this response: its record will hold it
        if self._text_ids:  # a new table only when the last response used it
            self._text_ids = {}
        return out

    def _response_message_id(self) -> str:
        message_id = self._new_id()
        assert self._response_ids is not None
        self._response_ids.append(message_id)
        return message_id

    def _request_message_id(self) -> str:
        if self._last_side != 'request':
            self._ids.append([])
            self._last_side = 'request'
        message_id = self._new_id()
        self._ids[-1].append(message_id)
        return message_id

    def _record(self, part: dict[str, Any] | None) -> dict[str, Any]:
        """The `uibridge` record of a response's next message: the response record on its first message (as the
        response stands then: what a `ResponseInfo` or `MessageMetadata` set before it is in it)."""
        ours: dict[str, Any] = {}
        if self._record_due:
            ours['response'] = response_record(self._responses[-1], self._keyring)
            self._record_due = False
        if part:
            ours['part'] = part
        return ours

    def _signed(self, opened: _Open) -> dict[str, Any]:
        """The END `metadata` of a text or thinking message: its START record again, with the part's `sig`."""
        part = opened.finished
        assert isinstance(part, m.TextPart | m.ThinkingPart) and opened.record is not None
        record = opened.record
        signed = {**record.get('part', {}), SIG_KEY: self._keyring.sign_part(part)}
        if isinstance(part, m.TextPart) and part.citations:
            signed['citations'] = citations_json(part.citations)  # what the signature covers (domain text/cited)
        record['part'] = signed
        return {WIRE_KEY: record}

    # ---------------------------------------------------------------------------------- parts

    def _part_started(self, event: ev.PartStart, response: m.ModelResponse, slot: int) -> tuple[_Open, bytes]:
        part = event.part
        if isinstance(part, m.TextPart):
            message_id = self._response_message_id()
            record = self._record({'id': part.id} if part.id is not None else None)
            metadata = {WIRE_KEY: record} if record else None
            out = _text_start(timestamp=now_ms(), message_id=message_id, role='assistant', metadata=metadata)
            if part.content:
                out += delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', message_id, part.content)
            self._last_kind = 'assistant'
            self._last_assistant_id = message_id
            self._joinable = bool(part.content)
            self._text_ids[event.index] = message_id
            return _Open(response, slot, 'text', message_id, record=record, citations=part.citations), out
        if isinstance(part, m.ThinkingPart):
            message_id = self._response_message_id()
            span_id = f'{message_id}.reasoning'
            now = now_ms()
            record = self._record(None)
            out = _reasoning_start(timestamp=now, message_id=span_id)
            out += _reasoning_message_start(
                timestamp=now, message_id=message_id, metadata={WIRE_KEY: record} if record else None
            )
            if part.content:
                out += delta_frame('REASONING_MESSAGE_CONTENT', 'messageId', message_id, part.content)
            self._last_kind = 'reasoning'
            return _Open(response, slot, 'thinking', message_id, span_id=span_id, record=record), out
        out = b''
        if self._last_kind != 'assistant' or not self._joinable:
            message_id = self._response_message_id()
            now = now_ms()
            record = self._record(None)
            metadata = {WIRE_KEY: record} if record else None
            out += _text_start(timestamp=now, message_id=message_id, role='assistant', metadata=metadata)
            out += _text_end(timestamp=now, message_id=message_id)
            self._last_kind = 'assistant'
            self._last_assistant_id = message_id
        self._joinable = True
        native = isinstance(part, m.NativeToolCallPart)
        if native:
            self._native_ids.add(part.tool_call_id)
        out += _tool_call_start(
            timestamp=now_ms(),
            tool_call_id=part.tool_call_id,
            tool_call_name=part.tool_name,
            parent_message_id=self._last_assistant_id,
            metadata={WIRE_KEY: {'native': True}} if native else None,  # a UI knows at once nobody here answers it
        )
        opened = _Open(response, slot, 'native' if native else 'call', part.tool_call_id)
        self._calls[part.tool_call_id] = opened
        if isinstance(part.args, dict):
            opened.held_args = compact_json(part.args)
        elif part.args:
            out += delta_frame('TOOL_CALL_ARGS', 'toolCallId', part.tool_call_id, part.args)
        return opened, out

    def _part_delta(self, event: ev.PartDelta) -> bytes:
        opened = self._open[event.index]
        if not event.delta:
            return b''
        if opened.kind == 'text':
            if opened.id == self._last_assistant_id:
                self._joinable = True
            return delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', opened.id, event.delta)
        if opened.kind == 'thinking':
            return delta_frame('REASONING_MESSAGE_CONTENT', 'messageId', opened.id, event.delta)
        opened.held_args = None
        return delta_frame('TOOL_CALL_ARGS', 'toolCallId', opened.id, event.delta)

    def _part_ended(self, opened: _Open, error: str | None) -> bytes:
        """The END events of a part the collector has finished (so the signature covers what was streamed).
        A call cut off by an error is sent at once (`_send_call`): its arguments are what the client built."""
        if opened.kind == 'call' or opened.kind == 'native':
            out = b''
            if opened.held_args is not None:
                out = delta_frame('TOOL_CALL_ARGS', 'toolCallId', opened.id, opened.held_args)
            if opened.kind == 'native':  # the provider answers it: nothing to wait for, never held
                return out + self._send_call(opened, None, error)
            return out + self._call_ended(opened.id, opened, error)
        now = now_ms()
        if opened.kind == 'text':
            out = _text_end(timestamp=now, message_id=opened.id, metadata=self._signed(opened))
            return out + source_frames(opened.id, opened.citations) if opened.citations else out
        out = _reasoning_message_end(timestamp=now, message_id=opened.id, metadata=self._signed(opened))
        part = opened.finished
        assert isinstance(part, m.ThinkingPart)
        encrypted = thinking_marker(part)
        if encrypted is not None:
            out += _reasoning_encrypted_value(
                timestamp=now, subtype='message', entity_id=opened.id, encrypted_value=encrypted
            )
        return out + _reasoning_end(timestamp=now, message_id=opened.span_id)

    def _send_call(self, held: _Open, mark: ev.AnsweredBy | None, error: str | None = None) -> bytes:
        """`TOOL_CALL_END` with the call's signed `metadata` (client-marked when a client tool answers it)."""
        call = held.finished
        assert isinstance(call, m.ToolCallPart | m.NativeToolCallPart)
        record = call_record(call, self._keyring, client=mark == 'client')
        metadata = {WIRE_KEY: record}
        if (error is not None or self.failing) and _arguments_unfinished(call):
            # `TOOL_CALL_END` says the argument text is whole (ag-ui-validate AGUI204 parses it): a call the run's
            # failure cut off mid-argument gets none. Its signed record rides an empty `TOOL_CALL_ARGS` instead,
            # which the reducer merges into the call the same way, and the `RUN_ERROR` after it leaves the call
            # open, as a failed run may.
            end = sdk_frame(ToolCallArgsEvent(tool_call_id=held.id, delta='', metadata=metadata, timestamp=now_ms()))
            self._cut[held.id] = record
        else:
            end = _tool_call_end(timestamp=now_ms(), tool_call_id=held.id, metadata=metadata)
        self._calls.pop(held.id, None)
        return end + held.held_result

    def _file_output(self, event: ev.FileOutput) -> bytes:
        """The `pydantic_ai_file` activity message dump writes for the file (its record on the snapshot's
        `metadata`, which the reducer merges into the message); a call after it opens a new assistant message."""
        self._last_kind = None
        draft = file_message(event.part, self._keyring)
        message_id = self._response_message_id()
        record = self._record(draft['_uib']['part'])
        if 'response' in record:
            self._file_first[message_id] = (draft['content'], record)  # `_finish` may add the markers to it
        return _file_snapshot(message_id, draft['content'], record)

    def _custom_data(self, event: ev.CustomData) -> bytes:
        return sdk_frame(CustomEvent(name=event.name, value=event.data, timestamp=now_ms()))

    # ------------------------------------------------------------------------------ request side

    def _tool_result(self, event: ev.ToolResult) -> bytes:
        part = event.part
        self._answered.add(part.tool_call_id)
        draft = tool_message(part, self._keyring)
        call_record = self._cut.pop(part.tool_call_id, None)
        if call_record is not None:
            return _cut_call_result(draft, part.tool_call_id, self._request_message_id(), call_record)
        return _result(draft, part.tool_call_id, self._request_message_id())

    def _retry_prompt(self, part: m.RetryPromptPart) -> bytes:
        return self._feedback_message(part)

    def _retry_feedback(self, event: ev.RetryFeedback) -> bytes:
        return self._feedback_message(event.part)

    def _feedback_message(self, part: m.RetryFeedbackPart | m.RetryPromptPart) -> bytes:
        draft = feedback_message(part, self._keyring)
        message_id = self._request_message_id()
        now = now_ms()
        out = _text_start(timestamp=now, message_id=message_id, role='system')
        if draft['content']:
            out += delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', message_id, draft['content'])
        out += _text_end(timestamp=now, message_id=message_id)
        return out + _reasoning_encrypted_value(
            timestamp=now, subtype='message', entity_id=message_id, encrypted_value=draft['encryptedValue']
        )

    # ------------------------------------------------------------------------ beside the messages

    def _native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        """`TOOL_CALL_RESULT` for a provider-run tool: a message of the response, as dump writes it."""
        self._last_kind = None  # a call after it opens a new assistant message, as in a dump
        draft = native_tool_message(event.part, self._keyring)
        result = _result(draft, event.part.tool_call_id, self._response_message_id())
        call = self._calls.get(event.part.tool_call_id)
        if call is None:
            return result
        call.held_result += result  # the provider answered before the call's END went out: after it, then
        return b''

    def _citation_added(self, event: ev.CitationAdded) -> bytes:
        message_id = self._text_ids.get(event.index)
        return b'' if message_id is None else source_frames(message_id, [event.citation])

    def _response_info(self, event: ev.ResponseInfo) -> bytes:
        message_id = self._response_id()
        return b'' if message_id is None else response_info_frame(message_id, event) + self._finish()

    def _finish(self) -> bytes:
        """What the record of the run's last response could not hold, signed, into its first message's
        `encryptedValue`: its finish reason, when it has one a round trip keeps, and the state, when the agent set it
        after that record went out (sent again only when it changed: a part added after it, a run's own reason)."""
        if not self._responses or not self._response_ids:
            return b''
        response = self._responses[-1]
        first = response.parts[0] if response.parts else None
        held = thinking_marker(first) if isinstance(first, m.ThinkingPart) else None
        encrypted = finish_marker(response, self._keyring, held) or held
        if self._late_state:
            encrypted = state_marker(self._collector.state, self._keyring, encrypted)
        message_id = self._response_ids[0]
        if encrypted is None or encrypted == held or self._finishes.get(message_id) == encrypted:
            return b''
        self._finishes[message_id] = encrypted
        file_first = self._file_first.get(message_id)
        if file_first is not None:
            # An activity message has no `encryptedValue`: the markers ride in its record, as dump writes them,
            # the snapshot sent again whole (the reducer merges `metadata` one top-level key at a time).
            content, record = file_first
            return _file_snapshot(message_id, content, {**record, 'encrypted': encrypted})
        return _reasoning_encrypted_value(
            timestamp=now_ms(), subtype='message', entity_id=message_id, encrypted_value=encrypted
        )

    def _message_metadata(self, event: ev.MessageMetadata) -> bytes:
        message_id = self._response_id()
        return b'' if message_id is None else message_metadata_frame(message_id, event)

    def _response_id(self) -> str | None:
        """The first AG-UI message of the response late facts apply to (the current one, else the run's last),
        or `None` while it has none: its record, sent with that message, will hold them."""
        # Before any response (`None`) the collector keeps the facts for the first one, whose record holds them.
        return self._response_ids[0] if self._response_ids else None

    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes:
        return sdk_frame(StateSnapshotEvent(snapshot=event.snapshot, timestamp=now_ms())) + self._state_after_record()

    def _state_delta(self, event: ev.StateDelta) -> bytes:
        frame = sdk_frame(StateDeltaEvent.model_validate({'delta': event.delta, 'timestamp': now_ms()}))
        return frame + self._state_after_record()

    def _state_after_record(self) -> bytes:
        """The collector keeps the state on the run's last response; when that response's record (which signs
        it) went out already, the state rides its first message's `encryptedValue` instead, signed once, when the
        response is complete (`_finish`, at the next response or the run's end), not once per state event. Before
        a response's first message, or once the next response starts, its record holds the state."""
        if self._response_ids and not self._record_due:
            self._late_state = True
        return b''

    def _step_started(self, event: ev.StepStarted) -> bytes:
        if event.name in self._open_steps:
            return b''
        self._open_steps[event.name] = None
        return sdk_frame(StepStartedEvent(step_name=event.name, timestamp=now_ms()))

    def _step_finished(self, event: ev.StepFinished) -> bytes:
        if event.name not in self._open_steps:
            return b''
        del self._open_steps[event.name]
        return sdk_frame(StepFinishedEvent(step_name=event.name, timestamp=now_ms()))

    def _finish_steps(self) -> bytes:
        """`STEP_FINISHED` for every step still open: a run may not finish with one open."""
        names, self._open_steps = list(self._open_steps), {}
        return b''.join(sdk_frame(StepFinishedEvent(step_name=name, timestamp=now_ms())) for name in names)

    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes:
        return sdk_frame(
            ActivitySnapshotEvent(
                message_id=event.message_id,
                activity_type=event.activity_type,
                content=event.content,
                replace=None if event.replace else False,  # absent means replace (the protocol's default)
                timestamp=now_ms(),
            )
        )

    def _activity_delta(self, event: ev.ActivityDelta) -> bytes:
        values = {'messageId': event.message_id, 'activityType': event.activity_type, 'patch': event.patch}
        return sdk_frame(ActivityDeltaEvent.model_validate({**values, 'timestamp': now_ms()}))

    def _raw_event(self, event: ev.RawEvent) -> bytes:
        return sdk_frame(SdkRawEvent(event=event.event, source=event.source, timestamp=now_ms()))

    # ----------------------------------------------------------------------------- how a run ends

    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        # A mark after the call's END (after its own result) comes too late to sign; the run's outcome still
        # names the call. The provider answers a native call: a mark on one is no client's or approver's work.
        if event.tool_call_id in self._native_ids:
            return b''
        if event.answered_by == 'approval':
            self._approvals.append(event.tool_call_id)
        else:
            self._client_calls.append(event.tool_call_id)
        return b''

    def _run_finished(self, event: ev.RunFinished) -> bytes:
        return self._finish() + self._run_outcome()

    def _run_outcome(self) -> bytes:
        if self._approvals:
            interrupts = [self._interrupt(call_id) for call_id in self._approvals]
            return self._finished(RunFinishedInterruptOutcome(interrupts=interrupts))
        pending = [call_id for call_id in self._client_calls if call_id not in self._answered]
        return self._finished(RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None))

    def _run_error(self, event: ev.RunError) -> bytes:
        usage = token_usage(self._responses)
        return sdk_frame(RunErrorEvent(message=event.message, code=event.code, usage=usage, timestamp=now_ms()))

    def _run_cancelled(self, event: ev.RunCancelled) -> bytes:
        return self._finished(RunFinishedCancelledOutcome() if declares_1_0(self.client_protocol_version) else None)

    def _interrupt(self, tool_call_id: str) -> Interrupt:
        call = self._collector.tool_call(tool_call_id) or ToolCallPart(tool_name='', tool_call_id=tool_call_id)
        return Interrupt(
            id=self._keyring.approval_id(self.thread_id, call),
            reason='tool_approval',
            tool_call_id=tool_call_id,
            message=f'Approve the call to {call.tool_name}?' if call.tool_name else None,
        )

    def _finished(
        self, outcome: RunFinishedSuccessOutcome | RunFinishedInterruptOutcome | RunFinishedCancelledOutcome | None
    ) -> bytes:
        usage = token_usage(self._responses)
        return self._finish_steps() + sdk_frame(
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, usage=usage, timestamp=now_ms()
            )
        )


def _result(draft: dict[str, Any], tool_call_id: str, message_id: str) -> bytes:
    """`TOOL_CALL_RESULT` building the `ToolMessage` `draft` describes (its record in `metadata`)."""
    content = draft['content']
    metadata = {WIRE_KEY: draft['_uib']}
    return _tool_call_result(
        timestamp=now_ms(), message_id=message_id, tool_call_id=tool_call_id, content=content, metadata=metadata
    )


def _cut_call_result(draft: dict[str, Any], tool_call_id: str, message_id: str, call_record: dict[str, Any]) -> bytes:
    """The failed result of a call a failure cut off mid-argument. A `TOOL_CALL_RESULT` may not come while its call
    is open (ag-ui-validate AGUI206), and that call gets no `TOOL_CALL_END` (its text does not parse, AGUI204), so
    the tool message rides whole, signed, in the call's record (`CUT_RESULT_KEY`), on another empty
    `TOOL_CALL_ARGS`: the reducer merges it into the call, the client sends it back with the call, and loading
    puts the message after the call's, as if the event had built it."""
    message = {'id': message_id, 'role': 'tool', 'toolCallId': tool_call_id, 'content': draft['content']}
    if 'error' in draft:
        message['error'] = draft['error']
    message['metadata'] = {WIRE_KEY: draft['_uib']}
    metadata = {WIRE_KEY: {**call_record, CUT_RESULT_KEY: message}}
    return sdk_frame(ToolCallArgsEvent(tool_call_id=tool_call_id, delta='', metadata=metadata, timestamp=now_ms()))


def _custom(name: str, value: dict[str, Any]) -> bytes:
    return sdk_frame(CustomEvent(name=name, value=value, timestamp=now_ms()))


def source_frames(message_id: str, citations: Iterable[Citation]) -> bytes:
    """One `uibridge.source` event per source of `citations`, for the text message `message_id`."""
    return b''.join(
        _custom(SOURCE_EVENT, {'messageId': message_id, 'source': source.model_dump(mode='json', exclude_none=True)})
        for citation in citations
        for source in citation.sources
    )


def message_metadata_frame(message_id: str, event: ev.MessageMetadata) -> bytes:
    return _custom(MESSAGE_METADATA_EVENT, {'messageId': message_id, 'metadata': event.metadata})


def response_info_frame(message_id: str, event: ev.ResponseInfo) -> bytes:
    """The late fields `event` sets besides usage, or nothing when it sets none."""
    fields = {name: value for name in _LATE_FIELDS if (value := getattr(event, name)) is not None}
    return _custom(RESPONSE_INFO_EVENT, {'messageId': message_id, **fields}) if fields else b''


def token_usage(responses: Sequence[ModelResponse]) -> list[TokenUsage] | None:
    """The run's usage per provider and model, in AG-UI's accounting (`None` when no response reported any)."""
    totals = usage_by_model((r.provider_name, r.model_name, r.usage) for r in responses if r.usage is not None)
    return [_token_usage(t.provider_name, t.model_name, t.usage) for t in totals] or None


def _token_usage(provider: str | None, model: str | None, usage: Usage) -> TokenUsage:
    # The totals always; a breakdown only when the provider reported it (absent, not 0, says "not known").
    return TokenUsage(
        provider=provider,
        model=model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        reasoning_tokens=usage.output_reasoning_tokens or None,
        cached_input_tokens=usage.cache_read_tokens or None,
        cache_write_input_tokens=usage.cache_write_tokens or None,
    )


def _arguments_unfinished(call: m.ToolCallPart | m.NativeToolCallPart) -> bool:
    """Whether the argument text built for `call` is not JSON (the collector keeps text it could not parse as the
    string it was; a dict was whole, and no text at all is a call without arguments)."""
    args = call.args
    if not isinstance(args, str) or not args:
        return False
    try:
        parse_json(args)
    except ValueError:
        return True
    return False


def encode_events(events: Iterable[ev.AgentEvent], **kwargs: Any) -> bytes:
    """The whole stream for `events` (start, each event, close): for tests and benchmarks."""
    kwargs.setdefault('thread_id', 'thread')
    kwargs.setdefault('run_id', 'run')
    return encode_all(AGUIEventStream(**kwargs), events)


def _file_snapshot(message_id: str, content: dict[str, Any], record: dict[str, Any]) -> bytes:
    return sdk_frame(
        ActivitySnapshotEvent(
            message_id=message_id,
            activity_type=FILE_ACTIVITY,
            content=content,
            metadata={WIRE_KEY: record},
            timestamp=now_ms(),
        )
    )
