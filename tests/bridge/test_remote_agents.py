"""A remote agent's failures end the frontend's stream with the protocol's error event (never a 500), its work is
bounded (a remote that streams forever or sends a huge frame), only the headers named are forwarded, and a remote
agent serves a server-managed chat as any agent does."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from remote_backends import CLIENT_TOOL, PydanticBackend, pydantic_ai_backend
from uibridge import ModelMessage, ModelRequest, UserPromptPart
from uibridge.bridge import REMOTE_METADATA_KEY, RemoteAGUIAgent, RemoteVercelAgent
from uibridge.client import AGUIClient, RemoteError, StreamLimits, VercelAIClient
from uibridge.server import AgentRun
from uibridge.server.app import create_app
from uibridge.server.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'e2e'))
from e2e_support import serve

pytestmark = pytest.mark.anyio

_OK = (
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    b'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n'
    b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}\n\n'
    b'data: {"type":"TEXT_MESSAGE_END","messageId":"m"}\n\n'
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'
)
_VERCEL_OK = (
    b'data: {"type":"start"}\n\ndata: {"type":"start-step"}\n\ndata: {"type":"text-start","id":"t"}\n\n'
    b'data: {"type":"text-delta","id":"t","delta":"hi"}\n\ndata: {"type":"text-end","id":"t"}\n\n'
    b'data: {"type":"finish-step"}\n\ndata: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n'
)


@dataclass
class Fake:
    """A hand-made AG-UI remote that misbehaves on purpose, and what it was asked."""

    url: str
    headers: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    bodies: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


@pytest.fixture(scope='module')
def fake() -> Iterator[Fake]:
    made = Fake('')

    async def ok(request: Request) -> Response:
        made.headers.append(dict(request.headers))
        return Response(_OK, media_type='text/event-stream')

    async def vercel(request: Request) -> Response:
        made.bodies.append(await request.json())
        return Response(_VERCEL_OK, media_type='text/event-stream')

    async def forever(request: Request) -> Response:
        async def ticks() -> AsyncIterator[bytes]:
            yield b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
            yield b'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n'
            while True:
                yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"tick "}\n\n'
                await anyio.sleep(0.005)

        return StreamingResponse(ticks(), media_type='text/event-stream')

    async def huge(request: Request) -> Response:
        started = _OK.split(b'\n\n')[0] + b'\n\n'
        return Response(started + b'data: {"type":"CUSTOM","name":"x","value":"' + b'x' * 5000 + b'"}\n\n')

    async def fail(request: Request) -> Response:
        return Response('the remote broke: its database password is hunter2', status_code=500)

    async def garbled(request: Request) -> Response:
        return Response(b'data: {"type":"RUN_STARTED"\n\n', media_type='text/event-stream')

    app = Starlette(
        routes=[
            Route(f'/{name}', endpoint, methods=['POST'])
            for name, endpoint in (
                ('ok', ok),
                ('vercel', vercel),
                ('forever', forever),
                ('huge', huge),
                ('fail', fail),
                ('garbled', garbled),
            )
        ]
    )
    with serve(app) as base_url:
        made.url = base_url
        yield made


async def _through(agent: RemoteAGUIAgent, **options: Any) -> tuple[Any, list[AgentRun]]:
    """One turn of a Vercel client through `create_app(agent)`: what the client read, and the runs."""
    runs: list[AgentRun] = []

    async def done(messages: list[ModelMessage], run: AgentRun) -> None:
        runs.append(run)

    with serve(create_app(agent, on_complete=done, keep_alive=None, **options)) as base:
        run = await VercelAIClient(f'{base}/api/chat').run(
            [ModelRequest(parts=[UserPromptPart(content='hi')])], headers={'authorization': 'Bearer x', 'cookie': 'c'}
        )
        with anyio.fail_after(10):
            while not runs:
                await anyio.sleep(0.01)
    return run, runs


@pytest.mark.parametrize(
    ('path', 'limits', 'detail'),
    [
        ('forever', StreamLimits(max_stream_bytes=2_000), 'passed 2000 bytes'),
        ('forever', StreamLimits(max_duration=0.3), 'went on past 0.3 seconds'),
        ('huge', StreamLimits(max_frame_bytes=1_000), 'more than 1000 bytes'),
        ('fail', None, 'HTTP 500'),
        ('garbled', None, 'not JSON'),
    ],
)
async def test_a_remote_failure_is_the_protocols_error_event(
    fake: Fake, path: str, limits: StreamLimits | None, detail: str
) -> None:
    run, [served] = await _through(RemoteAGUIAgent(f'{fake.url}/{path}', limits=limits))
    assert (run.status, run.error) == ('failed', 'An error occurred.')  # the endpoint's safe text, not the remote's
    assert served.status == 'failed'
    assert isinstance(served.error, RemoteError) and detail in served.error.message
    exposed, _ = await _through(RemoteAGUIAgent(f'{fake.url}/{path}', limits=limits), expose_errors=True)
    assert exposed.status == 'failed' and detail in str(exposed.error)


async def test_an_unreachable_remote_is_the_protocols_error_event() -> None:
    with serve(Starlette()) as gone:
        pass  # the port is free again once the server stopped
    run, [served] = await _through(RemoteAGUIAgent(f'{gone}/agent'))
    assert run.status == 'failed'
    assert isinstance(served.error, RemoteError) and 'could not be reached' in served.error.message


async def test_only_the_headers_named_are_forwarded(fake: Fake) -> None:
    fake.headers.clear()
    await _through(RemoteAGUIAgent(f'{fake.url}/ok', headers={'x-app': 'bridge'}))
    await _through(RemoteAGUIAgent(f'{fake.url}/ok', forward_headers=['Authorization']))
    plain, forwarded = fake.headers
    assert 'authorization' not in plain and 'cookie' not in plain and plain['x-app'] == 'bridge'
    assert forwarded['authorization'] == 'Bearer x' and 'cookie' not in forwarded
    with pytest.raises(TypeError, match='list of header names'):
        RemoteAGUIAgent(fake.url, forward_headers='authorization')


@pytest.fixture(scope='module')
def pydantic() -> Iterator[PydanticBackend]:
    with pydantic_ai_backend() as backend:
        yield backend


async def test_a_managed_chat_keeps_the_remotes_approval_ids(pydantic: PydanticBackend) -> None:
    # With a store, the server's own copy of the answer keeps the remote's interrupt id for the next turn.
    store = MemoryStore()
    with serve(create_app(RemoteAGUIAgent(pydantic.url, tools=[CLIENT_TOOL]), store=store)) as base:
        client = VercelAIClient(f'{base}/api/chat')
        history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='delete notes.txt')])]
        run = await client.run(history, chat_id='managed-approve')
        [(call_id, approval_id)] = run.approval_ids.items()
        kept = [m.metadata for m in run.messages if m.metadata and 'uibridge_message_metadata' in m.metadata]
        [(kept_call, interrupt_id)] = kept[-1]['uibridge_message_metadata'][REMOTE_METADATA_KEY]['approvals'].items()
        assert kept_call == call_id and interrupt_id.endswith(call_id) and interrupt_id != approval_id
        history += run.messages
        run = await client.run(history, chat_id='managed-approve', approvals=[run.approval(call_id)])
        assert run.text == 'Done: deleted notes.txt'
    [resumed] = [r for r in pydantic.requests if r['threadId'] == 'managed-approve' and r.get('resume')]
    assert resumed['resume'][0]['interruptId'] == interrupt_id


async def test_an_ag_ui_frontend_reaches_an_ag_ui_remote_with_its_own_tools_and_context(
    pydantic: PydanticBackend,
) -> None:
    with serve(create_app(RemoteAGUIAgent(pydantic.url))) as base:
        client = AGUIClient(f'{base}/ag-ui')
        history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='what time is it')])]
        run = await client.run(
            history, thread_id='agui-agui', tools=[CLIENT_TOOL], context=[{'description': 'tz', 'value': 'UTC'}]
        )
        [call] = run.client_calls
        history += [*run.messages, run.tool_results({call.tool_call_id: 'noon'})]
        run = await client.run(history, thread_id='agui-agui', tools=[CLIENT_TOOL])
        assert run.text == 'Done: noon'
    first, second = [r for r in pydantic.requests if r['threadId'] == 'agui-agui']
    assert [t['name'] for t in first['tools']] == ['get_local_time']
    assert first['context'] == [{'description': 'tz', 'value': 'UTC'}]
    assert [m['role'] for m in second['messages']] == ['user', 'assistant', 'tool']


async def test_a_remote_vercel_agent_sends_the_frontends_extra_keys_and_an_ag_ui_frontends_state(fake: Fake) -> None:
    fake.bodies.clear()
    agent = RemoteVercelAgent(f'{fake.url}/vercel', body={'app': 1})
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='hi')])]
    with serve(create_app(agent)) as base:
        by_vercel = await VercelAIClient(f'{base}/api/chat').run(history, chat_id='v', body={'mine': 2})
        by_agui = await AGUIClient(f'{base}/ag-ui').run(history, thread_id='a', state={'s': 1}, tools=[CLIENT_TOOL])
    assert by_vercel.text == by_agui.text == 'hi'
    from_vercel, from_agui = fake.bodies
    assert (from_vercel['id'], from_vercel['app'], from_vercel['mine']) == ('v', 1, 2)
    assert 'state' not in from_vercel and 'tools' not in from_vercel
    assert (from_agui['id'], from_agui['app'], from_agui['state']) == ('a', 1, {'s': 1})
    assert [tool['name'] for tool in from_agui['tools']] == ['get_local_time']
    assert from_agui['messages'][0]['parts'][0]['text'] == 'hi'
