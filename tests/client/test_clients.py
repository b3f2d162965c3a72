"""The Python clients (`uibridge.client`) drive real servers, turn after turn: uibridge's own (client-held history
signed with the shared secret, and server-managed history with a resumable stream), pydantic-ai's AG-UI app, and
an `ai@7` route on the SDK's mock model."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from remote_backends import CLIENT_TOOL, PydanticBackend, VercelBackend, pydantic_ai_backend, vercel_sdk_backend
from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.client import AGUIClient, ClientRun, RemoteError, StreamLimits, VercelAIClient
from uibridge.core import events as ev
from uibridge.server.app import create_app
from uibridge.server.demo import DemoAgent
from uibridge.server.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'e2e'))
from e2e_support import Recorder, serve

pytestmark = pytest.mark.anyio


@dataclass
class Servers:
    uibridge: str
    """The demo app, client-held history."""
    managed: str
    """The demo app with a memory store: server-managed history, resumable streams."""
    recorder: Recorder
    pydantic: PydanticBackend
    route: VercelBackend


@pytest.fixture(scope='module')
def servers() -> Iterator[Servers]:
    recorder = Recorder()
    demo = DemoAgent(delay=0, slow_seconds=1.0)
    plain = create_app(demo, on_complete=recorder.on_complete)
    managed = create_app(demo, store=MemoryStore())
    with (
        serve(plain) as plain_url,
        serve(managed) as managed_url,
        pydantic_ai_backend() as pydantic,
        vercel_sdk_backend() as route,
    ):
        yield Servers(plain_url, managed_url, recorder, pydantic, route)


def ask(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text)])


def clients(servers: Servers, base: str) -> dict[str, AGUIClient | VercelAIClient]:
    return {'ag-ui': AGUIClient(f'{base}/ag-ui'), 'vercel': VercelAIClient(f'{base}/api/chat')}


async def turn(
    client: AGUIClient | VercelAIClient, history: list[ModelMessage], thread: str, **options: Any
) -> ClientRun:
    if isinstance(client, AGUIClient):
        return await client.run(history, thread_id=thread, **options)
    return await client.run(history, chat_id=thread, **options)


@pytest.mark.parametrize('protocol', ['ag-ui', 'vercel'])
@pytest.mark.parametrize('where', ['client-held', 'managed'])
async def test_a_conversation_with_uibridge_tools_approvals_and_client_tools(
    servers: Servers, protocol: str, where: str
) -> None:
    client = clients(servers, servers.uibridge if where == 'client-held' else servers.managed)[protocol]
    thread = f'py-{protocol}-{where}'
    history: list[ModelMessage] = [ask('think, then the weather')]
    run = await turn(client, history, thread)
    assert run.status == 'finished'
    assert run.text == 'It is sunny in Paris, 21 °C.'
    assert any(isinstance(p, ThinkingPart) and p.signature for m in run.messages for p in m.parts)
    history += [*run.messages, ask('delete')]
    run = await turn(client, history, thread)
    [(call_id, approval_id)] = run.approval_ids.items()
    assert approval_id.startswith('apr_')
    history += run.messages
    run = await turn(client, history, thread, approvals=[run.approval(call_id, approved=False, reason='keep it')])
    assert run.status == 'finished'
    denial = [p for m in run.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in denial] == [(call_id, 'denied')]
    history += [*run.messages, ask('client')]
    run = await turn(client, history, thread)
    [call] = run.client_calls
    assert call.tool_name == 'get_local_time'
    history += [*run.messages, run.tool_results({call.tool_call_id: {'time': 'noon'}})]
    run = await turn(client, history, thread)
    assert run.status == 'finished'
    assert 'noon' in run.text
    if where == 'client-held':
        # Everything the client sent back verified: the server's agent got the whole conversation.
        with anyio.fail_after(10):
            while len(runs := [r for _, r in servers.recorder.completed if r.thread_id == thread]) < 5:
                await anyio.sleep(0.01)
        kept = [(p.part_kind, getattr(p, 'tool_call_id', None)) for m in runs[-1].messages for p in m.parts]
        assert kept == [(p.part_kind, getattr(p, 'tool_call_id', None)) for m in history for p in m.parts]


@pytest.mark.parametrize('protocol', ['ag-ui', 'vercel'])
async def test_an_error_and_the_state_come_back_as_the_server_sent_them(servers: Servers, protocol: str) -> None:
    client = clients(servers, servers.uibridge)[protocol]
    run = await turn(client, [ask('error')], f'py-error-{protocol}')
    assert (run.status, run.error) == ('failed', 'An error occurred.')
    assert run.text == 'Let me start answering, and then'
    run = await turn(client, [ask('state')], f'py-state-{protocol}')
    assert run.state['city'] == 'Lyon'
    assert [type(e).__name__ for e in run.events if isinstance(e, ev.StateSnapshot | ev.StateDelta)]


async def test_a_vercel_stream_is_resumed_from_its_start() -> None:
    demo = DemoAgent(delay=0, slow_seconds=1.0)
    with serve(create_app(demo, store=MemoryStore())) as base:
        client = VercelAIClient(f'{base}/api/chat')
        with pytest.raises(RemoteError, match='HTTP 404'):
            await client.resume('py-resume')  # no such chat yet
        live = client.stream([ask('slow')], chat_id='py-resume')
        first = await live.__anext__()
        assert first is not None
        resumed = await client.resume('py-resume')
        finished = await live.result()
        assert resumed is not None
        assert resumed.status == finished.status == 'finished'
        assert resumed.text == finished.text and finished.text
        assert resumed.message_id == finished.message_id
        again = await client.resume('py-resume')  # over, the chat's last stream is still replayed whole
        assert again is not None and again.text == finished.text


async def test_pydantic_ais_ag_ui_app(servers: Servers) -> None:
    client = AGUIClient(servers.pydantic.url)
    run = await client.run([ask('weather')], tools=[CLIENT_TOOL])
    assert run.text == 'Done: {"city":"Paris","forecast":"sunny","tempC":21}'
    history: list[ModelMessage] = [ask('delete')]
    run = await client.run(history, thread_id='py-pai-approve')
    [(call_id, interrupt_id)] = run.approval_ids.items()
    assert interrupt_id.endswith(call_id)  # pydantic-ai's own interrupt id
    history += run.messages
    run = await client.run(history, thread_id='py-pai-approve', approvals=[run.approval(call_id)])
    assert run.text == 'Done: deleted notes.txt'
    run = await client.run([ask('what time is it')], tools=[CLIENT_TOOL])
    [call] = run.client_calls
    history = [ask('what time is it'), *run.messages, run.tool_results({call.tool_call_id: 'noon'})]
    assert (await client.run(history, tools=[CLIENT_TOOL])).text == 'Done: noon'
    run = await client.run([ask('state')], state={'count': 4})
    assert run.state == {'count': 5}
    run = await client.run([ask('error')])
    assert (run.status, run.error) == ('failed', 'the model broke')


async def test_an_ai_sdk_route(servers: Servers) -> None:
    client = VercelAIClient(servers.route.url)
    run = await client.run([ask('weather')])
    assert run.text == 'Done: {"city":"Paris","forecast":"sunny","tempC":21}'
    assert run.message_id is None  # the route's `start` names no message
    history: list[ModelMessage] = [ask('delete')]
    run = await client.run(history)
    [(call_id, approval_id)] = run.approval_ids.items()
    history += run.messages
    run = await client.run(history, approvals=[run.approval(call_id, approved=False, reason='keep it')])
    assert run.text == 'Done: denied (keep it)'
    [denied] = [p for m in run.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert (denied.outcome, denied.content) == ('denied', 'keep it')
    assert approval_id.startswith('aitxt-')
    run = await client.run([ask('think')])
    assert [p.content for m in run.messages for p in m.parts if isinstance(p, ThinkingPart)] == ['Let me think.']
    run = await client.run([ask('state')], body={'state': {'count': 1}})
    assert run.state == {'count': 2}
    run = await client.run([ask('error')])
    assert (run.status, run.error) == ('failed', 'An error occurred.')


async def test_events_arrive_as_the_server_streams_them_and_closing_stops_the_server(servers: Servers) -> None:
    client = AGUIClient(servers.pydantic.url)
    stopped = servers.pydantic.cancellations.stopped
    live = client.stream([ask('slow')])
    seen: list[ev.AgentEvent] = []
    async for event in live:
        seen.append(event)
        if isinstance(event, ev.PartDelta):
            break
    await live.aclose()
    assert isinstance(seen[0], ev.PartStart)
    with anyio.fail_after(10):
        while servers.pydantic.cancellations.stopped == stopped:
            await anyio.sleep(0.02)


async def test_what_cannot_be_read_is_a_remote_error(servers: Servers) -> None:
    with pytest.raises(RemoteError, match='HTTP 404') as refused:
        await AGUIClient(f'{servers.uibridge}/nowhere').run([ask('hi')])
    assert refused.value.status == 404
    call = ToolCallPart(tool_name='get_weather', args={}, tool_call_id='twice')
    answer = ModelRequest(parts=[ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='twice')])
    twice = [ask('hi'), ModelResponse(parts=[call]), answer, ModelResponse(parts=[call]), answer, ask('again')]
    with pytest.raises(RemoteError, match='HTTP 422') as unprocessable:  # uibridge refuses two calls sharing an id
        await VercelAIClient(f'{servers.uibridge}/api/chat').run(twice)
    assert 'share one tool call id' in unprocessable.value.message
    with pytest.raises(RemoteError, match='could not be reached'):
        await AGUIClient(f'http://127.0.0.1:{_free_port()}/ag-ui').run([ask('hi')])
    small = StreamLimits(max_stream_bytes=200)
    with pytest.raises(RemoteError, match='passed 200 bytes'):
        await VercelAIClient(servers.route.url, limits=small).run([ask('slow')])
    with pytest.raises(RemoteError, match='more than 100 bytes'):
        await AGUIClient(servers.pydantic.url, limits=StreamLimits(max_frame_bytes=100)).run([ask('weather')])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


async def test_a_server_with_nothing_to_resume_answers_204(servers: Servers) -> None:
    assert await VercelAIClient(f'{servers.uibridge}/api/chat').resume('py-nothing') is None
