"""The server-managed routes as the README writes them by hand: Starlette routes with `{chat_id}` on one
endpoint, `add_route` (what FastAPI's is), CORS from Starlette's middleware, and why not a mount (307)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount, Route

from uibridge import ModelResponse, TextPart
from uibridge.server import VercelAIEndpoint
from uibridge.server.auth import RequestInfo
from uibridge.server.run import AgentRun
from uibridge.server.store import MemoryStore

pytestmark = pytest.mark.anyio

BODY = {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}


async def agent(run: AgentRun) -> AsyncIterator[ModelResponse]:
    yield ModelResponse(parts=[TextPart(content=f'hello {run.principal}')])


async def authorize(request: RequestInfo) -> str | None:
    return request.headers.get('authorization', '').removeprefix('Bearer ') or None


async def check(app: Starlette) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        alice = {'authorization': 'Bearer alice'}
        assert (await client.post('/api/chat', json=BODY)).status_code == 401
        posted = await client.post('/api/chat', json=BODY, headers=alice)
        assert posted.status_code == 200 and 'hello alice' in posted.text
        stored = await client.get('/api/chat/c', headers=alice)
        assert [m['role'] for m in stored.json()] == ['user', 'assistant']
        assert (await client.get('/api/chat/c/stream', headers=alice)).text == posted.text
        assert (await client.delete('/api/chat/c/stream', headers=alice)).status_code == 204
        assert (await client.get('/api/chat/c', headers={'authorization': 'Bearer bob'})).status_code == 404


async def test_the_routes_the_readme_writes() -> None:
    chat = VercelAIEndpoint(agent, store=MemoryStore(), authorize=authorize)
    await check(
        Starlette(
            routes=[
                Route('/api/chat', chat, methods=['POST']),
                Route('/api/chat/{chat_id}', chat, methods=['GET']),
                Route('/api/chat/{chat_id}/stream', chat, methods=['GET', 'DELETE']),
            ]
        )
    )


async def test_add_route_and_cors() -> None:
    chat = VercelAIEndpoint(agent, store=MemoryStore(), authorize=authorize)
    app = Starlette()
    app.add_route('/api/chat', chat, methods=['POST'])
    app.add_route('/api/chat/{chat_id}', chat, methods=['GET'])
    app.add_route('/api/chat/{chat_id}/stream', chat, methods=['GET', 'DELETE'])
    app.add_middleware(
        CORSMiddleware,
        allow_origins=['https://app.example.com'],
        allow_methods=['GET', 'POST', 'DELETE'],
        allow_headers=['content-type', 'authorization'],
    )
    await check(app)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        preflight = await client.options('/api/chat/c/stream', headers={
            'origin': 'https://app.example.com', 'access-control-request-method': 'DELETE',
            'access-control-request-headers': 'authorization',
        })  # fmt: skip
        assert preflight.status_code == 200
        assert preflight.headers['access-control-allow-origin'] == 'https://app.example.com'
        posted = await client.post(
            '/api/chat', json=BODY, headers={'origin': 'https://app.example.com', 'authorization': 'Bearer carol'}
        )
        assert posted.headers['access-control-allow-origin'] == 'https://app.example.com'


async def test_a_mount_redirects_the_post() -> None:
    app = Starlette(routes=[Mount('/api/chat', VercelAIEndpoint(agent))])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        response = await client.post('/api/chat', json=BODY)
    assert response.status_code == 307
    assert response.headers['location'].endswith('/api/chat/')
