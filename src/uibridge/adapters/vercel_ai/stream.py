"""`VercelAIEventStream`: neutral agent events as the Vercel AI SDK UI message stream (SSE, protocol v1).

The chunk layout is the one `dump_messages` gives for the same messages, so the message a client builds from
the stream equals the dumped one (ids aside):

- one `start` with a server-chosen `messageId` (unique per response; the id of the assistant message the run
  continues when the request answered an approval or a client tool); a `start-step` / `finish-step` pair per
  model response, so an answer that failed validation and its replacement stay apart;
- text, reasoning and tool-input parts as `*-start` / `*-delta` / `*-end` (`tool-input-available` ends a call),
  with the same `providerMetadata.uibridge` that `dump_messages` writes; tool results as `tool-output-*` in the
  step of their call; a denial the client never asked for as an approval request answered `false` then
  `tool-output-denied`, since the client keeps a denied part only with its approval;
- `ToolCallReady(answered_by='approval')` as `tool-approval-request` with an approval id the server can verify;
- retry feedback between steps as a `data-retry-feedback` part holding the seed 003 marker (`load_messages`
  reads it back as a `RetryFeedbackPart`); a legacy tool-less `RetryPromptPart` has no place in an assistant
  message and is not sent (it is still collected);
- `finish` with the Vercel `finishReason` (`tool-calls` while a call waits for the client or an approval);
  a `RunError` closes what is open, sends `error` with its (already safe) message, then `finish`; a
  `RunCancelled` sends `abort`. Every stream ends with `data: [DONE]`.

Chunks are plain dicts serialized by pydantic-core (`core.json_text.wire_json`), and each open part keeps its
delta prefix pre-encoded, so a text delta costs one string escape: about 1 µs per delta with the message
collection, where building and dumping a pydantic `TextDeltaChunk` alone takes 6 to 11 µs and
`json.dumps(chunk, separators=...)` 4 to 6 µs (measured on the development machine, 200 000 deltas).
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from ...core.approvals import ApprovalSigner
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
from ...core.feedback import retry_feedback_payload
from ...core.json_text import json_string, utf8_json, wire_json
from ...core.messages import (
    FinishReason,
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from .provider_metadata import (
    SIDECAR_KEY,
    file_metadata,
    response_info,
    text_metadata,
    thinking_metadata,
    tool_call_metadata,
    tool_result,
    wrap_metadata,
)

__all__ = ['VERCEL_AI_HEADERS', 'VercelAIEventStream', 'encode_events']

VERCEL_AI_HEADERS: Mapping[str, str] = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-vercel-ai-ui-message-stream': 'v1',
    'x-accel-buffering': 'no',
}

_DONE = 'data: [DONE]\n\n'
_FINISH_REASONS: dict[FinishReason, str] = {
    'stop': 'stop',
    'length': 'length',
    'content_filter': 'content-filter',
    'tool_call': 'tool-calls',
    'error': 'error',
}


def _sse(chunk: dict[str, Any]) -> str:
    return f'data: {wire_json(chunk)}\n\n'


def _as_is(value: Any) -> Any:
    # `wire_json` writes any value as `provider_metadata.jsonable` + JSON would: no JSON-ready copy is needed.
    return value


def _json(value: Any) -> str:
    return json_string(value) if isinstance(value, str) else wire_json(value)


@dataclass
class _OpenPart:
    kind: Literal['text', 'reasoning', 'tool']
    id: str
    """The chunk id (text, reasoning) or the tool call id."""
    delta_prefix: str
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    """The `uibridge` provider metadata sent at start (text, reasoning) or due at the end (the response info)."""
    tool_name: str = ''


class VercelAIEventStream:
    """Encodes one run. Sans-IO: `start()`, then `encode(event)` per event, then `close()`; each returns bytes."""

    def __init__(
        self, *, message_id: str | None = None, approval_id: Callable[[ToolCallPart], str] | None = None
    ) -> None:
        self.message_id = message_id if message_id is not None else f'msg_{uuid.uuid4().hex}'
        self._continues = message_id is not None
        self._approval_id = approval_id if approval_id is not None else ApprovalSigner().approval_id
        self._collector = MessageCollector()
        self._open: dict[int, _OpenPart] = {}
        self._chunk_ids = 0
        self._request_slot = 0
        """Where the next tool result lands in its request (the collector's layout, for `index`)."""
        self._step_open = False
        self._response_open = False
        self._response_info: dict[str, Any] | None = None
        self._started_calls: dict[str, dict[str, Any]] = {}
        """Calls started in this stream, with the call metadata sent for each."""
        self._approvals: dict[str, str] = {}
        self._waiting: set[str] = set()
        self._started = False
        self._ended = False

    # ---------------------------------------------------------------------------------- protocol

    @property
    def headers(self) -> Mapping[str, str]:
        return VERCEL_AI_HEADERS

    @property
    def new_messages(self) -> list[ModelMessage]:
        messages = self._collector.messages
        if not self._approvals:
            return messages
        # The approvals asked for, kept as `load_messages` keeps them, so the dump shows `approval-requested`.
        result: list[ModelMessage] = []
        for message in messages:
            if isinstance(message, ModelResponse):
                asked = {
                    part.tool_call_id: {'id': self._approvals[part.tool_call_id]}
                    for part in message.parts
                    if isinstance(part, ToolCallPart) and part.tool_call_id in self._approvals
                }
                if asked:
                    metadata = dict(message.metadata or {})
                    metadata[SIDECAR_KEY] = {**metadata.get(SIDECAR_KEY, {}), 'approvals': asked}
                    message = message.model_copy(update={'metadata': metadata})
            result.append(message)
        return result

    def start(self) -> bytes:
        if self._started:
            return b''
        self._started = True
        return _sse({'type': 'start', 'messageId': self.message_id}).encode()

    def close(self) -> bytes:
        if self._ended:
            return b''
        return self.encode(RunFinished())

    def encode(self, event: AgentEvent) -> bytes:
        if self._ended:
            return b''
        out = '' if self._started else self.start().decode()
        # Deltas first: the hot path.
        if isinstance(event, PartDelta):
            self._collector.feed(event)
            open_part = self._open.get(event.index)
            if open_part is None:
                raise ValueError(f'a delta for part {event.index}, which is not streaming')
            return utf8_json(f'{out}{open_part.delta_prefix}{_json(event.delta)}}}\n\n')
        return utf8_json(out + self._encode(event))

    # ------------------------------------------------------------------------------------ events

    def _encode(self, event: AgentEvent) -> str:
        # One lookup by exact type, as `MessageCollector.feed` does; a subclass resolves through its MRO, once.
        encoder = self._encoders.get(type(event)) or self._encoder_for(type(event))
        return encoder(self, event)

    @classmethod
    def _encoder_for(cls, kind: type) -> _EventEncoder:
        encoder = next((cls._encoders[base] for base in kind.__mro__ if base in cls._encoders), None)
        if encoder is None:
            raise TypeError(f'not an agent event: {kind.__name__}')
        cls._encoders[kind] = encoder
        return encoder

    def _response_start(self, event: ResponseStart) -> str:
        out = self._close_parts()
        self._collector.feed(event)
        return out + self._open_step()

    def _part_start(self, event: PartStart) -> str:
        return self._ensure_response(event) + self._start_part(event.index, event.part)

    def _part_end(self, event: PartEnd) -> str:
        self._collector.feed(event)
        open_part = self._open.pop(event.index, None)
        if open_part is None:
            raise ValueError(f'part {event.index} ended but is not streaming')
        return self._end_part(open_part, event.signature)

    def _tool_call_ready(self, event: ToolCallReady) -> str:
        self._collector.feed(event)
        return self._call_ready(event)

    def _retry_feedback(self, event: RetryFeedback) -> str:
        out = self._close_parts()
        self._collector.feed(event)
        self._request_slot += 1
        out += self._close_step()
        self._response_open = False
        return out + _sse({'type': 'data-retry-feedback', 'data': retry_feedback_payload(event.part)})

    def _file_output(self, event: FileOutput) -> str:
        out = self._ensure_response(event)
        part = event.part
        chunk: dict[str, Any] = {'type': 'file', 'url': part.content.data_url, 'mediaType': part.content.media_type}
        metadata = wrap_metadata(file_metadata(part, self._take_response_info()))
        if metadata is not None:
            chunk['providerMetadata'] = metadata
        return out + _sse(chunk)

    def _custom_data(self, event: CustomData) -> str:
        chunk: dict[str, Any] = {'type': f'data-{event.name}'}
        if event.id is not None:
            chunk['id'] = event.id
        chunk['data'] = event.data
        if event.transient:
            chunk['transient'] = True
            return _sse(chunk)
        out = self._ensure_response(event)
        return out + _sse(chunk)

    def _run_finished(self, event: RunFinished) -> str:
        out = self._close_parts()
        self._collector.feed(event)
        reason = 'tool-calls' if self._waiting else _FINISH_REASONS.get(event.finish_reason or 'stop', 'other')
        return self._end(out + self._close_step() + _sse({'type': 'finish', 'finishReason': reason}))

    def _run_error(self, event: RunError) -> str:
        out = self._close_parts(error=event.message)
        self._collector.feed(event)
        self._collector.close()
        out += self._close_step() + _sse({'type': 'error', 'errorText': event.message})
        return self._end(out + _sse({'type': 'finish', 'finishReason': 'error'}))

    def _run_cancelled(self, event: RunCancelled) -> str:
        out = self._close_parts()
        self._collector.feed(event)
        self._collector.close()
        chunk: dict[str, Any] = {'type': 'abort'}
        if event.reason is not None:
            chunk['reason'] = event.reason
        return self._end(out + self._close_step() + _sse(chunk))

    def _end(self, out: str) -> str:
        self._ended = True
        return out + _DONE

    # ------------------------------------------------------------------------------------- steps

    def _ensure_response(self, event: PartStart | FileOutput | CustomData) -> str:
        """Feed `event`; open a step first when it starts a response implicitly (as the collector does)."""
        implicit = not self._response_open
        out = self._close_parts() if implicit else ''
        self._collector.feed(event)
        if implicit:
            out += self._open_step()
        return out

    def _open_step(self) -> str:
        out = self._close_step()
        self._step_open = True
        self._response_open = True
        self._request_slot = 0
        current = self._collector.last_message
        assert isinstance(current, ModelResponse)
        self._response_info = response_info(current, with_finish_reason=False)
        return out + 'data: {"type":"start-step"}\n\n'

    def _close_step(self) -> str:
        if not self._step_open:
            return ''
        self._step_open = False
        return 'data: {"type":"finish-step"}\n\n'

    def _take_response_info(self) -> dict[str, Any] | None:
        info, self._response_info = self._response_info, None
        return info

    # ------------------------------------------------------------------------------------- parts

    def _start_part(self, index: int, part: TextPart | ThinkingPart | ToolCallPart) -> str:
        info = self._take_response_info()
        if isinstance(part, ToolCallPart):
            call_id = part.tool_call_id
            prefix = f'data: {{"type":"tool-input-delta","toolCallId":{_json(call_id)},"inputTextDelta":'
            self._open[index] = _OpenPart('tool', call_id, prefix, {'response': info} if info else {}, part.tool_name)
            name = _json(part.tool_name)
            out = f'data: {{"type":"tool-input-start","toolCallId":{_json(call_id)},"toolName":{name}}}\n\n'
            if isinstance(part.args, str) and part.args:
                out += f'{prefix}{_json(part.args)}}}\n\n'
            return out
        kind: Literal['text', 'reasoning'] = 'text' if isinstance(part, TextPart) else 'reasoning'
        self._chunk_ids += 1
        chunk_id = f'{kind[0]}{self._chunk_ids}'
        prefix = f'data: {{"type":"{kind}-delta","id":{_json(chunk_id)},"delta":'
        fields = text_metadata(part, info) if isinstance(part, TextPart) else thinking_metadata(part, info)
        self._open[index] = _OpenPart(kind, chunk_id, prefix, fields)
        chunk: dict[str, Any] = {'type': f'{kind}-start', 'id': chunk_id}
        if fields:
            chunk['providerMetadata'] = wrap_metadata(fields)
        out = _sse(chunk)
        if part.content:
            out += f'{prefix}{_json(part.content)}}}\n\n'
        return out

    def _end_part(self, open_part: _OpenPart, signature: str | None, error: str | None = None) -> str:
        if open_part.kind == 'text':
            return _sse({'type': 'text-end', 'id': open_part.id})
        if open_part.kind == 'reasoning':
            chunk: dict[str, Any] = {'type': 'reasoning-end', 'id': open_part.id}
            if signature is not None:
                # The client replaces a reasoning part's metadata at the end, so it is sent whole.
                fields = dict(open_part.metadata)
                response = fields.pop('response', None)
                fields['signature'] = signature
                if response is not None:
                    fields['response'] = response
                chunk['providerMetadata'] = wrap_metadata(_ordered_thinking(fields))
            return _sse(chunk)
        call = self._find_call(open_part.id)
        if call is None:
            call = ToolCallPart(tool_name=open_part.tool_name, tool_call_id=open_part.id)
        fields = tool_call_metadata(call, open_part.metadata.get('response'))
        self._started_calls[open_part.id] = fields
        chunk = {'type': 'tool-input-available', 'toolCallId': open_part.id, 'toolName': open_part.tool_name}
        if error is not None:
            chunk['type'] = 'tool-input-error'
            chunk['errorText'] = error
        # `provider_metadata.tool_input` without its JSON-ready copy: `wire_json` writes the same JSON from the dict.
        chunk['input'] = call.args_as_dict()
        if fields:
            chunk['providerMetadata'] = wrap_metadata(fields)
        return _sse(chunk)

    def _close_parts(self, error: str | None = None) -> str:
        if not self._open:
            return ''
        open_parts, self._open = self._open, {}
        if error is not None:
            self._collector.close()
        out: list[str] = []
        for open_part in open_parts.values():
            out.append(self._end_part(open_part, None, error if open_part.kind == 'tool' else None))
        return ''.join(out)

    def _find_call(self, tool_call_id: str) -> ToolCallPart | None:
        return self._collector.tool_call(tool_call_id)

    # ------------------------------------------------------------------------------------- tools

    def _call_ready(self, event: ToolCallReady) -> str:
        self._waiting.add(event.tool_call_id)
        if event.answered_by != 'approval':
            return ''
        call = self._find_call(event.tool_call_id)
        if call is None:
            warnings.warn(f'no tool call {event.tool_call_id!r} to ask an approval for', UserWarning, stacklevel=4)
            return ''
        approval_id = self._approval_id(call)
        self._approvals[event.tool_call_id] = approval_id
        return _sse({'type': 'tool-approval-request', 'approvalId': approval_id, 'toolCallId': event.tool_call_id})

    def _tool_result(self, event: ToolResult) -> str:
        out = self._close_parts()
        self._collector.feed(event)
        self._response_open = False
        slot = self._request_slot
        self._request_slot += 1
        part = event.part
        if isinstance(part, RetryPromptPart) and part.tool_name is None:
            return out
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
            return out
        state, value, fields = tool_result(part, slot, json_ready=_as_is)
        if state == 'output-available':
            chunk: dict[str, Any] = {'type': 'tool-output-available', 'toolCallId': call_id, 'output': value}
            chunk['providerMetadata'] = wrap_metadata(fields)
            return out + _sse(chunk)
        if state == 'output-error':
            chunk = {'type': 'tool-output-error', 'toolCallId': call_id, 'errorText': value}
            chunk['providerMetadata'] = wrap_metadata(fields)
            return out + _sse(chunk)
        if started and call_id not in self._approvals:
            approval_id = call_id
            out += _sse({'type': 'tool-approval-request', 'approvalId': approval_id, 'toolCallId': call_id})
            response: dict[str, Any] = {'type': 'tool-approval-response', 'approvalId': approval_id, 'approved': False}
            response['reason'] = value
            call_fields = {**self._started_calls[call_id], 'result': fields} if fields else self._started_calls[call_id]
            metadata = wrap_metadata(call_fields)
            if metadata is not None:
                response['providerMetadata'] = metadata
            out += _sse(response)
        return out + _sse({'type': 'tool-output-denied', 'toolCallId': call_id})

    _encoders: ClassVar[dict[type, _EventEncoder]] = {
        ResponseStart: _response_start,
        PartStart: _part_start,
        PartEnd: _part_end,
        ToolCallReady: _tool_call_ready,
        ToolResult: _tool_result,
        RetryFeedback: _retry_feedback,
        FileOutput: _file_output,
        CustomData: _custom_data,
        RunFinished: _run_finished,
        RunError: _run_error,
        RunCancelled: _run_cancelled,
    }
    """How `_encode` writes each event class (deltas are written by `encode` itself)."""


_EventEncoder: TypeAlias = Callable[[VercelAIEventStream, Any], str]


def _ordered_thinking(fields: dict[str, Any]) -> dict[str, Any]:
    order = ('id', 'signature', 'provider_name', 'response')
    return {key: fields[key] for key in order if key in fields}


def encode_events(events: Iterable[AgentEvent], **kwargs: Any) -> bytes:
    """A whole stream for `events` (for tests and benchmarks): start, every event, close."""
    stream = VercelAIEventStream(**kwargs)
    chunks = [stream.start()]
    chunks.extend(stream.encode(event) for event in events)
    chunks.append(stream.close())
    return b''.join(chunks)
