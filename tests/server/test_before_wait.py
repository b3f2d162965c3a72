"""`before_wait.resume_after`: the hook runs once, just before the awaitable first waits, and everything else
passes through, as the stream's pump uses it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import pytest

from uibridge.server.before_wait import resume_after

pytestmark = pytest.mark.anyio

T = TypeVar('T')


async def before_wait(awaitable: Awaitable[T], hook: Callable[[], Awaitable[None]]) -> T:
    """Await `awaitable`, running `hook` just before it first waits (the pump's first step, then the rest)."""
    steps = awaitable.__await__()
    try:
        waiting_on: Any = steps.send(None)
    except StopIteration as ready:
        return ready.value
    return await resume_after(steps, waiting_on, hook)


class Hook:
    def __init__(self, *, block: bool = False) -> None:
        self.calls = 0
        self.block = block
        self.order: list[str] = []

    async def __call__(self) -> None:
        self.calls += 1
        self.order.append('hook')
        if self.block:
            await anyio.sleep_forever()
        await anyio.lowlevel.checkpoint()  # the hook may wait itself


async def test_an_awaitable_that_never_waits_does_not_run_the_hook() -> None:
    async def ready() -> int:
        return 7

    hook = Hook()
    assert await before_wait(ready(), hook) == 7
    assert hook.calls == 0


async def test_the_hook_runs_once_before_the_first_wait_and_the_result_comes_through() -> None:
    hook = Hook()

    async def waits_twice() -> str:
        hook.order.append('before')
        await anyio.lowlevel.checkpoint()
        hook.order.append('between')
        await asyncio.sleep(0.001)
        return 'done'

    assert await before_wait(waits_twice(), hook) == 'done'
    assert hook.order == ['before', 'hook', 'between']


async def test_an_exception_after_the_wait_propagates() -> None:
    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError('boom')

    with pytest.raises(ValueError, match='boom'):
        await before_wait(fails(), Hook())


async def test_a_cancellation_during_the_hook_reaches_the_awaitable_where_it_waits() -> None:
    seen: list[str] = []
    started = anyio.Event()

    async def waits() -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append('cancelled where it waits')
            raise

    async with anyio.create_task_group() as group:

        async def run() -> None:
            await before_wait(waits(), Hook(block=True))
            seen.append('not reached')

        group.start_soon(run)
        with anyio.fail_after(5):
            await started.wait()
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        group.cancel_scope.cancel()
    assert seen == ['cancelled where it waits']


async def test_an_awaitable_that_swallows_the_cancellation_returns_its_value() -> None:
    async def stubborn() -> str:
        try:
            await anyio.sleep_forever()
        except asyncio.CancelledError:
            return 'swallowed'
        return 'unreachable'

    task = asyncio.ensure_future(before_wait(stubborn(), Hook(block=True)))
    for _ in range(10):
        await asyncio.sleep(0)
    task.cancel()
    assert await task == 'swallowed'


async def test_the_end_of_an_async_generator_passes_through() -> None:
    async def two() -> AsyncIterator[int]:
        yield 1
        await anyio.lowlevel.checkpoint()
        yield 2

    items = two()
    hook = Hook()
    assert await before_wait(items.__anext__(), hook) == 1
    assert await before_wait(items.__anext__(), hook) == 2
    with pytest.raises(StopAsyncIteration):
        await before_wait(items.__anext__(), hook)
    assert hook.calls == 1
