"""The neutral stream events an agent yields, and how they add up to messages.

An agent streams one run as a sequence of these events; each protocol's encoder turns them into its own
chunks (`uibridge.adapters.<protocol>`). The vocabulary is deliberately small:

- `ResponseStart` opens a model response (a Vercel step, a fresh AG-UI assistant message id). A part event
  outside any response opens one implicitly.
- `PartStart` / `PartDelta` / `PartEnd` stream a text, thinking or tool-call part of the current response,
  addressed by its `index` within that response (so parallel tool calls may interleave their arguments).
  A `PartStart` may already hold content; deltas append text, thinking text or argument JSON.
- `ToolCallReady` says who answers a finished tool call when it is not the server: the client's own tool
  (`'client'`) or a human approval (`'approval'`). Calls without it are answered by a later `ToolResult`.
- `ToolResult` and `RetryFeedback` carry the request-side parts that answer a response.
- `FileOutput` adds a file the model produced; `CustomData` is UI-only data (Vercel `data-*`, AG-UI `CUSTOM`).
- `RunFinished`, `RunError` and `RunCancelled` end the run.

`events_from_message` expands a whole `ModelResponse` / `ModelRequest` into these events, so an agent may
yield either. `MessageCollector` folds events back into `ModelMessage`s: the new messages of a run, for the
application to persist, built the same way for every protocol.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from .json_text import parse_json
from .messages import (
    FilePart,
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from .trusted import construct, replace

__all__ = [
    'ANSWERED_BY_METADATA_KEY',
    'CUSTOM_DATA_METADATA_KEY',
    'AgentEvent',
    'CustomData',
    'FileOutput',
    'MessageCollector',
    'PartDelta',
    'PartEnd',
    'PartStart',
    'ResponseStart',
    'RetryFeedback',
    'RunCancelled',
    'RunError',
    'RunFinished',
    'StreamablePart',
    'ToolCallReady',
    'ToolResult',
    'events_from_message',
]

StreamablePart: TypeAlias = TextPart | ThinkingPart | ToolCallPart

ANSWERED_BY_METADATA_KEY = 'uibridge_answered_by'
"""Where `MessageCollector` keeps who answers a response's tool calls when it is not the server (`ToolCallReady`):
`{tool_call_id: 'client' | 'approval'}` in `ModelResponse.metadata`. A call addressed to a client tool is
signed with that mark (`uibridge.core.provenance`), so the client may answer it after a reload too."""

CUSTOM_DATA_METADATA_KEY = 'uibridge_custom_data'
"""Where `MessageCollector` keeps a response's `CustomData` in `ModelResponse.metadata`: a list of
`{"name", "data", "id"?, "position"}` dicts, `position` being the number of parts before it."""


@dataclass(frozen=True, slots=True)
class ResponseStart:
    model_name: str | None = None
    provider_name: str | None = None


@dataclass(frozen=True, slots=True)
class PartStart:
    index: int
    part: StreamablePart


@dataclass(frozen=True, slots=True)
class PartDelta:
    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class PartEnd:
    index: int
    signature: str | None = None
    """A thinking part's signature, when the provider sends it last."""


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    tool_call_id: str
    answered_by: Literal['client', 'approval']


@dataclass(frozen=True, slots=True)
class ToolResult:
    part: ToolReturnPart | RetryPromptPart


@dataclass(frozen=True, slots=True)
class RetryFeedback:
    part: RetryFeedbackPart


@dataclass(frozen=True, slots=True)
class FileOutput:
    part: FilePart


@dataclass(frozen=True, slots=True)
class CustomData:
    name: str
    data: Any
    id: str | None = None
    transient: bool = False
    """Shown live but not kept in the message (Vercel `transient`)."""


@dataclass(frozen=True, slots=True)
class RunFinished:
    finish_reason: FinishReason | None = None


@dataclass(frozen=True, slots=True)
class RunError:
    message: str = 'An error occurred.'
    """Text safe to show the user; the server decides whether an exception's own text may appear here."""
    code: str | None = None


@dataclass(frozen=True, slots=True)
class RunCancelled:
    reason: str | None = None


AgentEvent: TypeAlias = (
    ResponseStart
    | PartStart
    | PartDelta
    | PartEnd
    | ToolCallReady
    | ToolResult
    | RetryFeedback
    | FileOutput
    | CustomData
    | RunFinished
    | RunError
    | RunCancelled
)


def events_from_message(message: ModelMessage) -> Iterator[AgentEvent]:
    """The events that stream `message` whole.

    Raises `TypeError` for request parts an agent cannot stream (system and user prompts): those are
    the application's input, not the run's output.
    """
    if isinstance(message, ModelResponse):
        yield ResponseStart(model_name=message.model_name, provider_name=message.provider_name)
        index = 0
        for part in message.parts:
            if isinstance(part, FilePart):
                yield FileOutput(part)
                continue
            if isinstance(part, ThinkingPart) and part.signature is not None:
                yield PartStart(index, part.model_copy(update={'signature': None}))
                yield PartEnd(index, signature=part.signature)
            else:
                yield PartStart(index, part)
                yield PartEnd(index)
            index += 1
        return
    for request_part in message.parts:
        if isinstance(request_part, ToolReturnPart | RetryPromptPart):
            yield ToolResult(request_part)
        elif isinstance(request_part, RetryFeedbackPart):
            yield RetryFeedback(request_part)
        else:
            raise TypeError(f'an agent cannot stream a {request_part.part_kind!r} part; it is input, not output')


@dataclass
class _OpenPart:
    part: StreamablePart
    chunks: list[str] = field(default_factory=list[str])


class MessageCollector:
    """Folds a run's events into the `ModelMessage`s they describe.

    Deltas are joined once, at `PartEnd` (or when the messages are read), so collecting costs O(1) per delta.
    A tool call's streamed argument text becomes a dict when it is a JSON object, as a stored history holds it;
    arguments that arrive whole in `PartStart`, with no deltas, are kept exactly as given.
    """

    def __init__(self) -> None:
        self._messages: list[ModelMessage] = []
        self._response: ModelResponse | None = None
        self._open: dict[int, _OpenPart] = {}
        self._slots: dict[int, int] = {}
        self._tool_calls: dict[str, ToolCallPart] = {}
        self._call_responses: dict[str, ModelResponse] = {}
        self.finish_reason: FinishReason | None = None
        self.cancelled = False
        self.error: RunError | None = None

    @property
    def messages(self) -> list[ModelMessage]:
        """A snapshot of the messages so far; parts still streaming are included as far as they got.

        The snapshot is the caller's: later events change neither it nor are changed by what the caller does
        with it (each message and its parts list are copies; the parts themselves are never mutated).
        """
        snapshot: list[ModelMessage] = []
        for message in self._messages:
            if message is self._response and self._open:
                parts = list(message.parts)
                for index, open_part in self._open.items():
                    parts[self._slots[index]] = _finished(open_part, None)
                snapshot.append(message.model_copy(update={'parts': parts}))
            else:
                snapshot.append(message.model_copy(update={'parts': list(message.parts)}))
        return snapshot

    @property
    def last_message(self) -> ModelMessage | None:
        """The message being built, as it stands (not a copy: read it, don't change it). O(1), unlike
        `messages`, so an encoder may consult it on every event."""
        return self._messages[-1] if self._messages else None

    def tool_call(self, tool_call_id: str) -> ToolCallPart | None:
        """The finished tool call with this id, if the run has made one (not a copy). O(1)."""
        return self._tool_calls.get(tool_call_id)

    def close(self) -> None:
        """End every part still streaming (the run stopped mid-part: an error or a cancel)."""
        for index in list(self._open):
            self._close(index, None)

    def feed(self, event: AgentEvent) -> None:
        # One lookup by exact type (~0.1 µs), where class patterns tried in order cost up to ~0.5 µs for a late
        # one: the collector sees every event of a run. A subclass resolves through its MRO, once.
        feeder = self._feeders.get(type(event)) or self._feeder_for(type(event))
        feeder(self, event)

    @classmethod
    def _feeder_for(cls, kind: type) -> _Feeder:
        """The feeder of `kind`'s nearest event base class (a subclassed event), remembered for the next one."""
        feeder = next((cls._feeders[base] for base in kind.__mro__ if base in cls._feeders), None)
        cls._feeders[kind] = feeder = feeder or MessageCollector._nothing
        return feeder

    def _delta(self, event: PartDelta) -> None:
        open_part = self._open.get(event.index)
        if open_part is None:
            raise ValueError(f'a delta for part {event.index}, which is not streaming')
        open_part.chunks.append(event.delta)

    def _part_start(self, event: PartStart) -> None:
        response = self._current_response()
        if event.index in self._open:
            raise ValueError(f'part {event.index} was started twice')
        self._slots[event.index] = len(response.parts)
        response.parts.append(event.part)
        self._open[event.index] = _OpenPart(event.part)

    def _part_end(self, event: PartEnd) -> None:
        if event.index not in self._open:
            raise ValueError(f'part {event.index} ended but is not streaming')
        self._close(event.index, event.signature)

    def _response_start(self, event: ResponseStart) -> None:
        self._start_response(event.model_name, event.provider_name)

    def _request_part(self, event: ToolResult | RetryFeedback) -> None:
        self._append_request_part(event.part)

    def _file(self, event: FileOutput) -> None:
        self._current_response().parts.append(event.part)

    def _custom(self, event: CustomData) -> None:
        if event.transient:
            return
        response = self._current_response()
        metadata = dict(response.metadata or {})
        items: list[dict[str, Any]] = list(metadata.get(CUSTOM_DATA_METADATA_KEY, []))
        item: dict[str, Any] = {'name': event.name, 'data': event.data, 'position': len(response.parts)}
        if event.id is not None:
            item['id'] = event.id
        items.append(item)
        metadata[CUSTOM_DATA_METADATA_KEY] = items
        response.metadata = metadata

    def _run_finished(self, event: RunFinished) -> None:
        self.finish_reason = event.finish_reason
        if self._response is not None and event.finish_reason is not None:
            self._response.finish_reason = event.finish_reason

    def _run_error(self, event: RunError) -> None:
        self.error = event

    def _run_cancelled(self, event: RunCancelled) -> None:
        self.cancelled = True

    def _ready(self, event: ToolCallReady) -> None:
        response = self._call_responses.get(event.tool_call_id) or self._response
        if response is None:
            return
        metadata = dict(response.metadata or {})
        answered: dict[str, str] = dict(metadata.get(ANSWERED_BY_METADATA_KEY) or {})
        answered[event.tool_call_id] = event.answered_by
        metadata[ANSWERED_BY_METADATA_KEY] = answered
        response.metadata = metadata

    def _nothing(self, event: object) -> None:
        """What is no agent event at all."""

    _feeders: ClassVar[dict[type, _Feeder]] = {
        PartDelta: _delta,
        PartStart: _part_start,
        PartEnd: _part_end,
        ResponseStart: _response_start,
        ToolResult: _request_part,
        RetryFeedback: _request_part,
        FileOutput: _file,
        CustomData: _custom,
        ToolCallReady: _ready,
        RunFinished: _run_finished,
        RunError: _run_error,
        RunCancelled: _run_cancelled,
    }
    """How `feed` takes each event class."""

    def _start_response(self, model_name: str | None, provider_name: str | None) -> None:
        if self._open:
            for index in list(self._open):
                self._close(index, None)
        self._response = construct(
            ModelResponse, {'parts': [], 'model_name': model_name, 'provider_name': provider_name}
        )
        self._messages.append(self._response)
        self._slots = {}

    def _current_response(self) -> ModelResponse:
        if self._response is None:
            self._start_response(None, None)
        assert self._response is not None
        return self._response

    def _append_request_part(self, part: ModelRequestPart) -> None:
        if self._open:
            for index in list(self._open):
                self._close(index, None)
        self._response = None
        last = self._messages[-1] if self._messages else None
        if isinstance(last, ModelRequest):
            last.parts.append(part)
        else:
            self._messages.append(construct(ModelRequest, {'parts': [part]}))

    def _close(self, index: int, signature: str | None) -> None:
        open_part = self._open.pop(index)
        assert self._response is not None
        part = _finished(open_part, signature)
        self._response.parts[self._slots[index]] = part
        if isinstance(part, ToolCallPart):
            self._tool_calls[part.tool_call_id] = part
            self._call_responses[part.tool_call_id] = self._response


_Feeder: TypeAlias = Callable[[MessageCollector, Any], None]


def _finished(open_part: _OpenPart, signature: str | None) -> StreamablePart:
    part = open_part.part
    added = ''.join(open_part.chunks)
    if isinstance(part, ToolCallPart):
        if not added:
            return part  # arguments that arrived whole stay as the agent wrote them
        args = _paired((part.args if isinstance(part.args, str) else '') + added)
        return replace(part, {'args': _parse_args(args)})
    update: dict[str, Any] = {'content': _paired(part.content + added)}
    if isinstance(part, ThinkingPart) and signature is not None:
        update['signature'] = signature
    return replace(part, update)


_SURROGATE = re.compile('[\ud800-\udfff]')


def _paired(text: str) -> str:
    """`text` with each surrogate pair made the one character it encodes.

    A provider may cut a character beyond the BMP (an emoji) between two deltas, each half then a lone
    surrogate; joined, the halves sit side by side but are still two code points, which UTF-8 cannot encode
    (a provider call with this text would fail) and which differ from the character every client builds
    from the same deltas. Halves that never found their partner stay as they are. Once per part, and the
    search is all a text without surrogates pays.
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode('utf-16-le', 'surrogatepass').decode('utf-16-le', 'surrogatepass')


def _parse_args(args: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    if not isinstance(args, str):
        return args
    try:
        parsed = parse_json(args)
    except ValueError:
        return args
    return parsed if isinstance(parsed, dict) else args  # pyright: ignore[reportUnknownVariableType]
