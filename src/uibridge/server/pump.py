"""`pump`: iterate an agent, encode what it yields, and hand the frames to the stream's `Outbox`.

This is the per-event path of every stream, so it awaits nothing of its own per event: each event is checked,
encoded and appended to the outbox. The frames waiting are sent when the agent is about to wait for anything
(`before_wait.resume_after`, under asyncio), when the outbox is full, and at the end. On another
backend the frames are sent after every event instead.

Agent misuse ends the run the same way in every protocol: anything that is neither an agent event nor a
message is a failed run (the protocol's error event, with the reason when `expose_errors`), and so is a
`CancelledError` the agent raised itself (only the client's disconnect or the server's own cancellation
cancels a run). An event sequence the encoder cannot take (a delta for a part never started) is reported as
a failed run too. A `ToolResult` for a call nobody made, events after the run's end, and a run that yields
nothing at all are logged, once per run each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import aclosing
from typing import Any, get_args

import anyio
from anyio.lowlevel import checkpoint

from ..core.events import (
    AgentEvent,
    PartStart,
    RunCancelled,
    RunError,
    RunFinished,
    ToolResult,
    events_from_message,
)
from ..core.messages import ModelMessage, ModelRequest, ModelResponse, NativeToolCallPart, ToolCallPart
from ..core.stream import EventStreamEncoder
from .before_wait import resume_after
from .outbox import Outbox
from .run import Agent, AgentRun

__all__ = ['AgentMisuse', 'encode_safely', 'pump']

logger = logging.getLogger('uibridge.server')

DEFAULT_ERROR = 'An error occurred.'

_EVENT_TYPES: tuple[type, ...] = get_args(AgentEvent)
_TERMINAL = (RunFinished, RunError, RunCancelled)
_WATCHED = (PartStart, ToolResult, *_TERMINAL)
_CALL_PARTS = (ToolCallPart, NativeToolCallPart)
_PLAIN: frozenset[type] = frozenset(t for t in _EVENT_TYPES if t not in _WATCHED)
"""Event types that need no bookkeeping here: tested by exact type first, the commonest case by far."""
_EXACT_EVENT_TYPES: frozenset[type] = frozenset(_EVENT_TYPES)


class AgentMisuse(TypeError):
    """The agent yielded something that is not an agent event or a message."""


async def pump(
    agent: Agent, run: AgentRun, encoder: EventStreamEncoder, outbox: Outbox, expose_errors: bool
) -> AgentEvent | None:
    """Stream the agent's run into `outbox`; the terminal event streamed, if any (the encoder's `close` ends
    the stream otherwise). Never raises for what the agent does (its exception becomes `run.error` and the
    protocol's error event); cancellation from outside propagates."""
    try:
        iterator = agent(run)
        if hasattr(iterator, 'aclose'):
            async with aclosing(iterator):  # pyright: ignore[reportArgumentType]
                return await _forward(iterator, run, encoder, outbox)
        return await _forward(iterator, run, encoder, outbox)
    except anyio.get_cancelled_exc_class() as exc:
        if _cancelled_from_outside():
            raise
        # The agent raised CancelledError itself: its run failed; nobody cancelled it.
        logger.error('The agent raised CancelledError itself during run %.64r: the run failed', run.run_id)
        run.error = exc
        message = 'The agent cancelled its own run.' if expose_errors else DEFAULT_ERROR
    except Exception as exc:
        logger.exception('The agent raised during run %.64r', run.run_id)
        run.error = exc
        message = (str(exc) or type(exc).__name__) if expose_errors else DEFAULT_ERROR
    error = RunError(message)
    if frame := encode_safely(encoder, error):
        outbox.put(frame)
    return error


def _cancelled_from_outside() -> bool:
    """Whether the current task is being cancelled (a scope or the server did it), rather than the agent
    raising `CancelledError` on its own. asyncio counts the cancel requests a task has pending."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True  # not asyncio: believe the cancellation
    return task is None or task.cancelling() > 0


async def _forward(
    iterator: AsyncIterator[Any], run: AgentRun, encoder: EventStreamEncoder, outbox: Outbox
) -> AgentEvent | None:
    known_calls = {call.tool_call_id for call in run.pending_tool_calls()}
    history_calls: set[str] | None = None  # read at the run's first call: most runs make none
    warned_unknown = False
    yielded = False
    encode = encoder.encode
    put = outbox.put
    anext = iterator.__anext__
    flush = outbox.flush
    # Under asyncio, what is ready is sent just before the agent waits (`before_wait`); that is not safe
    # elsewhere, so another backend gets one send per event.
    batched = _on_asyncio()
    while True:
        try:
            if batched:
                steps = anext().__await__()
                try:
                    waiting_on = steps.send(None)  # the agent runs up to its next item, or to its first wait
                except StopIteration as ready:
                    item = ready.value  # it had the item at hand: nothing is sent yet
                else:
                    item = await resume_after(steps, waiting_on, flush)  # it waits: what is ready goes out first
            else:
                item = await anext()
        except StopAsyncIteration:
            break
        yielded = True
        events: Iterable[AgentEvent]
        if type(item) in _EXACT_EVENT_TYPES or isinstance(item, _EVENT_TYPES):
            events = (item,)
        elif isinstance(item, ModelResponse | ModelRequest):
            events = events_from_message(item)
        else:
            raise AgentMisuse(
                f'the agent yielded a {type(item).__name__}, which is neither an agent event nor a message'
            )
        for event in events:
            terminal = False
            reused: str | None = None
            if type(event) not in _PLAIN and isinstance(event, _WATCHED):
                if isinstance(event, PartStart):
                    part = event.part
                    if isinstance(part, _CALL_PARTS):
                        if history_calls is None:
                            history_calls = _call_ids(run.messages)
                        if part.tool_call_id in history_calls:
                            reused = part.tool_call_id
                        elif isinstance(part, ToolCallPart):
                            known_calls.add(part.tool_call_id)
                elif isinstance(event, ToolResult):
                    if event.part.tool_call_id not in known_calls and not warned_unknown:
                        warned_unknown = True
                        logger.warning(
                            'Run %.64r: the agent yielded a ToolResult for tool call %.64r, which this run did '
                            'not make and no pending call has',
                            run.run_id,
                            event.part.tool_call_id,
                        )
                else:
                    terminal = True
            try:
                if reused is not None:
                    # The collector refuses an id this run reused; one the history holds it cannot see.
                    raise ValueError(f'the agent started tool call {reused!r}, an id the history already has')
                frame = encode(event)
            except Exception:
                # The agent yielded events that do not add up (a delta for a part never started, say): a bug
                # in the agent, reported to the client like any other failure of the run.
                logger.exception('The agent yielded an event the encoder cannot take: %r', event)
                event = RunError(DEFAULT_ERROR)
                frame = encode_safely(encoder, event)
                terminal = True
            if terminal:
                if frame:
                    put(frame)
                await _drain_after_end(iterator, run)
                return event
            if frame and put(frame):
                await flush()
                await checkpoint()  # an agent that never waits still lets other streams run, a batch at a time
        if not batched and outbox.frames:
            await flush()
    if not yielded:
        logger.warning('Run %.64r: the agent yielded nothing', run.run_id)
    return None


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _drain_after_end(iterator: AsyncIterator[Any], run: AgentRun) -> None:
    """After a terminal event nothing more is streamed; say so once if the agent has more at hand. The agent is
    not waited for: its first wait is cancelled (it is closed right after anyway)."""
    with anyio.CancelScope() as scope:
        scope.cancel()
        async for _ in iterator:
            logger.warning('Run %.64r: the agent yielded events after the run ended; they were dropped', run.run_id)
            return


def _call_ids(history: Iterable[ModelMessage]) -> set[str]:
    return {
        part.tool_call_id
        for message in history
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, _CALL_PARTS)
    }


def encode_safely(encoder: EventStreamEncoder, event: AgentEvent) -> bytes:
    try:
        return encoder.encode(event)
    except Exception:
        logger.exception('The encoder failed to end the stream with %r', event)
        return b''
