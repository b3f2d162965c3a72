"""`Outbox`, the frames waiting to be sent and the one place that sends them, on its own."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from uibridge.server.outbox import KEEP_ALIVE, Outbox

pytestmark = pytest.mark.anyio


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


async def test_a_flush_sends_every_frame_waiting_in_one_send_in_order() -> None:
    wire = Wire()
    outbox = Outbox(wire.send, limit=6)
    assert outbox.put(b'a') is False
    assert outbox.put(b'bb') is False
    assert outbox.put(b'ccc') is True  # 6 bytes: the limit
    await outbox.flush()
    assert wire.bodies == [(b'abbccc', True)]
    assert outbox.frames == [] and outbox.size == 0
    await outbox.flush()  # nothing waiting: nothing sent
    assert len(wire.bodies) == 1


async def test_finish_sends_what_waits_and_the_tail_as_the_end() -> None:
    wire = Wire()
    outbox = Outbox(wire.send)
    outbox.put(b'a')
    await outbox.finish(b'end')
    assert wire.bodies == [(b'aend', False)]


async def test_a_keep_alive_goes_only_when_nothing_else_is_waiting_or_being_sent() -> None:
    wire = Wire()
    outbox = Outbox(wire.send)
    outbox.put(b'frame')
    await outbox.keep_alive()
    assert wire.bodies == []  # a frame is waiting: it is what goes next
    await outbox.flush()
    await outbox.keep_alive()
    assert wire.bodies == [(b'frame', True), (KEEP_ALIVE, True)]


async def test_sends_never_overlap_a_flush_waits_for_a_keep_alive_in_flight() -> None:
    wire = Wire()
    outbox = Outbox(wire.send)
    wire.hold = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(outbox.keep_alive)
            while not wire.in_flight:
                await anyio.lowlevel.checkpoint()
            outbox.put(b'frame')
            group.start_soon(outbox.flush)
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            assert wire.in_flight == 1  # the flush waits for the comment held in `send`
            await outbox.keep_alive()  # and a second comment is not sent while one is in flight
            wire.hold.set()
    assert wire.bodies == [(KEEP_ALIVE, True), (b'frame', True)]
    assert wire.most_in_flight == 1


async def test_a_failed_send_marks_the_client_gone_and_cancels_the_run() -> None:
    wire = Wire()
    outbox = Outbox(wire.send)
    wire.fail = True
    with anyio.CancelScope() as scope:
        outbox.scope = scope
        outbox.put(b'frame')
        await outbox.flush()
        assert outbox.gone and scope.cancel_called
        outbox.put(b'more')
        await outbox.flush()  # gone: dropped, and the run's cancellation lands here
        pytest.fail('the flush after the failure was not cancelled')
    assert outbox.frames == [] and wire.bodies == []


async def test_the_log_gets_each_batch_before_it_is_sent_and_a_failing_log_is_dropped_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = Wire()
    logged: list[list[bytes]] = []

    async def log(frames: Sequence[bytes]) -> None:
        assert len([body for body in wire.bodies if body[0] != KEEP_ALIVE]) == len(logged)  # before it is sent
        logged.append(list(frames))

    outbox = Outbox(wire.send, log)
    outbox.put(b'a')
    outbox.put(b'b')
    await outbox.flush()
    await outbox.keep_alive()  # comments are not logged
    await outbox.finish(b'end')
    assert logged == [[b'a', b'b'], [b'end']]

    async def broken(frames: Sequence[bytes]) -> None:
        raise RuntimeError('the store is down')

    outbox = Outbox(wire.send, broken)
    with caplog.at_level(logging.ERROR, logger='uibridge.server'):
        for frame in (b'x', b'y'):
            outbox.put(frame)
            await outbox.flush()
    assert wire.bodies[-2:] == [(b'x', True), (b'y', True)]  # the client's stream goes on
    assert caplog.text.count('The stream log failed') == 1
