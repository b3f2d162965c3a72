"""`Outbox`, between the agent's task (`put`, `wait_for_room`, `close`) and the sender (`deliver`), on its own,
under asyncio and trio."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from uibridge.server.outbox import KEEP_ALIVE, Outbox

pytestmark = pytest.mark.anyio


@pytest.fixture(scope='module', params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


class Wire:
    """An ASGI `send` that records each body, can be held (`hold`) and can fail (`fail`)."""

    def __init__(self) -> None:
        self.bodies: list[tuple[bytes, bool]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.hold: anyio.Event | None = None
        self.fail = False

    async def send(self, message: dict[str, Any]) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.fail:
                raise OSError('connection reset')
            if self.hold is not None:
                await self.hold.wait()
            self.bodies.append((message['body'], message['more_body']))
        finally:
            self.in_flight -= 1


async def spin(times: int = 100) -> None:
    for _ in range(times):
        await anyio.lowlevel.checkpoint()


async def test_after_close_the_sender_returns_and_finish_ends_the_body_with_what_waits() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, limit=6)
    assert outbox.put(b'a') is False
    assert outbox.put(b'bb') is False
    assert outbox.put(b'ccc') is True  # 6 bytes: the limit
    outbox.close()
    with anyio.fail_after(5):
        await outbox.deliver()
    assert wire.bodies == [] and not outbox.delivering
    await outbox.finish(b'end')
    assert wire.bodies == [(b'abbcccend', False)]
    assert outbox.frames == [] and outbox.size == 0


async def test_frames_leave_as_soon_as_the_task_that_put_them_waits() -> None:
    wire = Wire()
    outbox = Outbox(wire.send)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            await spin()
            assert wire.bodies == []  # nothing to send: nothing sent
            outbox.put(b'a')
            outbox.put(b'b')
            assert wire.bodies == []  # the sender runs only when this task waits
            await spin()
            assert wire.bodies == [(b'ab', True)]
            outbox.put(b'c')
            await spin()
            outbox.close()
    await outbox.finish(b'')
    assert wire.bodies == [(b'ab', True), (b'c', True), (b'', False)]


async def test_a_full_outbox_holds_the_agent_until_the_sender_takes_the_frames() -> None:
    wire = Wire()
    wire.hold = anyio.Event()
    outbox = Outbox(wire.send, limit=4)
    released = 0

    async def agent() -> None:
        nonlocal released
        for frame in (b'aaaa', b'bbbb', b'cccc'):
            if outbox.put(frame):
                await outbox.wait_for_room()
            released += 1

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(agent)
            await spin()
            assert released == 0 and wire.bodies == []  # the sender is not running: the agent waits
            group.start_soon(outbox.deliver)
            await spin()
            # The first frame is held in `send`, the second waits in the outbox: the agent waits for room.
            assert released == 1 and wire.in_flight == 1 and outbox.frames == [b'bbbb']
            wire.hold.set()
            await spin()
            assert released == 3
            outbox.close()
    await outbox.finish(b'')
    assert b''.join(body for body, _ in wire.bodies) == b'aaaabbbbcccc'
    assert wire.most_in_flight == 1


async def release(event: anyio.Event) -> None:
    await spin()
    event.set()


async def test_the_wait_for_room_is_not_where_a_cancellation_meant_for_the_agent_lands() -> None:
    # The agent's task waits for room between two of the agent's steps, inside any scope the agent holds
    # across its `yield`: cancelling that scope must not cut this wait short (it reaches the agent later).
    wire = Wire()
    wire.hold = anyio.Event()
    outbox = Outbox(wire.send, limit=1)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            outbox.put(b'a')
            await spin()  # `a` is held in `send`
            with anyio.CancelScope() as agents_scope:
                agents_scope.cancel()
                outbox.put(b'b')
                group.start_soon(release, wire.hold)
                await outbox.wait_for_room()  # returns when `b` is taken, not with the cancellation
                reached = True
            assert reached and not agents_scope.cancelled_caught
            outbox.close()
    await outbox.finish(b'')
    assert b''.join(body for body, _ in wire.bodies) == b'ab'


async def test_keep_alive_comments_fill_silence_and_never_split_a_batch() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, keep_alive=0.001)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            group.start_soon(outbox.tick)
            while len(wire.bodies) < 2:
                await anyio.sleep(0.001)
            outbox.put(b'frame')
            outbox.put(b'more')
            while (b'framemore', True) not in wire.bodies:
                await anyio.sleep(0.001)
            outbox.close()
            group.cancel_scope.cancel()
    await outbox.finish(b'end')
    assert wire.bodies[:2] == [(KEEP_ALIVE, True), (KEEP_ALIVE, True)]
    assert {body for body, _ in wire.bodies} == {KEEP_ALIVE, b'framemore', b'end'}
    assert wire.bodies[-1] == (b'end', False)


async def test_a_failed_send_abandons_the_stream_and_cancels_the_run() -> None:
    wire = Wire()
    wire.fail = True
    outbox = Outbox(wire.send, limit=1)
    with anyio.fail_after(5), anyio.CancelScope() as run_scope:
        outbox.scope = run_scope
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            outbox.put(b'frame')
            await spin(10)
        assert outbox.gone and run_scope.cancel_called and not outbox.delivering
    # Gone: a full outbox is where the run's cancellation lands, however busy the agent keeps its task.
    with anyio.CancelScope() as scope:
        scope.cancel()
        outbox.put(b'more')
        await outbox.wait_for_room()
        pytest.fail('the wait after the failure was not cancelled')
    assert outbox.frames == [] and wire.bodies == []


async def test_the_log_gets_each_batch_once_before_it_is_sent_and_a_failing_log_is_dropped_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = Wire()
    logged: list[list[bytes]] = []

    async def log(frames: Sequence[bytes]) -> None:
        assert len([body for body in wire.bodies if body[0] != KEEP_ALIVE]) == len(logged)  # before it is sent
        logged.append(list(frames))

    outbox = Outbox(wire.send, log, keep_alive=0.001)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            group.start_soon(outbox.tick)
            outbox.put(b'a')
            outbox.put(b'b')
            while KEEP_ALIVE not in [body for body, _ in wire.bodies]:
                await anyio.sleep(0.001)  # comments are not logged
            outbox.close()
            group.cancel_scope.cancel()
    await outbox.finish(b'end')
    assert logged == [[b'a', b'b'], [b'end']]
    assert [body for body, _ in wire.bodies if body != KEEP_ALIVE] == [b'ab', b'end']

    async def broken(frames: Sequence[bytes]) -> None:
        raise RuntimeError('the store is down')

    wire = Wire()
    outbox = Outbox(wire.send, broken)
    with caplog.at_level(logging.ERROR, logger='uibridge.server'), anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.deliver)
            for frame in (b'x', b'y'):
                outbox.put(frame)
                await spin()
            outbox.close()
        await outbox.finish(b'')
    assert wire.bodies == [(b'x', True), (b'y', True), (b'', False)]  # the client's stream goes on
    assert caplog.text.count('The stream log failed') == 1
