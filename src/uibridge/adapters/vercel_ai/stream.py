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
- `ToolCallReady(answered_by='approval')` as `tool-approval-request` with the approval id
  `keyring.approval_id(thread_id, call)`, which only this server can mint, for this call in this chat;
- retry feedback between steps as a `data-retry-feedback` part holding the seed 003 marker (`load_messages`
  reads it back as a `RetryFeedbackPart`); a legacy tool-less `RetryPromptPart` has no place in an assistant
  message and is not sent (it is still collected);
- issue 14's events as `_stream_carriers` describes: the shared state as a `data-state` part (id `state`),
  message metadata and late response info (usage) as `message-metadata`, citations as `source-url` /
  `source-document` after their text, provider-executed calls as tool chunks with `providerExecuted: true`,
  activity as a transient `data-activity`; named steps and raw events are not sent (`_stream_hooks`);
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

The run's state (started and ended, the collector, open parts, held calls, dispatch) is `core.encoder`'s; the
hooks for tool answers and results are `_stream_tools`' and those of issue 14's events `_stream_hooks`' (mixins of
the stream class); this module writes the other chunks, each through the writer `frames` derives from its model in
`chunks.py` (the bytes the model serializes to, without building it), and each open part keeps its delta prefix
pre-encoded, so a text delta costs one string escape: about 1 µs per delta with the message collection, where
building and dumping a pydantic `TextDeltaChunk` alone takes 6 to 11 µs and `json.dumps(chunk, separators=...)` 4
to 6 µs (measured on the development machine, 200 000 deltas).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...core import events as ev
from ...core.encoder import OpenPart, StreamEncoder
from ...core.factories import new_dict
from ...core.json_text import json_string, utf8_json, wire_json
from ...core.messages import (
    FinishReason,
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from ...core.provenance import Keyring
from ...core.stream import encode_all
from ._frames import chunk_writer, delta_prefix
from ._message_info import part_record
from ._provider_metadata import (
    PROVIDER_KEY,
    SIDECAR_KEY,
    SIG_KEY,
    feedback_marker,
    file_metadata,
    text_metadata,
    thinking_metadata,
    tool_call_metadata,
    wrap_metadata,
)
from ._sdk_stream import ChunkDowngrade
from ._sdk_versions import SdkVersion
from ._stream_carriers import MessageCarrier, native_call_end, source_chunks
from ._stream_hooks import MessageHooks
from ._stream_tools import ToolHooks
from .chunks import (
    AbortChunk,
    DataChunk,
    ErrorChunk,
    FileChunk,
    FinishChunk,
    FinishReasonUI,
    FinishStepChunk,
    ReasoningDeltaChunk,
    ReasoningEndChunk,
    ReasoningStartChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolInputDeltaChunk,
    ToolInputErrorChunk,
    ToolInputStartChunk,
)
from .types import UIMessage

__all__ = ['VERCEL_AI_HEADERS', 'VercelAIEventStream', 'encode_events']

VERCEL_AI_HEADERS: Mapping[str, str] = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-vercel-ai-ui-message-stream': 'v1',
    'x-accel-buffering': 'no',
}

_DONE = b'data: [DONE]\n\n'

# Every chunk is written by a writer derived from its model (`frames.chunk_writer`), never spelt out here.
_START_STEP = chunk_writer(StartStepChunk)()
_FINISH_STEP = chunk_writer(FinishStepChunk)()
_start = chunk_writer(StartChunk)
_part_start = {'text': chunk_writer(TextStartChunk), 'reasoning': chunk_writer(ReasoningStartChunk)}
_part_end = {'text': chunk_writer(TextEndChunk), 'reasoning': chunk_writer(ReasoningEndChunk)}
_delta_prefix = {'text': delta_prefix(TextDeltaChunk, 'delta'), 'reasoning': delta_prefix(ReasoningDeltaChunk, 'delta')}
_tool_input_start = chunk_writer(ToolInputStartChunk)
_tool_input_prefix = delta_prefix(ToolInputDeltaChunk, 'input_text_delta')
_tool_input_available = chunk_writer(ToolInputAvailableChunk)
_tool_input_error = chunk_writer(ToolInputErrorChunk)
_file = chunk_writer(FileChunk)
_data = chunk_writer(DataChunk)
_error = chunk_writer(ErrorChunk)
_finish = chunk_writer(FinishChunk)
_abort = chunk_writer(AbortChunk)
_FINISH_REASONS: dict[FinishReason, FinishReasonUI] = {
    'stop': 'stop',
    'length': 'length',
    'content_filter': 'content-filter',
    'tool_call': 'tool-calls',
    'error': 'error',
}


def _json(value: Any) -> str:
    return json_string(value) if isinstance(value, str) else wire_json(value)


@dataclass(eq=False, slots=True)
class _OpenPart(OpenPart):
    kind: Literal['text', 'reasoning', 'tool', 'native']
    id: str
    """The chunk id (text, reasoning) or the tool call id."""
    delta_prefix: str
    metadata: dict[str, Any] = field(default_factory=new_dict)
    """The `uibridge` provider metadata sent at start (text, reasoning) or due at the end (the response info)."""


class VercelAIEventStream(ToolHooks, MessageHooks, StreamEncoder[_OpenPart]):
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
            prefix = _tool_input_prefix(tool_call_id=call_id)
            opened = _OpenPart(response, slot, 'tool', call_id, prefix, {'response': info} if info else {})
            out = _tool_input_start(tool_call_id=call_id, tool_name=part.tool_name)
            if isinstance(part.args, str) and part.args:
                out += utf8_json(f'{prefix}{_json(part.args)}}}\n\n')
            return opened, out
        if isinstance(part, NativeToolCallPart):
            # Streamed as a call is, marked provider-executed; it ends in `_part_ended`, never held.
            call_id = part.tool_call_id
            prefix = _tool_input_prefix(tool_call_id=call_id)
            self._native_slots[call_id] = slot
            self._results_after_end[call_id] = b''
            opened = _OpenPart(response, slot, 'native', call_id, prefix, {'response': info} if info else {})
            out = _tool_input_start(tool_call_id=call_id, tool_name=part.tool_name, provider_executed=True)
            if isinstance(part.args, str) and part.args:
                out += utf8_json(f'{prefix}{_json(part.args)}}}\n\n')
            return opened, out
        if isinstance(part, TextPart):
            self._text_slots[event.index] = slot
        kind: Literal['text', 'reasoning'] = 'text' if isinstance(part, TextPart) else 'reasoning'
        self._chunk_ids += 1
        chunk_id = f'{kind[0]}{self._chunk_ids}'
        prefix = _delta_prefix[kind](id=chunk_id)
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
            out = native_call_end(part, opened.metadata.get('response'), self._keyring.sign_part(part), error)
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
        if error is not None:
            return _tool_input_error(
                tool_call_id=call.tool_call_id,
                tool_name=call.tool_name,
                error_text=error,
                input=args,
                provider_metadata=metadata,
            )
        out = _tool_input_available(
            tool_call_id=call.tool_call_id, tool_name=call.tool_name, input=args, provider_metadata=metadata
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


def encode_events(events: Iterable[ev.AgentEvent], **kwargs: Any) -> bytes:
    """A whole stream for `events` (for tests and benchmarks): start, every event, close."""
    return encode_all(VercelAIEventStream(**kwargs), events)
