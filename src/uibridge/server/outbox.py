"""`Outbox`: the frames a run has encoded and not yet sent, between the agent's task and the one task that
sends them.

The agent's task appends each frame as it encodes it (`put`: no await) and waits only when `limit` bytes are
waiting (`wait_for_room`). The sender (`deliver`, a task of its own) sleeps until something waits, takes
everything there is and sends it in one ASGI `send`. So a fast agent's frames pile up while it runs and leave
together as soon as it waits for anything (its model, a tool, a full outbox), and a slow agent's frame leaves
as soon as it waits for the next one: nothing waits for a batch to fill. Nothing about the server is assumed
(whether its `send` waits for room before or after writing, which event loop runs it), and the sender never
runs inside the agent's cancel scopes, so nothing meant for the agent can cut a `send` short.

Bounded: at most `limit` bytes and one frame wait here, and one batch is in the sender's `send`; a client that
stops reading holds the sender in `send`, the outbox fills, and the agent waits.

Once: a batch is taken out before it is logged and sent, and never put back. The log gets it before the
socket does (shielded: the log never holds half a batch); a `send` that fails means the client is gone, and
nothing is sent after it.

Keep-alive comments come from the sender too, woken by `tick` when nothing was sent for a `keep_alive`, so they
never overlap a batch or land inside one.

Once the first batch is out, the batches go to `request_ids.settled(send)`: the endpoint's `ResponseWatch`,
which has noted all it watches for by then, no longer stands between each batch and the socket.
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
from .request_ids import settled

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
    """One response's waiting frames and its `send`. Used from one event loop: `put`, `wait_for_room` and
    `close` from the agent's task, `deliver` as a task of its own."""

    __slots__ = (
        '_closed',
        '_ready',
        '_room',
        '_settled',
        'delivering',
        'frames',
        'gone',
        'keep_alive',
        'last_send',
        'limit',
        'log',
        'scope',
        'send',
        'size',
    )

    def __init__(
        self, send: Send, log: StreamLog | None = None, *, limit: int = DEFAULT_LIMIT, keep_alive: float | None = None
    ) -> None:
        self.send = send
        self.log = log
        self.limit = limit
        self.keep_alive = keep_alive
        """Seconds of silence after which a keep-alive comment is sent (`None`: never), when `tick` runs."""
        self.last_send = time.monotonic()
        """When the last `send` began."""
        self.frames: list[bytes] = []
        self.size = 0
        """Bytes in `frames`."""
        self.gone = False
        """The client went away (a disconnect, or a `send` that failed): nothing more is sent."""
        self.scope: CancelScope | None = None
        """Cancelled when the client is gone (`abandon`): the run stops."""
        self.delivering = True
        """Whether the sender may still take frames: false once it ended, however it ended."""
        self._closed = False
        self._settled = False
        """Whether `send` has sent a body byte (and `settled` has had its say)."""
        self._ready: anyio.Event | None = None
        """Set by `put` or `close` when the sender waits for something to send."""
        self._room: anyio.Event | None = None
        """Set by the sender when the agent's task waits for it to take the frames."""

    def put(self, frame: bytes) -> bool:
        """Append one encoded frame (never empty); whether `limit` is reached (then `wait_for_room`). Once per
        event, so it does no more than that."""
        self.frames.append(frame)
        self.size += len(frame)
        if (ready := self._ready) is not None:
            self._ready = None
            ready.set()
        return self.size >= self.limit

    async def wait_for_room(self) -> None:
        """Wait until the sender has taken the frames. Shielded: the agent's task calls this between two of
        the agent's steps, where any cancel scope the agent holds across its `yield` is still open, and a
        cancellation meant for the agent must reach the agent at its own next await, not this wait. The
        stream's own end (the client gone, the server stopping) ends the sender, which ends this wait; then
        the run's cancellation lands here, however busy the agent keeps its task."""
        while self.size >= self.limit and self.delivering:
            room = self._room = anyio.Event()
            with CancelScope(shield=True):
                await room.wait()
        if not self.delivering:
            self.frames.clear()
            self.size = 0
            await checkpoint()

    def close(self) -> None:
        """The run is over: the sender finishes the batch it is sending, if any, and returns. What still waits
        goes with the end of the body (`finish`)."""
        self._closed = True
        if (ready := self._ready) is not None:
            self._ready = None
            ready.set()

    async def finish(self, tail: bytes, settle: Callable[[], Awaitable[None]] | None = None) -> None:
        """Once the sender has returned: send what waits and `tail` as the end of the body. The last byte
        leaves from the request's own task, with nothing left to wind down after it: a client that answers
        the moment it has read the end finds the request over. `settle`, when given, is awaited (shielded)
        after the last frames are logged and before they are sent: whatever the run must have finished by the
        time its client can answer (a stored chat's commit, which frees the chat for the next turn)."""
        if tail:
            self.frames.append(tail)
        frames, self.frames, self.size = self.frames, [], 0
        if frames and self.log is not None:
            await self._log(frames)
        if settle is not None:
            with CancelScope(shield=True):
                await settle()
        await self._send(b''.join(frames), more=False)

    def abandon(self) -> None:
        """The client is gone: nothing more is sent, and the run is cancelled."""
        self.gone = True
        if self.scope is not None:
            self.scope.cancel()

    async def deliver(self) -> None:
        """The sender: send whatever waits, one `send` a batch, until the run is over (`close`) or the client
        is gone."""
        try:
            while not self.gone:
                if not (self.frames or self._closed):
                    ready = self._ready = anyio.Event()
                    await ready.wait()
                if self._closed:
                    return
                if not self.frames:  # woken by `tick`: silence for a whole `keep_alive`
                    await self._send(KEEP_ALIVE, more=True)
                    continue
                frames, self.frames, self.size = self.frames, [], 0
                if (room := self._room) is not None:
                    self._room = None
                    room.set()
                if self.log is not None:
                    await self._log(frames)
                await self._send(frames[0] if len(frames) == 1 else b''.join(frames), more=True)
        finally:
            self.delivering = False
            if (room := self._room) is not None:
                self._room = None
                room.set()

    async def tick(self) -> None:
        """Beside the sender, with `keep_alive`: every `keep_alive`, wake it for a keep-alive comment if nothing
        was sent for about that long and nothing waits to be. A task of its own, so a batch costs no timer."""
        assert self.keep_alive is not None
        while True:
            await anyio.sleep(self.keep_alive)
            if time.monotonic() - self.last_send >= self.keep_alive * 0.9 and (ready := self._ready) is not None:
                self._ready = None
                ready.set()

    async def _log(self, frames: Sequence[bytes]) -> None:
        assert self.log is not None
        try:
            with CancelScope(shield=True):
                await self.log(frames)
        except Exception:
            logger.exception('The stream log failed; the stream goes on without it')
            self.log = None

    async def _send(self, body: bytes, *, more: bool) -> None:
        self.last_send = time.monotonic()
        try:
            await self.send({'type': 'http.response.body', 'body': body, 'more_body': more})
        except OSError:
            self.abandon()
            return
        if not self._settled:
            self._settled = True
            self.send = settled(self.send)
