"""Stream logs held in this process's memory: the log of the in-memory store, and the SQLite store's copy of
the logs its process produces (served to readers in that process without polling the database).

A log is a list of chunks that only grows, an end marker, and the producer's deadline (its lease, renewed
by heartbeats). Readers keep their own index into the list and wait on an event the producer replaces at
every change, so the producer never waits for anyone and any number of readers follow at their own pace.
A reader that finds the log idle past the producer's deadline ends it as `lost` itself: no reader hangs on
a producer that died (its task, or its whole process with the readers in it).

Ended logs are dropped `ttl` seconds after their end, swept lazily whenever a log is started or looked up.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import AsyncGenerator, Sequence

import anyio

from .base import ClaimLost, StreamAborted, StreamOutcome


class LocalStream:
    """One run's log. Touched only from the event loop that owns the store."""

    __slots__ = ('changed', 'chat_id', 'chunks', 'deadline', 'outcome', 'run_id')

    def __init__(self, chat_id: str, run_id: str, deadline: float) -> None:
        self.chat_id = chat_id
        self.run_id = run_id
        self.chunks: list[bytes] = []
        self.outcome: StreamOutcome | None = None
        self.deadline = deadline
        """`time.monotonic()` past which, with no end marker, the producer counts as lost."""
        self.changed = anyio.Event()

    def notify(self) -> None:
        # An anyio Event cannot be cleared: readers hold the one they waited on, the next change gets a new one.
        changed, self.changed = self.changed, anyio.Event()
        changed.set()


class LocalStreams:
    """The latest log per chat, and the expiry of ended ones."""

    def __init__(self) -> None:
        self._latest: dict[str, LocalStream] = {}
        self._expiries: list[tuple[float, int, LocalStream]] = []
        self._sequence = 0

    def start(self, chat_id: str, run_id: str, deadline: float, ttl: float) -> LocalStream:
        """A new run's log becomes the chat's latest. A previous log still open lost its producer (the new
        claim proves its lease lapsed): its readers end now rather than at their next deadline check."""
        self._sweep()
        previous = self._latest.get(chat_id)
        if previous is not None and previous.outcome is None:
            self.finish(previous, 'lost', ttl)
        stream = self._latest[chat_id] = LocalStream(chat_id, run_id, deadline)
        return stream

    def latest(self, chat_id: str) -> LocalStream | None:
        self._sweep()
        return self._latest.get(chat_id)

    def get(self, chat_id: str, run_id: str) -> LocalStream | None:
        stream = self.latest(chat_id)
        return stream if stream is not None and stream.run_id == run_id else None

    def finish(self, stream: LocalStream, outcome: StreamOutcome, ttl: float) -> None:
        """Write the end marker (the first one stays) and schedule the log's expiry."""
        if stream.outcome is not None:
            return
        stream.outcome = outcome
        self._sequence += 1
        heapq.heappush(self._expiries, (time.monotonic() + ttl, self._sequence, stream))
        stream.notify()

    def append(self, stream: LocalStream, chunks: Sequence[bytes], ttl: float) -> None:
        """The producer's batch; `ClaimLost` once its deadline passed, `RuntimeError` after its own end."""
        self.check_producer(stream, ttl)
        if stream.outcome is not None:
            raise RuntimeError(f'the stream of run {stream.run_id!r} already ended')
        if chunks:
            stream.chunks.extend(chunks)
            stream.notify()

    def end(self, stream: LocalStream, outcome: StreamOutcome, ttl: float) -> None:
        """The producer's end marker; `ClaimLost` once its deadline passed."""
        self.check_producer(stream, ttl)
        self.finish(stream, outcome, ttl)

    def check_producer(self, stream: LocalStream, ttl: float) -> None:
        """`ClaimLost` once the producer's deadline passed (or its readers declared it lost)."""
        # A producer past its deadline may be one its readers already gave up on: refuse it either way, so a
        # reader never sees chunks after a lapse it could have reported as `lost`.
        if stream.outcome is None and time.monotonic() >= stream.deadline:
            self.finish(stream, 'lost', ttl)
        if stream.outcome == 'lost':
            raise ClaimLost(stream.chat_id, stream.run_id)

    async def follow(self, stream: LocalStream, start: int, ttl: float) -> AsyncGenerator[bytes, None]:
        """Replay from chunk `start`, then follow until the end marker (see `ChatStore.read_stream`)."""
        index = max(start, 0)
        while True:
            if index < len(stream.chunks):
                chunk = stream.chunks[index]
                index += 1
                yield chunk
                continue
            if stream.outcome == 'ok':
                return
            if stream.outcome is not None:
                raise StreamAborted(stream.chat_id, 'error' if stream.outcome == 'error' else 'lost')
            changed = stream.changed
            remaining = stream.deadline - time.monotonic()
            if remaining <= 0:
                self.finish(stream, 'lost', ttl)
                continue
            with anyio.move_on_after(remaining):
                await changed.wait()

    def _sweep(self) -> None:
        now = time.monotonic()
        while self._expiries and self._expiries[0][0] <= now:
            _, _, stream = heapq.heappop(self._expiries)
            if self._latest.get(stream.chat_id) is stream:
                del self._latest[stream.chat_id]
