"""`stream_run` driven in-process with a recording ASGI `send`, under asyncio and trio: what leaves in which
`send`, in what order, what waits when the client stops reading, agents that hold task groups and cancel
scopes across `yield`, and how each kind of ending reaches `on_complete`.

Nothing here reads a clock: a slow agent is one that waits for the client to have seen its last frame, a
stalled client is a `send` that never returns, and "the agent stopped" is checked after giving it thousands
of chances to run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from endpoint_support import cannot_be_encoded, history, make, post, raises, user, yields_junk
from fake_protocol import event_types

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
from uibridge.server.resume import Stoppable
from uibridge.server.streaming import stream_run

pytestmark = pytest.mark.anyio


@pytest.fixture(scope='module', params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


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
            expose_errors=options.pop('expose_errors', False),
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
    # The agent never waited, so the sender had no chance to run before the end: one send with every frame
    # and the stream's end, instead of one send per event.
    assert len(client.bodies) == 1
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
    assert client.bodies[:5] == [b'start\nPartStart \nPartDelta 0\n'] + [
        f'PartDelta {i}\n'.encode() for i in range(1, 5)
    ]
    assert client.bodies[5:] == [b'RunFinished \n']


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


# -------------------------------------------------------------------------------------- backpressure


class StalledClient(Client):
    """A client that reads the stream's first body, then stops reading: its `send` never returns again. A
    server's `send` writes then waits for the socket to drain (`writes_first`, as hypercorn does) or waits for
    room then writes (as uvicorn does); either way the server holds what it has not written."""

    def __init__(self, writes_first: bool) -> None:
        super().__init__()
        self.writes_first = writes_first
        self.blocked = anyio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if message['type'] == 'http.response.start' or not self.bodies:
            await super().send(message)
            return
        if self.writes_first:
            await super().send(message)
        self.blocked.set()
        await anyio.sleep_forever()


async def stream_in(group: anyio.abc.TaskGroup, agent: Any, client: Client, **options: Any) -> AgentRun:
    """Start `stream_run` in `group`; the run it streams."""
    run = new_run()
    group.start_soon(
        lambda: stream_run(
            agent=agent,
            run=run,
            encoder=options.pop('encoder', LineEncoder()),
            send=options.pop('send', client.send),
            receive=client.receive,
            keep_alive=None,
            expose_errors=False,
            **options,
        )
    )
    return run


@pytest.mark.parametrize('writes_first', [False, True], ids=['waits-then-writes', 'writes-then-drains'])
async def test_a_client_that_stops_reading_holds_the_agent_with_a_bounded_buffer(writes_first: bool) -> None:
    yielded = 0
    cleaned_up = anyio.Event()
    frame = 1024

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        nonlocal yielded
        try:
            async with anyio.create_task_group():  # a scope held across `yield`, as real agents do
                yield PartStart(0, TextPart(content=''))
                while True:
                    yielded += frame
                    yield PartDelta(0, 'x' * (frame - len('PartDelta \n')))
                    await anyio.lowlevel.checkpoint()  # every chance to run on, were nothing holding it back
        finally:
            cleaned_up.set()

    client = StalledClient(writes_first)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            run = await stream_in(group, agent, client)
            await client.blocked.wait()
            await spin()
            # Held by the server: what the agent yielded and the client never got. One batch in the stuck
            # `send` and one waiting in the outbox, each at most the limit and one frame; then the agent waits.
            held = yielded - len(client.data)
            assert held <= 2 * (DEFAULT_LIMIT + frame)
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


@pytest.mark.parametrize('writes_first', [False, True], ids=['waits-then-writes', 'writes-then-drains'])
async def test_a_cancellation_meant_for_the_agent_never_touches_a_send(writes_first: bool) -> None:
    # The agent's own scope is cancelled while a batch is in `send` and more frames wait for room: the send
    # finishes, the agent gets its cancellation at its own next await, and nothing is lost, sent or logged
    # twice, whichever way round the server writes and waits.
    gate = anyio.Event()
    blocked = anyio.Event()
    scopes: list[anyio.CancelScope] = []
    bodies: list[bytes] = []
    logged: list[bytes] = []
    caught: list[bool] = []

    async def send(message: dict[str, Any]) -> None:
        if message['type'] != 'http.response.body':
            return
        if writes_first:
            bodies.append(message['body'])
        if not gate.is_set():
            blocked.set()
            await gate.wait()
        if not writes_first:
            bodies.append(message['body'])

    async def log(frames: Any) -> None:
        logged.extend(frames)

    big = 'y' * DEFAULT_LIMIT

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content=''))
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            yield PartDelta(0, 'a')
            await anyio.lowlevel.checkpoint()  # `a` goes out and is held in `send`
            yield PartDelta(0, big)  # the outbox is full: the agent's task waits for room, in this scope
            await anyio.sleep_forever()  # where the cancellation lands
        caught.append(scope.cancelled_caught)
        yield PartDelta(0, 'b')

    client = Client()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            run = await stream_in(group, agent, client, send=send, log=log)
            await blocked.wait()
            await spin()
            scopes[0].cancel()  # the agent's own scope, not the stream's
            await spin()
            gate.set()
    expected = f'start\nPartStart \nPartDelta a\nPartDelta {big}\nPartDelta b\nRunFinished \n'.encode()
    assert b''.join(bodies) == expected
    assert b''.join(logged) == expected
    assert caught == [True]
    assert run.status == 'finished'


# ---------------------------------------------------------------------------- agents holding scopes


async def test_an_agent_holding_a_task_group_and_a_scope_across_yield_streams_everything() -> None:
    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        send, receive = anyio.create_memory_object_stream[str](4)

        async def produce() -> None:
            async with send:
                for i in range(300):
                    await send.send(str(i))

        async with anyio.create_task_group() as group:
            group.start_soon(produce)
            with anyio.CancelScope():
                yield PartStart(0, TextPart(content=''))
                async with receive:
                    async for text in receive:
                        yield PartDelta(0, text)
            yield PartEnd(0)

    logged: list[bytes] = []

    async def log(frames: Any) -> None:
        logged.extend(frames)

    client = Client()
    run = await stream(agent, client, log=log)
    assert [line.strip() for line in client.lines()] == (
        ['start', 'PartStart'] + [f'PartDelta {i}' for i in range(300)] + ['PartEnd', 'RunFinished']
    )
    assert b''.join(logged) == client.data
    assert run.status == 'finished'


class TaskGroupAgent:
    """An agent holding a task group across its `yield`s, with a background task in it, as real agents do. After
    its first event it waits forever (`waits`), or yields deltas and never waits of its own."""

    def __init__(self, *, waits: bool) -> None:
        self.waits = waits
        self.waiting = anyio.Event()
        self.background_cancelled = anyio.Event()
        self.cleaned_up = anyio.Event()

    async def _background(self) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            self.background_cancelled.set()

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._background)
                yield PartStart(0, TextPart(content='partial'))
                if self.waits:
                    self.waiting.set()
                    await anyio.sleep_forever()
                while True:
                    yield PartDelta(0, 'x' * 100)
        finally:
            self.cleaned_up.set()

    @property
    def ended_cleanly(self) -> bool:
        """Its `finally` ran and its background task was cancelled."""
        return self.cleaned_up.is_set() and self.background_cancelled.is_set()


async def test_a_disconnect_cancels_an_agent_waiting_inside_its_task_group() -> None:
    agent = TaskGroupAgent(waits=True)

    def leave_after_first_frame(body: bytes) -> None:
        if b'PartStart' in body:
            client.leave.set()

    client = Client(leave_after_first_frame)
    run = await stream(agent, client)
    assert agent.ended_cleanly
    assert run.status == 'cancelled'


@pytest.mark.parametrize('anyio_backend', ['trio'])
async def test_a_disconnect_cancels_an_agent_in_a_native_trio_nursery(anyio_backend: str) -> None:
    # trio's own nursery reports a cancellation from outside as an exception group of `Cancelled`: still a
    # cancelled run, not a failed one.
    import trio

    cleaned_up = trio.Event()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.sleep_forever)
                yield PartStart(0, TextPart(content='partial'))
                await trio.sleep_forever()
        finally:
            cleaned_up.set()

    def leave_after_first_frame(body: bytes) -> None:
        if b'PartStart' in body:
            client.leave.set()

    client = Client(leave_after_first_frame)
    run = await stream(agent, client)
    assert cleaned_up.is_set()
    assert run.status == 'cancelled'


async def test_a_failing_background_task_of_the_agent_fails_the_run() -> None:
    async def broken() -> None:
        await anyio.lowlevel.checkpoint()
        raise RuntimeError('the tool crashed')

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        async with anyio.create_task_group() as group:
            group.start_soon(broken)
            yield PartStart(0, TextPart(content=''))
            while True:
                yield PartDelta(0, 'tick')
                await anyio.sleep(0)  # where the task group's cancellation reaches the agent

    client = Client()
    run = await stream(agent, client, expose_errors=True)
    assert client.lines()[-1].startswith('RunError')
    assert run.status == 'failed'
    assert isinstance(run.error, BaseExceptionGroup)


@pytest.mark.parametrize('where', ['awaiting', 'between-steps'])
async def test_a_stop_cancels_an_agent_holding_a_task_group_and_ends_the_run_as_stopped(where: str) -> None:
    # Between steps: the agent never waits of its own; the client is slow, so the agent's task is waiting for
    # room in the outbox when the stop comes, and the agent is not asked for another step.
    agent = TaskGroupAgent(waits=where == 'awaiting')
    stoppable = Stoppable(agent)
    encoder = LineEncoder()
    slow = anyio.Event()
    blocked = anyio.Event()

    async def held_until_released(body: bytes) -> None:
        if not agent.waits and not slow.is_set():
            blocked.set()
            await slow.wait()

    client = Client(held_until_released)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            run = await stream_in(group, stoppable, client, encoder=encoder)
            await (agent.waiting.wait() if agent.waits else blocked.wait())
            await spin(200)
            stoppable.stop()
            await spin(200)
            slow.set()
    assert agent.ended_cleanly
    assert client.lines()[-1] == 'RunCancelled '  # the client is told, as a run that cancelled itself would
    assert client.last_more_body is False
    assert run.status == 'cancelled'


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
