"""`Outbox`, the bounded hand-off between a run and its writer, on its own."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from uibridge.core.events import RunFinished
from uibridge.server.outbox import Outbox

pytestmark = pytest.mark.anyio


async def test_take_returns_every_frame_waiting_in_order_and_empties_the_outbox() -> None:
    outbox = Outbox(limit=100)
    for frame in (b'a', b'bb', b'ccc'):
        assert outbox.put(frame) is False
    assert await outbox.take() == [b'a', b'bb', b'ccc']
    assert outbox.frames == [] and outbox.size == 0


async def test_put_says_when_the_limit_is_reached_and_the_producer_waits_until_a_take() -> None:
    outbox = Outbox(limit=4)
    assert outbox.put(b'ab') is False
    assert outbox.put(b'cd') is True
    resumed = anyio.Event()

    async def producer() -> None:
        await outbox.wait_for_room()
        resumed.set()

    async with anyio.create_task_group() as group:
        group.start_soon(producer)
        for _ in range(100):
            await anyio.lowlevel.checkpoint()
        assert not resumed.is_set()  # no room until the writer takes
        assert await outbox.take() == [b'ab', b'cd']
        with anyio.fail_after(5):
            await resumed.wait()


@pytest.mark.parametrize('wake', ['frame', 'keep-alive', 'close'])
async def test_a_waiting_writer_wakes_for_a_frame_a_keep_alive_or_the_end(wake: str) -> None:
    outbox = Outbox()
    taken: list[list[bytes]] = []

    async def writer() -> None:
        taken.append(await outbox.take())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(writer)
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            assert taken == []  # nothing to take: the writer waits
            if wake == 'frame':
                outbox.put(b'x')
            elif wake == 'keep-alive':
                outbox.request_keep_alive()
            else:
                outbox.close()
    assert taken == [[b'x'] if wake == 'frame' else []]


async def test_close_keeps_the_first_ending() -> None:
    outbox = Outbox()
    first = RunFinished('stop')
    outbox.close(first)
    outbox.close(RunFinished('length'))
    assert outbox.terminal is first
