"""Running an agent and streaming what it yields, with the client able to walk away at any time.

One task group per request:
- the pump iterates the agent, encodes each event as it comes and appends the frame to the stream's
  `Outbox`, without awaiting anything of its own unless the outbox is full (then the agent waits: a client
  that stops reading slows the agent instead of letting frames pile up);
- the writer (the request's own task) takes every frame waiting and sends them in one ASGI `send`. It gets
  to run whenever the agent awaits, so a slow agent's frame leaves at once and a fast agent's frames leave
  together: one `send` and one task switch per batch, not per event, and never a wait for a batch to fill;
- the ticker, with `keep_alive`, asks the writer for an SSE comment when nothing was sent for that long;
- the watcher waits for `http.disconnect`, the only way an ASGI app learns the client is gone, and cancels
  the group: the agent's task is cancelled where it awaits, its `finally` blocks run, nothing keeps going.

However the run ends, the encoder has seen a terminal event by the time `stream_run` returns, so
`encoder.new_messages` holds everything produced, open parts closed, and `run.status` says how it ended. The
last frames and the encoder's closing bytes leave in one final `send`.

Agent misuse ends the run the same way in every protocol (`uibridge.server.pump`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from contextlib import suppress
from typing import Any, TypeAlias

import anyio
from anyio import CancelScope

from ..core.events import AgentEvent, RunCancelled, RunError
from ..core.stream import KEEP_ALIVE, EventStreamEncoder
from .outbox import Outbox
from .pump import encode_safely, pump
from .run import Agent, AgentRun

__all__ = ['StreamLog', 'response_headers', 'stream_run']

logger = logging.getLogger('uibridge.server')

Message: TypeAlias = MutableMapping[str, Any]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
StreamLog: TypeAlias = Callable[[Sequence[bytes]], Awaitable[None]]
"""Awaited with each batch of frames before it is sent (the start frame, each batch, the end), keep-alive
comments aside: where a resumable stream's log is kept, on the same batched path as the socket."""


def response_headers(encoder: EventStreamEncoder) -> list[tuple[bytes, bytes]]:
    """The encoder's headers, plus what keeps proxies from caching or buffering the stream."""
    headers: dict[str, str] = {key.lower(): value for key, value in encoder.headers.items()}
    headers.setdefault('cache-control', 'no-cache')
    headers.setdefault('x-accel-buffering', 'no')
    return [(key.encode('latin-1'), value.encode('latin-1')) for key, value in headers.items()]


class _Stream:
    """What the writer, the watcher and `stream_run` share about one response."""

    __slots__ = ('gone', 'log', 'outbox', 'send')

    def __init__(self, send: Send, outbox: Outbox, log: StreamLog | None) -> None:
        self.send = send
        self.outbox = outbox
        self.log = log
        self.gone = False
        """The client went away (a disconnect, or a `send` that failed)."""

    async def write(self, frames: Sequence[bytes], *, more: bool = True) -> None:
        """Send `frames` (none empty) as one body chunk: the only place stream bytes are sent."""
        body = frames[0] if len(frames) == 1 else b''.join(frames)
        if body and self.log is not None:
            await self.log(frames)
        if body or not more:
            await self.send({'type': 'http.response.body', 'body': body, 'more_body': more})
            self.outbox.last_write = time.monotonic()


async def stream_run(
    *,
    agent: Agent,
    run: AgentRun,
    encoder: EventStreamEncoder,
    send: Send,
    receive: Receive,
    keep_alive: float | None,
    expose_errors: bool,
    log: StreamLog | None = None,
) -> None:
    """Answer the request with the agent's run as a stream; returns when the stream ended however it ended.
    `log`, if given, is awaited with each batch of frames just before it is sent (`StreamLog`)."""
    headers = response_headers(encoder)
    outbox = Outbox()
    stream = _Stream(send, outbox, log)
    try:
        await send({'type': 'http.response.start', 'status': 200, 'headers': headers})
        if start := encoder.start():
            await stream.write([start])
    except OSError:
        stream.gone = True
    if stream.gone:
        _end(encoder, run)
        return

    last: list[bytes] = []
    async with anyio.create_task_group() as group:
        group.start_soon(_watch_disconnect, receive, group.cancel_scope, stream)
        group.start_soon(pump, agent, run, encoder, outbox, expose_errors)
        if keep_alive:
            group.start_soon(_tick, outbox, keep_alive)
        last = await _write_batches(stream)
        group.cancel_scope.cancel()

    if stream.gone:
        _end(encoder, run)
        return
    last.append(_close(encoder, run, outbox.terminal))
    with suppress(OSError):
        await stream.write([frame for frame in last if frame], more=False)


async def _write_batches(stream: _Stream) -> list[bytes]:
    """Send what the pump encodes, a batch at a time, until the pump is done; the last frames, unsent."""
    outbox = stream.outbox
    try:
        while True:
            frames = await outbox.take()
            if outbox.closed:
                return frames
            if frames:
                await stream.write(frames)
            elif outbox.keep_alive_due:
                await stream.send({'type': 'http.response.body', 'body': KEEP_ALIVE, 'more_body': True})
                outbox.last_write = time.monotonic()
            outbox.keep_alive_due = False
    except OSError:
        stream.gone = True
        return []


async def _tick(outbox: Outbox, interval: float) -> None:
    while True:
        await anyio.sleep(interval)
        if time.monotonic() - outbox.last_write >= interval * 0.9:
            outbox.request_keep_alive()


async def _watch_disconnect(receive: Receive, scope: CancelScope, stream: _Stream) -> None:
    while True:
        message = await receive()
        if message['type'] == 'http.disconnect':
            stream.gone = True
            scope.cancel()
            return


def _end(encoder: EventStreamEncoder, run: AgentRun) -> None:
    """Record a cancel the client will never see, so the collected messages are closed off."""
    encode_safely(encoder, RunCancelled('client disconnected'))
    run.status = 'cancelled'


def _close(encoder: EventStreamEncoder, run: AgentRun, terminal: AgentEvent | None) -> bytes:
    try:
        tail = encoder.close()
    except Exception:
        logger.exception('The encoder failed to close the stream')
        tail = b''
    if isinstance(terminal, RunCancelled):
        run.status = 'cancelled'
    elif run.error is not None or isinstance(terminal, RunError):
        run.status = 'failed'
    else:
        run.status = 'finished'
    return tail
