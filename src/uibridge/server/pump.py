"""`pump`: iterate an agent, encode what it yields, and hand the frames to the stream's `Outbox`.

This is the per-event path of every stream, so it awaits nothing of its own per event: each event is checked,
encoded and appended to the outbox, whose sender (another task) sends what is ready whenever this task waits.
The agent is iterated the plain way, in this task, from its first step to its `aclose`, and nothing here
opens a cancel scope around a step: an agent may hold task groups, cancel scopes or background tasks across
its `yield`. The only wait of this task's own, for room in a full outbox, is shielded, so a cancellation
meant for the agent lands in the agent.

Agent misuse ends the run the same way in every protocol and with every store: the protocol's error event,
with the reason when `expose_errors` and a generic message otherwise, the reason always in the log. Misuse
is: an agent that does not return an async iterator (a plain generator, a coroutine, a list), an item that
is neither an agent event nor a message, events the encoder cannot take (a delta for a part never started,
a tool call id the history already has), a `CancelledError` the agent raised itself (only the client's
disconnect, a stop or the server cancels a run), and an agent whose closing raises. An agent's exception is
reported the same way. Where two things go wrong, the client hears about the first and the log has both.

After a terminal event nothing more is asked of the agent: it is closed, then the terminal event is sent (so
an agent whose cleanup fails ends its run failed). A `ToolResult` for a call nobody made and a run that
yields nothing at all are logged, once per run each.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Iterable
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
from .outbox import Outbox
from .run import Agent, AgentRun

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
    """The agent broke its contract: it returned something other than an async iterator, yielded something
    that is not an agent event or a message, yielded events that do not add up, or cancelled itself."""


async def pump(
    agent: Agent, run: AgentRun, encoder: EventStreamEncoder, outbox: Outbox, expose_errors: bool
) -> AgentEvent | None:
    """Stream the agent's run into `outbox`; the terminal event streamed, if any (the encoder's `close` ends
    the stream otherwise). Never raises for what the agent does (its exception becomes `run.error` and the
    protocol's error event); cancellation from outside propagates."""
    try:
        iterator = agent_iterator(agent, run)
        try:
            terminal = await _forward(iterator, run, encoder, outbox)
        except BaseException:
            await _close_after_failure(iterator, run)
            raise
        await close_agent(iterator)
        if terminal is None:
            return None
        if frame := _encode_terminal(encoder, terminal):
            outbox.put(frame)
        return terminal
    except anyio.get_cancelled_exc_class() as exc:
        if _cancelled_from_outside():
            raise
        failure: BaseException = AgentMisuse('the agent cancelled its own run (it raised CancelledError itself)')
        failure.__cause__ = exc
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        # `Exception`s, and anything else the agent raised itself (asyncio's `CancelledError` under trio,
        # a stray `GeneratorExit`): a failure of the run, never of the server.
        failure = exc
    logger.error('The agent failed during run %.64r', run.run_id, exc_info=failure)
    run.error = failure
    error = RunError(_reason(failure) if expose_errors else DEFAULT_ERROR)
    if frame := encode_safely(encoder, error):
        outbox.put(frame)
    return error


def agent_iterator(agent: Agent, run: AgentRun) -> AsyncIterator[Any]:
    """What `agent(run)` returned, as the async iterator it must be (`AgentMisuse` otherwise). A check at
    construction refuses generator and coroutine functions; this catches what only a call can tell (a
    lambda or a partial around one, a callable object returning the wrong thing)."""
    result: Any = agent(run)
    if isinstance(result, AsyncIterator):
        return result  # pyright: ignore[reportUnknownVariableType]
    if hasattr(result, '__aiter__'):
        return aiter(result)
    if inspect.iscoroutine(result):
        result.close()  # never awaited, and never to be: no "was never awaited" warning on top
        raise AgentMisuse(
            'the agent returned a coroutine, not an async iterator: an agent yields events '
            '(`async def agent(run): ... yield event`) rather than returning a result'
        )
    if inspect.isgenerator(result):
        result.close()
        raise AgentMisuse(
            'the agent returned a plain generator, not an async iterator: define it with `async def` '
            '(`async def agent(run): ... yield event`)'
        )
    raise AgentMisuse(f'the agent returned a {type(result).__name__}, not an async iterator of events')


def _reason(failure: BaseException) -> str:
    """What went wrong, in words for the client (with `expose_errors`). A task group's exception group says
    only how many of its tasks failed: the reasons are those of the tasks."""
    if isinstance(failure, BaseExceptionGroup):
        group: BaseExceptionGroup[BaseException] = failure  # pyright: ignore[reportUnknownVariableType]
        return '; '.join(map(_reason, group.exceptions))
    return str(failure) or type(failure).__name__


def _cancelled_from_outside() -> bool:
    """Whether the current task is being cancelled (a scope or the server did it), rather than the agent
    raising `CancelledError` on its own. asyncio counts the cancel requests a task has pending; under trio
    only trio itself can raise its `Cancelled`."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True  # not asyncio: believe the cancellation
    return task is None or task.cancelling() > 0


async def _forward(
    iterator: AsyncIterator[Any], run: AgentRun, encoder: EventStreamEncoder, outbox: Outbox
) -> AgentEvent | None:
    """Encode and queue everything the agent yields up to its terminal event, which is returned unencoded
    (`None` when the agent just ended)."""
    known_calls = {call.tool_call_id for call in run.pending_tool_calls()}
    history_calls: set[str] | None = None  # read at the run's first call: most runs make none
    warned_unknown = False
    yielded = False
    encode = encoder.encode
    put = outbox.put
    async for item in iterator:
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
                    # A legacy tool-less `RetryPromptPart` answers no call: its generated id is no stray result.
                    if (
                        event.part.tool_call_id not in known_calls
                        and event.part.tool_name is not None
                        and not warned_unknown
                    ):
                        warned_unknown = True
                        logger.warning(
                            'Run %.64r: the agent yielded a ToolResult for tool call %.64r, which this run did '
                            'not make and no pending call has',
                            run.run_id,
                            event.part.tool_call_id,
                        )
                else:
                    return event
            try:
                if reused is not None:
                    # The collector refuses an id this run reused; one the history holds it cannot see.
                    raise ValueError(f'the agent started tool call {reused!r}, an id the history already has')
                frame = encode(event)
            except Exception as exc:
                raise _not_adding_up(exc) from exc
            if frame and put(frame):
                await outbox.wait_for_room()
    if not yielded:
        logger.warning('Run %.64r: the agent yielded nothing', run.run_id)
    return None


def _not_adding_up(exc: Exception) -> AgentMisuse:
    return AgentMisuse(f'the agent yielded events that do not add up: {_reason(exc)}')


def _encode_terminal(encoder: EventStreamEncoder, terminal: AgentEvent) -> bytes:
    try:
        return encoder.encode(terminal)
    except Exception as exc:
        raise _not_adding_up(exc) from exc


async def close_agent(iterator: AsyncIterator[Any]) -> None:
    """Close the agent's iterator, if it can be closed: its `finally` blocks run, its scopes and task groups
    exit, and what they raise is raised here. A task group the agent holds across `yield` wraps the
    `GeneratorExit` that closing throws in an exception group: that is the close going as it should. Beside it
    may be the cancellation of the group's other tasks when the run is being cancelled: then that cancellation
    is raised the plain way, by the next checkpoint, so every scope and backend recognises it."""
    close = getattr(iterator, 'aclose', None)
    if close is None:
        return
    try:
        await close()
    except BaseExceptionGroup as group:
        _, rest = group.split(GeneratorExit)
        if rest is None:
            return
        _, rest = rest.split(anyio.get_cancelled_exc_class())
        if rest is not None:
            raise
    else:
        return
    await checkpoint()


async def _close_after_failure(iterator: AsyncIterator[Any], run: AgentRun) -> None:
    """Close the agent's iterator when the run already failed or was cancelled: what that raises is logged,
    and the first failure is what the run reports."""
    try:
        await close_agent(iterator)
    except Exception:
        logger.exception('Closing the agent of run %.64r raised too', run.run_id)


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
