"""`stream_run` driven in-process with a recording ASGI `send`: what leaves in which `send`, in what order,
what waits when the client stops reading, and how each kind of ending reaches `on_complete`.

Nothing here reads a clock: a slow agent is one that waits for the client to have seen its last frame, a
stalled client is a `send` that never returns, and "the agent stopped" is checked after giving it thousands
of chances to run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from fake_protocol import event_types
from test_endpoint import history, make, post, user

import uibridge.server.pump as pump_module
from uibridge import ModelResponse, TextPart
from uibridge.core.events import (
    AgentEvent,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseStart,
    RunCancelled,
    RunError,
    RunFinished,
)
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun
from uibridge.server.outbox import DEFAULT_LIMIT, KEEP_ALIVE
from uibridge.server.streaming import stream_run

pytestmark = pytest.mark.anyio

_TERMINAL = (RunFinished, RunError, RunCancelled)


class LineEncoder:
    """One line per event, `<EventType> <delta>`; a delta of `boom` is an event it cannot take. Ends at a
    terminal event like a real encoder (later events encode to nothing)."""

    def __init__(self) -> None:
        self.ended = False
        self.events: list[AgentEvent] = []

    @property
    def headers(self) -> Mapping[str, str]:
        return {'content-type': 'text/event-stream'}

    def start(self) -> bytes:
        return b'start\n'

    def encode(self, event: AgentEvent) -> bytes:
        if self.ended:
            return b''
        if isinstance(event, PartDelta) and event.delta == 'boom':
            raise ValueError('no such part')
        self.events.append(event)
        self.ended = isinstance(event, _TERMINAL)
        return f'{type(event).__name__} {event.delta if isinstance(event, PartDelta) else ""}\n'.encode()

    def close(self) -> bytes:
        return b'' if self.ended else self.encode(RunFinished())

    @property
    def new_messages(self) -> list[ModelMessage]:
        return []


class Client:
    """The ASGI side: records each body `send`; `receive` says `http.disconnect` once `leave` is set.
    `on_send(body)` runs after each body is recorded (a test's hook: set events, or block)."""

    def __init__(self, on_send: Callable[[bytes], Any] | None = None) -> None:
        self.bodies: list[bytes] = []
        self.last_more_body: bool | None = None
        self.leave = anyio.Event()
        self.on_send = on_send

    async def send(self, message: dict[str, Any]) -> None:
        if message['type'] == 'http.response.start':
            return
        self.bodies.append(message['body'])
        self.last_more_body = message['more_body']
        if self.on_send is not None:
            result = self.on_send(message['body'])
            if result is not None:
                await result

    async def receive(self) -> dict[str, Any]:
        await self.leave.wait()
        return {'type': 'http.disconnect'}

    @property
    def data(self) -> bytes:
        return b''.join(self.bodies)

    def lines(self) -> list[str]:
        """The event lines received, keep-alive comments left out."""
        return [line for line in self.data.decode().splitlines() if line and not line.startswith(':')]


def new_run() -> AgentRun:
    return AgentRun(messages=[], thread_id='t', run_id='r', protocol='test')


async def stream(agent: Any, client: Client, *, keep_alive: float | None = None, **options: Any) -> AgentRun:
    run = new_run()
    with anyio.fail_after(10):  # a deadlock fails the test instead of hanging it; no timing is measured
        await stream_run(
            agent=agent,
            run=run,
            encoder=options.pop('encoder', LineEncoder()),
            send=client.send,
            receive=client.receive,
            keep_alive=keep_alive,
            expose_errors=False,
            **options,
        )
    return run


async def spin(times: int = 5000) -> None:
    """Let every other task run, again and again."""
    for _ in range(times):
        await anyio.lowlevel.checkpoint()


def deltas(count: int, size: int = 4) -> list[str]:
    return [f'{i:0{size}d}' for i in range(count)]


# ---------------------------------------------------------------------------------------- coalescing


async def test_a_fast_agents_frames_leave_together_in_order() -> None:
    texts = deltas(300)

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield ResponseStart()
        yield PartStart(0, TextPart(content=''))
        for text in texts:
            yield PartDelta(0, text)
        yield PartEnd(0)

    client = Client()
    run = await stream(agent, client)
    expected = ['start', 'ResponseStart', 'PartStart'] + [f'PartDelta {t}' for t in texts] + ['PartEnd', 'RunFinished']
    assert [line.strip() for line in client.lines()] == expected
    # Nothing was ready to send before the agent finished (it never awaited): the start frame, then one send
    # with every frame and the stream's end, instead of one send per event.
    assert len(client.bodies) == 2
    assert client.last_more_body is False
    assert run.status == 'finished'


async def test_more_than_the_limit_leaves_in_bounded_batches() -> None:
    texts = deltas(2000, size=100)  # about 6x the outbox limit

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        for text in texts:
            yield PartDelta(0, text)

    client = Client()
    await stream(agent, client)
    assert [line.split(' ')[-1] for line in client.lines() if line.startswith('PartDelta')] == texts
    total = len(client.data)
    assert 3 <= len(client.bodies) <= total // DEFAULT_LIMIT + 3
    frame = len(f'PartDelta {texts[0]}\n')
    assert max(len(body) for body in client.bodies) <= DEFAULT_LIMIT + frame


async def test_a_slow_agents_frame_leaves_before_it_yields_the_next() -> None:
    seen = [anyio.Event() for _ in range(5)]

    def on_send(body: bytes) -> None:
        for i, event in enumerate(seen):
            if f'PartDelta {i}\n'.encode() in body:
                event.set()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        for i, event in enumerate(seen):
            yield PartDelta(0, str(i))
            await event.wait()  # the client must have this delta before the agent goes on: no waiting to batch

    client = Client(on_send)
    await stream(agent, client)
    assert client.bodies[1:6] == [b'PartStart \nPartDelta 0\n'] + [f'PartDelta {i}\n'.encode() for i in range(1, 5)]
    assert client.bodies[6:] == [b'RunFinished \n']


async def test_frames_keep_their_order_however_the_agent_paces_itself() -> None:
    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        yield PartStart(0, TextPart(content=''))
        for i in range(200):
            yield PartDelta(0, str(i))
            if i % 7 == 0:
                await anyio.lowlevel.checkpoint()
            if i % 13 == 0:
                await anyio.sleep(0)
        yield PartEnd(0)
        yield ModelResponse(parts=[TextPart(content='whole')])

    client = Client()
    await stream(agent, client)
    lines = [line.strip() for line in client.lines()]
    assert lines == (
        ['start', 'PartStart']
        + [f'PartDelta {i}' for i in range(200)]
        + ['PartEnd', 'ResponseStart', 'PartStart', 'PartEnd', 'RunFinished']
    )
    assert 2 < len(client.bodies) < 200  # some batches, not one send per event


async def test_without_asyncio_each_frame_is_sent_as_it_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Sending just before the agent waits is only safe under asyncio; elsewhere every event is one send.
    monkeypatch.setattr(pump_module, '_on_asyncio', lambda: False)

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        for i in range(3):
            yield PartDelta(0, str(i))
        yield PartEnd(0)

    client = Client()
    await stream(agent, client)
    assert client.bodies == [
        b'start\n',
        b'PartStart \n',
        b'PartDelta 0\n',
        b'PartDelta 1\n',
        b'PartDelta 2\n',
        b'PartEnd \n',
        b'RunFinished \n',
    ]


# -------------------------------------------------------------------------------------- backpressure


async def test_a_client_that_stops_reading_stops_the_agent_within_the_bound() -> None:
    blocked = anyio.Event()
    yielded = 0
    cleaned_up = anyio.Event()
    frame = 1024

    async def stall(body: bytes) -> None:
        if body != b'start\n':
            blocked.set()
            await anyio.sleep_forever()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        nonlocal yielded
        try:
            yield PartStart(0, TextPart(content=''))
            while True:
                yielded += 1
                yield PartDelta(0, 'x' * (frame - len('PartDelta \n')))
                await anyio.lowlevel.checkpoint()  # every chance to run on, were nothing holding it back
        finally:
            cleaned_up.set()

    client = Client(stall)
    async with anyio.create_task_group() as group:
        run = new_run()
        group.start_soon(
            lambda: stream_run(
                agent=agent,
                run=run,
                encoder=LineEncoder(),
                send=client.send,
                receive=client.receive,
                keep_alive=None,
                expose_errors=False,
            )
        )
        with anyio.fail_after(10):
            await blocked.wait()
        await spin()
        # The batch stuck in `send`, and one more waiting in the outbox: then the agent waits too.
        assert yielded <= 2 * (DEFAULT_LIMIT // frame + 1) + 1
        stuck_at = yielded
        await spin()
        assert yielded == stuck_at
        client.leave.set()  # the client gives up: the stuck send and the waiting agent are both cancelled
    assert cleaned_up.is_set()
    assert run.status == 'cancelled'


async def test_a_disconnect_cancels_an_agent_that_waits() -> None:
    cleaned_up = anyio.Event()
    encoder = LineEncoder()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            yield PartStart(0, TextPart(content='partial'))
            await anyio.sleep_forever()
        finally:
            cleaned_up.set()

    def leave_after_first_frame(body: bytes) -> None:
        if b'PartStart' in body:
            client.leave.set()

    client = Client(leave_after_first_frame)
    run = await stream(agent, client, encoder=encoder)
    assert cleaned_up.is_set()
    assert run.status == 'cancelled'
    assert isinstance(encoder.events[-1], RunCancelled)  # the collected messages were closed off
    assert client.last_more_body is True  # the stream was never ended as if it had finished
    assert b'RunCancelled' not in client.data


async def test_a_cancellation_meant_for_the_agent_loses_no_frame_being_sent() -> None:
    # The frames ready are sent just before the agent waits, so inside the agent's own cancel scopes: a stop
    # or a timeout of its own can cut that send short. Nothing may be lost or sent (or logged) twice.
    gate = anyio.Event()
    blocked = anyio.Event()
    inner: list[anyio.CancelScope] = []
    bodies: list[bytes] = []
    logged: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        if message['type'] != 'http.response.body':
            return
        if message['body'] != b'start\n' and not gate.is_set():
            blocked.set()
            await gate.wait()  # as uvicorn drains before it writes: cut short here, nothing was written
        bodies.append(message['body'])

    async def log(frames: Any) -> None:
        logged.extend(frames)

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        yield PartDelta(0, 'a')
        with anyio.CancelScope() as scope:
            inner.append(scope)
            await anyio.sleep_forever()  # the frames above are being sent when this scope is cancelled
        yield PartDelta(0, 'b')

    run = new_run()
    client = Client()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: stream_run(
                    agent=agent,
                    run=run,
                    encoder=LineEncoder(),
                    send=send,
                    receive=client.receive,
                    keep_alive=None,
                    expose_errors=False,
                    log=log,
                )
            )
            await blocked.wait()
            inner[0].cancel()  # the agent's own scope, not the stream's
            await spin(100)
            gate.set()
    expected = b'start\nPartStart \nPartDelta a\nPartDelta b\nRunFinished \n'
    assert b''.join(bodies) == expected
    assert b''.join(logged) == expected
    assert run.status == 'finished'


# ----------------------------------------------------------------------------------------- endings


async def test_the_stream_ends_when_the_run_does_even_if_the_agent_lingers() -> None:
    cleaned_up = anyio.Event()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            yield PartStart(0, TextPart(content='done'))
            yield RunFinished('stop')
            await anyio.sleep_forever()  # cleanup that never ends: the client is not kept waiting for it
        finally:
            cleaned_up.set()

    client = Client()
    run = await stream(agent, client)
    assert client.lines() == ['start', 'PartStart ', 'RunFinished ']
    assert client.last_more_body is False
    assert cleaned_up.is_set()
    assert run.status == 'finished'


async def test_an_event_the_encoder_cannot_take_fails_the_run_and_closes_the_agent() -> None:
    cleaned_up = anyio.Event()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            yield PartStart(0, TextPart(content=''))
            yield PartDelta(0, 'boom')
            while True:
                yield PartDelta(0, 'more')
        finally:
            cleaned_up.set()

    client = Client()
    run = await stream(agent, client)
    assert client.lines() == ['start', 'PartStart ', 'RunError ']
    assert cleaned_up.is_set()
    assert run.status == 'failed'


async def test_the_log_gets_every_frame_the_client_gets_in_the_same_batches() -> None:
    logged: list[list[bytes]] = []
    released = anyio.Event()

    async def log(frames: Any) -> None:
        logged.append(list(frames))

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        yield PartDelta(0, 'a')
        await released.wait()
        yield PartDelta(0, 'b')

    def on_send(body: bytes) -> None:
        if body == KEEP_ALIVE:
            released.set()

    client = Client(on_send)
    await stream(agent, client, keep_alive=0.001, log=log)
    assert [b''.join(frames) for frames in logged] == [body for body in client.bodies if body != KEEP_ALIVE]
    assert (
        b''.join(b''.join(frames) for frames in logged)
        == b'start\nPartStart \nPartDelta a\nPartDelta b\nRunFinished \n'
    )


# ---------------------------------------------------------------------------------------- keep-alive


async def test_keep_alive_comments_fill_silence_between_whole_frames() -> None:
    comments = 0
    two_comments = anyio.Event()

    def on_send(body: bytes) -> None:
        nonlocal comments
        if KEEP_ALIVE in body:
            assert body == KEEP_ALIVE  # a comment of its own, never inside or between a batch's frames
            comments += 1
            if comments == 2:
                two_comments.set()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content='thinking'))
        await two_comments.wait()  # silent until the client has had two keep-alives
        yield PartDelta(0, 'done')

    client = Client(on_send)
    await stream(agent, client, keep_alive=0.005)
    assert client.lines() == ['start', 'PartStart ', 'PartDelta done', 'RunFinished ']
    assert comments >= 2


# ------------------------------------------------------------------------------------- on_complete


async def raises(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='partial'))
    raise RuntimeError('broken')


async def yields_junk(run: AgentRun) -> AsyncIterator[Any]:
    yield PartStart(0, TextPart(content='partial'))
    yield 'junk'


async def cannot_be_encoded(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartDelta(3, 'a delta for a part never started')


async def yields_error(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='partial'))
    yield RunError('the model refused')


async def yields_cancelled(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='partial'))
    yield RunCancelled('stopped by the user')


async def finishes(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='whole'))
    yield PartEnd(0)


async def finishes_explicitly(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='whole'))
    yield RunFinished('stop')


@pytest.mark.parametrize(
    ('agent', 'status', 'last'),
    [
        (finishes, 'finished', 'RunFinished'),
        (finishes_explicitly, 'finished', 'RunFinished'),
        (raises, 'failed', 'RunError'),
        (yields_junk, 'failed', 'RunError'),
        (cannot_be_encoded, 'failed', 'RunError'),
        (yields_error, 'failed', 'RunError'),
        (yields_cancelled, 'cancelled', 'RunCancelled'),
    ],
)
async def test_on_complete_gets_each_ending_once_with_its_status(agent: Any, status: str, last: str) -> None:
    endpoint, recorder, _ = make(agent)
    response = await post(endpoint, {'messages': history(user('hi'))})
    types = event_types(response.content)
    assert types[0] == 'start' and types[-1] == last
    assert types.count(last) == 1
    [(_, run)] = recorder.completed
    assert run.status == status
