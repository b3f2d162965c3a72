"""`create_app` and `python -m uibridge serve`."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from uibridge import ModelResponse, TextPart
from uibridge.server import AgentRun, create_app
from uibridge.server.app import PAGE_PATH, YOUR_AGENT
from uibridge.server.demo import KEYWORDS


@pytest.mark.anyio
async def test_the_app_serves_the_page_when_asked_and_both_endpoints() -> None:
    transport = httpx.ASGITransport(app=create_app(page=True))
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        page = await client.get('/')
        assert page.status_code == 200
        assert page.headers['content-type'].startswith('text/html')
        assert '<body>' in page.text  # the demo agent's page: its keywords shown
        for keyword in KEYWORDS:
            assert f'<code>{keyword}</code>' in page.text  # the page documents every keyword
        assert (await client.get('/favicon.svg')).headers['content-type'] == 'image/svg+xml'
        await check_routes(client)


@pytest.mark.anyio
async def test_without_page_the_app_serves_only_the_protocols() -> None:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        assert (await client.get('/')).status_code == 404
        assert (await client.get('/favicon.svg')).status_code == 404
        await check_routes(client)


@pytest.mark.anyio
async def test_the_page_leaves_out_the_demo_agents_keywords_for_another_agent() -> None:
    async def mine(run: AgentRun) -> AsyncIterator[ModelResponse]:
        yield ModelResponse(parts=[TextPart(content='mine')])

    transport = httpx.ASGITransport(app=create_app(mine, page=True))
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        page = (await client.get('/')).text
    assert YOUR_AGENT in page and '<body>' not in page
    assert 'body[data-agent="yours"] .demo-only { display: none; }' in page
    assert '<details id="keywords" class="demo-only">' in page


def test_page_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match='page must be True or False'):
        create_app(page='yes')  # type: ignore[arg-type]


async def check_routes(client: httpx.AsyncClient) -> None:
    assert (await client.get('/api/chat/some-chat/stream')).status_code == 204  # useChat's resume: nothing to resume
    assert (await client.get('/api/chat')).status_code == 405
    assert (await client.post('/ag-ui', content=b'{}', headers={'content-type': 'text/plain'})).status_code == 415
    message = {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}
    response = await client.post('/api/chat', json={'id': 'c', 'messages': [message]})
    assert response.status_code == 200
    assert 'You said: hi' in ''.join(re.findall(r'"delta":"([^"]*)"', response.text))


def test_the_page_loads_nothing_from_outside() -> None:
    page = PAGE_PATH.read_text()
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', page)
    assert not re.search(r'@import|url\(', page)
    assert 'http://' not in page and 'https://' not in page


def test_serve_needs_a_command() -> None:
    from uibridge.server.cli import main

    with pytest.raises(SystemExit):
        main([])


def test_the_readme_documents_every_keyword() -> None:
    readme = (PAGE_PATH.parents[4] / 'README.md').read_text()
    for keyword in KEYWORDS:
        assert f'| `{keyword}` |' in readme
