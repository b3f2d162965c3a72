"""Several workers, real processes: `uvicorn --workers 2` (uvicorn's own command line, serving `workers_app.py`),
one app per store that its workers can share (SQLite, Redis, PostgreSQL, each started by conftest.py, and
PostgreSQL with its stream logs in Redis), each mounted under `/{store}` of one server. A run
started on one worker resumes on the other through the real `ai@7` client (tests/clients/vercel_resume.mjs),
and a stop sent to the other worker ends it. And `python -m uibridge serve --workers 2`: refused with the
memory store (saying which store to use), serving with SQLite.

uvicorn's workers accept connections from one listening socket, so the kernel picks the worker of each new
connection. To choose, the tests go through a `PinnedPort`: a loopback proxy that, for each connection it is
given, opens connections to the server until one is answered by the wanted worker (`x-worker`, asked with a
`GET /{store}/healthz` on it), then joins the two. A keep-alive connection stays with the worker that accepted it.

Outcomes only, never durations: the timeouts below only keep a broken build from hanging."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx
import pytest
from resume_support import HANG_GUARD, SECRET, check_resumed, comparable, free_port, resume_spec, start_slow

from services_support import postgres_schema, stop_process

sys.path.insert(0, str(Path(__file__).parents[2] / 'e2e'))
from e2e_support import run_nodes

from uibridge.server.cli import main

HERE = Path(__file__).parent
ATTEMPTS = 200
"""Connections opened at most to find a given worker: the kernel gives each to either, so 200 in a row to the
other one does not happen with two live workers."""


async def _probe(port: int, probe: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str]:
    """A new keep-alive connection to the server, and the pid of the worker that answered `probe` on it."""
    reader, writer = await asyncio.open_connection('127.0.0.1', port)
    writer.write(probe)
    await writer.drain()
    head = (await reader.readuntil(b'\r\n\r\n')).decode('latin-1').lower().split('\r\n')
    headers = dict(line.split(': ', 1) for line in head[1:] if ': ' in line)
    await reader.readexactly(int(headers['content-length']))
    return reader, writer, headers['x-worker']


class PinnedPort:
    """A loopback port whose every connection reaches one worker (`pid`) of the server on `port` (asked with
    `probe`, a request that worker answers)."""

    def __init__(self, port: int, pid: str, probe: bytes) -> None:
        self.port, self.pid, self.probe = port, pid, probe
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._join, '127.0.0.1', 0), self.loop)
        self.server = server.result(HANG_GUARD)
        self.url = f'http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}'

    async def _join(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        for _ in range(ATTEMPTS):
            reader, writer, pid = await _probe(self.port, self.probe)
            if pid == self.pid:
                break
            writer.close()
        else:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, writer), _pipe(reader, client_writer))

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(HANG_GUARD)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(HANG_GUARD)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()  # one side gone: the other learns it, as it would without the proxy


class Workers(NamedTuple):
    first: PinnedPort
    """Every connection to `first.url` reaches one worker ..."""
    second: PinnedPort
    """... and every one to `second.url` the other; each store's app is under `/{store}` of either."""


def _worker_pids(port: int, probe: bytes) -> set[str]:
    """The pids of the server's two workers, probing until both answered (the second may still be starting)."""

    async def find() -> set[str]:
        pids: set[str] = set()
        with anyio.move_on_after(HANG_GUARD):
            while len(pids) < 2:
                _, writer, pid = await _probe(port, probe)
                writer.close()
                pids.add(pid)
                await anyio.sleep(0.01)
        return pids

    return asyncio.run(find())


@contextmanager
def uvicorn_workers(
    stores: Mapping[str, str], *, secret: str | None = SECRET, log: list[str] | None = None
) -> Iterator[Workers]:
    """`uvicorn --workers 2` serving `workers_app` with `stores` (mount name -> store URL, or `chats|stream log`),
    and a pinned port for each of its workers. `secret`: the workers' UIBRIDGE_SECRET (`None`: none, each makes a
    random key). `log`, when given, gets what the server wrote to stderr, once it stopped."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != 'UIBRIDGE_SECRET'}
    mounted: dict[str, list[str | None]] = {}
    for name, url in stores.items():
        chats, _, stream_log = url.partition('|')
        mounted[name] = [chats, stream_log or None]
    env |= {'WORKERS_STORES': json.dumps(mounted)} | ({} if secret is None else {'UIBRIDGE_SECRET': secret})
    args = [sys.executable, '-m', 'uvicorn', '--factory', 'workers_app:make_app', '--app-dir', str(HERE),
            '--workers', '2', '--host', '127.0.0.1', '--port', str(port), '--log-level', 'warning']  # fmt: skip
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pins: list[PinnedPort] = []
    try:
        for name in stores:
            _wait_until_serving(f'http://127.0.0.1:{port}/{name}', process)
        probe = f'GET /{next(iter(stores))}/healthz HTTP/1.1\r\nhost: workers\r\n\r\n'.encode()
        pids = _worker_pids(port, probe)
        assert len(pids) == 2, f'only worker {pids} answered for {HANG_GUARD:g} s'
        pins = [PinnedPort(port, pid, probe) for pid in sorted(pids)]
        yield Workers(*pins)
    finally:
        for pin in pins:
            pin.close()
        stop_process(process)
        if log is not None and process.stderr is not None:
            log.append(process.stderr.read().decode(errors='replace'))


def _wait_until_serving(base: str, process: subprocess.Popen[bytes]) -> None:
    import time

    deadline = time.monotonic() + HANG_GUARD
    while True:
        try:
            if httpx.get(base + '/readyz', timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            error = process.stderr.read().decode(errors='replace')[-3000:] if process.stderr else ''
            raise AssertionError(f'the server exited ({process.returncode}):\n{error}')
        assert time.monotonic() < deadline, 'the server did not start'
        time.sleep(0.05)


STORES = ('sqlite', 'redis', 'postgresql', 'postgresql+redis')


@pytest.fixture(scope='module')
def servers(redis_url: str, postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    """One two-worker server, an app per store under `/{store}` (each test uses chats of its own)."""
    urls = {
        'sqlite': f'sqlite:///{tmp_path_factory.mktemp("workers")}/chats.db',
        'redis': redis_url.rsplit('/', 1)[0] + '/4',  # a database of its own
        'postgresql': postgres_schema(postgres_url),
        # The chats in PostgreSQL, the live stream logs in Redis (a database of its own).
        'postgresql+redis': postgres_schema(postgres_url) + '|' + redis_url.rsplit('/', 1)[0] + '/5',
    }
    with uvicorn_workers(urls) as workers:
        yield workers


@pytest.fixture(scope='module')
def resumed(servers: Workers) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Per store, the real `ai@7` client sending to one worker and resuming from the other, all at once: its spec
    and what it ended with."""
    first, second = servers
    specs = {name: {**resume_spec(f'{first.url}/{name}', f'{second.url}/{name}'), 'lastOnly': True} for name in STORES}
    results = run_nodes({name: ('vercel_resume.mjs', spec) for name, spec in specs.items()})
    return {name: (specs[name], results[name]) for name in specs}


@pytest.mark.parametrize('store', STORES)
def test_the_real_client_resumes_a_stream_on_the_other_worker(
    store: str, servers: Workers, resumed: dict[str, tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    spec, result = resumed[store]
    check_resumed(result)
    # The stored chat, read from either worker, is what the client holds.
    chat = spec['runs'][1]['chatId']
    for worker in servers:
        url = f'{worker.url}/{store}/api/chat/{chat}'
        response = httpx.get(url, headers={'x-demo-user': 'alice'}, timeout=HANG_GUARD)
        assert response.headers['x-worker'] == worker.pid
        assert [comparable(m) for m in response.json()] == [comparable(m) for m in result['dropped']['messages']]


@pytest.mark.parametrize('store', STORES)
def test_a_stop_sent_to_the_other_worker_ends_the_run(store: str, servers: Workers) -> None:
    first, second = (f'{worker.url}/{store}' for worker in servers)
    chat = f'stop-{uuid.uuid4().hex[:8]}'
    with httpx.Client(timeout=HANG_GUARD) as client:
        chunks = start_slow(client, first, chat)
        received = b''.join(next(chunks) for _ in range(4))
        stop = client.delete(f'{second}/api/chat/{chat}/stream')
        assert stop.status_code == 204 and stop.headers['x-worker'] == servers.second.pid
        received += b''.join(chunks)  # the producer ends its stream once the stop reaches it
    assert received.endswith(b'data: {"type":"abort","reason":"stopped"}\n\ndata: [DONE]\n\n')
    stored = httpx.get(f'{second}/api/chat/{chat}', timeout=HANG_GUARD).json()
    assert [m['role'] for m in stored] == ['user', 'assistant']
    text = ''.join(p.get('text', '') for p in stored[1]['parts'])
    assert text and len(text.split(',')) < 50  # the partial answer, committed as cancelled


def test_serve_refuses_several_workers_on_a_memory_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['serve', '--workers', '2', '--store', 'memory:']) == 2
    error = capsys.readouterr().err
    assert '--workers 2 cannot share a memory: store' in error
    assert 'use --store sqlite:///path.db on one host, or redis://… or postgresql://… across hosts' in error


def test_serve_with_several_workers_shares_one_sqlite_file(tmp_path: Path) -> None:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != 'UIBRIDGE_SECRET'}  # the workers share one made
    args = [sys.executable, '-m', 'uibridge', 'serve', '--workers', '2', '--port', str(port), '--delay', '0',
            '--store', f'sqlite:///{tmp_path}/chats.db']  # fmt: skip
    process = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f'http://127.0.0.1:{port}'
    try:
        _wait_until_serving(base, process)
        # Each request on a connection of its own, so either worker may take it: whichever stored a chat, the
        # other reads it, and a signed history one worker wrote verifies on the other.
        for index in range(4):
            chat = f'chat-{index}'
            message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': f'hello {index}'}]}
            with httpx.Client(timeout=HANG_GUARD) as client:
                answer = client.post(f'{base}/api/chat', json={'id': chat, 'messages': [message]})
            assert answer.status_code == 200 and '"type":"finish"' in answer.text
            with httpx.Client(timeout=HANG_GUARD) as client:
                stored = client.get(f'{base}/api/chat/{chat}').json()
            assert [m['role'] for m in stored] == ['user', 'assistant']
    finally:
        stop_process(process)
    out = process.stdout.read().decode() if process.stdout else ''
    assert 'UIBRIDGE_SECRET is not set: the workers share a key made for this run' in out
    assert '2 worker processes' in out


def _approval_asked(client: httpx.Client, base: str, chat: str) -> dict[str, Any]:
    """Ask the demo agent for a call that needs approval; the `tool-approval-request` chunk it streamed."""
    message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'delete'}]}
    answer = client.post(f'{base}/api/chat', json={'id': chat, 'messages': [message]}, headers={'x-demo-user': 'al'})
    assert answer.status_code == 200
    chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith('data: {')]
    return next(chunk for chunk in chunks if chunk['type'] == 'tool-approval-request')


def test_workers_without_a_shared_key_say_so_once(tmp_path: Path) -> None:
    """`uvicorn --workers 2` without UIBRIDGE_SECRET (nothing tells the app it has a sibling): an approval one worker
    asked for, answered on the other, does not verify there, and that worker logs once what to set."""
    log: list[str] = []
    workers = uvicorn_workers({'sqlite': f'sqlite:///{tmp_path}/chats.db'}, secret=None, log=log)
    with workers as (first, second), httpx.Client(timeout=HANG_GUARD) as client:
        for attempt in range(2):
            chat = f'approve-{attempt}'
            asked = _approval_asked(client, f'{first.url}/sqlite', chat)
            approval = {'id': asked['approvalId'], 'approved': True}
            part = {'type': 'tool-delete_file', 'toolCallId': asked['toolCallId'], 'state': 'approval-responded',
                    'input': {'path': 'notes.txt'}, 'approval': approval}  # fmt: skip
            body = {'id': chat, 'messages': [{'id': 'a1', 'role': 'assistant', 'parts': [part]}]}
            again = client.post(f'{second.url}/sqlite/api/chat', json=body, headers={'x-demo-user': 'al'})
            assert again.headers['x-worker'] == second.pid
            # Unverified there, the approval never reached the agent: it asks for the same call again.
            assert '"type":"tool-approval-request"' in again.text and 'I deleted' not in again.text
    [written] = log
    said = [line for line in written.splitlines() if 'Signatures made with another key were seen' in line]
    assert len(said) == 1, written[-3000:]
    assert said[0].endswith('Set the same UIBRIDGE_SECRET on every worker.')
    assert '0 history item(s), 1 approval(s) did not verify' in said[0]
