"""The endpoints work the ways the README mounts them: a Starlette `Route`, a `Mount`, the app itself."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route

import background
from uibridge import ModelResponse, TextPart
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, AGUIEndpoint, VercelAIEndpoint

pytestmark = pytest.mark.anyio

VERCEL_BODY = {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}
AGUI_BODY = {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'hi'}]}


async def agent(run: AgentRun) -> AsyncIterator[ModelMessage]:
    yield ModelResponse(parts=[TextPart(content=f'{len(run.messages)} messages so far.')])


async def post(app: Any, path: str, body: dict[str, Any]) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url='http://test', follow_redirects=True) as client:
        return await client.post(path, json=body)


@pytest.mark.parametrize(
    'app',
    [
        Starlette(routes=[Route('/api/chat', VercelAIEndpoint(agent)), Route('/ag-ui', AGUIEndpoint(agent))]),
        Starlette(routes=[Mount('/api/chat', VercelAIEndpoint(agent)), Mount('/ag-ui', AGUIEndpoint(agent))]),
    ],
    ids=['route', 'mount'],
)
async def test_routed_and_mounted(app: Any) -> None:
    vercel = await post(app, '/api/chat', VERCEL_BODY)
    assert vercel.status_code == 200
    assert '1 messages so far.' in vercel.text
    assert vercel.headers['x-vercel-ai-ui-message-stream'] == 'v1'
    ag_ui = await post(app, '/ag-ui', AGUI_BODY)
    assert ag_ui.status_code == 200
    assert '"RUN_FINISHED"' in ag_ui.text


async def test_an_endpoint_is_an_app_by_itself() -> None:
    response = await post(AGUIEndpoint(agent), '/', AGUI_BODY)
    assert response.status_code == 200
    assert '1 messages so far.' in response.text


@pytest.mark.parametrize(
    ('path', 'body', 'error', 'where'),
    [
        (
            '/api/chat',
            {
                'id': 'c',
                'messages': [
                    {
                        'id': 's',
                        'role': 'system',
                        'parts': [{'type': 'file', 'mediaType': 'image/png', 'url': 'https://x/y.png'}],
                    }
                ],
            },
            "a 'file' part cannot be in a system message",
            'messages.0.parts.0',
        ),
        (
            '/ag-ui',
            {
                'threadId': 't',
                'runId': 'r',
                'messages': [
                    {'id': 'u', 'role': 'user', 'content': 'x'},
                    {'id': 't1', 'role': 'tool', 'toolCallId': 'nope', 'content': 'x'},
                ],
            },
            'a tool message answers a tool call that no earlier assistant message made',
            'messages.1.toolCallId',
        ),
    ],
)
async def test_unloadable_content_is_a_422_naming_the_message_and_part(
    path: str, body: dict[str, Any], error: str, where: str
) -> None:
    app = Starlette(routes=[Route('/api/chat', VercelAIEndpoint(agent)), Route('/ag-ui', AGUIEndpoint(agent))])
    response = await post(app, path, body)
    assert response.status_code == 422
    assert response.json() == {'error': error, 'path': where}


# A fresh interpreter, a job of tests/background.py: started beside the tests before this one.
STARLETTE_IMPORTED = background.run(
    [sys.executable, '-c', 'import sys, uibridge.server; print(any(m.startswith("starlette") for m in sys.modules))'],
    check=True,
    timeout=60,
)


def test_mounting_an_endpoint_imports_no_starlette() -> None:
    # The endpoints are plain ASGI apps: another framework mounts them without Starlette being imported.
    out = STARLETTE_IMPORTED.result()
    assert out.stdout.strip() == 'False'
