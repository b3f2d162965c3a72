"""`create_app`'s `GET /healthz` (the process serves) and `GET /readyz` (the store answers), against real stores:
memory, a SQLite file, and a `redis-server` this module starts, stops and starts again."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.applications import Starlette

from uibridge.server import app as app_module
from uibridge.server import create_app
from uibridge.server.auth import RequestInfo
from uibridge.server.store import MemoryStore

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def client_of(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """A client of `app`; the store the app made from a URL is closed at the end (a client of the app does not run
    its lifespan)."""
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
            yield client
    finally:
        if app.state.store is not None:
            await app.state.store.aclose()


async def probes(app: Starlette) -> tuple[httpx.Response, httpx.Response]:
    async with client_of(app) as client:
        return await client.get('/healthz'), await client.get('/readyz')


async def test_without_a_store_the_app_is_alive_and_ready() -> None:
    health, ready = await probes(create_app())
    assert (health.status_code, health.json()) == (200, {'status': 'ok'})
    assert (ready.status_code, ready.json()) == (200, {'status': 'ready'})
    assert health.headers['cache-control'] == ready.headers['cache-control'] == 'no-store'


@pytest.mark.parametrize('kind', ['memory', 'sqlite'])
async def test_a_store_that_answers_makes_the_app_ready(kind: str, tmp_path: Path) -> None:
    store = MemoryStore() if kind == 'memory' else f'sqlite:///{tmp_path / "chats.db"}'
    health, ready = await probes(create_app(store=store))
    assert (health.status_code, ready.status_code, ready.json()) == (200, 200, {'status': 'ready'})


async def test_the_probes_ask_no_authorization() -> None:
    async def nobody(request: RequestInfo) -> str | None:
        return None  # every chat request is a 401

    async with client_of(create_app(store=MemoryStore(), authorize=nobody)) as client:
        assert ((await client.get('/healthz')).status_code, (await client.get('/readyz')).status_code) == (200, 200)
        assert (await client.get('/api/chat/some-chat')).status_code == 401


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    binary = shutil.which('redis-server')
    if binary is None:
        pytest.fail('redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run installs it)')
    server = RedisServer(binary, free_port(), tmp_path)
    try:
        yield server
    finally:
        server.stop()


class RedisServer:
    """A real `redis-server` on a loopback port, which a test can stop and start again on that port."""

    def __init__(self, binary: str, port: int, directory: Path) -> None:
        self.binary, self.port, self.directory = binary, port, directory
        self.url = f'redis://127.0.0.1:{port}/0'
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [self.binary, '--port', str(self.port), '--bind', '127.0.0.1', '--dir', str(self.directory),
                '--save', '', '--appendonly', 'no']  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


async def ready_within(client: httpx.AsyncClient, status: int, guard: float = 20.0) -> httpx.Response:
    """`GET /readyz` until it answers `status` (a server starting or stopping takes a moment); `guard` only keeps a
    broken setup from hanging the suite."""
    deadline = time.monotonic() + guard
    while True:
        response = await client.get('/readyz')
        if response.status_code == status or time.monotonic() > deadline:
            return response
        await anyio.sleep(0.05)


async def test_readiness_follows_redis_going_down_and_coming_back(redis_server: RedisServer) -> None:
    app = create_app(store=redis_server.url)
    async with client_of(app) as client:
        redis_server.start()
        ready = await ready_within(client, 200)
        assert (ready.status_code, ready.json()) == (200, {'status': 'ready'})
        redis_server.stop()
        down = await client.get('/readyz')
        assert down.status_code == 503
        assert down.json() == {'status': 'unavailable', 'reason': 'the store did not answer: ConnectionError'}
        assert (await client.get('/healthz')).status_code == 200  # alive all the same: a restart would not help
        redis_server.start()
        again = await ready_within(client, 200)
        assert (again.status_code, again.json()) == (200, {'status': 'ready'})


async def test_a_store_that_hangs_is_unavailable_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, 'READY_TIMEOUT', 0.2)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(('127.0.0.1', 0))
        silent.listen()
        app = create_app(store=f'redis://127.0.0.1:{silent.getsockname()[1]}/0')
        async with client_of(app) as client:
            response = await client.get('/readyz')
    assert response.status_code == 503
    assert response.json() == {'status': 'unavailable', 'reason': 'the store did not answer within 0.2 s'}


def test_the_readme_documents_the_probes_as_they_answer() -> None:
    readme = (Path(__file__).resolve().parents[2] / 'README.md').read_text(encoding='utf-8')
    section = readme.split('### Health and readiness')[1].split('\n## ')[0]
    for status, body in [
        (200, {'status': 'ok'}),
        (200, {'status': 'ready'}),
        (503, {'status': 'unavailable', 'reason': 'the store did not answer: ConnectionError'}),
    ]:
        assert f'`{status} {json.dumps(body)}`' in section
    assert f'within {app_module.READY_TIMEOUT:g} s' in section
