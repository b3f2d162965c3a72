"""`resume_after`: finish awaiting something that has just said it must wait, running a hook first.

The stream uses it around the agent's `__anext__()`: as long as the agent yields events without waiting for
anything, their frames pile up; the moment it is about to wait (for its model, a tool, a timer), the frames
ready so far are sent. So a fast agent's frames leave together and a slow agent's frame leaves before it waits
for its next one, with no second task to hand frames to and no guess about when a batch is complete.

How: an awaitable is driven by sending into its `__await__()` iterator; it suspends by yielding what its task
must wait on (an asyncio future, or `None` to be rescheduled), and finishes with `StopIteration`. The caller
takes the first step itself (`steps.send(None)`: the agent runs up to its next item, or to its first wait);
only when that step yields does it `await resume_after(steps, waiting_on, hook)`, which awaits the hook, then
hands what was yielded on to the task and relays everything after that unchanged, as `yield from` would. The
common case, an item at hand, costs no more than a `StopIteration`.

Under asyncio this is safe: what a coroutine waits on is a future that only its task's done callback reacts
to, and the task adds that callback when it receives the future, whenever that is. (Not under trio, whose
blocking primitives register the task before they yield: the server only does this on asyncio.)

A cancellation (or any exception) that lands while the hook runs is thrown into the awaitable where it
waits, exactly as it would have been had it arrived a moment later: the agent sees it at its own `await`.
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

__all__ = ['resume_after']

T = TypeVar('T')


@types.coroutine
def resume_after(
    steps: Generator[Any, Any, T], waiting_on: Any, hook: Callable[[], Awaitable[None]]
) -> Generator[Any, Any, T]:
    """Await `hook()`, then the rest of `steps`, an awaitable's iterator whose last step yielded `waiting_on`."""
    error: BaseException | None = None
    try:
        yield from hook().__await__()
    except GeneratorExit:
        steps.close()
        raise
    except BaseException as exc:
        error = exc  # cancelled (or failed) while the hook ran: the awaitable gets it where it waits
    return (yield from _relay(steps, waiting_on, error))


def _relay(steps: Generator[Any, Any, T], waiting_on: Any, error: BaseException | None) -> Generator[Any, Any, T]:
    """`yield from steps`, for an iterator that has already yielded `waiting_on`; `error`, if any, is thrown
    into it first."""
    sent: Any = None
    while True:
        if error is None:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:
                error = exc
        try:
            if error is None:
                waiting_on = steps.send(sent)
            else:
                thrown, error = error, None
                waiting_on = steps.throw(thrown)
        except StopIteration as done:
            return done.value
