"""`AGUIStreamDecoder`: an AG-UI 1.0 event stream (SSE) back into neutral agent events.

The inverse of `AGUIEventStream`, and a reader of any AG-UI producer (pydantic-ai's `AGUIAdapter`, LangGraph,
CrewAI, Mastra...): bytes in, events out, no I/O. Feed it the body as it arrives (`feed(chunk)`: an SSE frame may
be split anywhere) and `close()` at its end. Events are read as JSON with the wire's own (camelCase) names; the
SDK models are not built per event, which would cost more than the rest of the bridge together.

What each event becomes:

- `TEXT_MESSAGE_*` of the assistant: a text part (the first `CONTENT` starts it; a message that stays empty only
  announces the assistant message tool calls join, unless uibridge signed it as a text part of its own);
  uibridge's record on a message's `START` marks where a model response begins (`ResponseStart`, with the model
  and provider names), and its `END` record the text's citations. uibridge's `system` text followed by its
  retry-feedback marker (`REASONING_ENCRYPTED_VALUE`) is `RetryFeedback`, or the tool-less retry the marker
  says it is (an older server sent that as `user` text, still read so);
  other roles' text is no part of an answer and is skipped;
- `REASONING_MESSAGE_*`: a thinking part, its signature from the `REASONING_ENCRYPTED_VALUE` that follows
  (uibridge's marker or pydantic-ai's record, read by `load_messages`). The part's id and provider name come
  after its text too; streamed live, the part keeps only its signature of them;
- `TOOL_CALL_START` / `ARGS` / `END`: a tool call streamed as its argument text arrives (uibridge's `native`
  record: a provider-run call); `TOOL_CALL_RESULT`: its result, read as `load_messages` reads the tool message
  the client builds (uibridge's record gives back a failure, a retry prompt, JSON content; another producer's
  text stays text);
- the `*_CHUNK` events as the client reads them: a message or call that ends at the next event of another kind;
- who answers a call: uibridge's client mark on `TOOL_CALL_END`; `RUN_FINISHED`'s interrupts (`ToolCallReady(...,
  'approval')` for each that names a call, kept in `interrupts`) and its pending calls (`pendingToolCallIds`,
  else, as `@ag-ui/client` reads it, the calls another producer started and never answered);
- `STATE_*`, `STEP_*`, `ACTIVITY_*`, `RAW`: their events; `CUSTOM`: `CustomData`, except uibridge's own
  (`uibridge.message_metadata`, `uibridge.response_info`, and `uibridge.source` for a citation added late);
- `RUN_FINISHED`: its usage as `ResponseInfo` when no response had any, then `RunFinished` (outcome
  `cancelled`: `RunCancelled`); `RUN_ERROR`: `RunError` with its message and code. After the first of these the
  stream has ended. A stream that stops without one ends as a finished run, or a failed one when it stopped
  inside a part (the TS client takes a stream that just ends).

Skipped (counted in `skipped`): `MESSAGES_SNAPSHOT` (a snapshot of the thread, not this run's output),
`SUBAGENT_*`, text of other roles, and unknown event types. A frame that is not a JSON object with a string
`type`, deltas for what never started, and a frame past the reader's bounds raise `StreamError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ...core import events as ev
from ...core.citations import Citation
from ...core.decoder import StreamDecoder, call_names, optional_text, required_text
from ...core.diagnostics import collect_warnings
from ...core.errors import InputError
from ...core.messages import (
    FilePart,
    ModelMessage,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from ...core.records import read_response_fields
from ...core.sse import DEFAULT_MAX_BUFFER_BYTES, DEFAULT_MAX_FRAME_BYTES, StreamError
from ...core.usage import Usage
from ._peer_history import FILE_ACTIVITY
from .load import load_messages

__all__ = ['AGUIStreamDecoder']

_OURS = 'uibridge'
"""The key of uibridge's own records in an event's `metadata` (see `_wire`): read where the wire is ambiguous."""
_SOURCE_EVENT = 'uibridge.source'
_MESSAGE_METADATA_EVENT = 'uibridge.message_metadata'
_RESPONSE_INFO_EVENT = 'uibridge.response_info'
_RESPONSE_INFO_KEYS = ('finish_reason', 'provider_response_id', 'model_name', 'provider_name', 'provider_details')
_USAGE_KEYS = {
    'inputTokens': 'input_tokens',
    'outputTokens': 'output_tokens',
    'reasoningTokens': 'output_reasoning_tokens',
    'cachedInputTokens': 'cache_read_tokens',
    'cacheWriteInputTokens': 'cache_write_tokens',
}


def _ours(event: Mapping[str, Any]) -> dict[str, Any]:
    metadata = event.get('metadata')
    if not isinstance(metadata, dict):
        return {}
    value = cast('dict[str, Any]', metadata).get(_OURS)
    return cast('dict[str, Any]', value) if isinstance(value, dict) else {}


def _record(ours: dict[str, Any], key: str) -> dict[str, Any]:
    value = ours.get(key)
    return cast('dict[str, Any]', value) if isinstance(value, dict) else {}


@dataclass(eq=False, slots=True)
class _Message:
    """A text or reasoning message as it streams."""

    role: str
    index: int | None = None
    """Its part's event index, once the part started (an assistant text waits for its first character)."""
    part_id: str | None = None
    chunks: list[str] = field(default_factory=list[str])
    """Only for the text uibridge's request-side messages carry (retry feedback, a legacy retry)."""
    ended: bool = False


@dataclass(eq=False, slots=True)
class _Call:
    id: str
    index: int
    name: str
    native: bool
    args: list[str] = field(default_factory=list[str])
    metadata: dict[str, Any] | None = None
    """The `metadata` of its `TOOL_CALL_END`, which the client keeps on the call."""
    ended: bool = False
    ours: bool = False
    """Whether uibridge signed it (then its end says whether a client answers it)."""
    marked: bool = False
    answered: bool = False


class AGUIStreamDecoder(StreamDecoder):
    """Decodes one AG-UI run's stream. Sans-IO: `feed(bytes)` per chunk of the body, then `close()`; each
    returns the neutral events the bytes completed.

    - `history`: the conversation the request sent; a result for one of its calls (after an approval) takes
      the call's tool name from it;
    - `max_frame_bytes`, `max_buffer_bytes`: the bounds of the SSE reader (`uibridge.core.sse.SSEReader`).

    Beside the events it keeps `thread_id` and `run_id` (from `RUN_STARTED`), `interrupts` (tool call id -> the
    `RUN_FINISHED` interrupt that asks to approve it, as sent), `ended` and `skipped`.
    """

    def __init__(
        self,
        *,
        history: Sequence[ModelMessage] = (),
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES,
    ) -> None:
        super().__init__(max_frame_bytes=max_frame_bytes, max_buffer_bytes=max_buffer_bytes)
        self._names = call_names(history)
        self.thread_id: str | None = None
        self.run_id: str | None = None
        self.interrupts: dict[str, dict[str, Any]] = {}
        self._messages: dict[str, _Message] = {}
        self._calls: dict[str, _Call] = {}
        self._cited: set[str] = set()
        """Text messages whose `END` record held their citations (uibridge's `source` events repeat them)."""
        self._thinking_end: tuple[int, str] | None = None
        """A thinking part whose `REASONING_MESSAGE_END` came: it ends with the encrypted value that may follow."""
        self._feedback: tuple[str, str] | None = None
        self._files: set[str] = set()
        """The ids of the file activity messages read."""
        """A system text just ended (id, text): retry feedback, if its marker follows."""
        self._result: list[dict[str, Any]] | None = None
        """A tool result just read, as the messages a client holds for it (the call's, the tool message): it is
        read at the next event, which may be a record for the tool message (pydantic-ai's outcome of a failed
        or denied call rides in an encrypted value that follows the result)."""
        self._chunked: tuple[Literal['text', 'reasoning', 'call'], str] | None = None
        """The message or call a `*_CHUNK` event opened: it ends at the next event of another kind."""

    @property
    def approval_ids(self) -> dict[str, str]:
        """The calls the run's interrupts ask to approve: tool call id -> the interrupt id to resume."""
        return {call_id: str(interrupt.get('id', '')) for call_id, interrupt in self.interrupts.items()}

    @property
    def message_id(self) -> str | None:
        """AG-UI names no one message for a run's answer."""
        return None

    # ------------------------------------------------------------------------------------------- input

    def _unfinished(self, *, cut_off: bool) -> None:
        self._settle('')
        if cut_off or self._open:
            self._cut_off()
        else:
            self._pending_calls([])
            self._end(ev.RunFinished())

    def _frame(self, kind: str, frame: dict[str, Any]) -> None:
        if (
            self._thinking_end is not None
            or self._feedback is not None
            or self._chunked is not None
            or self._result is not None
        ):
            self._settle(kind, frame)
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.skipped += 1
        else:
            handler(self, frame)

    def _settle(self, kind: str, event: Mapping[str, Any] | None = None) -> None:
        """End what waited to see the next event: a chunked message (unless this continues it), a thinking part
        (its encrypted value), a system text (its retry-feedback marker)."""
        chunked = self._chunked
        if chunked is not None and kind != _CHUNK_KINDS[chunked[0]]:
            self._chunked = None
            if chunked[0] == 'call':
                self._call_end({'toolCallId': chunked[1]})
            elif chunked[0] == 'text':
                self._text_end({'messageId': chunked[1]})
            else:
                self._reasoning_message_end({'messageId': chunked[1]})
        encrypted = event is not None and kind == 'REASONING_ENCRYPTED_VALUE' and event.get('subtype') == 'message'
        entity = event.get('entityId') if event is not None else None
        if self._thinking_end is not None and not (encrypted and entity == self._thinking_end[1]):
            index, _ = self._thinking_end
            self._thinking_end = None
            self._end_part(index)
        if self._feedback is not None and not (encrypted and entity == self._feedback[0]):
            self._feedback = None  # a system text that is no feedback is no part of the answer
        if self._result is not None and not (encrypted and entity == self._result[-1]['id']):
            self._read_result()

    # ------------------------------------------------------------------------------------- parts

    def _response(self, ours: dict[str, Any]) -> None:
        """uibridge's record on a message's `START` says a model response begins there, and by which model."""
        record = ours.get('response')
        if isinstance(record, dict):
            fields = read_response_fields(cast('dict[str, Any]', record))
            self._emit(ev.ResponseStart(model_name=fields.get('model_name'), provider_name=fields.get('provider_name')))

    def _text_start(self, event: dict[str, Any]) -> None:
        message_id = required_text(event, 'messageId')
        role = event.get('role', 'assistant')
        ours = _ours(event)
        message = _Message(role if isinstance(role, str) else 'assistant')
        if message.role == 'assistant':
            self._response(ours)
            message.part_id = optional_text(_record(ours, 'part').get('id'))
        elif message.role == 'user' and not ours:
            message.role = 'other'  # another producer's user text: no part of the answer
        elif message.role not in ('system', 'user'):
            message.role = 'other'
        self._messages[message_id] = message

    def _text_content(self, event: dict[str, Any]) -> None:
        # The hot path (most events are deltas): `_streaming` and the text check, inline.
        message_id, delta = event.get('messageId'), event.get('delta')
        message = self._messages.get(message_id) if type(message_id) is str else None
        if message is None or message.ended or type(delta) is not str:
            raise StreamError('the stream sent TEXT_MESSAGE_CONTENT for a message that is not streaming, or no delta')
        if message.role != 'assistant':
            message.chunks.append(delta)
        elif message.index is not None:
            self._delta(message.index, delta)
        elif delta:
            message.index = self._start_part()
            self._emit(ev.PartStart(message.index, TextPart(content=delta, id=message.part_id)))

    def _text_end(self, event: dict[str, Any]) -> None:
        message_id = required_text(event, 'messageId')
        message = self._streaming(event)
        message.ended = True
        if message.role == 'system':
            self._feedback = (message_id, ''.join(message.chunks))
            return
        if message.role == 'user':  # an older server's tool-less retry
            text = ''.join(message.chunks)
            self._answer(ev.ToolResult(RetryPromptPart(content=text)))
            return
        if message.role != 'assistant':
            return
        part_record = _record(_ours(event), 'part')
        if message.index is None:
            if 'sig' not in part_record:
                return  # an empty message that only announces the one tool calls join
            message.index = self._start_part()
            self._emit(ev.PartStart(message.index, TextPart(content='', id=message.part_id)))
        self._end_part(message.index)
        citations = part_record.get('citations')
        if isinstance(citations, list):
            self._cited.add(message_id)
            for value in cast('list[Any]', citations):
                citation = _citation(value)
                if citation is not None:
                    self._emit(ev.CitationAdded(message.index, citation))

    def _text_chunk(self, event: dict[str, Any]) -> None:
        self._chunk_event('text', event, 'messageId', self._text_start, self._text_content)

    def _streaming(self, event: dict[str, Any]) -> _Message:
        message = self._messages.get(required_text(event, 'messageId'))
        if message is None or message.ended:
            raise StreamError(f'the stream sent {event["type"]} for a message that is not streaming')
        return message

    def _reasoning_message_start(self, event: dict[str, Any]) -> None:
        message_id = required_text(event, 'messageId')
        self._response(_ours(event))
        message = _Message('reasoning', self._start_part())
        self._messages[message_id] = message
        assert message.index is not None
        self._emit(ev.PartStart(message.index, ThinkingPart(content='')))

    def _reasoning_message_content(self, event: dict[str, Any]) -> None:
        message = self._streaming(event)
        delta = event.get('delta')
        if not isinstance(delta, str) or message.index is None:
            raise StreamError('the stream sent REASONING_MESSAGE_CONTENT without a string `delta`')
        self._delta(message.index, delta)

    def _reasoning_message_end(self, event: dict[str, Any]) -> None:
        message_id = required_text(event, 'messageId')
        message = self._streaming(event)
        message.ended = True
        assert message.index is not None
        self._thinking_end = (message.index, message_id)

    def _reasoning_chunk(self, event: dict[str, Any]) -> None:
        self._chunk_event(
            'reasoning', event, 'messageId', self._reasoning_message_start, self._reasoning_message_content
        )

    def _encrypted_value(self, event: dict[str, Any]) -> None:
        value, entity = event.get('encryptedValue'), event.get('entityId')
        if event.get('subtype') != 'message' or not isinstance(value, str):
            return  # a tool call's: nothing neutral to carry it
        if self._result is not None and entity == self._result[-1]['id']:
            self._result[-1]['encryptedValue'] = value
            self._read_result()
            return
        if self._thinking_end is not None and entity == self._thinking_end[1]:
            index, message_id = self._thinking_end
            self._thinking_end = None
            thinking = _loaded_part([{'id': message_id, 'role': 'reasoning', 'content': '', 'encryptedValue': value}])
            self._end_part(index, thinking.signature if isinstance(thinking, ThinkingPart) else None)
        elif self._feedback is not None and entity == self._feedback[0]:
            message_id, text = self._feedback
            self._feedback = None
            system = {'id': message_id, 'role': 'system', 'content': text, 'encryptedValue': value}
            feedback = _loaded_part([system])
            if isinstance(feedback, RetryFeedbackPart):
                self._emit(ev.RetryFeedback(feedback))
            elif isinstance(feedback, RetryPromptPart):
                self._answer(ev.ToolResult(feedback))

    # ------------------------------------------------------------------------------------- tool calls

    def _call_start(self, event: dict[str, Any]) -> None:
        call_id, name = required_text(event, 'toolCallId'), event.get('toolCallName')
        if not isinstance(name, str):
            raise StreamError('the stream sent TOOL_CALL_START without a string `toolCallName`')
        native = _ours(event).get('native') is True
        call = self._calls[call_id] = _Call(call_id, self._start_part(call=not native), name, native)
        self._names[call_id] = name
        part = (NativeToolCallPart if native else ToolCallPart)(tool_name=name, tool_call_id=call_id, args=None)
        self._emit(ev.PartStart(call.index, part))

    def _call_args(self, event: dict[str, Any]) -> None:
        call_id, delta = event.get('toolCallId'), event.get('delta')
        call = self._calls.get(call_id) if type(call_id) is str else None
        if call is None or call.ended or type(delta) is not str:
            raise StreamError('the stream sent TOOL_CALL_ARGS for a tool call that is not streaming')
        if delta:
            call.args.append(delta)
            self._delta(call.index, delta)

    def _call_end(self, event: dict[str, Any]) -> None:
        call_id = required_text(event, 'toolCallId')
        call = self._calls.get(call_id)
        if call is None or call.ended:
            raise StreamError('the stream sent TOOL_CALL_END for a tool call that is not streaming')
        call.ended = True
        metadata = event.get('metadata')
        call.metadata = cast('dict[str, Any]', metadata) if isinstance(metadata, dict) else None
        self._end_part(call.index)
        ours = _ours(event)
        call.ours = bool(ours)
        if ours.get('client') is True and not call.native:
            self._mark(call, 'client')

    def _call_chunk(self, event: dict[str, Any]) -> None:
        self._chunk_event('call', event, 'toolCallId', self._call_start, self._call_args)

    def _mark(self, call: _Call, answered_by: ev.AnsweredBy) -> None:
        if call.marked or call.answered or call.native:
            return
        call.marked = True
        self._emit(ev.ToolCallReady(call.id, answered_by))

    def _call_result(self, event: dict[str, Any]) -> None:
        call_id = required_text(event, 'toolCallId')
        call = self._calls.get(call_id)
        name = call.name if call is not None else self._names.get(call_id, '')
        tool_call: dict[str, Any] = {
            'id': call_id,
            'type': 'function',
            'function': {'name': name, 'arguments': ''.join(call.args) if call is not None else '{}'},
        }
        if call is not None and call.metadata is not None:
            tool_call['metadata'] = call.metadata
        tool_message: dict[str, Any] = {
            'id': optional_text(event.get('messageId')) or f'{call_id}.result',
            'role': 'tool',
            'toolCallId': call_id,
            'content': event.get('content', ''),
        }
        if isinstance(event.get('metadata'), dict):
            tool_message['metadata'] = event['metadata']
        self._result = [{'id': f'{call_id}.call', 'role': 'assistant', 'toolCalls': [tool_call]}, tool_message]
        if call is not None:
            call.answered = True

    def _read_result(self) -> None:
        """The tool result `_result` holds, as `load_messages` reads what a client holds of it."""
        messages, self._result = self._result, None
        assert messages is not None
        result = _loaded_part(messages)
        if isinstance(result, NativeToolReturnPart):
            self._emit(ev.NativeToolResult(result))
        elif isinstance(result, ToolReturnPart | RetryPromptPart):
            self._answer(ev.ToolResult(result))

    def _pending_calls(self, listed: Iterable[Any]) -> None:
        """`ToolCallReady(..., 'client')` for the calls the run leaves to the client: those `RUN_FINISHED` lists,
        else (as `@ag-ui/client` reads a run) those another producer started and never answered."""
        named = [self._calls[call_id] for call_id in listed if isinstance(call_id, str) and call_id in self._calls]
        calls = named or [c for c in self._calls.values() if c.ended and not c.ours and not c.answered]
        for call in calls:
            self._mark(call, 'client')

    # -------------------------------------------------------------------------------- beside the parts

    def _state_snapshot(self, event: dict[str, Any]) -> None:
        self._emit(ev.StateSnapshot(event.get('snapshot')))

    def _state_delta(self, event: dict[str, Any]) -> None:
        delta = event.get('delta')
        if not isinstance(delta, list):
            raise StreamError('the stream sent STATE_DELTA without a list of operations')
        self._emit(ev.StateDelta(cast('list[dict[str, Any]]', delta)))

    def _step_started(self, event: dict[str, Any]) -> None:
        self._emit(ev.StepStarted(str(event.get('stepName', ''))))

    def _step_finished(self, event: dict[str, Any]) -> None:
        self._emit(ev.StepFinished(str(event.get('stepName', ''))))

    def _activity_snapshot(self, event: dict[str, Any]) -> None:
        content = event.get('content')
        message_id = event.get('messageId')
        ours = _ours(event)
        if event.get('activityType') == FILE_ACTIVITY and 'part' in ours and isinstance(message_id, str):
            # uibridge's file activity (a model's file), read as `load_messages` reads the message it builds; sent
            # again only to add its response's markers, which this decoder leaves aside.
            if message_id not in self._files:
                self._files.add(message_id)
                message = {'id': message_id, 'role': 'activity', 'activityType': FILE_ACTIVITY, 'content': content}
                file = _loaded_part([{**message, 'metadata': event.get('metadata')}])
                if isinstance(file, FilePart):
                    self._response(ours)
                    self._emit(ev.FileOutput(file))
            return
        self._emit(
            ev.ActivitySnapshot(
                str(event.get('messageId', '')),
                str(event.get('activityType', '')),
                cast('dict[str, Any]', content) if isinstance(content, dict) else {},
                event.get('replace') is not False,
            )
        )

    def _activity_delta(self, event: dict[str, Any]) -> None:
        patch = event.get('patch')
        self._emit(
            ev.ActivityDelta(
                str(event.get('messageId', '')),
                str(event.get('activityType', '')),
                cast('list[dict[str, Any]]', patch) if isinstance(patch, list) else [],
            )
        )

    def _raw(self, event: dict[str, Any]) -> None:
        self._emit(ev.RawEvent(event.get('event'), optional_text(event.get('source'))))

    def _custom(self, event: dict[str, Any]) -> None:
        name, value = event.get('name'), event.get('value')
        if not isinstance(name, str):
            raise StreamError('the stream sent CUSTOM without a string `name`')
        data = cast('dict[str, Any]', value) if isinstance(value, dict) else {}
        if name == _SOURCE_EVENT and isinstance(data.get('source'), dict):
            message_id = data.get('messageId')
            message = self._messages.get(message_id) if isinstance(message_id, str) else None
            if message is None or message.index is None or message_id in self._cited:
                return  # its text's record held it already
            citation = _citation({'sources': [data['source']]})
            if citation is not None:
                self._emit(ev.CitationAdded(message.index, citation))
            return
        if name == _MESSAGE_METADATA_EVENT and isinstance(data.get('metadata'), dict):
            self._emit(ev.MessageMetadata(cast('dict[str, Any]', data['metadata'])))
            return
        if name == _RESPONSE_INFO_EVENT and 'messageId' in data:
            fields = read_response_fields(data)
            info = {key: fields[key] for key in _RESPONSE_INFO_KEYS if key in fields}
            if info:
                self._emit(ev.ResponseInfo(**info))
            return
        self._emit(ev.CustomData(name, value))

    # -------------------------------------------------------------------------------------- ends

    def _run_started(self, event: dict[str, Any]) -> None:
        self.thread_id = optional_text(event.get('threadId'))
        self.run_id = optional_text(event.get('runId'))

    def _run_finished(self, event: dict[str, Any]) -> None:
        outcome = event.get('outcome')
        outcome = cast('dict[str, Any]', outcome) if isinstance(outcome, dict) else {}
        kind = outcome.get('type', 'success')
        if kind == 'interrupt':
            for interrupt in cast('list[Any]', outcome.get('interrupts') or []):
                if not isinstance(interrupt, dict):
                    continue
                interrupt = cast('dict[str, Any]', interrupt)
                call_id = interrupt.get('toolCallId')
                call = self._calls.get(call_id) if isinstance(call_id, str) else None
                if call is not None and isinstance(call_id, str):
                    self.interrupts[call_id] = interrupt
                    self._mark(call, 'approval')
        elif kind == 'success':
            pending = outcome.get('pendingToolCallIds')
            self._pending_calls(cast('list[Any]', pending) if isinstance(pending, list) else [])
        usage = _usage(event.get('usage'))
        if usage is not None:
            self._emit(ev.ResponseInfo(usage=usage))
        self._end(ev.RunCancelled() if kind == 'cancelled' else ev.RunFinished())

    def _run_error(self, event: dict[str, Any]) -> None:
        usage = _usage(event.get('usage'))
        if usage is not None:
            self._emit(ev.ResponseInfo(usage=usage))
        message = event.get('message')
        self._end(
            ev.RunError(
                message if isinstance(message, str) and message else 'An error occurred.',
                optional_text(event.get('code')),
            )
        )

    def _skip(self, event: dict[str, Any]) -> None:
        self.skipped += 1

    def _nothing(self, event: dict[str, Any]) -> None:
        pass

    # --------------------------------------------------------------------------------------- chunks

    def _chunk_event(
        self,
        kind: Literal['text', 'reasoning', 'call'],
        event: dict[str, Any],
        id_key: str,
        start: Callable[[dict[str, Any]], None],
        content: Callable[[dict[str, Any]], None],
    ) -> None:
        """A `*_CHUNK` event: it starts its message (or call) when the id is new, and adds its delta."""
        entity = event.get(id_key)
        chunked = self._chunked
        if not isinstance(entity, str):
            if chunked is None or chunked[0] != kind:
                raise StreamError(f'the stream sent {event["type"]} without an id')
            entity = chunked[1]
        if chunked is None or chunked != (kind, entity):
            if chunked is not None:
                self._chunked = None
                self._settle('')
            opened = {**event, id_key: entity}
            if kind == 'call':
                opened['toolCallName'] = event.get('toolCallName')
            start(opened)
            self._chunked = (kind, entity)
        delta = event.get('delta')
        if isinstance(delta, str) and delta:
            content({id_key: entity, 'delta': delta, 'type': event['type']})


_Handler = Callable[[AGUIStreamDecoder, dict[str, Any]], None]
_D = AGUIStreamDecoder
_HANDLERS: dict[str, _Handler] = {
    'TEXT_MESSAGE_CONTENT': _D._text_content,  # pyright: ignore[reportPrivateUsage]
    'TEXT_MESSAGE_START': _D._text_start,  # pyright: ignore[reportPrivateUsage]
    'TEXT_MESSAGE_END': _D._text_end,  # pyright: ignore[reportPrivateUsage]
    'TEXT_MESSAGE_CHUNK': _D._text_chunk,  # pyright: ignore[reportPrivateUsage]
    'TOOL_CALL_ARGS': _D._call_args,  # pyright: ignore[reportPrivateUsage]
    'TOOL_CALL_START': _D._call_start,  # pyright: ignore[reportPrivateUsage]
    'TOOL_CALL_END': _D._call_end,  # pyright: ignore[reportPrivateUsage]
    'TOOL_CALL_CHUNK': _D._call_chunk,  # pyright: ignore[reportPrivateUsage]
    'TOOL_CALL_RESULT': _D._call_result,  # pyright: ignore[reportPrivateUsage]
    'REASONING_MESSAGE_CONTENT': _D._reasoning_message_content,  # pyright: ignore[reportPrivateUsage]
    'REASONING_MESSAGE_START': _D._reasoning_message_start,  # pyright: ignore[reportPrivateUsage]
    'REASONING_MESSAGE_END': _D._reasoning_message_end,  # pyright: ignore[reportPrivateUsage]
    'REASONING_MESSAGE_CHUNK': _D._reasoning_chunk,  # pyright: ignore[reportPrivateUsage]
    'REASONING_ENCRYPTED_VALUE': _D._encrypted_value,  # pyright: ignore[reportPrivateUsage]
    'REASONING_START': _D._nothing,  # pyright: ignore[reportPrivateUsage]
    'REASONING_END': _D._nothing,  # pyright: ignore[reportPrivateUsage]
    'STATE_SNAPSHOT': _D._state_snapshot,  # pyright: ignore[reportPrivateUsage]
    'STATE_DELTA': _D._state_delta,  # pyright: ignore[reportPrivateUsage]
    'STEP_STARTED': _D._step_started,  # pyright: ignore[reportPrivateUsage]
    'STEP_FINISHED': _D._step_finished,  # pyright: ignore[reportPrivateUsage]
    'ACTIVITY_SNAPSHOT': _D._activity_snapshot,  # pyright: ignore[reportPrivateUsage]
    'ACTIVITY_DELTA': _D._activity_delta,  # pyright: ignore[reportPrivateUsage]
    'RAW': _D._raw,  # pyright: ignore[reportPrivateUsage]
    'CUSTOM': _D._custom,  # pyright: ignore[reportPrivateUsage]
    'RUN_STARTED': _D._run_started,  # pyright: ignore[reportPrivateUsage]
    'RUN_FINISHED': _D._run_finished,  # pyright: ignore[reportPrivateUsage]
    'RUN_ERROR': _D._run_error,  # pyright: ignore[reportPrivateUsage]
    'MESSAGES_SNAPSHOT': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'SUBAGENT_STARTED': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'SUBAGENT_FINISHED': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'SUBAGENT_ERROR': _D._skip,  # pyright: ignore[reportPrivateUsage]
}
_CHUNK_KINDS = {'text': 'TEXT_MESSAGE_CHUNK', 'reasoning': 'REASONING_MESSAGE_CHUNK', 'call': 'TOOL_CALL_CHUNK'}


def _loaded_part(messages: list[dict[str, Any]]) -> Any:
    """The last part `load_messages` reads from `messages` (the client's messages built from the events)."""
    with collect_warnings():
        try:
            loaded = load_messages(messages)
        except InputError as error:
            raise StreamError(f'the stream sent a message no client could hold: {error}') from None
    parts = [part for message in loaded for part in message.parts]
    return parts[-1] if parts else None


def _citation(value: Any) -> Citation | None:
    try:
        return Citation.model_validate(value)
    except ValueError:
        return None


def _usage(value: Any) -> Usage | None:
    """`RUN_FINISHED.usage` (one entry per provider and model) as one usage over the run."""
    if not isinstance(value, list) or not value:
        return None
    counts: dict[str, int] = {}
    for entry in cast('list[Any]', value):
        if not isinstance(entry, dict):
            continue
        for wire, name in _USAGE_KEYS.items():
            count = cast('dict[str, Any]', entry).get(wire)
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                counts[name] = counts.get(name, 0) + count
    return Usage.model_validate(counts) if counts else None
