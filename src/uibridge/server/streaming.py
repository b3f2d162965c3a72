"""Running an agent and streaming what it yields, with the client able to walk away at any time.

Two tasks share the response's `Outbox`:
- the agent's: the request's own task runs the agent (`pump`), encodes each event as it comes and appends its
  frame to the outbox, awaiting nothing of its own unless the outbox is full;
- the sender's: it sends whatever is waiting in one ASGI `send` each time, so a fast agent's frames leave
  together the moment it waits for anything, a slow agent's frame leaves as soon as it waits for the next, and
  a client that stops reading holds the sender, then (the outbox full) the agent: bounded backpressure. With
  `keep_alive`, a ticker wakes it to send an SSE comment after that long with nothing sent.

Beside them, the watcher waits for `http.disconnect`, the only way an ASGI app learns the client is gone, and
cancels the run: the agent is cancelled where it awaits, its `finally` blocks run, nothing keeps going (a
`send` that fails does the same). Nothing depends on how the server writes or which event loop runs it.

However the run ends, the encoder has seen a terminal event by the time `stream_run` returns, so
`encoder.new_messages` holds everything produced, open parts closed, and `run.status` says how it ended. Once
the sender has returned, the last frames and the encoder's closing bytes leave in one final `send` from the
request's own task, the last thing `stream_run` does.

Agent misuse ends the run the same way in every protocol (`uibridge.server.pump`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from ..core.events import AgentEvent, RunCancelled, RunError
from ..core.stream import EventStreamEncoder
from .asgi import Receive
from .outbox import Outbox, Send, StreamLog
from .pump import encode_safely, pump
from .run import Agent, AgentRun

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
    settle: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Answer the request with the agent's run as a stream; returns when the stream ended however it ended.
    `log`, if given, is awaited with each batch of frames just before it is sent (`StreamLog`). `settle`, if
    given, is awaited once the run is over (`run.status` set, the encoder closed) and before the last bytes
    go out, unless the client went away first (`Outbox.finish`)."""
    outbox = Outbox(send, log, keep_alive=keep_alive)
    try:
        await send({'type': 'http.response.start', 'status': 200, 'headers': response_headers(encoder)})
    except OSError:
        _end(encoder, run)
        return
    if start := encoder.start():
        outbox.put(start)
    terminal: AgentEvent | None = None
    async with anyio.create_task_group() as group:
        outbox.scope = group.cancel_scope
        group.start_soon(_watch_disconnect, receive, outbox)
        if keep_alive:
            group.start_soon(outbox.tick)
        async with anyio.create_task_group() as sender:
            sender.start_soon(outbox.deliver)
            terminal = await pump(agent, run, encoder, outbox, expose_errors)
            outbox.close()
        group.cancel_scope.cancel()  # the run is over: nothing more to watch for
    if outbox.gone:
        _end(encoder, run)
        return
    await outbox.finish(_close(encoder, run, terminal), settle)


async def _watch_disconnect(receive: Receive, outbox: Outbox) -> None:
    while (await receive())['type'] != 'http.disconnect':
        pass
    outbox.abandon()


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
