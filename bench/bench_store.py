"""What server-managed history and resumable streams cost (issue 15). No peer: pydantic-ai keeps no stream log.

1. Per-token overhead of the stream log and of persistence, in process (the endpoint called as an ASGI app, no
   sockets): one answer of 1,000 text deltas, the agent handing the loop back after each, so every delta is a
   batch of its own (the worst case for the log: a model's tokens arrive spaced out, one batch each). Against
   the same run with no store: memory, SQLite (a file in a temporary directory; its log written behind the
   producer), Redis (a real `redis-server` started here on a loopback port) and PostgreSQL (a throwaway cluster
   started here: Debian's binaries, `initdb` in a temporary directory, fsync off). Bar for Redis and
   PostgreSQL: under 150 µs a token (a loopback round trip and a write per batch; the bar is 2-3 round trips).
2. Resume time-to-first-byte: a `slow` answer produced by one `python -m uibridge serve` process, resumed by a
   GET on a second process sharing the store (SQLite file, Redis, PostgreSQL); the median of 20. Bar: under
   50 ms.
3. 200 concurrent streams across two processes sharing Redis (and PostgreSQL): 200 chats, half sent to each
   process, each resumed at once on the other process; every POST and every resume must end with the stream's
   `finish`. Bar: 0 errors.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from _harness import Row, fmt_time, print_table

from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart
from uibridge.core.messages import ModelMessage, TextPart
from uibridge.server import VercelAIEndpoint
from uibridge.server.run import AgentRun
from uibridge.server.store import ChatStore, store_from_url

TOKENS = 1_000
RUNS = 7
RESUMES = 20
CONCURRENT = 200
SECRET = 'bench-store-secret'
GUARD = 120.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str]:
    """A throwaway `redis-server` on a free loopback port (no persistence); its URL."""
    binary = shutil.which('redis-server')
    if binary is None:
        raise SystemExit('redis-server is not installed (apt-get install redis-server)')
    directory = tempfile.mkdtemp(prefix='bench-redis-')
    port = _free_port()
    args = [binary, '--port', str(port), '--bind', '127.0.0.1', '--dir', directory, '--save', '', '--appendonly', 'no']
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(('127.0.0.1', port), timeout=1) as connection:
                    connection.sendall(b'PING\r\n')
                    if connection.recv(16).startswith(b'+PONG'):
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f'redis://127.0.0.1:{port}/0'
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


def _postgres_binaries() -> str | None:
    versions = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'), key=lambda path: int(path.split('/')[-3]))
    found = shutil.which('initdb') or (versions[-1] if versions else None)
    return os.path.dirname(found) if found else None


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port (trust authentication, fsync off); its URL. As root it
    runs as the `postgres` user (PostgreSQL refuses root)."""
    import psycopg

    binaries = _postgres_binaries()
    if binaries is None:
        raise SystemExit('PostgreSQL is not installed (apt-get install postgresql)')
    user = 'postgres' if os.geteuid() == 0 else None
    directory = tempfile.mkdtemp(prefix='bench-pg-')
    if user:
        shutil.chown(directory, user)
    data = os.path.join(directory, 'data')
    initdb = [f'{binaries}/initdb', '-D', data, '-U', 'bench', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']
    subprocess.run(initdb, check=True, capture_output=True, user=user)
    port = _free_port()
    settings = ['listen_addresses=127.0.0.1', f'port={port}', f'unix_socket_directories={directory}', 'fsync=off',
                'synchronous_commit=off', 'full_page_writes=off', 'max_connections=300']  # fmt: skip
    args = [f'{binaries}/postgres', '-D', data, *[arg for setting in settings for arg in ('-c', setting)]]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, user=user)
    url = f'postgresql://bench@127.0.0.1:{port}/postgres'
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(url, connect_timeout=1).close()
                break
            except psycopg.Error:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


def _fresh_schema(url: str) -> str:
    """A schema of its own in the cluster (each measurement starts from empty tables); the URL that uses it."""
    import psycopg

    name = f'bench_{uuid.uuid4().hex[:12]}'
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA {name}')
    return f'{url}?options=-csearch_path%3D{name}'


# ------------------------------------------------------------------------------------ 1. per token


async def _tokens(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
    yield ResponseStart(model_name='bench')
    yield PartStart(0, TextPart(content=''))
    for _ in range(TOKENS):
        await asyncio.sleep(0)  # the writer sends (and logs) this delta before the next: a batch each
        yield PartDelta(0, ' tok')
    yield PartEnd(0)


async def _one_run(endpoint: VercelAIEndpoint) -> int:
    """One POST through the endpoint as an ASGI app; the bytes sent."""
    chat = uuid.uuid4().hex
    body = (
        b'{"id":"' + chat.encode() + b'","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}'
    )
    sent = 0
    delivered = False
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {'type': 'http.request', 'body': body, 'more_body': False}
        await done.wait()
        return {'type': 'http.disconnect'}

    async def send(message: dict[str, Any]) -> None:
        nonlocal sent
        sent += len(message.get('body', b''))

    scope = {'type': 'http', 'method': 'POST', 'path': '/api/chat', 'headers': [(b'content-type', b'application/json')]}
    await endpoint(scope, receive, send)
    done.set()
    return sent


async def _per_run(store: ChatStore | None) -> float:
    endpoint = VercelAIEndpoint(_tokens, store=store, secret=SECRET, keep_alive=None)
    await _one_run(endpoint)  # warm-up
    times: list[float] = []
    for _ in range(RUNS):
        start = time.perf_counter()
        await _one_run(endpoint)
        times.append(time.perf_counter() - start)
    if store is not None:
        await store.aclose()
    return statistics.median(times)


def per_token_rows(redis_url: str, postgres_url: str) -> list[Row]:
    with tempfile.TemporaryDirectory() as directory:
        stores: dict[str, Callable[[], ChatStore | None]] = {
            'no store (client-held history)': lambda: None,
            'memory store': lambda: store_from_url('memory:'),
            'SQLite store (persistence + log in the file, written behind)': lambda: store_from_url(
                f'sqlite:///{directory}/bench.db'
            ),
            'Redis store (persistence + Redis Streams log)': lambda: store_from_url(redis_url),
            'PostgreSQL store (persistence + log in a table)': lambda: store_from_url(_fresh_schema(postgres_url)),
        }
        measured = {name: asyncio.run(_per_run(make())) for name, make in stores.items()}
    base = measured['no store (client-held history)']
    rows: list[Row] = []
    for name, seconds in measured.items():
        per_token = (seconds - base) / TOKENS
        is_redis = name.startswith(('Redis', 'PostgreSQL'))
        rows.append(
            Row(
                work=f'{name}: {TOKENS:,} deltas, a batch each; overhead per token',
                ours=f'{fmt_time(seconds)} a run' + ('' if seconds is base else f'; +{fmt_time(per_token)} a token'),
                peer='—',
                ratio=f'{seconds / base:.2f}x',
                bar='< 150 µs a token' if is_redis else '—',
                passed=per_token < 150e-6 if is_redis else None,
            )
        )
    return rows


# ----------------------------------------------------------------------------- 2 and 3: processes


@contextmanager
def serve(store: str) -> Iterator[str]:
    port = _free_port()
    args = [sys.executable, '-m', 'uibridge', 'serve', '--port', str(port), '--store', store, '--slow-seconds', '2']
    env = {**os.environ, 'UIBRIDGE_SECRET': SECRET}
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f'http://127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + '/favicon.svg', timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def _body(chat: str, text: str) -> dict[str, Any]:
    return {'id': chat, 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}]}


async def _resume_ttfb(producer: str, resumer: str) -> list[float]:
    times: list[float] = []
    async with httpx.AsyncClient(timeout=GUARD) as client:
        for _ in range(RESUMES):
            chat = uuid.uuid4().hex
            async with client.stream('POST', f'{producer}/api/chat', json=_body(chat, 'slow')) as posted:
                chunks = posted.aiter_raw()
                await anext(chunks)
                start = time.perf_counter()
                async with client.stream('GET', f'{resumer}/api/chat/{chat}/stream') as resumed:
                    await anext(resumed.aiter_raw())
                    times.append(time.perf_counter() - start)
                async for _ in chunks:
                    pass
    return times


async def _concurrent(first: str, second: str) -> tuple[int, float, list[float]]:
    """200 sends split over both processes, each resumed at once on the other; (errors, seconds, TTFBs)."""
    errors = 0
    ttfbs: list[float] = []
    limits = httpx.Limits(max_connections=4 * CONCURRENT, max_keepalive_connections=4 * CONCURRENT)
    async with httpx.AsyncClient(timeout=GUARD, limits=limits) as client:

        async def one(index: int) -> None:
            nonlocal errors
            producer, resumer = (first, second) if index % 2 else (second, first)
            chat = uuid.uuid4().hex
            try:
                start = time.perf_counter()
                async with client.stream('POST', f'{producer}/api/chat', json=_body(chat, f'hello {index}')) as posted:
                    received = b''
                    async for chunk in posted.aiter_raw():
                        if not received:
                            ttfbs.append(time.perf_counter() - start)
                            resumed = await client.get(f'{resumer}/api/chat/{chat}/stream')
                            if resumed.status_code != 200 or '"type":"finish"' not in resumed.text:
                                errors += 1
                        received += chunk
                if posted.status_code != 200 or b'"type":"finish"' not in received:
                    errors += 1
            except httpx.HTTPError:
                errors += 1

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(CONCURRENT)))
        return errors, time.perf_counter() - start, ttfbs


def process_rows(name: str, url: str, *, concurrent: bool) -> list[Row]:
    with serve(url) as first, serve(url) as second:
        ttfb = statistics.median(asyncio.run(_resume_ttfb(first, second)))
        rows = [
            Row(
                work=f'{name}: resume TTFB, a run in flight on process A, GET {{api}}/{{chatId}}/stream on B '
                f'(median of {RESUMES})',
                ours=fmt_time(ttfb),
                peer='—',
                ratio='—',
                bar='< 50 ms',
                passed=ttfb < 0.05,
            )
        ]
        if not concurrent:
            return rows
        errors, seconds, ttfbs = asyncio.run(_concurrent(first, second))
    ttfbs.sort()
    p95 = ttfbs[int(0.95 * (len(ttfbs) - 1))] if ttfbs else float('nan')
    rows.append(
        Row(
            work=f'{name}: {CONCURRENT} concurrent streams over two processes, each resumed on the other '
            f'(send TTFB p50 {fmt_time(statistics.median(ttfbs) if ttfbs else None)}, p95 {fmt_time(p95)})',
            ours=f'{errors} errors in {fmt_time(seconds)}',
            peer='—',
            ratio='—',
            bar='0 errors',
            passed=errors == 0,
        )
    )
    return rows


def main() -> bool:
    with redis_server() as redis_url, postgres_server() as postgres_url, tempfile.TemporaryDirectory() as directory:
        rows = per_token_rows(redis_url, postgres_url)
        rows += process_rows('SQLite', f'sqlite:///{directory}/processes.db', concurrent=False)
        rows += process_rows('Redis', redis_url, concurrent=True)
        rows += process_rows('PostgreSQL', _fresh_schema(postgres_url), concurrent=True)
    return print_table(
        'Server-side store: stream log, persistence, resume (issue 15)',
        rows,
        [
            'Per-token rows: the endpoint called in process, no sockets; each run also claims the chat, commits '
            'the run (one write of 2 messages) and, for Redis, keeps the claim alive beside it.',
            'Process rows: `python -m uibridge serve --store URL` twice on loopback over one store, the demo agent '
            '(20 ms between words; `slow`: 2 s for the resume rows). A SQLite reader in another process polls '
            'the file every `poll_interval` (0.5 s) while the log is idle, so its TTFB is up to that.',
        ],
    )


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
