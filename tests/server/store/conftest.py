"""The store suite's backends: memory, SQLite in a temporary directory, and Redis against a real
`redis-server` started here on a free loopback port (never a mock). Without redis-server the Redis tests
fail, not skip: CI installs it (.ci/run), so a missing server is a broken setup, not an optional test."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite('store_support')

from store_support import Backend  # noqa: E402

from uibridge.server.store import MemoryState, MemoryStore, SqliteStore  # noqa: E402


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=1) as connection:
            connection.sendall(b'PING\r\n')
            return connection.recv(16).startswith(b'+PONG')
    except OSError:
        return False


def _start_redis(binary: str, directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    log = directory / 'redis.log'
    for _ in range(3):  # the free port may be taken between the probe and redis-server's bind: try another
        port = _free_port()
        process = subprocess.Popen(
            [binary, '--port', str(port), '--bind', '127.0.0.1', '--dir', str(directory), '--save', '',
             '--appendonly', 'no', '--logfile', str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20  # a hang guard for a machine under load, not a measurement
        while process.poll() is None and time.monotonic() < deadline:
            if _answers_ping(port):
                return process, port
            time.sleep(0.05)
        process.kill()
        process.wait()
    tail = log.read_text(errors='replace')[-2000:] if log.exists() else '(no log)'
    pytest.fail(f'redis-server did not start on a loopback port; its log:\n{tail}', pytrace=False)


@pytest.fixture(scope='session')
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which('redis-server')
    if binary is None:
        pytest.fail(
            'redis-server is not installed: the Redis store tests run against a real server '
            '(Debian: apt-get install -y redis-server; .ci/run installs it)',
            pytrace=False,
        )
    process, port = _start_redis(binary, tmp_path_factory.mktemp('redis'))
    try:
        yield f'redis://127.0.0.1:{port}/0'
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(params=['memory', 'sqlite', 'redis'])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    name: str = request.param
    if name == 'memory':
        state = MemoryState()

        def make(**timings: Any) -> Any:
            return MemoryStore(state=state, **timings)

    elif name == 'sqlite':
        path = tmp_path / 'chats.db'

        def make(**timings: Any) -> Any:
            return SqliteStore(path, **timings)

    else:
        from uibridge.server.store.redis import RedisStore

        url: str = request.getfixturevalue('redis_url')
        prefix = f'test-{uuid.uuid4().hex}'  # one server for the session, a key space per test

        def make(**timings: Any) -> Any:
            return RedisStore(url, prefix=prefix, **timings)

    backend = Backend(name, make)
    yield backend
    for store in backend.made:
        await store.aclose()
