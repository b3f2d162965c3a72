"""Agents that hold task groups, cancel scopes and background tasks across `yield` (as `PydanticAIAgent` does)
with every store, through the whole app in process: the run streams and is stored, a resume replays it, a
client that walks away leaves it running to the end, and a stop sent through another store object (another
process) cancels it cleanly."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai import messages as pai
from pydantic_ai.models.function import AgentInfo, FunctionModel
from store_support import Backend

from chat_requests import PATHS, chunks, text_of, turn
from uibridge import TextPart
from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart
from uibridge.core.messages import ModelMessage
from uibridge.integrations.pydantic_ai import PydanticAIAgent
from uibridge.server import AgentRun, create_app
from uibridge.server.store import ChatStore

pytestmark = pytest.mark.anyio

WORDS = ['Hello', ' from', ' an', ' agent', ' holding', ' scopes']


class Scoped:
    """Yields `WORDS` from inside a task group whose background task produces them, and inside a cancel scope;
    with `hold`, it waits forever after the first word (until cancelled)."""

    def __init__(self, *, hold: bool = False) -> None:
        self.hold = hold
        self.started = anyio.Event()
        self.cleaned_up = anyio.Event()
        self.background_cancelled = anyio.Event()

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent]:
        send, receive = anyio.create_memory_object_stream[str](1)

        async def produce() -> None:
            try:
                async with send:
                    for word in WORDS:
                        await send.send(word)
                    if self.hold:
                        await anyio.sleep_forever()
            finally:
                self.background_cancelled.set()

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(produce)
                with anyio.CancelScope():
                    yield PartStart(0, TextPart(content=''))
                    async with receive:
                        async for word in receive:
                            yield PartDelta(0, word)
                            self.started.set()
                            if self.hold:
                                await anyio.sleep_forever()
                    yield PartEnd(0)
        finally:
            self.cleaned_up.set()


def pydantic_ai_agent() -> PydanticAIAgent:
    async def stream(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for word in WORDS:
            await anyio.lowlevel.checkpoint()
            yield word

    return PydanticAIAgent(Agent(FunctionModel(stream_function=stream, model_name='words')))


AGENTS: dict[str, Callable[[], Any]] = {'custom': Scoped, 'pydantic-ai': pydantic_ai_agent}


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test')


def stored_text(messages: list[dict[str, Any]]) -> str:
    """The assistant's text in the stored chat as either protocol dumps it."""
    texts = [
        part['text']
        for message in messages
        if message['role'] == 'assistant'
        for part in message.get('parts', [])
        if part['type'] == 'text'
    ]
    texts += [m['content'] for m in messages if m['role'] == 'assistant' and isinstance(m.get('content'), str)]
    return ''.join(texts)


@pytest.mark.parametrize('protocol', list(PATHS))
@pytest.mark.parametrize('agent', list(AGENTS))
async def test_the_run_streams_is_stored_and_resumes(backend: Backend, agent: str, protocol: str) -> None:
    store = backend.store()
    path = PATHS[protocol]
    with anyio.fail_after(20):
        async with client(create_app(AGENTS[agent](), store=store)) as http:
            response = await http.post(path, json=turn(protocol, 'chat'))
            assert response.status_code == 200
            assert text_of(response.text) == ''.join(WORDS)
            assert not [c for c in chunks(response.text) if c['type'] in ('error', 'RUN_ERROR')]
            stored = await http.get(f'{path}/chat')
            assert stored_text(stored.json()) == ''.join(WORDS)
            resumed = await http.get(f'{path}/chat/stream')  # the stream just ended: replayed whole
            assert resumed.status_code == 200
            assert resumed.content == response.content


async def test_without_a_store_the_run_streams_too() -> None:
    for make in AGENTS.values():
        async with client(create_app(make())) as http:
            response = await http.post('/api/chat', json=turn('vercel', 'chat'))
        assert text_of(response.text) == ''.join(WORDS)


async def test_a_stop_from_another_process_cancels_an_agent_holding_a_task_group(backend: Backend) -> None:
    agent = Scoped(hold=True)
    completed: list[tuple[list[ModelMessage], AgentRun]] = []

    async def on_complete(messages: list[ModelMessage], run: AgentRun) -> None:
        completed.append((messages, run))

    running: ChatStore = backend.store()
    other: ChatStore = backend.store()  # the same chats, as another worker process sees them
    responses: list[httpx.Response] = []
    with anyio.fail_after(20):
        async with (
            client(create_app(agent, store=running, on_complete=on_complete)) as first,
            client(create_app(agent, store=other)) as second,
            anyio.create_task_group() as group,
        ):

            async def post() -> None:
                responses.append(await first.post('/api/chat', json=turn('vercel', 'chat')))

            group.start_soon(post)
            await agent.started.wait()
            stop = await second.delete('/api/chat/chat/stream')
            assert stop.status_code == 204
    assert agent.cleaned_up.is_set() and agent.background_cancelled.is_set()
    [response] = responses
    assert text_of(response.text) == WORDS[0]
    assert chunks(response.text)[-1]['type'] == 'abort'  # Vercel's word for a run stopped on purpose
    [(messages, run)] = completed
    assert run.status == 'cancelled'
    assert [part.content for part in messages[-1].parts if isinstance(part, TextPart)] == [WORDS[0]]


async def test_a_client_that_walks_away_leaves_the_run_going_to_its_end(backend: Backend) -> None:
    agent = Scoped()
    store = backend.store()
    app = create_app(agent, store=store, keep_alive=None)
    body = json.dumps(turn('vercel', 'chat')).encode()
    scope = {
        'type': 'http', 'asgi': {'version': '3.0'}, 'http_version': '1.1', 'method': 'POST', 'scheme': 'http',
        'path': '/api/chat', 'raw_path': b'/api/chat', 'query_string': b'', 'root_path': '',
        'headers': [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())],
        'client': ('127.0.0.1', 50000), 'server': ('127.0.0.1', 80),
    }  # fmt: skip
    requested = False
    left = anyio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {'type': 'http.request', 'body': body, 'more_body': False}
        await left.wait()
        return {'type': 'http.disconnect'}

    async def send(message: dict[str, Any]) -> None:
        if message['type'] != 'http.response.body':
            return
        if left.is_set():
            raise OSError('the connection is closed')  # as a server's `send` may, once the client is gone
        left.set()  # gone after the first body

    with anyio.fail_after(20):
        await app(scope, receive, send)
        async with client(app) as http:
            stored = await http.get('/api/chat/chat')
            resumed = await http.get('/api/chat/chat/stream')
    assert agent.cleaned_up.is_set()
    assert stored_text(stored.json()) == ''.join(WORDS)
    assert text_of(resumed.text) == ''.join(WORDS)
