"""A big stored chat beside small requests: time to first byte of a small request on another chat while the
biggest chat is read or continued (issue 22's bar: under 250 ms, median).

    python bench/bench_big_chat.py [BASE_SRC]

`BASE_SRC` is another source tree's `src` (`git archive <commit> src | tar -x -C ../base`, then `../base/src`):
its rows are measured the same way, its package first on the server's `PYTHONPATH`, for a before/after table.

The server is `big_chat_app.py` (`create_app` over a SQLite store, an agent answering one line) in its own
uvicorn process on 127.0.0.1, the chat written into its database beforehand through the store. This process is
the client: one task sends the load, one big request after another (`GET {api}/{chatId}` of the big chat,
or a `POST` of a new message to it: a managed turn decodes, re-signs and verifies the whole history), for as
long as the other task sends its small requests (a `POST` starting a new chat, one at a time, `GAP` apart);
reported is the small requests' time to first byte (the first `data:` byte), median and max, beside the same
with no load. The small requests start at a steady pace whether or not the earlier ones were answered, as
users' would, until the load has run at least one whole request of its own beside them: a stall shows in
every request that arrives during it, not only in the one that happened to be waiting. The chats:

- the biggest chat the default limits allow (`max_chat_bytes`, 8 MiB): six turns, each prompt echoed back;
- one prompt as large as a request may carry (7.5 MB) and a short answer: the largest single message;
- the issue's chat: six 7 MB prompts, each echoed (84 MB), past the default limits, so written directly.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from uibridge import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart
from uibridge.core.messages import ModelMessage
from uibridge.server.limits import DEFAULT_MAX_CHAT_BYTES
from uibridge.server.store import SqliteStore

HERE = Path(__file__).resolve().parent
PROBES = 21
"""Small requests per row, at least."""
MAX_PROBES = 400
WARM_UP = 20
"""Small requests sent one by one before any is measured: a fresh server's first requests on a large database
are slower for a second or so (its first connections and pages), whichever tree it runs."""
GAP = 0.05
"""Seconds between the starts of two small requests."""
BAR = 0.250
GUARD = 600.0
"""A hang guard per row, not a measurement."""
WORDS = ['the', 'weather', 'in', 'Lyon', 'is', 'mild', 'café', 'über', '"quoted"', 'line\n', '<tag>', '日本', 'tab\t']


def prose(characters: int, seed: int) -> str:
    """Text with what costs the most to escape and validate: quotes, newlines, tabs, characters beyond ASCII."""
    pick = random.Random(seed).choice
    words: list[str] = []
    length = 0
    while length < characters:
        word = pick(WORDS)
        words.append(word)
        length += len(word) + 1
    return ' '.join(words)


def echoed_turns(turns: int, characters: int) -> list[ModelMessage]:
    history: list[ModelMessage] = []
    for turn in range(turns):
        text = prose(characters, turn)
        history.append(ModelRequest(parts=[UserPromptPart(content=text)]))
        history.append(ModelResponse(parts=[TextPart(content=text)], model_name='echo'))
    return history


def stored_bytes(history: list[ModelMessage]) -> int:
    return len(ModelMessagesTypeAdapter.dump_json(history)) - len(history) - 1


def biggest_allowed() -> list[ModelMessage]:
    """Six echoed turns within `max_chat_bytes`, less 64 KiB so the load's own turns stay within it too."""
    budget = DEFAULT_MAX_CHAT_BYTES - 64 * 1024
    characters = 600_000
    history = echoed_turns(6, characters)
    characters = int(characters * budget / stored_bytes(history))
    while stored_bytes(history := echoed_turns(6, characters)) > budget:
        characters = int(characters * 0.99)
    return history


def one_big_prompt() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content=prose(6_800_000, 7))]),
        ModelResponse(parts=[TextPart(content='A long one.')], model_name='echo'),
    ]


@dataclass
class Chat:
    name: str
    description: str
    build: Callable[[], list[ModelMessage]]
    """Built when the chat is seeded, and dropped after: the client process stays light while it measures."""
    within_limits: bool


CHATS = [
    Chat('allowed', 'the biggest the default limits allow: 6 turns, each prompt echoed', biggest_allowed, True),
    Chat('one', 'one 7.5 MB prompt (as large as a request may carry) and a short answer', one_big_prompt, True),
    Chat('issue', "the issue's: six 7 MB prompts, each echoed (past the limits, written directly)",
         lambda: echoed_turns(6, 6_400_000), False),
]  # fmt: skip


async def seed(path: Path, chat: Chat) -> int:
    """The chat written through the store, then the database's write-ahead log folded into it: otherwise the
    server's first small write would copy the whole chat back into the database, and count in its time."""
    history = chat.build()
    async with SqliteStore(path) as store:
        claim = await store.claim('big', 'anonymous', create=True)
        await store.commit(claim, history)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    return stored_bytes(history)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(database: Path, src: str | None) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, 'UIBRIDGE_BENCH_STORE': f'sqlite:///{database}', 'UIBRIDGE_SECRET': 'bench-big-chat'}
    if src is not None:
        env['PYTHONPATH'] = src
    args = [sys.executable, '-m', 'uvicorn', 'big_chat_app:app', '--port', str(port), '--log-level', 'warning']
    process = subprocess.Popen(args, cwd=HERE, env=env)
    base = f'http://127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + '/favicon.svg', timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit('the benchmark server did not start')
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def prompt(chat_id: str, text: str = 'hello') -> dict[str, object]:
    message = {'id': f'u-{time.monotonic_ns()}', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}
    return {'id': chat_id, 'messages': [message]}


async def first_byte(client: httpx.AsyncClient, chat_id: str) -> float:
    start = time.perf_counter()
    elapsed: float | None = None
    async with client.stream('POST', '/api/chat', json=prompt(chat_id)) as response:
        async for chunk in response.aiter_raw():  # read to the end: the connection is reused
            if elapsed is None and b'data:' in chunk:
                elapsed = time.perf_counter() - start
    if elapsed is None:
        raise RuntimeError(f'no stream: {response.status_code}')
    return elapsed


async def big_request(client: httpx.AsyncClient, load: str) -> None:
    if load == 'GET':
        response = await client.get('/api/chat/big')
        assert response.status_code == 200, response.status_code
        return
    while True:
        async with client.stream('POST', '/api/chat', json=prompt('big')) as response:
            async for _ in response.aiter_raw():
                pass
        if response.status_code != 409:  # the previous turn commits just after its stream ended
            assert response.status_code == 200, response.status_code
            return
        await asyncio.sleep(0.01)


@dataclass
class Measured:
    ttfb: list[float]
    load_times: list[float]


async def measure(base: str, load: str | None) -> Measured:
    """Small requests started every `GAP` seconds whether or not the earlier ones were answered (as users would
    send them), `PROBES` at least and, under a load, until at least one of its requests ran from start to end
    while they were sent (`MAX_PROBES` at most)."""
    load_times: list[float] = []
    done = asyncio.Event()
    timeout = httpx.Timeout(GUARD)
    unbounded = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with (
        httpx.AsyncClient(base_url=base, timeout=timeout, limits=unbounded) as small,
        httpx.AsyncClient(base_url=base, timeout=timeout) as big,
    ):
        for number in range(WARM_UP):
            await first_byte(small, f'warm-{number}-{time.monotonic_ns()}')

        async def loader() -> None:
            while not done.is_set():
                start = time.perf_counter()
                await big_request(big, load or 'GET')
                load_times.append(time.perf_counter() - start)

        async def prober() -> list[float]:
            await asyncio.sleep(GAP * 4)  # the load's first request under way
            loads_before = len(load_times)
            probes: list[asyncio.Task[float]] = []
            while len(probes) < MAX_PROBES and (
                len(probes) < PROBES or (load is not None and len(load_times) < loads_before + 2)
            ):
                probes.append(asyncio.create_task(first_byte(small, f'small-{len(probes)}-{time.monotonic_ns()}')))
                await asyncio.sleep(GAP)
            ttfb = await asyncio.gather(*probes)
            done.set()
            return ttfb

        async with asyncio.timeout(GUARD):
            if load is None:
                return Measured(await prober(), [])
            ttfb, _ = await asyncio.gather(prober(), loader())
    return Measured(ttfb, load_times)


def refuses_bad_ids(base: str) -> bool:
    """Whether the server is the new tree: it refuses a chat id with a `/` (the old one took it)."""
    return httpx.post(base + '/api/chat', json=prompt('a/b'), timeout=60).status_code == 422


def fmt(seconds: float) -> str:
    return f'{seconds * 1e3:.0f} ms' if seconds < 10 else f'{seconds:.1f} s'


def row(tree: str, chat: Chat, size: int, load: str, measured: Measured, alone: Measured, bar: bool) -> str:
    median = statistics.median(measured.ttfb)
    loads = measured.load_times
    load_cell = f'{len(loads)}, {fmt(statistics.median(loads))} each (median)' if loads else '—'
    count = len(measured.ttfb)
    ttfb = f'{fmt(median)} / {fmt(max(measured.ttfb))} of {count} (alone: {fmt(statistics.median(alone.ttfb))})'
    result = ('pass' if median < BAR else '**FAIL**') if bar else '—'
    what = f'{chat.description} ({size / 1024 / 1024:.1f} MiB stored)'
    load_name = {'GET': '`GET {api}/{chatId}`', 'POST': 'a new message `POST`ed to it'}[load]
    return f'| {tree} | {what} | {load_name} | {ttfb} | {load_cell} | {"< 250 ms" if bar else "—"} | {result} |'


async def main(base_src: str | None) -> int:
    trees: list[tuple[str, str | None]] = [('after', None)]
    if base_src is not None:
        trees.insert(0, ('before', str(Path(base_src).resolve())))
    rows: list[str] = []
    failed = False
    started = time.perf_counter()
    for chat in CHATS:
        loads = ['GET', 'POST'] if chat.within_limits and chat.name == 'allowed' else ['GET']
        for tree, src in trees:
            with tempfile.TemporaryDirectory() as directory:
                database = Path(directory) / 'chats.db'
                size = await seed(database, chat)
                with server(database, src) as base:
                    assert refuses_bad_ids(base) == (tree == 'after'), f'the {tree} server runs the wrong tree'
                    alone = await measure(base, None)
                    for load in loads:
                        measured = await measure(base, load)
                        bar = tree == 'after' and chat.within_limits
                        failed |= bar and statistics.median(measured.ttfb) >= BAR
                        rows.append(row(tree, chat, size, load, measured, alone, bar))
                        print(rows[-1], file=sys.stderr, flush=True)
    print('### A big stored chat beside small requests (issue 22; 127.0.0.1)\n')
    print("| tree | the big chat | the load on it | small requests' time to first byte (median / max) "
          "| the load's requests | bar | result |")  # fmt: skip
    print('|---|---|---|---|---|---|---|')
    print('\n'.join(rows))
    print()
    print(
        f'- A fresh uvicorn server (one worker, `big_chat_app.py`, SQLite store) per chat and tree; the client in '
        f'another process. Each row: small requests (a `POST` starting a new chat) started every '
        f'{GAP * 1000:.0f} ms, at least {PROBES} and until the load, one big request after another, ran at least '
        'one whole request beside them; "alone": the same with no load. `before`: the source tree given as '
        f'`BASE_SRC`; `after`: this one. Whole run: {time.perf_counter() - started:.0f} s.'
    )
    print()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None)))
