"""`Outbox`: the frames a run has encoded and not yet sent, and the one place that sends them.

The agent's task appends each frame as it encodes it (`put`: no await) and sends everything waiting in one
ASGI `send` (`flush`) when the agent is about to wait for anything (`before_wait`), when `limit`
bytes are waiting, and at the end. So a fast agent's frames leave together, a slow agent's frame leaves before
it waits for the next, and no frame ever waits for a batch to fill or for another task to pick it up.

Bounded: past `limit` bytes the agent's task flushes before it asks the agent for more, and a `send` that does
not return (a client that stopped reading) holds the agent there. At most `limit` bytes and one event's frame
wait here, whatever the agent does.

Keep-alive comments come from another task while the agent waits; sends never overlap (`sending`), and a
comment is only sent when nothing else is waiting to go.

A flush just before the agent waits runs inside whatever cancel scopes the agent is in at that moment, so a
cancellation meant for the agent (its own timeout, a stop) can land in the middle of a `send`. Servers wait
for room before they write (uvicorn drains first), so a `send` cut short wrote nothing: the frames go back
to the head of the outbox and leave with the next flush, and the agent gets the cancellation where it waits.
The log is awaited shielded, so it never holds half a batch; frames put back are not logged twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

import anyio
from anyio import CancelScope
from anyio.lowlevel import checkpoint

from .asgi import Send

__all__ = ['DEFAULT_LIMIT', 'KEEP_ALIVE', 'Outbox', 'Send', 'StreamLog']

KEEP_ALIVE = b': keep-alive\n\n'
"""An SSE comment: both protocols' clients ignore it, and it keeps idle proxies from closing the stream. The
server's framing, not a protocol's: it lives with the one place that sends."""

logger = logging.getLogger('uibridge.server')

StreamLog: TypeAlias = Callable[[Sequence[bytes]], Awaitable[None]]
"""Awaited with each batch of frames just before it is sent (keep-alive comments aside): where a resumable
stream's log is kept, on the same batched path as the socket. A log that raises is reported once and not
called again for that stream; the client's stream goes on."""

DEFAULT_LIMIT = 16 * 1024
"""Bytes of encoded frames that may wait: some two hundred text deltas. A fast agent's frames leave in a few
sends, and no more than this is encoded between two chances for other streams to run."""


class Outbox:
    """One response's waiting frames and its `send`. Used from one event loop."""

    __slots__ = (
        '_idle',
        '_logged',
        'frames',
        'gone',
        'last_write',
        'limit',
        'log',
        'scope',
        'send',
        'sending',
        'size',
    )

    def __init__(self, send: Send, log: StreamLog | None = None, limit: int = DEFAULT_LIMIT) -> None:
        self.send = send
        self.log = log
        self.limit = limit
        self.frames: list[bytes] = []
        self.size = 0
        """Bytes in `frames`."""
        self.gone = False
        """The client went away (a disconnect, or a `send` that failed): nothing more is sent."""
        self.scope: CancelScope | None = None
        """Cancelled when a `send` fails, so the run stops as it does on a disconnect."""
        self.sending = False
        self.last_write = time.monotonic()
        self._idle: anyio.Event | None = None
        self._logged = 0
        """How many frames at the head of `frames` the log already has (a send cut short put them back)."""

    def put(self, frame: bytes) -> bool:
        """Append one encoded frame (never empty); whether `limit` is reached (then `flush`). Once per event,
        so it does no more than that."""
        self.frames.append(frame)
        self.size += len(frame)
        return self.size >= self.limit

    async def flush(self) -> None:
        """Send every frame waiting as one chunk (after a keep-alive already on its way, if any)."""
        if self.gone:
            self.frames.clear()
            self.size = 0
            await checkpoint()  # where the run's cancellation lands, however busy the agent keeps it
            return
        while self.sending:
            await self._sent()
        if self.frames:
            frames = await self._take()
            try:
                await self._send(frames[0] if len(frames) == 1 else b''.join(frames), more=True)
            except BaseException:
                # Cancelled before the server took it: the frames go first next time, already logged.
                self.frames[:0] = frames
                self.size += sum(map(len, frames))
                self._logged = len(frames)
                raise

    async def keep_alive(self) -> None:
        """Send a keep-alive comment, unless something is being sent or waits to be."""
        if not (self.gone or self.sending or self.frames):
            await self._send(KEEP_ALIVE, more=True)

    async def finish(self, tail: bytes) -> None:
        """Send what is waiting and `tail` as the end of the body."""
        if tail:
            self.put(tail)
        while self.sending:
            await self._sent()
        await self._send(b''.join(await self._take()), more=False)

    async def _take(self) -> list[bytes]:
        """Every frame waiting, the log given those it does not have yet."""
        frames, self.frames, self.size = self.frames, [], 0
        fresh = frames[self._logged :] if self._logged else frames
        self._logged = 0
        if fresh and self.log is not None:
            try:
                with CancelScope(shield=True):
                    await self.log(fresh)
            except Exception:
                logger.exception('The stream log failed; the stream goes on without it')
                self.log = None
        return frames

    async def _send(self, body: bytes, *, more: bool) -> None:
        self.sending = True
        try:
            await self.send({'type': 'http.response.body', 'body': body, 'more_body': more})
            self.last_write = time.monotonic()
        except OSError:
            self.gone = True
            if self.scope is not None:
                self.scope.cancel()
        finally:
            self.sending = False
            if self._idle is not None:
                self._idle.set()
                self._idle = None

    async def _sent(self) -> None:
        """Wait for the send in progress (a keep-alive held up by a client that stopped reading)."""
        if self._idle is None:
            self._idle = anyio.Event()
        await self._idle.wait()
