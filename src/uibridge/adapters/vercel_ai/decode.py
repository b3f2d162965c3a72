"""`VercelAIStreamDecoder`: a Vercel AI UI message stream (SSE, `ai` 5 to 7) back into neutral agent events.

The inverse of `VercelAIEventStream`, and a reader of any server's stream (the `ai` SDK's own `streamText(...)
.toUIMessageStreamResponse()`, pydantic-ai's): bytes in, events out, no I/O. Feed it the body as it arrives
(`feed(chunk)`: an SSE frame may be split anywhere) and `close()` at its end.

What each chunk becomes:

- `start-step` / `finish-step`: a model response (`ResponseStart`, sent with the step's first part so that it
  carries the model and provider names uibridge writes on that part); `text-*` and `reasoning-*`: text and
  thinking parts (a thinking part's signature at its end); `tool-input-*`: a tool call, streamed as its input
  text arrives, or whole from `tool-input-available` (with `providerExecuted`, a provider-run call; with
  `dynamic`, `PartStart(dynamic=True)`: a tool the UI does not know by name);
- `tool-output-available` / `-error` / `-denied`: the call's result, read as `load_messages` reads the tool part
  the client builds from the same chunks (so a failed result, a retry prompt, a denial and uibridge's own result
  metadata come back as a history loaded from the client would hold them); `tool-input-error` from a server
  that is not uibridge is the failed result the model is shown (`streamText` answers an invalid call so);
- who answers a call: `tool-approval-request` is `ToolCallReady(..., 'approval')` (its approval id kept in
  `approval_ids`), uibridge's client mark on a call `ToolCallReady(..., 'client')`; a call of another server that
  has no result when its step finishes is the client's (the `ai` SDK runs a tool without `execute` in the
  browser);
- `data-state` (id `state`): `StateSnapshot`; `data-retry-feedback` holding a valid marker: `RetryFeedback`;
  uibridge's transient `data-activity`: `ActivitySnapshot` / `ActivityDelta`; any other `data-*`: `CustomData`;
- `source-url` / `source-document`: the citations of a text part (uibridge's, which name the text they cite,
  read with `load_messages`; another server's cite the step's latest text part, or the next one);
- `file` with a data URL: `FileOutput` (a file at a remote URL is not fetched: skipped);
- `message-metadata` (and `start` / `finish` metadata): uibridge's late step info (usage, response id) as
  `ResponseInfo`, the rest as `MessageMetadata`;
- `finish`: `RunFinished` with the finish reason; `error`: `RunError` with the stream's own text; `abort`:
  `RunCancelled`. After the first of these the stream has ended and the rest is ignored. A stream that stops
  without one ends as a finished run, or as a failed one when it stopped inside a part.

Skipped (counted in `skipped`): chunks with no neutral form (`reset-step`, `custom`, `reasoning-file`,
`steering-message`, a preliminary tool output) and unknown chunk types, which a newer server may send. A frame
that is not a JSON object with a string `type` raises `StreamError`, as do deltas for parts never started and a
frame or buffer past the reader's bounds (`StreamLimitError`): the stream cannot be read any further.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ...core import events as ev
from ...core.citations import Citation, CitationSource, ContentCitationAnchor, DocumentCitationSource, WebCitationSource
from ...core.content import BinaryContent
from ...core.decoder import StreamDecoder, call_names, optional_text, required_text
from ...core.diagnostics import collect_warnings
from ...core.errors import InputError
from ...core.feedback import retry_marker_part
from ...core.json_text import compact_json
from ...core.messages import (
    FilePart,
    FinishReason,
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from ...core.records import read_response_fields, read_thinking_fields
from ...core.run import ToolApproval
from ...core.sse import DEFAULT_MAX_BUFFER_BYTES, DEFAULT_MAX_FRAME_BYTES, StreamError
from .load import load_messages

__all__ = ['VercelAIStreamDecoder']

_OURS = 'uibridge'
"""The provider key of uibridge's own metadata on a chunk (see `dump`): read where the wire alone is ambiguous."""
_FINISH_REASONS: dict[str, FinishReason | None] = {
    'stop': 'stop',
    'length': 'length',
    'content-filter': 'content_filter',
    'tool-calls': 'tool_call',
    'error': 'error',
    'interrupted': None,
    'other': None,
}
_RESPONSE_INFO_KEYS = (
    'usage',
    'finish_reason',
    'provider_response_id',
    'model_name',
    'provider_name',
    'provider_details',
)


def _ours(chunk: Mapping[str, Any], key: str = 'providerMetadata') -> dict[str, Any]:
    metadata = chunk.get(key)
    if not isinstance(metadata, dict):
        return {}
    value = cast('dict[str, Any]', metadata).get(_OURS)
    return cast('dict[str, Any]', value) if isinstance(value, dict) else {}


@dataclass(eq=False, slots=True)
class _Call:
    """A tool call as the stream told it, and the tool part a client would hold for it (`load_messages` reads
    that part when the result comes)."""

    index: int | None
    part: dict[str, Any]
    native: bool
    streamed: bool = False
    """Whether input text arrived in deltas (else the input goes whole at its end)."""
    ended: bool = False
    marked: bool = False
    """Whether a `ToolCallReady` was sent for it."""
    answered: bool = False


@dataclass(eq=False, slots=True)
class _Step:
    """What the decoder keeps of the current step (model response)."""

    started: bool = False
    """Whether its `ResponseStart` went out (it waits for the first part, which names the model)."""
    named: bool = False
    """Whether uibridge's response record was read (a call's comes only at its end, after it started)."""
    texts: list[int] = field(default_factory=list[int])
    """The event index of each of its text parts, in order (uibridge's sources name a text by its place here)."""
    text_parts: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Those text parts as the client holds them, without their text (enough to read their sources)."""
    sources: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """uibridge's source parts since the last other chunk: read together, as the citations they make up."""
    uncited: list[Citation] = field(default_factory=list[Citation])
    """Another server's sources that came before any text of the step: they cite the next one."""
    calls: list[str] = field(default_factory=list[str])
    """The step's finished calls nobody said who answers (not uibridge's): the client's, if unanswered at its end."""


class VercelAIStreamDecoder(StreamDecoder):
    """Decodes one response stream. Sans-IO: `feed(bytes)` per chunk of the body, then `close()`; each returns the
    neutral events the bytes completed.

    - `history`: the conversation the request sent; a result for one of its calls (the run continues a message
      after an approval or a client tool's output) takes the call's tool name from it;
    - `approvals`: the answers the request sent, so that a denial the stream then reports says the answer's reason,
      as the part the client holds does;
    - `max_frame_bytes`, `max_buffer_bytes`: the bounds of the SSE reader (`uibridge.core.sse.SSEReader`).

    Beside the events, it keeps what the stream said of the message: `message_id` (the `start` chunk's),
    `approval_ids` (tool call id -> the approval id the stream asked with), `finish_reason` (the `finish`
    chunk's, as sent), `ended` (a terminal chunk came) and `skipped` (chunks with no neutral form).
    """

    def __init__(
        self,
        *,
        history: Sequence[ModelMessage] = (),
        approvals: Sequence[ToolApproval] = (),
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES,
    ) -> None:
        super().__init__(max_frame_bytes=max_frame_bytes, max_buffer_bytes=max_buffer_bytes)
        self._names = call_names(history)
        self._answers = {approval.tool_call_id: approval for approval in approvals if approval.tool_call_id}
        self._message_id: str | None = None
        self._approval_ids: dict[str, str] = {}
        self.finish_reason: str | None = None
        self._texts: dict[str, int] = {}
        self._reasonings: dict[str, int] = {}
        self._calls: dict[str, _Call] = {}
        self._step: _Step | None = None
        self._last_text: int | None = None
        self._asked: tuple[str, Any] | None = None
        """An approval request just read (call id, approval id): no request at all when the next chunk answers it
        (uibridge's form of a denial nobody asked for), else the call awaits approval."""

    @property
    def approval_ids(self) -> dict[str, str]:
        return dict(self._approval_ids)

    @property
    def message_id(self) -> str | None:
        return self._message_id

    # ------------------------------------------------------------------------------------------- input

    def _unfinished(self, *, cut_off: bool) -> None:
        if cut_off:
            self._cut_off()
        else:
            self._end_step()
            self._end(ev.RunFinished())

    def _frame(self, kind: str, frame: dict[str, Any]) -> None:
        chunk = frame
        if self._asked is not None:
            call_id, approval_id = self._asked
            self._asked = None
            if kind != 'tool-approval-response' or chunk.get('approvalId') != approval_id:
                self._mark(call_id, 'approval')
        step = self._step
        if step is not None and step.sources and kind not in ('source-url', 'source-document'):
            self._cite(step)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, chunk)
        elif kind.startswith('data-'):
            self._data(kind[5:], chunk)
        else:
            self.skipped += 1

    # ------------------------------------------------------------------------------------- steps

    def _start_step(self, chunk: dict[str, Any]) -> None:
        self._end_step()
        self._step = _Step()
        self._last_text = None

    def _finish_step(self, chunk: dict[str, Any]) -> None:
        step = self._step
        if step is not None and not step.started:
            self._emit(ev.ResponseStart())  # an empty step is an empty response
        self._end_step()

    def _end_step(self) -> None:
        self._release()
        if self._asked is not None:
            call_id, self._asked = self._asked[0], None
            self._mark(call_id, 'approval')
        step = self._step
        if step is None:
            return
        if step.sources:
            self._cite(step)
        for call_id in step.calls:
            call = self._calls[call_id]
            if not call.answered and not call.marked:
                call.marked = True
                self._emit(ev.ToolCallReady(call_id, 'client'))
        self._step = None

    def _response(self, record: Any = None) -> None:
        """The current step's `ResponseStart`, before its first part (`record`: uibridge's response record there;
        a call has it only at its end, when the names it holds go as `ResponseInfo`)."""
        step = self._step
        if step is None:
            # A part outside any step: another server's stream may have no steps at all, so one step is opened
            # for it (the collector opens the response on its own).
            self._step = step = _Step(started=True)
        fields = read_response_fields(cast('dict[str, Any]', record)) if isinstance(record, dict) else {}
        names = {key: fields[key] for key in ('model_name', 'provider_name') if key in fields}
        if not step.started:
            step.started = True
            step.named = bool(fields)
            self._emit(ev.ResponseStart(**names))
        elif not step.named and fields:
            step.named = True
            if names:
                self._emit(ev.ResponseInfo(**names))

    def _text_start(self, chunk: dict[str, Any]) -> None:
        ours = _ours(chunk)
        self._response(ours.get('response'))
        index = self._start_part()
        self._texts[required_text(chunk, 'id')] = index
        if self._step is not None:
            self._step.texts.append(index)
        self._emit(ev.PartStart(index, TextPart(content='', id=optional_text(ours.get('id')))))

    def _text_delta(self, chunk: dict[str, Any]) -> None:
        self._part_delta(self._texts, chunk, 'delta')

    def _text_end(self, chunk: dict[str, Any]) -> None:
        index = self._part_index(self._texts, chunk)
        self._end_part(index)
        self._last_text = index
        step = self._step
        if step is None:
            return
        text_part: dict[str, Any] = {'type': 'text', 'text': ''}
        if 'providerMetadata' in chunk:
            text_part['providerMetadata'] = chunk['providerMetadata']
        step.text_parts.append(text_part)
        for citation in [*step.uncited, *_ai_citations(chunk.get('citations'))]:
            self._emit(ev.CitationAdded(index, citation))
        step.uncited.clear()

    def _reasoning_start(self, chunk: dict[str, Any]) -> None:
        ours = _ours(chunk)
        self._response(ours.get('response'))
        index = self._start_part()
        self._reasonings[required_text(chunk, 'id')] = index
        fields = read_thinking_fields(ours)
        fields.pop('signature', None)  # the signature is the end's (a provider sends it last)
        self._emit(ev.PartStart(index, ThinkingPart(content='', **fields)))

    def _reasoning_delta(self, chunk: dict[str, Any]) -> None:
        self._part_delta(self._reasonings, chunk, 'delta')

    def _reasoning_end(self, chunk: dict[str, Any]) -> None:
        index = self._part_index(self._reasonings, chunk)
        self._end_part(index, optional_text(_ours(chunk).get('signature')))

    def _part_delta(self, table: dict[str, int], chunk: dict[str, Any], key: str) -> None:
        # The hot path (most chunks are deltas): `_part_index` and the text check, inline.
        part_id, delta = chunk.get('id'), chunk.get(key)
        index = table.get(part_id) if type(part_id) is str else None
        if index is None or index not in self._open or type(delta) is not str:
            raise StreamError(f'the stream sent {chunk["type"]} for a part that is not streaming, or no `{key}` text')
        self._delta(index, delta)

    def _part_index(self, table: dict[str, int], chunk: dict[str, Any]) -> int:
        index = table.get(required_text(chunk, 'id'))
        if index is None or index not in self._open:
            raise StreamError(f'the stream sent {chunk["type"]} for a part that is not streaming')
        return index

    # ------------------------------------------------------------------------------------- tool calls

    def _tool_input_start(self, chunk: dict[str, Any]) -> None:
        call_id, name = required_text(chunk, 'toolCallId'), required_text(chunk, 'toolName')
        native = chunk.get('providerExecuted') is True
        self._response(_ours(chunk).get('response'))
        index = self._start_part(call=not native)
        self._names[call_id] = name
        part = _tool_part(call_id, name, native, 'input-streaming')
        _set_metadata(part, 'callProviderMetadata', chunk)
        self._calls[call_id] = _Call(index, part, native)
        call_part = NativeToolCallPart if native else ToolCallPart
        started = call_part(tool_name=name, tool_call_id=call_id, args=None)
        self._emit(ev.PartStart(index, started, dynamic=chunk.get('dynamic') is True))

    def _tool_input_delta(self, chunk: dict[str, Any]) -> None:
        call = self._calls.get(required_text(chunk, 'toolCallId'))
        delta = chunk.get('inputTextDelta')
        if call is None or call.ended or call.index is None or not isinstance(delta, str):
            raise StreamError('the stream sent tool-input-delta for a tool call that is not streaming')
        call.streamed = True
        self._delta(call.index, delta)

    def _tool_input_available(self, chunk: dict[str, Any]) -> None:
        self._tool_input_end(chunk, None)

    def _tool_input_error(self, chunk: dict[str, Any]) -> None:
        error = chunk.get('errorText')
        self._tool_input_end(chunk, error if isinstance(error, str) else '')

    def _tool_input_end(self, chunk: dict[str, Any], error: str | None) -> None:
        call_id, name = required_text(chunk, 'toolCallId'), required_text(chunk, 'toolName')
        call = self._calls.get(call_id)
        if call is not None and call.ended:
            # An older client's form (`ai` 5, 6) repeats a finished call with new call metadata (a denial's,
            # a result's): the part it holds takes it, nothing else changes.
            _set_metadata(call.part, 'callProviderMetadata', chunk)
            return
        native = chunk.get('providerExecuted') is True or (call is not None and call.native)
        self._names[call_id] = name
        ours = _ours(chunk)
        self._response(ours.get('response'))
        if call is None:
            call = self._calls[call_id] = _Call(None, _tool_part(call_id, name, native, 'input-streaming'), native)
        call.part['input'] = chunk.get('input')
        call.part['state'] = 'input-available'
        _set_metadata(call.part, 'callProviderMetadata', chunk)
        call.ended = True
        whole = self._read_call(call)
        if call.index is None:
            # The call came whole (its arguments were not streamed): as the client reads it.
            call.index = self._start_part(call=not native)
            self._emit(ev.PartStart(call.index, whole, dynamic=chunk.get('dynamic') is True))
        elif not call.streamed and whole.args is not None:
            args = whole.args
            self._delta(call.index, args if isinstance(args, str) else compact_json(args))
        self._end_part(call.index)
        if native:
            return
        if ours.get('client') is True:
            self._mark(call_id, 'client')
        elif ours.get('approval') is True:
            self._mark(call_id, 'approval')  # `ai` 5 has no approval chunk: the mark on the call asks for it
            approval_id = ours.get('approval_id')
            if isinstance(approval_id, str):
                self._approval_ids[call_id] = approval_id
        if error is not None and not ours:
            # Another server's invalid call: `streamText` answers it with this error, which the model is shown.
            call.part.update(state='output-error', errorText=error)
            self._result(call, chunk)
        elif not ours and self._step is not None:
            self._step.calls.append(call_id)

    def _mark(self, call_id: str, answered_by: ev.AnsweredBy) -> None:
        call = self._calls.get(call_id)
        if call is None or call.marked or call.answered:
            return
        call.marked = True
        self._emit(ev.ToolCallReady(call_id, answered_by))

    def _approval_request(self, chunk: dict[str, Any]) -> None:
        call_id, approval_id = required_text(chunk, 'toolCallId'), chunk.get('approvalId')
        if isinstance(approval_id, str):
            self._approval_ids[call_id] = approval_id
        call = self._calls.get(call_id)
        if call is not None:
            call.part['state'] = 'approval-requested'
            call.part['approval'] = {'id': approval_id}
        self._asked = (call_id, approval_id)

    def _approval_response(self, chunk: dict[str, Any]) -> None:
        approval_id = chunk.get('approvalId')
        for call in self._calls.values():
            approval = call.part.get('approval')
            if isinstance(approval, dict) and cast('dict[str, Any]', approval).get('id') == approval_id:
                answer: dict[str, Any] = {'id': approval_id, 'approved': chunk.get('approved') is True}
                if isinstance(reason := chunk.get('reason'), str):
                    answer['reason'] = reason
                call.part.update(state='approval-responded', approval=answer)
                _set_metadata(call.part, 'callProviderMetadata', chunk)
                return

    def _output_available(self, chunk: dict[str, Any]) -> None:
        if chunk.get('preliminary') is True:
            self.skipped += 1  # a tool's progress, replaced by its final output
            return
        call = self._answered_call(chunk)
        call.part.update(state='output-available', output=chunk.get('output'))
        _set_metadata(call.part, 'resultProviderMetadata', chunk)
        self._result(call, chunk)

    def _output_error(self, chunk: dict[str, Any]) -> None:
        call = self._answered_call(chunk)
        error = chunk.get('errorText')
        call.part.update(state='output-error', errorText=error if isinstance(error, str) else '')
        _set_metadata(call.part, 'resultProviderMetadata', chunk)
        self._result(call, chunk)

    def _output_denied(self, chunk: dict[str, Any]) -> None:
        call = self._answered_call(chunk)
        approval = call.part.get('approval')
        answer = (
            cast('dict[str, Any]', approval)
            if isinstance(approval, dict)
            else {'id': required_text(chunk, 'toolCallId')}
        )
        call.part.update(state='output-denied', approval={**answer, 'approved': False})
        self._result(call, chunk)

    def _answered_call(self, chunk: dict[str, Any]) -> _Call:
        """The call a result answers: one of this stream, or one the history made (a continued message)."""
        call_id = required_text(chunk, 'toolCallId')
        call = self._calls.get(call_id)
        if call is None:
            name = self._names.get(call_id, '')
            native = chunk.get('providerExecuted') is True
            call = self._calls[call_id] = _Call(None, _tool_part(call_id, name, native, 'input-available'), native)
            call.part['input'] = {}
            call.ended = True
            answer = self._answers.get(call_id)
            if answer is not None:
                approval: dict[str, Any] = {'id': answer.approval_id, 'approved': answer.approved}
                if answer.reason is not None:
                    approval['reason'] = answer.reason
                call.part['approval'] = approval
        return call

    def _result(self, call: _Call, chunk: dict[str, Any]) -> None:
        call.answered = True
        result = self._read_result(call)
        if result is None:
            return
        if isinstance(result, NativeToolReturnPart):
            self._response()
            self._emit(ev.NativeToolResult(result))
        else:
            self._answer(ev.ToolResult(result))

    def _read_call(self, call: _Call) -> ToolCallPart | NativeToolCallPart:
        response = _loaded(call.part)[0]
        assert isinstance(response, ModelResponse)
        part = response.parts[0]
        assert isinstance(part, ToolCallPart | NativeToolCallPart)
        return part

    def _read_result(self, call: _Call) -> ToolReturnPart | RetryPromptPart | NativeToolReturnPart | None:
        loaded = _loaded(call.part)
        for message in loaded:
            for part in message.parts:
                if isinstance(part, ToolReturnPart | RetryPromptPart | NativeToolReturnPart):
                    return part
        return None

    # -------------------------------------------------------------------------------- beside the parts

    def _source(self, chunk: dict[str, Any]) -> None:
        step = self._step
        if step is None:
            self.skipped += 1  # a source outside any step cites nothing
            return
        source = {k: v for k, v in chunk.items() if k in _SOURCE_KEYS}
        if _ours(chunk):
            step.sources.append(source)  # uibridge's: read with the rest of its citation (`_cite`)
            return
        citation = Citation(sources=[_bare_source(source)])
        if self._last_text is None:
            step.uncited.append(citation)
        else:
            self._emit(ev.CitationAdded(self._last_text, citation))

    def _cite(self, step: _Step) -> None:
        """uibridge's sources since the last other chunk, as the citations `load_messages` reads from them."""
        sources, step.sources = step.sources, []
        if not step.text_parts:
            return
        loaded = _loaded_message([{'type': 'step-start'}, *step.text_parts, *sources])
        texts = [p for m in loaded if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, TextPart)]
        for position, text in enumerate(texts[: len(step.texts)]):
            for citation in text.citations or ():
                self._emit(ev.CitationAdded(step.texts[position], citation))

    def _file(self, chunk: dict[str, Any]) -> None:
        url = chunk.get('url')
        if not isinstance(url, str) or not url.startswith('data:'):
            self.skipped += 1  # a file at a URL is not fetched here
            return
        try:
            content = BinaryContent.from_data_url(url)
        except ValueError:
            raise StreamError('the stream sent a file chunk whose data URL is not base64') from None
        ours = _ours(chunk)
        self._response(ours.get('response'))
        self._emit(ev.FileOutput(FilePart(content=content, id=optional_text(ours.get('id')))))

    def _data(self, name: str, chunk: dict[str, Any]) -> None:
        data = chunk.get('data')
        data_id = optional_text(chunk.get('id'))
        transient = chunk.get('transient') is True
        if name == 'state' and data_id == 'state' and not transient:
            self._emit(ev.StateSnapshot(data))
            return
        if name == 'retry-feedback' and (part := retry_marker_part(data)) is not None:
            self._end_step()
            self._emit(ev.ToolResult(part) if isinstance(part, RetryPromptPart) else ev.RetryFeedback(part))
            return
        if name == 'activity' and transient and data_id is not None and isinstance(data, dict):
            activity = _activity(data_id, cast('dict[str, Any]', data))
            if activity is not None:
                self._emit(activity)
                return
        if not transient:
            self._response()
        self._emit(ev.CustomData(name, data, data_id, transient))

    def _message_metadata(self, chunk: dict[str, Any]) -> None:
        metadata = chunk.get('messageMetadata')
        if not isinstance(metadata, dict) or not metadata:
            return
        metadata = dict(cast('dict[str, Any]', metadata))
        ours = metadata.pop(_OURS, None)
        steps = cast('dict[str, Any]', ours).get('steps') if isinstance(ours, dict) else None
        for entry in cast('dict[str, Any]', steps).values() if isinstance(steps, dict) else ():
            if isinstance(entry, dict):
                fields = read_response_fields(cast('dict[str, Any]', entry))
                info = {key: fields[key] for key in _RESPONSE_INFO_KEYS if key in fields}
                if info:
                    self._emit(ev.ResponseInfo(**info))
        if metadata:
            self._emit(ev.MessageMetadata(metadata))

    # -------------------------------------------------------------------------------------- ends

    def _start(self, chunk: dict[str, Any]) -> None:
        message_id = chunk.get('messageId')
        if isinstance(message_id, str):
            self._message_id = message_id
        self._message_metadata(chunk)

    def _finish(self, chunk: dict[str, Any]) -> None:
        self._message_metadata(chunk)
        reason = chunk.get('finishReason')
        self.finish_reason = reason if isinstance(reason, str) else None
        self._end_step()
        self._end(ev.RunFinished(_FINISH_REASONS.get(reason) if isinstance(reason, str) else None))

    def _error(self, chunk: dict[str, Any]) -> None:
        text = chunk.get('errorText')
        self._end(ev.RunError(text if isinstance(text, str) and text else 'An error occurred.'))

    def _abort(self, chunk: dict[str, Any]) -> None:
        self._end(ev.RunCancelled(optional_text(chunk.get('reason'))))

    def _skip(self, chunk: dict[str, Any]) -> None:
        self.skipped += 1


_Handler = Callable[[VercelAIStreamDecoder, dict[str, Any]], None]
_D = VercelAIStreamDecoder
_HANDLERS: dict[str, _Handler] = {
    'text-delta': _D._text_delta,  # pyright: ignore[reportPrivateUsage]
    'text-start': _D._text_start,  # pyright: ignore[reportPrivateUsage]
    'text-end': _D._text_end,  # pyright: ignore[reportPrivateUsage]
    'reasoning-delta': _D._reasoning_delta,  # pyright: ignore[reportPrivateUsage]
    'reasoning-start': _D._reasoning_start,  # pyright: ignore[reportPrivateUsage]
    'reasoning-end': _D._reasoning_end,  # pyright: ignore[reportPrivateUsage]
    'tool-input-delta': _D._tool_input_delta,  # pyright: ignore[reportPrivateUsage]
    'tool-input-start': _D._tool_input_start,  # pyright: ignore[reportPrivateUsage]
    'tool-input-available': _D._tool_input_available,  # pyright: ignore[reportPrivateUsage]
    'tool-input-error': _D._tool_input_error,  # pyright: ignore[reportPrivateUsage]
    'tool-approval-request': _D._approval_request,  # pyright: ignore[reportPrivateUsage]
    'tool-approval-response': _D._approval_response,  # pyright: ignore[reportPrivateUsage]
    'tool-output-available': _D._output_available,  # pyright: ignore[reportPrivateUsage]
    'tool-output-error': _D._output_error,  # pyright: ignore[reportPrivateUsage]
    'tool-output-denied': _D._output_denied,  # pyright: ignore[reportPrivateUsage]
    'source-url': _D._source,  # pyright: ignore[reportPrivateUsage]
    'source-document': _D._source,  # pyright: ignore[reportPrivateUsage]
    'file': _D._file,  # pyright: ignore[reportPrivateUsage]
    'message-metadata': _D._message_metadata,  # pyright: ignore[reportPrivateUsage]
    'start': _D._start,  # pyright: ignore[reportPrivateUsage]
    'start-step': _D._start_step,  # pyright: ignore[reportPrivateUsage]
    'finish-step': _D._finish_step,  # pyright: ignore[reportPrivateUsage]
    'finish': _D._finish,  # pyright: ignore[reportPrivateUsage]
    'error': _D._error,  # pyright: ignore[reportPrivateUsage]
    'abort': _D._abort,  # pyright: ignore[reportPrivateUsage]
    'reset-step': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'custom': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'reasoning-file': _D._skip,  # pyright: ignore[reportPrivateUsage]
    'steering-message': _D._skip,  # pyright: ignore[reportPrivateUsage]
}
_SOURCE_KEYS = frozenset({'type', 'sourceId', 'url', 'title', 'mediaType', 'filename', 'providerMetadata'})


def _tool_part(call_id: str, name: str, native: bool, state: str) -> dict[str, Any]:
    part: dict[str, Any] = {'type': 'dynamic-tool', 'toolName': name, 'toolCallId': call_id, 'state': state}
    if native:
        part['providerExecuted'] = True
    return part


def _set_metadata(part: dict[str, Any], key: str, chunk: dict[str, Any]) -> None:
    """The chunk's `providerMetadata` replaces the part's under `key`, as the client does."""
    metadata = chunk.get('providerMetadata')
    if isinstance(metadata, dict):
        part[key] = metadata


def _loaded(tool_part: dict[str, Any]) -> list[ModelMessage]:
    loaded = _loaded_message([{'type': 'step-start'}, tool_part])
    if not loaded:
        raise StreamError('the stream sent a tool call no client could hold')
    return loaded


def _loaded_message(parts: list[dict[str, Any]]) -> list[ModelMessage]:
    """`parts` as one assistant message, read as `load_messages` reads the message a client built from them."""
    with collect_warnings():
        try:
            return load_messages([{'id': 'decoded', 'role': 'assistant', 'parts': parts}])
        except InputError as error:
            raise StreamError(f'the stream sent a part no client could hold: {error}') from None


def _bare_source(source: dict[str, Any]) -> CitationSource:
    """Another server's source part as a citation source (its fields only: no uibridge metadata to read)."""
    source_id = optional_text(source.get('sourceId'))
    if source.get('type') == 'source-url':
        return WebCitationSource(url=str(source.get('url', '')), title=optional_text(source.get('title')), id=source_id)
    return DocumentCitationSource(
        title=optional_text(source.get('title')),
        media_type=optional_text(source.get('mediaType')),
        filename=optional_text(source.get('filename')),
        id=source_id,
    )


def _ai_citations(value: Any) -> list[Citation]:
    """`text-end.citations` (`ai` 7): each a source, with the cited span when the server gave one."""
    citations: list[Citation] = []
    for item in cast('list[Any]', value) if isinstance(value, list) else ():
        if not isinstance(item, dict) or not isinstance(source := cast('dict[str, Any]', item).get('source'), dict):
            continue
        item, source = cast('dict[str, Any]', item), cast('dict[str, Any]', source)
        kind = 'source-url' if source.get('sourceType') == 'url' else 'source-document'
        cited = _bare_source({**source, 'type': kind, 'sourceId': source.get('id')})
        start, end = item.get('startIndex'), item.get('endIndex')
        if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end:
            citations.append(Citation(sources=[cited], anchor=ContentCitationAnchor(start=start, end=end)))
        else:
            citations.append(Citation(sources=[cited]))
    return citations


def _activity(message_id: str, data: dict[str, Any]) -> ev.ActivitySnapshot | ev.ActivityDelta | None:
    """uibridge's transient `data-activity` part: the fields of AG-UI's activity events."""
    kind = data.get('activityType')
    if not isinstance(kind, str):
        return None
    content, patch = data.get('content'), data.get('patch')
    if isinstance(content, dict):
        replace = data.get('replace') is not False
        return ev.ActivitySnapshot(message_id, kind, cast('dict[str, Any]', content), replace)
    if isinstance(patch, list):
        return ev.ActivityDelta(message_id, kind, cast('list[dict[str, Any]]', patch))
    return None
