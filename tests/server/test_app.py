"""`create_app` and `python -m uibridge serve`."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import httpx
import pytest

from uibridge.server import create_app
from uibridge.server.app import PAGE_PATH
from uibridge.server.demo import KEYWORDS


@pytest.mark.anyio
async def test_the_app_serves_the_page_and_both_endpoints() -> None:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        await check_routes(client)


async def check_routes(client: httpx.AsyncClient) -> None:
    page = await client.get('/')
    assert page.status_code == 200
    assert page.headers['content-type'].startswith('text/html')
    for keyword in KEYWORDS:
        assert f'<code>{keyword}</code>' in page.text  # the page documents every keyword
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def test_python_m_uibridge_serve_runs_the_demo() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, '-m', 'uibridge', 'serve', '--port', str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.get(f'http://127.0.0.1:{port}/', timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read() if process.stdout else ''
                assert time.monotonic() < deadline, 'the demo server did not start'
                time.sleep(0.1)
        assert response.status_code == 200
        assert 'uibridge demo' in response.text
    finally:
        process.terminate()
        process.wait(10)


def test_serve_needs_a_command() -> None:
    from uibridge.server.cli import main

    with pytest.raises(SystemExit):
        main([])


def test_the_readme_documents_every_keyword() -> None:
    readme = (PAGE_PATH.parents[4] / 'README.md').read_text()
    for keyword in KEYWORDS:
        assert f'| `{keyword}` |' in readme
