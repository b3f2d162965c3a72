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
- A legacy tool-less `RetryPromptPart` is a `role: user` text message, as dump writes it.
- Retry feedback is a `role: system` text message plus a `REASONING_ENCRYPTED_VALUE` (`subtype: message`)
  carrying the seed-003 marker, so the reducer builds the very `SystemMessage` dump gives.
- `CustomData` is a `CUSTOM` event (shown live, kept only in the response's metadata); a `FileOutput` has
  no AG-UI form and is only collected.
- The run ends with `RUN_FINISHED`: outcome `interrupt` when calls await approval (one interrupt per call,
  `id` from `approval_id(call)`, `reason: "tool_approval"`; without `approval_id` the id is the call's own,
  fit only for tests: the server passes `ApprovalSigner.approval_id`), else `success` with
  `pendingToolCallIds` for calls the client's own tools must answer. Approval wins when both are pending:
  an interrupt outcome has no pending list. A `RunCancelled` becomes outcome `cancelled` only for a client
  that declared protocol 1.0 or later; an older client (or one that declared nothing) gets a plain
  `RUN_FINISHED`, which every version reads as a finished run, instead of an outcome it may not know.
  A `RunError` closes everything open and ends with `RUN_ERROR`.

One order the stream cannot reproduce: the reducer files each `TOOL_CALL_RESULT` right after the assistant
message that owns the call, while a dump keeps a response's messages together and its tool results after
them. The two agree whenever a response's tool calls share one assistant message (calls after the
response's last text or thinking part, the usual shape); when text or thinking comes between a response's
calls, the client holds the same messages with the tool messages placed earlier.

Framing and the delta hot path are in `frames`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ag_ui.core import (
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
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.version import PROTOCOL_VERSION

from ...core.events import (
    AgentEvent,
    CustomData,
    FileOutput,
    MessageCollector,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseStart,
    RetryFeedback,
    RunCancelled,
    RunError,
    RunFinished,
    ToolCallReady,
    ToolResult,
)
from ...core.json_text import compact_json
from ...core.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ThinkingPart, ToolCallPart
from ._wire import METADATA_KEY, WIRE_KEY
from .dump import feedback_message, legacy_retry_message, response_record, thinking_marker, tool_message
from .frames import CONTENT_TYPE, declares_1_0, delta_frame, event_frame, now_ms, sdk_frame

__all__ = ['AGUIEventStream', 'encode_events']

# The events a run sends per message, part and tool call, written directly (see `frames`).
_text_start = event_frame(TextMessageStartEvent)
_text_end = event_frame(TextMessageEndEvent)
_reasoning_start = event_frame(ReasoningStartEvent)
_reasoning_message_start = event_frame(ReasoningMessageStartEvent)
_reasoning_message_end = event_frame(ReasoningMessageEndEvent)
_reasoning_encrypted_value = event_frame(ReasoningEncryptedValueEvent)
_reasoning_end = event_frame(ReasoningEndEvent)
_tool_call_start = event_frame(ToolCallStartEvent)
_tool_call_end = event_frame(ToolCallEndEvent)
_tool_call_result = event_frame(ToolCallResultEvent)


def _call_id(call: ToolCallPart) -> str:
    # Only for tests and demos: a server should pass `ApprovalSigner(...).approval_id`, or a client can
    # approve a call it wrote itself by echoing its id.
    return call.tool_call_id


@dataclass
class _Open:
    kind: Literal['text', 'thinking', 'call']
    id: str
    part: TextPart | ThinkingPart | ToolCallPart
    span_id: str = ''
    held_args: str | None = None
    """A tool call's dict arguments, held back until we know no streamed argument text replaces them."""


class AGUIEventStream:
    """Implements `uibridge.core.stream.EventStreamEncoder` for AG-UI 1.0."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        client_protocol_version: str | None = None,
        approval_id: Callable[[ToolCallPart], str] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.client_protocol_version = client_protocol_version
        self._approval_id: Callable[[ToolCallPart], str] = approval_id or _call_id
        self._collector = MessageCollector()
        self._started = False
        self._ended = False
        self._counter = 0
        self._open: dict[int, _Open] = {}
        self._in_response = False
        self._pending_record: dict[str, Any] | None = None
        self._last_kind: Literal['assistant', 'reasoning'] | None = None
        self._last_assistant_id = ''
        self._joinable = False
        """Whether a tool call may join the last assistant message: it has text or calls (dump's rule)."""
        self._ids: list[list[str]] = []
        self._last_side: Literal['request', 'response'] | None = None
        self._approvals: list[str] = []
        self._client_calls: list[str] = []
        self._answered: set[str] = set()

    # ------------------------------------------------------------------------------ the protocol

    @property
    def headers(self) -> Mapping[str, str]:
        return {'content-type': CONTENT_TYPE, 'cache-control': 'no-cache', 'x-accel-buffering': 'no'}

    def start(self) -> bytes:
        if self._started:
            return b''
        self._started = True
        return sdk_frame(
            RunStartedEvent(
                thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION, timestamp=now_ms()
            )
        )

    def encode(self, event: AgentEvent) -> bytes:
        if self._ended:
            return b''
        prefix = self.start() if not self._started else b''
        self._collector.feed(event)
        out: list[bytes] = [prefix] if prefix else []
        match event:
            case PartDelta():
                self._delta(event, out)
            case PartStart():
                self._part_start(event, out)
            case PartEnd():
                self._part_end(self._open.pop(event.index), event.signature, out)
            case ResponseStart():
                self._close_parts(out)
                self._start_response()
            case ToolResult() if isinstance(event.part, RetryPromptPart) and event.part.tool_name is None:
                self._close_parts(out)
                self._legacy_retry(event.part, out)
            case ToolResult():
                self._close_parts(out)
                self._answered.add(event.part.tool_call_id)
                draft = tool_message(event.part)
                out.append(
                    _tool_call_result(
                        now_ms(),
                        message_id=self._request_message_id(),
                        tool_call_id=event.part.tool_call_id,
                        content=draft['content'],
                        metadata={WIRE_KEY: draft['_uib']},
                    )
                )
            case RetryFeedback():
                self._close_parts(out)
                self._feedback(event, out)
            case ToolCallReady():
                target = self._approvals if event.answered_by == 'approval' else self._client_calls
                target.append(event.tool_call_id)
            case CustomData():
                if not event.transient and not self._in_response:
                    self._start_response()
                out.append(sdk_frame(CustomEvent(name=event.name, value=event.data, timestamp=now_ms())))
            case FileOutput():
                if not self._in_response:
                    self._start_response()
            case RunFinished():
                self._finish(out)
            case RunError():
                self._close_parts(out)
                self._ended = True
                out.append(sdk_frame(RunErrorEvent(message=event.message, code=event.code, timestamp=now_ms())))
            case RunCancelled():
                self._close_parts(out)
                self._ended = True
                outcome = RunFinishedCancelledOutcome() if declares_1_0(self.client_protocol_version) else None
                out.append(self._run_finished(outcome))
        return b''.join(out)

    def close(self) -> bytes:
        if self._ended:
            return b''
        out: list[bytes] = [self.start()]
        self._collector.close()
        self._finish(out)
        return b''.join(out)

    @property
    def new_messages(self) -> list[ModelMessage]:
        """The run's messages, each carrying the AG-UI ids the stream gave it (so dump reuses them)."""
        messages = self._collector.messages
        result: list[ModelMessage] = []
        for message, ids in zip(messages, self._ids, strict=False):
            if ids:
                metadata = {**(message.metadata or {}), METADATA_KEY: {'messages': [{'id': i} for i in ids]}}
                message = message.model_copy(update={'metadata': metadata})
            result.append(message)
        result.extend(messages[len(result) :])
        return result

    # ------------------------------------------------------------------------------- the work

    def _new_id(self) -> str:
        self._counter += 1
        return f'{self.run_id}.{self._counter}'

    def _start_response(self) -> None:
        self._in_response = True
        self._last_kind = None
        self._ids.append([])
        self._last_side = 'response'
        last = self._collector.last_message
        assert isinstance(last, ModelResponse)
        self._pending_record = response_record(last)

    def _response_message_id(self) -> str:
        message_id = self._new_id()
        self._ids[-1].append(message_id)
        return message_id

    def _request_message_id(self) -> str:
        self._in_response = False
        if self._last_side != 'request':
            self._ids.append([])
            self._last_side = 'request'
        message_id = self._new_id()
        self._ids[-1].append(message_id)
        return message_id

    def _metadata(self, part: dict[str, Any] | None) -> dict[str, Any] | None:
        ours: dict[str, Any] = {}
        if self._pending_record is not None:
            ours['response'] = self._pending_record
            self._pending_record = None
        if part:
            ours['part'] = part
        return {WIRE_KEY: ours} if ours else None

    def _part_start(self, event: PartStart, out: list[bytes]) -> None:
        if not self._in_response:
            self._start_response()
        part = event.part
        if isinstance(part, TextPart):
            message_id = self._response_message_id()
            metadata = self._metadata({'id': part.id} if part.id is not None else None)
            out.append(_text_start(now_ms(), message_id=message_id, role='assistant', metadata=metadata))
            if part.content:
                out.append(delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', message_id, part.content))
            self._last_kind = 'assistant'
            self._last_assistant_id = message_id
            self._joinable = bool(part.content)
            self._open[event.index] = _Open('text', message_id, part)
        elif isinstance(part, ThinkingPart):
            message_id = self._response_message_id()
            span_id = f'{message_id}.reasoning'
            now = now_ms()
            out.append(_reasoning_start(now, message_id=span_id))
            out.append(_reasoning_message_start(now, message_id=message_id, metadata=self._metadata(None)))
            if part.content:
                out.append(delta_frame('REASONING_MESSAGE_CONTENT', 'messageId', message_id, part.content))
            self._last_kind = 'reasoning'
            self._open[event.index] = _Open('thinking', message_id, part, span_id=span_id)
        else:
            if self._last_kind != 'assistant' or not self._joinable:
                message_id = self._response_message_id()
                now = now_ms()
                out.append(_text_start(now, message_id=message_id, role='assistant', metadata=self._metadata(None)))
                out.append(_text_end(now, message_id=message_id))
                self._last_kind = 'assistant'
                self._last_assistant_id = message_id
            self._joinable = True
            out.append(
                _tool_call_start(
                    now_ms(),
                    tool_call_id=part.tool_call_id,
                    tool_call_name=part.tool_name,
                    parent_message_id=self._last_assistant_id,
                )
            )
            opened = _Open('call', part.tool_call_id, part)
            if isinstance(part.args, dict):
                opened.held_args = compact_json(part.args)
            elif part.args:
                out.append(delta_frame('TOOL_CALL_ARGS', 'toolCallId', part.tool_call_id, part.args))
            self._open[event.index] = opened

    def _delta(self, event: PartDelta, out: list[bytes]) -> None:
        opened = self._open[event.index]
        if not event.delta:
            return
        if opened.kind == 'text':
            if opened.id == self._last_assistant_id:
                self._joinable = True
            out.append(delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', opened.id, event.delta))
        elif opened.kind == 'thinking':
            out.append(delta_frame('REASONING_MESSAGE_CONTENT', 'messageId', opened.id, event.delta))
        else:
            opened.held_args = None
            out.append(delta_frame('TOOL_CALL_ARGS', 'toolCallId', opened.id, event.delta))

    def _part_end(self, opened: _Open, signature: str | None, out: list[bytes]) -> None:
        now = now_ms()
        if opened.kind == 'text':
            out.append(_text_end(now, message_id=opened.id))
        elif opened.kind == 'thinking':
            out.append(_reasoning_message_end(now, message_id=opened.id))
            part = opened.part
            assert isinstance(part, ThinkingPart)
            if signature is not None:
                part = part.model_copy(update={'signature': signature})
            encrypted = thinking_marker(part)
            if encrypted is not None:
                out.append(
                    _reasoning_encrypted_value(now, subtype='message', entity_id=opened.id, encrypted_value=encrypted)
                )
            out.append(_reasoning_end(now, message_id=opened.span_id))
        else:
            if opened.held_args is not None:
                out.append(delta_frame('TOOL_CALL_ARGS', 'toolCallId', opened.id, opened.held_args))
            out.append(_tool_call_end(now, tool_call_id=opened.id))

    def _close_parts(self, out: list[bytes]) -> None:
        for index in sorted(self._open):
            self._part_end(self._open.pop(index), None, out)

    def _legacy_retry(self, part: RetryPromptPart, out: list[bytes]) -> None:
        draft = legacy_retry_message(part)
        message_id = self._request_message_id()
        now = now_ms()
        metadata = {WIRE_KEY: draft['_uib']}
        out.append(_text_start(now, message_id=message_id, role='user', metadata=metadata))
        out.append(delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', message_id, draft['content']))
        out.append(_text_end(now, message_id=message_id))

    def _feedback(self, event: RetryFeedback, out: list[bytes]) -> None:
        draft = feedback_message(event.part)
        message_id = self._request_message_id()
        now = now_ms()
        out.append(_text_start(now, message_id=message_id, role='system'))
        if draft['content']:
            out.append(delta_frame('TEXT_MESSAGE_CONTENT', 'messageId', message_id, draft['content']))
        out.append(_text_end(now, message_id=message_id))
        out.append(
            _reasoning_encrypted_value(
                now, subtype='message', entity_id=message_id, encrypted_value=draft['encryptedValue']
            )
        )

    def _finish(self, out: list[bytes]) -> None:
        self._close_parts(out)
        self._ended = True
        if self._approvals:
            interrupts = [self._interrupt(call_id) for call_id in self._approvals]
            out.append(self._run_finished(RunFinishedInterruptOutcome(interrupts=interrupts)))
            return
        pending = [call_id for call_id in self._client_calls if call_id not in self._answered]
        outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None)
        out.append(self._run_finished(outcome))

    def _interrupt(self, tool_call_id: str) -> Interrupt:
        call = self._find_call(tool_call_id)
        return Interrupt(
            id=self._approval_id(call),
            reason='tool_approval',
            tool_call_id=tool_call_id,
            message=f'Approve the call to {call.tool_name}?' if call.tool_name else None,
        )

    def _find_call(self, tool_call_id: str) -> ToolCallPart:
        return self._collector.tool_call(tool_call_id) or ToolCallPart(tool_name='', tool_call_id=tool_call_id)

    def _run_finished(
        self, outcome: RunFinishedSuccessOutcome | RunFinishedInterruptOutcome | RunFinishedCancelledOutcome | None
    ) -> bytes:
        return sdk_frame(
            RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, timestamp=now_ms())
        )


def encode_events(events: Iterable[AgentEvent], **kwargs: Any) -> bytes:
    """The whole stream for `events` (start, each event, close): for tests and benchmarks."""
    kwargs.setdefault('thread_id', 'thread')
    kwargs.setdefault('run_id', 'run')
    stream = AGUIEventStream(**kwargs)
    out = [stream.start()]
    out.extend(stream.encode(event) for event in events)
    out.append(stream.close())
    return b''.join(out)
