"""Running an agent and streaming what it yields, with the client able to walk away at any time.

The agent runs in the request's own task (`pump`): each event is encoded as it comes and its frame appended to
the response's `Outbox`, which sends everything waiting in one ASGI `send` when the agent is about to wait for
anything, when it is full, and at the end. So a fast agent's frames leave together, a slow agent's frame leaves
before it waits for the next one, nothing waits for a batch to fill, and no frame is handed to another task:
the agent and the socket are never more than one `send` apart, which is also the backpressure (a client that
stops reading holds the agent in that `send`).

Beside it, in one task group:
- the watcher waits for `http.disconnect`, the only way an ASGI app learns the client is gone, and cancels
  the group: the agent is cancelled where it awaits, its `finally` blocks run, nothing keeps going (a `send`
  that fails does the same);
- the ticker, with `keep_alive`, sends an SSE comment when nothing was sent for that long.

However the run ends, the encoder has seen a terminal event by the time `stream_run` returns, so
`encoder.new_messages` holds everything produced, open parts closed, and `run.status` says how it ended. The
last frames and the encoder's closing bytes leave in one final `send`.

Agent misuse ends the run the same way in every protocol (`uibridge.server.pump`).
"""

from __future__ import annotations

import logging
import time

import anyio

from ..core.events import AgentEvent, RunCancelled, RunError
from ..core.stream import EventStreamEncoder
from .asgi import Receive
from .outbox import Outbox, Send, StreamLog
from .pump import encode_safely, pump
from .run import Agent, AgentRun

__all__ = ['StreamLog', 'response_headers', 'stream_run']

logger = logging.getLogger('uibridge.server')


def response_headers(encoder: EventStreamEncoder) -> list[tuple[bytes, bytes]]:
    """The encoder's headers, plus what keeps proxies from caching or buffering the stream."""
    headers: dict[str, str] = {key.lower(): value for key, value in encoder.headers.items()}
    headers.setdefault('cache-control', 'no-cache')
    headers.setdefault('x-accel-buffering', 'no')
    return [(key.encode('latin-1'), value.encode('latin-1')) for key, value in headers.items()]


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
    outbox = Outbox(send, log)
    try:
        await send({'type': 'http.response.start', 'status': 200, 'headers': response_headers(encoder)})
    except OSError:
        outbox.gone = True
    else:
        if start := encoder.start():
            outbox.put(start)
            await outbox.flush()
    if outbox.gone:
        _end(encoder, run)
        return

    terminal: AgentEvent | None = None
    async with anyio.create_task_group() as group:
        outbox.scope = group.cancel_scope
        group.start_soon(_watch_disconnect, receive, outbox)
        if keep_alive:
            group.start_soon(_tick, outbox, keep_alive)
        terminal = await pump(agent, run, encoder, outbox, expose_errors)
        group.cancel_scope.cancel()

    if outbox.gone:
        _end(encoder, run)
        return
    await outbox.finish(_close(encoder, run, terminal))


async def _tick(outbox: Outbox, interval: float) -> None:
    while True:
        await anyio.sleep(interval)
        if time.monotonic() - outbox.last_write >= interval * 0.9:
            await outbox.keep_alive()


async def _watch_disconnect(receive: Receive, outbox: Outbox) -> None:
    while True:
        message = await receive()
        if message['type'] == 'http.disconnect':
            outbox.gone = True
            if outbox.scope is not None:
                outbox.scope.cancel()
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
