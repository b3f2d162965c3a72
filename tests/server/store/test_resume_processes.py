"""Resumable streams between real processes: `python -m uibridge serve` producers and resumers sharing one
Redis (started by conftest.py, never a mock), one PostgreSQL for the chats with that Redis for the stream logs
(`--stream-log`), or one SQLite file, driven by the real `ai@7` client
(tests/clients/vercel_resume.mjs) and by plain HTTP.

Each test asserts outcomes (what the client holds, what was stored, how a stream ended), never durations:
the timeouts below only keep a broken build from hanging."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from services_support import postgres_schema

sys.path.insert(0, str(Path(__file__).parents[2] / 'e2e'))
from e2e_support import run_nodes
from resume_support import (
    HANG_GUARD,
    SECRET,
    SLOW_ANSWER,
    check_resumed,
    comparable,
    free_port,
    resume_spec,
    start_slow,
)

SLOW_SECONDS = 2.0
"""How long the demo agent's `slow` answer takes here: long enough to drop and resume in the middle."""
LEASE = 1.0


@contextmanager
def demo_servers(*stores: str) -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    """`python -m uibridge serve --store <store>` for each store (`--store <chats> --stream-log <log>` for one
    given as `chats|log`), on free loopback ports, started side by side; yields each one's base URL and process."""
    env = {**os.environ, 'UIBRIDGE_SECRET': SECRET}
    servers: list[tuple[str, subprocess.Popen[bytes]]] = []
    logs = Path(tempfile.mkdtemp(prefix='uibridge-servers-'))
    try:
        for store in stores:
            port = free_port()
            chats, _, stream_log = store.partition('|')
            args = [sys.executable, '-m', 'uibridge', 'serve', '--port', str(port), '--store', chats, '--delay', '0',
                    '--lease', str(LEASE), '--slow-seconds', str(SLOW_SECONDS)]  # fmt: skip
            if stream_log:
                args += ['--stream-log', stream_log]
            with (logs / f'{port}.log').open('wb') as log:  # read when a server exits on its own (below)
                process = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
            servers.append((f'http://127.0.0.1:{port}', process))
        deadline = time.monotonic() + HANG_GUARD
        for base, process in servers:
            while True:
                try:
                    if httpx.get(base + '/favicon.svg', timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert process.poll() is None, 'the demo server exited'
                assert time.monotonic() < deadline, 'the demo server did not start'
                time.sleep(0.05)
        yield servers
    finally:
        # A server that exited on its own (a test kills one with SIGKILL: that one is meant) fails the module with
        # its log, so what made it exit is read where the tests that then met a refused connection failed.
        exited = [
            f'{base} exited with {process.returncode}:\n' + (logs / f'{base.rsplit(":", 1)[1]}.log').read_text()[-3000:]
            for base, process in servers
            if process.poll() is not None and process.returncode != -signal.SIGKILL
        ]
        for _, process in servers:
            if process.poll() is None:
                process.terminate()
        for _, process in servers:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(logs, ignore_errors=True)
    assert not exited, '\n\n'.join(exited)


class Shared(NamedTuple):
    """Three processes sharing one store."""

    first: str
    """A producer."""
    second: str
    """Another process, where streams are resumed."""
    to_kill: tuple[str, subprocess.Popen[bytes]]
    """A producer, for the one test that kills it."""


class Servers(NamedTuple):
    redis: Shared
    """Sharing one Redis."""
    split: Shared
    """Sharing one PostgreSQL for the chats and one Redis for the stream logs (`--stream-log`)."""
    on_sqlite: str
    """A process with a SQLite store of its own."""


SHARED = ('redis', 'split')


@pytest.fixture(scope='module')
def servers(redis_url: str, postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """Every process this module drives, started at once (each test uses chats of its own)."""
    database = redis_url.rsplit('/', 1)[0] + '/3'  # a database of its own: the store suite's never meets these
    split = postgres_schema(postgres_url) + '|' + redis_url.rsplit('/', 1)[0] + '/6'
    sqlite = f'sqlite:///{tmp_path_factory.mktemp("resume")}/chats.db'
    with demo_servers(*[database] * 3, *[split] * 3, sqlite) as started:
        on_redis, on_split = started[:3], started[3:6]
        yield Servers(
            Shared(on_redis[0][0], on_redis[1][0], on_redis[2]),
            Shared(on_split[0][0], on_split[1][0], on_split[2]),
            started[6][0],
        )


@pytest.fixture(scope='module')
def resumed(servers: Servers) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The real `ai@7` client's resumed runs, all played at once (each waits on the slow answer): per store shared
    by processes, sending to one and resuming from another; and on SQLite, resuming from the producing process.
    Each one's spec and what the client ended with."""
    specs = {shared: {**resume_spec(*getattr(servers, shared)[:2]), 'lastOnly': True} for shared in SHARED}
    specs['sqlite'] = resume_spec(servers.on_sqlite, servers.on_sqlite)
    results = run_nodes({name: ('vercel_resume.mjs', spec) for name, spec in specs.items()})
    return {name: (specs[name], results[name]) for name in specs}


@pytest.mark.parametrize('shared', SHARED)
def test_the_real_client_resumes_on_another_process_sharing_the_store(
    servers: Servers, resumed: dict[str, tuple[dict[str, Any], dict[str, Any]]], shared: str
) -> None:
    _, second, _ = getattr(servers, shared)
    spec, result = resumed[shared]
    check_resumed(result)
    # The stored chat, read on the other process, is what the client holds.
    chat = spec['runs'][1]['chatId']
    stored = httpx.get(f'{second}/api/chat/{chat}', headers={'x-demo-user': 'alice'}, timeout=HANG_GUARD).json()
    assert [comparable(m) for m in stored] == [comparable(m) for m in result['dropped']['messages']]
    assert httpx.get(f'{second}/api/chat/{chat}', headers={'x-demo-user': 'bob'}).status_code == 404


def test_the_real_client_resumes_on_the_producing_process_with_sqlite(
    resumed: dict[str, tuple[dict[str, Any], dict[str, Any]]],
) -> None:
    _, result = resumed['sqlite']
    check_resumed(result)


@pytest.mark.parametrize('shared', SHARED)
def test_a_killed_producer_leaves_a_stream_that_resumes_to_an_error(servers: Servers, shared: str) -> None:
    _, second, (first, producer) = getattr(servers, shared)
    chat = f'kill-{uuid.uuid4().hex[:8]}'
    with httpx.Client(timeout=HANG_GUARD) as client:
        chunks = start_slow(client, first, chat)
        for _ in range(4):
            next(chunks)
        # Another process sees the run: a second send is refused, not interleaved.
        busy = client.post(f'{second}/api/chat', json={'id': chat, 'messages': [
            {'id': 'u2', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]})  # fmt: skip
        assert busy.status_code == 409
        producer.send_signal(signal.SIGKILL)
        producer.wait(timeout=HANG_GUARD)
        resumed = client.get(f'{second}/api/chat/{chat}/stream')
    assert resumed.status_code == 200
    assert resumed.text.startswith('data: {"type":"start"')
    assert resumed.text.endswith('data: {"type":"error","errorText":"The answer was interrupted."}\n\n')
    assert '"type":"finish"' not in resumed.text
    # Nothing of the dead run was committed, and the chat is free again (its lease lapsed).
    assert httpx.get(f'{second}/api/chat/{chat}', timeout=HANG_GUARD).json() == []
    again = httpx.post(f'{second}/api/chat', timeout=HANG_GUARD, json={'id': chat, 'messages': [
        {'id': 'u3', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hello'}]}]})  # fmt: skip
    assert again.status_code == 200 and '"type":"finish"' in again.text


@pytest.mark.parametrize('shared', SHARED)
def test_a_stop_from_another_process_ends_the_run_and_keeps_its_partial_answer(servers: Servers, shared: str) -> None:
    first, second, _ = getattr(servers, shared)
    chat = f'stop-{uuid.uuid4().hex[:8]}'
    with httpx.Client(timeout=HANG_GUARD) as client:
        chunks = start_slow(client, first, chat)
        received = b''.join(next(chunks) for _ in range(4))
        assert client.delete(f'{second}/api/chat/{chat}/stream').status_code == 204
        received += b''.join(chunks)  # the producer ends its stream once the stop reaches it
    assert received.endswith(b'data: {"type":"abort","reason":"stopped"}\n\ndata: [DONE]\n\n')
    stored = httpx.get(f'{second}/api/chat/{chat}', timeout=HANG_GUARD).json()
    assert [m['role'] for m in stored] == ['user', 'assistant']
    text = ''.join(p.get('text', '') for p in stored[1]['parts'])
    assert text and text.strip() != SLOW_ANSWER.strip()  # the partial answer, committed as cancelled
