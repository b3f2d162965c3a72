"""`StreamDecoder`: what every protocol's stream decoder does the same way, so each protocol reads only its frames.

The inverse of `core.encoder`: a decoder turns the bytes of a response stream back into neutral events. The
skeleton keeps the SSE reader and its bounds (`core.sse`), parses each frame as JSON, hands each object to the
protocol's `_frame`, and collects the events the protocol emits (`_emit`); it numbers parts (`_start_part`),
knows which are open, and ends the run once (`_end`): after a terminal event every frame is ignored. At the
body's end, `close()` asks the protocol how a stream that never ended ends (`_unfinished`).

Deltas for one part that follow each other in what one `feed` read become one `PartDelta` (`_delta`): the text
is the same, it arrived at once, and most frames of a stream are deltas, so a bridge then encodes one frame
where the remote wrote many (a few characters each), and neither builds an event per frame.

Beside the events, a decoder keeps what a client needs of the stream for its next turn: `approval_ids` (the calls
awaiting approval and the id to answer each with) and `message_id` (where the protocol names the answer's
message).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, cast

import orjson

from . import events as ev
from .messages import ModelMessage, ModelResponse, NativeToolCallPart, ToolCallPart
from .sse import DEFAULT_MAX_BUFFER_BYTES, DEFAULT_MAX_FRAME_BYTES, SSEReader, StreamError


class StreamDecoder(ABC):
    """Sans-IO: `feed(bytes)` per chunk of the body, then `close()`; each returns the events the bytes completed.
    A frame that is not JSON, or that passes the reader's bounds, raises `StreamError`."""

    def __init__(
        self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES
    ) -> None:
        self._reader = SSEReader(max_frame_bytes=max_frame_bytes, max_buffer_bytes=max_buffer_bytes)
        self._out: list[ev.AgentEvent] = []
        self._next = 0
        self._open: set[int] = set()
        self._open_calls: set[int] = set()
        self._held: list[ev.AgentEvent] = []
        """Results read while calls still stream (see `_answer`)."""
        self._joined: list[str] = []
        """The text of deltas read one after another for the part `_joined_index` (see `_delta`)."""
        self._joined_index = -1
        self.ended = False
        """Whether the run's terminal event came (what follows it is not read)."""
        self.skipped: int = 0
        """Frames with no neutral form that were passed over (a newer server's, say)."""

    @property
    @abstractmethod
    def approval_ids(self) -> dict[str, str]:
        """The calls the stream asked approvals for: tool call id -> the id to answer with."""

    @property
    @abstractmethod
    def message_id(self) -> str | None:
        """The answer's message id, where the protocol names one."""

    def feed(self, data: bytes) -> list[ev.AgentEvent]:
        """The events the bytes complete (an event split across chunks comes with the chunk that ends it)."""
        for frame in self._reader.feed(data):
            if self.ended or frame == b'[DONE]':
                continue
            try:
                value = orjson.loads(frame)
            except orjson.JSONDecodeError:
                value = _lenient_json(frame)
            self._read(value)
        return self._take()

    def feed_frame(self, frame: Mapping[str, Any]) -> list[ev.AgentEvent]:
        """The events for one frame already parsed (a chunk or event as JSON, wire names)."""
        if not self.ended:
            self._read(frame)
        return self._take()

    def _read(self, value: Any) -> None:
        if not isinstance(value, dict):
            raise StreamError('the stream sent a frame that is not a JSON object')
        frame = cast('dict[str, Any]', value)
        kind = frame.get('type')
        if not isinstance(kind, str):
            raise StreamError('the stream sent a frame without a string `type`')
        self._frame(kind, frame)

    def close(self) -> list[ev.AgentEvent]:
        """The body ended: a stream without a terminal event ends here (`_unfinished`)."""
        if not self.ended:
            self._unfinished(cut_off=bool(self._open) or self._reader.pending)
        return self._take()

    def _take(self) -> list[ev.AgentEvent]:
        if self._joined:
            self._join()
        out, self._out = self._out, []
        return out

    def _emit(self, event: ev.AgentEvent) -> None:
        """The next event (after the deltas read before it)."""
        if self._joined:
            self._join()
        self._out.append(event)

    def _delta(self, index: int, text: str) -> None:
        """A delta for the part at `index`: joined to the one before it when that was for the same part."""
        if index != self._joined_index and self._joined:
            self._join()
        self._joined_index = index
        self._joined.append(text)

    def _join(self) -> None:
        joined, self._joined = self._joined, []
        self._out.append(ev.PartDelta(self._joined_index, joined[0] if len(joined) == 1 else ''.join(joined)))

    @abstractmethod
    def _frame(self, kind: str, frame: dict[str, Any]) -> None:
        """One frame (a JSON object whose `type` is `kind`): the protocol appends its events to `self._out`."""

    @abstractmethod
    def _unfinished(self, *, cut_off: bool) -> None:
        """The body ended before the run did; `cut_off` when a part (or a frame) was left half sent. Must `_end`."""

    def _start_part(self, *, call: bool = False) -> int:
        """The index of a part that starts now (unique in the run); `call` for a tool call the client answers or
        the server runs (not a provider's own)."""
        index = self._next
        self._next += 1
        self._open.add(index)
        if call:
            self._open_calls.add(index)
        return index

    def _end_part(self, index: int, signature: str | None = None) -> None:
        self._open.discard(index)
        self._emit(ev.PartEnd(index, signature=signature))
        if index in self._open_calls:
            self._open_calls.discard(index)
            if not self._open_calls:
                self._release()

    def _answer(self, event: ev.ToolResult) -> None:
        """A tool result. Both encoders hold a finished call's end until they know who answers it, so a call's
        result may be read while another call of the response still streams; a result ends the response in the
        neutral model, so it waits for those calls' ends (in the order results came)."""
        if self._open_calls:
            self._held.append(event)
        else:
            self._emit(event)

    def _release(self) -> None:
        if self._held:
            if self._joined:
                self._join()
            self._out.extend(self._held)
            self._held = []

    def _end(self, event: ev.RunFinished | ev.RunError | ev.RunCancelled) -> None:
        """The run's end: whatever is still open ends with it (the collector and the encoders close it)."""
        self._release()
        self.ended = True
        self._open.clear()
        self._open_calls.clear()
        self._emit(event)

    def _cut_off(self) -> None:
        self._end(ev.RunError('The stream ended before the answer was complete.', code='incomplete'))


def required_text(frame: Mapping[str, Any], key: str) -> str:
    """`frame[key]`, which the protocol requires to be a string (else `StreamError`)."""
    value = frame.get(key)
    if not isinstance(value, str):
        raise StreamError(f'the stream sent {frame.get("type")} without a string `{key}`')
    return value


def optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def call_names(history: Iterable[ModelMessage]) -> dict[str, str]:
    """The tool name of each call `history` holds, by call id: a result in the stream for a call a request sent
    (after an approval) names only the call."""
    return {
        part.tool_call_id: part.tool_name
        for message in history
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart | NativeToolCallPart)
    }


def _lenient_json(frame: bytes) -> Any:
    """A frame orjson refuses, read as `JSON.parse` reads it: a lone surrogate escape (`"\\ud83d"`, half of a
    character a delta split, as uibridge's own encoders write it) is JSON to the clients, so it is here too."""
    try:
        return json.loads(frame, parse_constant=_no_constant)
    except ValueError:  # UnicodeDecodeError included
        raise StreamError('the stream sent a frame that is not JSON') from None


def _no_constant(name: str) -> Any:
    raise ValueError(f'{name} is no JSON')  # `json` reads NaN and Infinity; `JSON.parse` and orjson do not
