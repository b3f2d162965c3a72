"""Running an agent and streaming what it yields, with the client able to walk away at any time.

Three tasks share one task group per request:
- the pump iterates the agent and hands its events over a small bounded channel (so a slow client slows
  the agent instead of buffering without limit);
- the ticker drops a tick into the same channel every `keep_alive` seconds, and the writer turns a tick
  into an SSE comment when nothing else was written for that long;
- the watcher waits for `http.disconnect`, the only way an ASGI app learns the client is gone, and cancels
  the group: the agent's task is cancelled where it awaits, its `finally` blocks run, nothing keeps going.

The writer alone touches the encoder and `send`. However the run ends, the encoder has seen a terminal
event by the time `stream_run` returns, so `encoder.new_messages` holds everything produced, open parts
closed, and `run.status` says how it ended.

Agent misuse ends the run the same way in every protocol: anything that is neither an agent event nor a
message is a failed run (the protocol's error event, with the reason when `expose_errors`), and so is a
`CancelledError` the agent raised itself (only the client's disconnect or the server's own cancellation
cancels a run). A `ToolResult` for a call nobody made, events after the run's end, and a run that yields
nothing at all are logged, once per run each.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import aclosing, suppress
from typing import Any, TypeAlias, get_args

import anyio
from anyio import CancelScope
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..core.events import (
    AgentEvent,
    PartStart,
    RunCancelled,
    RunError,
    RunFinished,
    ToolResult,
    events_from_message,
)
from ..core.messages import ModelRequest, ModelResponse, ToolCallPart
from ..core.stream import KEEP_ALIVE, EventStreamEncoder
from .run import Agent, AgentRun

__all__ = ['stream_run']

logger = logging.getLogger('uibridge.server')

Message: TypeAlias = MutableMapping[str, Any]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
Receive: TypeAlias = Callable[[], Awaitable[Message]]

_DEFAULT_ERROR = 'An error occurred.'
_BUFFER = 64


class _Tick:
    pass


class _Done:
    pass


_TICK = _Tick()
_DONE = _Done()
_Item: TypeAlias = AgentEvent | _Tick | _Done


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
) -> None:
    """Answer the request with the agent's run as a stream; returns when the stream ended however it ended."""
    headers = response_headers(encoder)
    writer = _Writer(send, encoder)
    try:
        await send({'type': 'http.response.start', 'status': 200, 'headers': headers})
        await writer.write(encoder.start())
    except OSError:
        writer.gone = True
    if writer.gone:
        _end(encoder, run, RunCancelled('client disconnected'))
        return

    tx, rx = anyio.create_memory_object_stream[_Item](_BUFFER)
    async with anyio.create_task_group() as group:
        group.start_soon(_watch_disconnect, receive, group.cancel_scope, writer)
        group.start_soon(_pump, agent, run, tx, expose_errors)
        if keep_alive:
            group.start_soon(_tick, tx.clone(), keep_alive)
        await _write_events(rx, writer, keep_alive)
        group.cancel_scope.cancel()

    if writer.gone:
        _end(encoder, run, RunCancelled('client disconnected'))
        return
    tail = _close(encoder, run, writer.terminal)
    with suppress(OSError):
        await send({'type': 'http.response.body', 'body': tail, 'more_body': False})


class _Writer:
    def __init__(self, send: Send, encoder: EventStreamEncoder) -> None:
        self.send = send
        self.encoder = encoder
        self.gone = False
        self.last_write = time.monotonic()
        self.terminal: AgentEvent | None = None

    async def write(self, data: bytes) -> None:
        if data:
            await self.send({'type': 'http.response.body', 'body': data, 'more_body': True})
            self.last_write = time.monotonic()


async def _write_events(rx: MemoryObjectReceiveStream[_Item], writer: _Writer, keep_alive: float | None) -> None:
    encoder = writer.encoder
    async with rx:
        while True:
            item: _Item = await rx.receive()
            if isinstance(item, _Done):
                return
            try:
                if isinstance(item, _Tick):
                    if keep_alive is not None and time.monotonic() - writer.last_write >= keep_alive * 0.9:
                        await writer.write(KEEP_ALIVE)
                    continue
                try:
                    data = encoder.encode(item)
                except Exception:
                    # The agent yielded events that do not add up (a delta for a part never started, say):
                    # a bug in the agent, reported to the client like any other failure of the run.
                    logger.exception('The agent yielded an event the encoder cannot take: %r', item)
                    item = RunError(_DEFAULT_ERROR)
                    data = _encode_safely(encoder, item)
                await writer.write(data)
            except OSError:
                writer.gone = True
                return
            if isinstance(item, RunFinished | RunError | RunCancelled):
                writer.terminal = item
                return


class AgentMisuse(TypeError):
    """The agent yielded something that is not an agent event or a message."""


_EVENT_TYPES: tuple[type, ...] = get_args(AgentEvent)
_TERMINAL = (RunFinished, RunError, RunCancelled)


async def _pump(agent: Agent, run: AgentRun, tx: MemoryObjectSendStream[_Item], expose_errors: bool) -> None:
    async with tx:
        try:
            iterator = agent(run)
            if hasattr(iterator, 'aclose'):
                async with aclosing(iterator):  # pyright: ignore[reportArgumentType]
                    await _forward(iterator, tx, run)
            else:
                await _forward(iterator, tx, run)
        except anyio.get_cancelled_exc_class() as exc:
            if _cancelled_from_outside():
                raise
            # The agent raised CancelledError itself: its run failed; nobody cancelled it.
            logger.error('The agent raised CancelledError itself during run %.64r: the run failed', run.run_id)
            run.error = exc
            await tx.send(RunError('The agent cancelled its own run.' if expose_errors else _DEFAULT_ERROR))
        except Exception as exc:
            logger.exception('The agent raised during run %.64r', run.run_id)
            run.error = exc
            message = (str(exc) or type(exc).__name__) if expose_errors else _DEFAULT_ERROR
            await tx.send(RunError(message))
        await tx.send(_DONE)


def _cancelled_from_outside() -> bool:
    """Whether the current task is being cancelled (a scope or the server did it), rather than the agent
    raising `CancelledError` on its own. asyncio counts the cancel requests a task has pending."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True  # not asyncio: believe the cancellation
    return task is None or task.cancelling() > 0


async def _forward(iterator: AsyncIterator[Any], tx: MemoryObjectSendStream[_Item], run: AgentRun) -> None:
    known_calls = {call.tool_call_id for call in run.pending_tool_calls()}
    warned_unknown = False
    yielded = False
    async for item in iterator:
        if not yielded:
            yielded = True
        if isinstance(item, ModelResponse | ModelRequest):
            events = list(events_from_message(item))
        elif isinstance(item, _EVENT_TYPES):
            events = [item]
        else:
            raise AgentMisuse(
                f'the agent yielded a {type(item).__name__}, which is neither an agent event nor a message'
            )
        for event in events:
            if isinstance(event, PartStart) and isinstance(event.part, ToolCallPart):
                known_calls.add(event.part.tool_call_id)
            elif isinstance(event, ToolResult) and event.part.tool_call_id not in known_calls and not warned_unknown:
                warned_unknown = True
                logger.warning(
                    'Run %.64r: the agent yielded a ToolResult for tool call %.64r, which this run did not make '
                    'and no pending call has',
                    run.run_id,
                    event.part.tool_call_id,
                )
            await tx.send(event)
            if isinstance(event, _TERMINAL):
                await _drain_after_end(iterator, run)
                return
    if not yielded:
        logger.warning('Run %.64r: the agent yielded nothing', run.run_id)


async def _drain_after_end(iterator: AsyncIterator[Any], run: AgentRun) -> None:
    """After a terminal event nothing more is streamed; say so once if the agent had more."""
    async for _ in iterator:
        logger.warning('Run %.64r: the agent yielded events after the run ended; they were dropped', run.run_id)
        return


async def _tick(tx: MemoryObjectSendStream[_Item], interval: float) -> None:
    async with tx:
        while True:
            await anyio.sleep(interval)
            await tx.send(_TICK)


async def _watch_disconnect(receive: Receive, scope: CancelScope, writer: _Writer) -> None:
    while True:
        message = await receive()
        if message['type'] == 'http.disconnect':
            writer.gone = True
            scope.cancel()
            return


def _encode_safely(encoder: EventStreamEncoder, event: AgentEvent) -> bytes:
    try:
        return encoder.encode(event)
    except Exception:
        logger.exception('The encoder failed to end the stream with %r', event)
        return b''


def _end(encoder: EventStreamEncoder, run: AgentRun, event: RunCancelled) -> None:
    """Record a cancel the client will never see, so the collected messages are closed off."""
    _encode_safely(encoder, event)
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
