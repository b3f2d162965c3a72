"""The real backing services the suites run against, started on free loopback ports and stopped after: a
`redis-server`, and a throwaway PostgreSQL cluster (Debian's `postgresql` binaries: `initdb` in a temporary
directory). Never a mock. tests/conftest.py makes each a session fixture (`redis_url`, `postgres_url`), so the store
suite and the end-to-end matrix share one of each per test process.

Without redis-server the Redis tests fail, not skip: CI installs it (.ci/run), so a missing server is a broken
setup, not an optional test. Without PostgreSQL's binaries the PostgreSQL tests skip, saying why, on a developer's
machine, and fail where `CI` is set."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Ask a server to stop (SIGTERM: a clean shutdown), and kill it if it has not within 20 s."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
        port = free_port()
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


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A `redis-server` keeping its files in `directory`; yields its URL (database 0)."""
    binary = shutil.which('redis-server')
    if binary is None:
        pytest.fail(
            'redis-server is not installed: the Redis store tests run against a real server '
            '(Debian: apt-get install -y redis-server; .ci/run installs it)',
            pytrace=False,
        )
    process, port = _start_redis(binary, directory)
    try:
        yield f'redis://127.0.0.1:{port}/0'
    finally:
        stop_process(process)


def _postgres_binaries() -> Path | None:
    """The folder with `initdb` and `postgres`: on PATH, else Debian's newest /usr/lib/postgresql/N/bin."""
    found = shutil.which('initdb')
    if found is not None and shutil.which('postgres') is not None:
        return Path(found).parent
    versions = sorted(Path('/usr/lib/postgresql').glob('*/bin/initdb'), key=lambda path: int(path.parts[-3]))
    return versions[-1].parent if versions else None


def _answers(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=2) as connection:
            connection.execute('SELECT 1')
        return True
    except psycopg.Error:
        return False


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster: `initdb` in a temporary directory (its unix socket there too), the server
    on a free loopback port, trust authentication, no fsync; yields its URL (user `uibridge`, database
    `postgres`). PostgreSQL refuses to run as root: as root, it runs as the `postgres` user Debian's package
    made."""
    binaries = _postgres_binaries()
    if binaries is None:
        why = (
            'PostgreSQL is not installed: the PostgreSQL store tests run against a real server '
            '(Debian: apt-get install -y postgresql; .ci/run installs it)'
        )
        if os.environ.get('CI'):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    user = 'postgres' if os.geteuid() == 0 else None
    directory = Path(tempfile.mkdtemp(prefix='uibridge-pg-'))  # short: a unix socket path is at most 107 bytes
    if user is not None:
        shutil.chown(directory, user)
    data = directory / 'data'
    initdb = [str(binaries / 'initdb'), '-D', str(data), '-U', 'uibridge', '--auth=trust', '--no-sync',
              '-E', 'UTF8', '--locale=C']  # fmt: skip
    subprocess.run(initdb, check=True, capture_output=True, user=user)
    process: subprocess.Popen[bytes] | None = None
    try:
        for _ in range(3):  # the free port may be taken between the probe and the server's bind: try another
            port = free_port()
            settings = {'listen_addresses': '127.0.0.1', 'port': str(port), 'unix_socket_directories': str(directory),
                        'fsync': 'off', 'synchronous_commit': 'off', 'full_page_writes': 'off',
                        'max_connections': '300'}  # fmt: skip
            args = [str(binaries / 'postgres'), '-D', str(data)]
            for name, value in settings.items():
                args += ['-c', f'{name}={value}']
            log = open(directory / 'postgres.log', 'ab')  # noqa: SIM115 (the server writes it until it stops)
            process = subprocess.Popen(args, stdout=log, stderr=log, user=user)
            log.close()
            url = f'postgresql://uibridge@127.0.0.1:{port}/postgres'
            deadline = time.monotonic() + 30  # a hang guard for a machine under load, not a measurement
            while process.poll() is None and time.monotonic() < deadline:
                if _answers(url):
                    yield url
                    return
                time.sleep(0.05)
            process.kill()
            process.wait()
        tail = (directory / 'postgres.log').read_text(errors='replace')[-2000:]
        pytest.fail(f'PostgreSQL did not start on a loopback port; its log:\n{tail}', pytrace=False)
    finally:
        if process is not None:
            stop_process(process)  # a "smart" shutdown: PostgreSQL waits for its clients, which are gone by now
        shutil.rmtree(directory, ignore_errors=True)


def postgres_schema(url: str) -> str:
    """A schema of its own in the session's cluster, and the URL whose connections use it (`search_path`): a
    test's tables, as another deployment's in the same database would be, meet no other test's."""
    import psycopg

    name = f'test_{uuid.uuid4().hex[:12]}'
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA {name}')
    return f'{url}?options=-csearch_path%3D{name}'
