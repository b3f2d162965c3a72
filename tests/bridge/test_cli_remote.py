"""`python -m uibridge serve --remote-ag-ui URL` / `--remote-vercel URL`: the demo page and both endpoints in front
of a remote agent, each protocol's client reaching the remote through the other's."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from remote_backends import pydantic_ai_backend, vercel_sdk_backend
from uibridge import ModelRequest, UserPromptPart
from uibridge.client import AGUIClient, VercelAIClient

pytestmark = pytest.mark.anyio


@contextmanager
def served(*options: str) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, '-m', 'uibridge', 'serve', '--port', str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f'http://127.0.0.1:{port}/', timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stdout.read() if process.stdout else ''
                assert time.monotonic() < deadline, 'the demo server did not start'
                time.sleep(0.1)
        yield f'http://127.0.0.1:{port}'
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
        assert f'uibridge: {options[-1]} on http://127.0.0.1:{port}/' in output  # the remote's URL, named


async def test_the_demo_serves_a_remote_ag_ui_agent() -> None:
    with pydantic_ai_backend() as backend, served('--remote-ag-ui', backend.url) as base:
        history = [ModelRequest(parts=[UserPromptPart(content='hello')])]
        assert (await VercelAIClient(f'{base}/api/chat').run(history)).text == 'Hello from pydantic-ai.'
        run = await VercelAIClient(f'{base}/api/chat').run([ModelRequest(parts=[UserPromptPart(content='time')])])
        assert [call.tool_name for call in run.client_calls] == ['get_local_time']  # the page's tool, declared


async def test_the_demo_serves_a_remote_vercel_route() -> None:
    with vercel_sdk_backend() as backend, served('--remote-vercel', backend.url) as base:
        history = [ModelRequest(parts=[UserPromptPart(content='hello')])]
        assert (await AGUIClient(f'{base}/ag-ui').run(history)).text == 'Hello from the AI SDK.'
