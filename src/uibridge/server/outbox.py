"""`Outbox`: the frames a run has encoded and the socket has not taken yet, between the run and the writer.

The run appends each frame as it is encoded (`put`, no await); the writer takes every frame there is in one
go (`take`) and sends them as one chunk. So the hand-off from the agent's task to the writer costs one wake-up
per batch, not per event, and batches form by themselves, without waiting for one to fill:

- a fast agent yields many events before it next awaits anything; the writer only runs once it does (or once
  the outbox is full), and then sends all of them at once;
- a slow agent awaits between events; each frame wakes the writer, which sends it before the agent's next one.

Bounded: once the frames waiting reach `limit` bytes, the run waits (`wait_for_room`) until the writer has
taken them. A client that stops reading blocks the writer in `send`, so at most `limit` bytes wait here, and
`limit` more in the batch being sent, whatever the agent does.
"""

from __future__ import annotations

import asyncio
import time
from typing import TypeAlias

import anyio

from ..core.events import AgentEvent

__all__ = ['DEFAULT_LIMIT', 'Outbox']

DEFAULT_LIMIT = 16 * 1024
"""Bytes of encoded frames that may wait for the writer: some two hundred text deltas. A fast agent's frames
leave in a few sends, and no more than this is encoded between two chances for other streams to run."""

_Wakeup: TypeAlias = 'asyncio.Future[None] | anyio.Event'
"""What a waiting side waits on. A slow agent's every frame wakes the writer, so under asyncio (what uvicorn
runs) it is a bare future: a third of the cost of an `anyio.Event`, which wraps an `asyncio.Event`, which
makes a future anyway. Any other backend gets the `anyio.Event`."""


class Outbox:
    """One stream's waiting frames. Used from one event loop, by one producer and one writer."""

    __slots__ = (
        '_loop',
        '_room',
        '_writer',
        'closed',
        'frames',
        'keep_alive_due',
        'last_write',
        'limit',
        'size',
        'terminal',
    )

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.frames: list[bytes] = []
        self.size = 0
        """Bytes in `frames`."""
        self.limit = limit
        self.closed = False
        """The producer is done: `frames` holds the last of the stream."""
        self.terminal: AgentEvent | None = None
        """The event that ended the run, when the producer streamed one."""
        self.keep_alive_due = False
        self.last_write = time.monotonic()
        """When the writer last sent something (kept by the writer, read by the keep-alive ticker)."""
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._writer: _Wakeup | None = None
        self._room: _Wakeup | None = None

    def put(self, frame: bytes) -> bool:
        """Append one encoded frame (never empty) for the writer; whether the outbox is now full (then the
        producer should `wait_for_room`). One call per event, so it does no more than that."""
        self.frames.append(frame)
        self.size += len(frame)
        if self._writer is not None:
            _wake(self._writer)
            self._writer = None
        return self.size >= self.limit

    def close(self, terminal: AgentEvent | None = None) -> None:
        """Nothing follows what is in `frames`: the writer takes it as the stream's end. `terminal`: the
        event that ended the run, if one was streamed."""
        if self.closed:
            return
        self.closed = True
        self.terminal = terminal
        self._wake_writer()

    def request_keep_alive(self) -> None:
        """Ask the writer to send a keep-alive comment, if it has nothing else to send."""
        self.keep_alive_due = True
        self._wake_writer()

    async def wait_for_room(self) -> None:
        """Wait until the writer has taken what is waiting (call when `put` says the outbox is full)."""
        while self.size >= self.limit:
            room = self._room = self._wakeup()
            await _wait(room)

    async def take(self) -> list[bytes]:
        """Every frame waiting, at once; waits only while there is none (and the stream is not closed, and no
        keep-alive is due). Taking makes room for the producer."""
        while not self.frames and not self.closed and not self.keep_alive_due:
            writer = self._writer = self._wakeup()
            await _wait(writer)
        frames = self.frames
        if frames:
            self.frames = []
            self.size = 0
            if self._room is not None:
                _wake(self._room)
                self._room = None
        return frames

    def _wake_writer(self) -> None:
        if self._writer is not None:
            _wake(self._writer)
            self._writer = None

    def _wakeup(self) -> _Wakeup:
        return anyio.Event() if self._loop is None else self._loop.create_future()


def _wake(wakeup: _Wakeup) -> None:
    if isinstance(wakeup, asyncio.Future):
        if not wakeup.done():  # a waiter that was cancelled cancelled its future
            wakeup.set_result(None)
    else:
        wakeup.set()


async def _wait(wakeup: _Wakeup) -> None:
    if isinstance(wakeup, asyncio.Future):
        await wakeup
    else:
        await wakeup.wait()
