"""The shape every protocol's stream encoder has, so the server can drive any of them the same way.

An encoder is sans-IO: it turns neutral events into the bytes of its protocol's stream and keeps the
state the protocol needs (open parts, ids, steps); the server does the reading and writing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from .events import AgentEvent
from .messages import ModelMessage


class EventStreamEncoder(Protocol):
    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers, `content-type` included."""
        ...

    def start(self) -> bytes:
        """The bytes that open the stream (Vercel `start`, AG-UI `RUN_STARTED`)."""
        ...

    def encode(self, event: AgentEvent) -> bytes:
        """The bytes for one event; `b''` when it adds nothing. A `RunFinished`, `RunError` or
        `RunCancelled` ends the stream: later events encode to `b''`."""
        ...

    def close(self) -> bytes:
        """End the stream if no terminal event has (as a normal finish); `b''` if it already ended."""
        ...

    @property
    def new_messages(self) -> list[ModelMessage]:
        """The messages this run produced so far, for the application to persist."""
        ...


def encode_all(encoder: EventStreamEncoder, events: Iterable[AgentEvent]) -> bytes:
    """The whole stream for `events` (start, every event, close), for tests and benchmarks."""
    chunks = [encoder.start()]
    chunks.extend(encoder.encode(event) for event in events)
    chunks.append(encoder.close())
    return b''.join(chunks)
