"""Hostile load (issue 11): 200 legitimate streams, alone and beside 20 worst-case bodies the limits admit.

The server is `e2e_app.py` (`create_app` with an agent that streams 500 text deltas whatever the history) in
its own uvicorn process on 127.0.0.1, with the endpoints' default limits (8 MiB body, 5,000 messages, 2,000
parts in a message, 20,000 parts in a request, 256-character ids, 500,000 JSON values); this process is the
client (plain asyncio sockets, one connection per request, as in `bench_e2e.py`). Per protocol:

1. candidates: the costliest body of each kind the limits admit (see "bodies" below: each checked against
   the default limits before it is sent), sent alone one after the other to a fresh server; the one that
   costs the server the most CPU (until it is idle again) is the protocol's worst body;
2. 200 legitimate streams alone (a fresh server);
3. the same 200 with 20 worst bodies (10% more requests) interleaved, one after every ten (a fresh server);
4. one small request at a time, sent while one worst body is being handled: its time to first byte (issue
   11's bar: under 250 ms), median over several tries (on the candidates' server).

Reported per row: errors among the legitimate streams (the bar: none), their time to first byte (median /
p95), legitimate streams finished per second, the server's peak RSS growth over the batch (`VmHWM`, reset
before it) and the hostile requests' statuses; per candidate, its size, its JSON values (and those inside
its strings), its answer, the server's CPU and peak RSS growth. Bounded: every request and batch has a
deadline (in the mixed batch a legitimate stream not finished within `LEGIT_WAIT` seconds is an error, and a
worst body not answered within `HOSTILE_WAIT` seconds is reported as such, not waited for), every loop a
fixed count, and each server is stopped at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_e2e import _free_port, _reset_peak, _status_kb, _wait_ready  # pyright: ignore[reportPrivateUsage]
from e2e_script import DELTAS

from uibridge.server import DEFAULT_MAX_BODY_BYTES
from uibridge.server.body import Rejected
from uibridge.server.limits import (
    DEFAULT_MAX_JSON_VALUES,
    DEFAULT_MAX_MESSAGES,
    DEFAULT_MAX_PARTS,
    RequestLimits,
    check_limits,
)

HERE = Path(__file__).resolve().parent

CONCURRENT = 200
HOSTILE = 20
"""10% more requests than the legitimate ones: one worst body after every ten legitimate streams."""
REQUEST_TIMEOUT = 60.0
LEGIT_WAIT = 45.0
"""How long a legitimate stream of the mixed batch may take (alone, the whole batch takes 5-10 s here); one
not finished by then is an error."""
HOSTILE_WAIT = 30.0
"""How long a worst body in the mixed batch is waited for; one still unanswered is reported as such."""
CANDIDATE_TIMEOUT = 150.0
"""How long a candidate alone (or a worst body beside small requests) may take to be answered: the costliest
take tens of seconds of CPU here."""
IDLE_WAIT = 150.0
"""How long, after a candidate's answer (or its deadline), the server is given to become idle again."""
TTFB_TRIES = 7
"""Small requests sent, one after the other, while one worst body is handled."""
TTFB_ROUNDS = 3
"""Worst bodies sent at most for that row, when too few small requests landed while one was handled."""
TTFB_BAR = 0.250


@dataclass
class Protocol:
    name: str
    path: str
    body: bytes
    """The legitimate request: one user message."""
    delta_marker: bytes
    end_marker: bytes


PROTOCOLS = [
    Protocol(
        'Vercel AI',
        '/api/chat',
        json.dumps(
            {
                'id': 'bench-chat',
                'trigger': 'submit-message',
                'messages': [
                    {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Tell me about the weather.'}]}
                ],
            }
        ).encode(),
        b'"type":"text-delta"',
        b'data: [DONE]\n\n',
    ),
    Protocol(
        'AG-UI',
        '/ag-ui',
        json.dumps(
            {
                'threadId': 'bench-thread',
                'runId': 'bench-run',
                'state': None,
                'messages': [{'id': 'u1', 'role': 'user', 'content': 'Tell me about the weather.'}],
                'tools': [],
                'context': [],
                'forwardedProps': {},
            }
        ).encode(),
        b'"type":"TEXT_MESSAGE_CONTENT"',
        b'"type":"RUN_FINISHED"',
    ),
]


# ------------------------------------------------------------------------------------------------ bodies
#
# Each candidate is the costliest body of its kind that the default limits admit: it stays just under every
# limit that binds it (8 MiB, 5,000 messages, 2,000 parts in a message, 20,000 parts in the request, 500,000
# JSON values; `limits.py`), and says which ones do. What the limits cannot count is the work a value causes
# after their walk: a tool call's arguments string is one JSON value to the walk, but the server parses it
# (AG-UI when loading, Vercel when verifying) and puts what it holds in canonical form to check the call's
# signature; a `.0` anywhere in it sends that through a Python walk that copies every value twice
# (`canonical_json`'s slow path, for floats JavaScript may spell otherwise). Nested lists are the most
# containers a byte can hold, and millions of containers alive at once are what the cyclic garbage collector
# walks on every full collection: most of such a body's CPU is the collector's (in one process, about four
# fifths of it; on AG-UI, which keeps the parsed arguments in the history, one collection took 2 s).
# Bodies that fill the parts budget cost a few seconds at most, and bytes spent on parts are bytes not
# spent on nested lists, so the two are not mixed.

BODY_MARGIN = 4 * 1024
"""How far under `max_body_bytes` a body that fills it stays."""
SPREAD = DEFAULT_MAX_PARTS // (DEFAULT_MAX_MESSAGES - 1)
"""Parts per message when `max_parts` parts are spread over all the messages a request may hold (4): every
message is a model object too, and a Vercel assistant message a response."""
NESTING = 95
"""How deep each list of a nested-arguments body goes: two characters a list, no commas, and the deeper the
chains the more each list costs. The server holds JSON inside strings to the body's 100 levels (422 past
them) and counts its brackets and commas against `max_json_values`, so 95 is as deep as it admits."""


def _sig(i: int) -> str:
    """A well-formed signature (`v1.` and 32 hex digits) that the server never made: it does not verify."""
    return f'v1.{(i * 0x9E3779B97F4A7C15) % 16**32:032x}'


def _dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(',', ':')).encode()


def _filled(build: Callable[[int], dict[str, Any]], items: int) -> dict[str, Any]:
    """`build(size)` with the largest `size` (characters in each of its `items` strings) under the body limit:
    `build` adds `size` characters to each, give or take one list."""
    room = DEFAULT_MAX_BODY_BYTES - BODY_MARGIN - len(_dumps(build(0)))
    return build(room // items)


def _nested_arguments(size: int) -> str:
    """A JSON object of about `size` characters: lists nested `NESTING` deep, side by side, and a `.0` (see
    above) that sends it through the slow canonical walk. No more lists than the 20 strings' share of the
    values budget: each list counts as a value."""
    size = min(size, 2 * (DEFAULT_MAX_JSON_VALUES - 20_000) // 20)
    chain = '[' * NESTING + ']' * NESTING
    head, tail = '{"items":[', '],"note":"x.0"}'
    return head + ','.join([chain] * max(0, size // (len(chain) + 1))) + tail


def _vercel(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {'id': 'hostile', 'trigger': 'submit-message', 'messages': messages}


def _vercel_user(i: int) -> dict[str, Any]:
    return {'id': f'u{i}', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Tell me about the weather.'}]}


def _vercel_call(i: int, state: str, **fields: Any) -> dict[str, Any]:
    call = {'type': 'tool-delete_file', 'toolCallId': f'call_{i}', 'state': state}
    return {**call, 'input': {}, 'callProviderMetadata': {'uibridge': {'sig': _sig(i)}}, **fields}


def _vercel_spread(part: Callable[[int], dict[str, Any]], messages: int, last: str = 'user') -> dict[str, Any]:
    """`messages` assistant messages of `SPREAD` parts each (`part(i)` for the i-th), then a user message
    (`last='user'`, under `max_messages` with it) or nothing (the run continues the last assistant message)."""
    history = [
        {'id': f'a{m}', 'role': 'assistant', 'parts': [part(m * SPREAD + k) for k in range(SPREAD)]}
        for m in range(messages)
    ]
    return _vercel([*history, _vercel_user(messages)] if last == 'user' else history)


def vercel_nested_arguments(calls: int = 20) -> dict[str, Any]:
    """`calls` tool calls (signatures that do not verify) whose `args` strings (uibridge's copy of the
    arguments, which the server takes over `input`) fill the body with nested lists: a few hundred JSON
    values in the body, millions parsed from the strings and walked. Binds: the body size."""

    def build(size: int) -> dict[str, Any]:
        arguments = _nested_arguments(size)
        meta = [{'uibridge': {'sig': _sig(i), 'args': arguments}} for i in range(calls)]
        parts = [_vercel_call(i, 'input-available', callProviderMetadata=meta[i]) for i in range(calls)]
        return _vercel([_vercel_user(0), {'id': 'a1', 'role': 'assistant', 'parts': parts}, _vercel_user(1)])

    return _filled(build, calls)


def vercel_tool_errors(errors: int = 1) -> dict[str, Any]:
    """19,996 tool parts, 4 in each of 4,999 assistant messages, then a user message: each part a call and
    its failed result (signatures that do not verify) with `errors` retry errors to validate and an approval
    the server never asked for (kept beside the response). Binds: parts, messages, JSON values."""

    def part(i: int) -> dict[str, Any]:
        retry = {'content': [{'type': 'x', 'loc': ['a'], 'msg': 'm'}] * errors}
        result = {'resultProviderMetadata': {'uibridge': {'sig': _sig(i), 'retry': retry}}}
        return _vercel_call(i, 'output-error', errorText='e', approval={'id': f'a{i}', 'approved': True}, **result)

    return _vercel_spread(part, DEFAULT_MAX_MESSAGES - 1)


def vercel_forged_approvals(inputs: int = 11) -> dict[str, Any]:
    """5,000 assistant messages of 4 tool parts each (20,000 parts), the last one continued: each part answers
    an approval the server never asked for (a forged id) of a call whose signature does not verify, its input
    `inputs` numbers. Binds: parts, messages, JSON values."""

    def part(i: int) -> dict[str, Any]:
        answer = {'approval': {'id': f'apr_{_sig(i)[3:]}', 'approved': True}, 'input': {'items': [0] * inputs}}
        return _vercel_call(i, 'approval-responded', **answer)

    return _vercel_spread(part, DEFAULT_MAX_MESSAGES, last='assistant')


def vercel_step_starts() -> dict[str, Any]:
    """4,999 assistant messages of 4 `step-start` parts each (19,996 parts, each a response), then a user
    message. Binds: parts, messages."""
    return _vercel_spread(lambda i: {'type': 'step-start'}, DEFAULT_MAX_MESSAGES - 1)


def _agui(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {'threadId': 'hostile', 'runId': 'r1', 'state': None, 'messages': messages}
    return {**body, 'tools': [], 'context': [], 'forwardedProps': {}, **extra}


def _agui_user(i: int) -> dict[str, Any]:
    return {'id': f'u{i}', 'role': 'user', 'content': 'Tell me about the weather.'}


def _agui_call(i: int, arguments: str = '{}') -> dict[str, Any]:
    function = {'name': 'delete_file', 'arguments': arguments}
    return {'id': f'call_{i}', 'type': 'function', 'function': function, 'metadata': {'uibridge': {'sig': _sig(i)}}}


def agui_nested_arguments(calls: int = 20) -> dict[str, Any]:
    """`calls` tool calls (signatures that do not verify) whose arguments strings fill the body with nested
    lists: parsed when loading and kept (so every garbage collection meanwhile walks them too), then walked
    to check the signatures. Binds: the body size."""

    def build(size: int) -> dict[str, Any]:
        arguments = _nested_arguments(size)
        tool_calls = [_agui_call(i, arguments) for i in range(calls)]
        return _agui([_agui_user(0), {'id': 'a1', 'role': 'assistant', 'toolCalls': tool_calls}, _agui_user(1)])

    return _filled(build, calls)


def agui_tool_messages(pairs: int = DEFAULT_MAX_MESSAGES // 2) -> dict[str, Any]:
    """`pairs` assistant messages of 8 tool calls each (20,000 calls), each message answered by a tool message
    whose JSON content is parsed, all signed with signatures that do not verify; the last tool message gives
    way to a user message (5,000 messages). Binds: parts, messages."""
    per = DEFAULT_MAX_PARTS // pairs
    arguments = '{"path":"notes.txt"}'
    history: list[dict[str, Any]] = []
    for m in range(pairs):
        calls = [_agui_call(m * per + k, arguments) for k in range(per)]
        history.append({'id': f'a{m}', 'role': 'assistant', 'toolCalls': calls})
        meta = {'uibridge': {'part': {'json': True, 'sig': _sig(m)}}}
        history.append(
            {'id': f't{m}', 'role': 'tool', 'content': arguments, 'toolCallId': calls[0]['id'], 'metadata': meta}
        )
    return _agui([*history[:-1], _agui_user(1)])


def agui_image_parts() -> dict[str, Any]:
    """5,000 user messages of 4 image content parts each (20,000 parts), each a data source decoded into a
    binary part. Binds: parts, messages."""
    part = {'type': 'image', 'source': {'type': 'data', 'value': 'AA==', 'mimeType': 'image/png'}}
    return _agui([{'id': f'u{i}', 'role': 'user', 'content': [part] * SPREAD} for i in range(DEFAULT_MAX_MESSAGES)])


def agui_forged_resume(calls: int = 2_000, answers: int = 95_000) -> dict[str, Any]:
    """The history ends with `calls` tool calls (signatures that do not verify) and `resume` holds `answers`
    approvals with forged interrupt ids (issue 11's first row). Binds: parts in a message, JSON values."""
    tool_calls = [_agui_call(i) for i in range(calls)]
    # Short ids: a forged one need not look like the server's, and the longer ones would pass the body size first.
    resume = [{'interruptId': f'apr_{i}', 'status': 'resolved', 'payload': {'approved': True}} for i in range(answers)]
    return _agui([_agui_user(0), {'id': 'a1', 'role': 'assistant', 'toolCalls': tool_calls}], resume=resume)


CANDIDATES: dict[str, list[tuple[str, Callable[[], dict[str, Any]]]]] = {
    'Vercel AI': [
        (f'20 tool calls whose `args` strings hold lists nested {NESTING} deep', vercel_nested_arguments),
        ('19,996 failed tool results with retry errors and approvals', vercel_tool_errors),
        ('20,000 forged approvals', vercel_forged_approvals),
        ('19,996 `step-start` parts', vercel_step_starts),
    ],
    'AG-UI': [
        (f'20 tool calls whose arguments strings hold lists nested {NESTING} deep', agui_nested_arguments),
        ('20,000 tool calls in 2,500 messages answered by 2,499 tool messages', agui_tool_messages),
        ('20,000 image content parts', agui_image_parts),
        ('2,000 trailing tool calls and 95,000 forged `resume` approvals', agui_forged_resume),
    ],
}


def _json_values(value: Any) -> tuple[int, int]:
    """The JSON values in a body (what `max_json_values` counts), and those inside its strings that hold JSON
    arrays or objects (which the server parses later, uncounted); each such string object is read once."""
    count, inner, stack = 0, 0, [value]
    parsed: dict[int, int] = {}
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        elif isinstance(item, list):
            stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(item, str) and len(item) > 2 and item[0] in '[{':
            if id(item) not in parsed:
                try:
                    parsed[id(item)] = _json_values(json.loads(item))[0]
                except ValueError:
                    parsed[id(item)] = 0
            inner += parsed[id(item)]
    return count, inner


# ---------------------------------------------------------------------------------------------- requests


def _dechunk(body: bytes) -> bytes:
    """The payload of an HTTP/1.1 chunked body."""
    out = bytearray()
    pos = 0
    while True:
        eol = body.index(b'\r\n', pos)
        size = int(body[pos:eol].split(b';', 1)[0], 16)
        if size == 0:
            return bytes(out)
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Answer:
    started: float
    """`perf_counter()` when the request started."""
    status: int | None
    """`None`: no response head within the deadline (or the connection failed)."""
    head: float
    """Seconds from the start to the first bytes of the response (0 when none came)."""
    ttfb: float
    """Seconds from the start to the first SSE `data:` (0 when none came)."""
    ok: bool
    """A 200 stream with every delta and the end marker."""
    error: str = ''


async def _request(
    port: int, protocol: Protocol, body: bytes, timeout: float, sent: asyncio.Event | None = None
) -> Answer:
    """One request over a raw connection, read to the end (or the deadline)."""
    start = time.perf_counter()
    head = ttfb = 0.0
    received = bytearray()
    request = (
        f'POST {protocol.path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n'
        f'accept: text/event-stream\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n'
    ).encode()
    error = ''
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection('127.0.0.1', port)
            try:
                writer.write(request)
                writer.write(body)
                await writer.drain()
                if sent is not None:
                    sent.set()
                while chunk := await reader.read(1 << 16):
                    if not received:
                        head = time.perf_counter() - start
                    received += chunk
                    if not ttfb and b'data:' in received:
                        ttfb = time.perf_counter() - start
            finally:
                writer.close()
    except TimeoutError:
        error = f'no answer within {timeout:g} s' if not received else f'not finished within {timeout:g} s'
    except OSError as e:
        error = f'{type(e).__name__}: {e}'
    if sent is not None:
        sent.set()
    response_head, _, payload = bytes(received).partition(b'\r\n\r\n')
    status_line = response_head.split(b'\r\n', 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else None
    if error:
        return Answer(start, status, head, ttfb, False, error)
    if status != 200:
        return Answer(start, status, head, ttfb, False, f'{status}: {payload[:200]!r}')
    if b'transfer-encoding: chunked' in response_head.lower():
        payload = _dechunk(payload)
    deltas = payload.count(protocol.delta_marker)
    if deltas != DELTAS or protocol.end_marker not in payload:
        ended = protocol.end_marker in payload
        return Answer(start, status, head, ttfb, False, f'{deltas} deltas, end marker present: {ended}')
    return Answer(start, status, head, ttfb, True)


async def _batch(port: int, protocol: Protocol, hostile: bytes | None) -> tuple[list[Answer], list[Answer], float]:
    """`CONCURRENT` legitimate streams at once, with `HOSTILE` worst bodies among them (one after every ten)
    when `hostile` is given: the legitimate answers, the hostile ones, and the seconds until the last
    legitimate stream ended."""
    legit: list[asyncio.Task[Answer]] = []
    bad: list[asyncio.Task[Answer]] = []
    ends: list[float] = []
    start = time.perf_counter()

    async def legitimate() -> Answer:
        answer = await _request(port, protocol, protocol.body, LEGIT_WAIT if hostile is not None else REQUEST_TIMEOUT)
        ends.append(time.perf_counter() - start)
        return answer

    total = CONCURRENT + (HOSTILE if hostile is not None else 0)
    every = total // HOSTILE if hostile is not None else 0
    for i in range(total):
        if hostile is not None and i % every == every - 1 and len(bad) < HOSTILE:
            bad.append(asyncio.create_task(_request(port, protocol, hostile, HOSTILE_WAIT)))
        else:
            legit.append(asyncio.create_task(legitimate()))
    async with asyncio.timeout(REQUEST_TIMEOUT + 30):
        legit_answers = await asyncio.gather(*legit)
        bad_answers = await asyncio.gather(*bad)
    return list(legit_answers), list(bad_answers), max(ends)


async def _ttfb_during(port: int, protocol: Protocol, worst: bytes, expected: float) -> tuple[list[Answer], Answer]:
    """Send one worst body, then `TTFB_TRIES` small requests one after the other, spread over the time it was
    measured to take: the small ones that got their first byte before the worst body's answer began, and the
    worst body's answer."""
    sent = asyncio.Event()
    big = asyncio.create_task(_request(port, protocol, worst, CANDIDATE_TIMEOUT, sent))
    await sent.wait()
    sent_at = time.perf_counter()
    gap = min(2.0, max(0.02, expected / (TTFB_TRIES + 1)))
    smalls: list[Answer] = []
    for k in range(TTFB_TRIES):
        delay = sent_at + gap * (k + 1) - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if big.done():
            break
        smalls.append(await _request(port, protocol, protocol.body, REQUEST_TIMEOUT))
    answer = await big
    end_of_big = answer.started + answer.head if answer.status is not None else float('inf')
    during = [s for s in smalls if not s.ok or s.started + s.ttfb < end_of_big]
    return during, answer


async def _one_by_one(port: int, protocol: Protocol) -> list[float]:
    """`TTFB_TRIES` small requests one after the other: their times to first byte."""
    answers = [await _request(port, protocol, protocol.body, REQUEST_TIMEOUT) for _ in range(TTFB_TRIES)]
    return [a.ttfb for a in answers if a.ok]


# ------------------------------------------------------------------------------------------------ server


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime


@contextmanager
def _server() -> Generator[tuple[int, int]]:
    """A fresh uvicorn server for `e2e_app:app`, warmed up on both protocols: its port and pid."""
    port = _free_port()
    cmd = [sys.executable, '-m', 'uvicorn', 'e2e_app:app', '--app-dir', str(HERE), '--host', '127.0.0.1']
    cmd += ['--port', str(port), '--log-level', 'error', '--no-access-log', '--backlog', str(4 * CONCURRENT)]
    # `fast`: the app's default agent (500 deltas as fast as it can), whatever the caller's environment says.
    server = subprocess.Popen(cmd, env={**os.environ, 'PYTHONUNBUFFERED': '1', 'UIBRIDGE_BENCH_AGENT': 'fast'})
    try:
        _wait_ready(f'http://127.0.0.1:{port}', server)
        for protocol in PROTOCOLS:
            warm = asyncio.run(_warm(port, protocol))
            if not all(a.ok for a in warm):
                raise RuntimeError(f'{protocol.name} warm-up failed: {[a.error for a in warm if not a.ok][:3]}')
        yield port, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)  # a worst body still being parsed in a worker thread would hold it longer
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def _warm(port: int, protocol: Protocol) -> list[Answer]:
    return list(await asyncio.gather(*(_request(port, protocol, protocol.body, REQUEST_TIMEOUT) for _ in range(10))))


def _wait_idle(pid: int) -> bool:
    """Wait (at most `IDLE_WAIT` seconds) until the server spends no CPU for a moment: whether it did."""
    deadline = time.monotonic() + IDLE_WAIT
    before = _cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _cpu_seconds(pid)
        if now - before < 0.05:
            return True
        before = now
    return False


def _peak_growth(pid: int, rest_kb: int, peak_known: bool) -> str:
    if not peak_known:
        return 'n/a (cannot reset VmHWM)'
    return f'{max(0, _status_kb(pid, "VmHWM") - rest_kb) / 1024:.1f} MiB'


# ------------------------------------------------------------------------------------------------- rows


@dataclass
class Candidate:
    name: str
    body: bytes
    values: int
    """JSON values in the body: what `max_json_values` counts."""
    inner: int
    """JSON values inside its strings that hold JSON (tool arguments), which the server parses uncounted."""
    answer: Answer | None = None
    idle: bool = True
    """Whether the server was idle again within `IDLE_WAIT` seconds of the answer (else its CPU is a floor)."""
    cpu: float = 0.0
    memory: str = ''


def _check_admitted(name: str, body: dict[str, Any], raw: bytes) -> None:
    """A candidate the default limits refuse measures nothing: it is a bug in this script."""
    try:
        if len(raw) > DEFAULT_MAX_BODY_BYTES:
            raise Rejected(413, f'{len(raw):,} bytes, over max_body_bytes')
        check_limits(body, RequestLimits())
    except Rejected as refused:
        raise RuntimeError(f'candidate {name!r} is refused by the default limits: {refused.error}') from None


def _ms(seconds: float) -> str:
    return f'{seconds * 1e3:.0f} ms'


def _statuses(answers: list[Answer]) -> str:
    counts = Counter(str(a.status) if a.status is not None else a.error for a in answers)
    heads = [a.head for a in answers if a.status is not None]
    text = ', '.join(f'{status} ×{count}' for status, count in counts.most_common())
    if heads:
        text += f' (answer began after {statistics.median(heads):.1f} s median, {max(heads):.1f} s max)'
    return text


def _log_errors(label: str, answers: list[Answer]) -> None:
    for answer in [a for a in answers if not a.ok][:5]:
        print(f'error ({label}): {answer.error}', file=sys.stderr)


def _stream_row(protocol: Protocol, worst: Candidate | None) -> tuple[str, bool]:
    """Row 1 (`worst` None: the legitimate streams alone) or row 2 (with `HOSTILE` worst bodies among them)."""
    with _server() as (port, pid):
        rest_kb = _status_kb(pid, 'VmRSS')
        peak_known = _reset_peak(pid)
        legit, bad, wall = asyncio.run(_batch(port, protocol, worst.body if worst is not None else None))
        memory = _peak_growth(pid, rest_kb, peak_known)
    label = f'{protocol.name}, {"with hostile" if worst else "alone"}'
    _log_errors(label, legit)
    errors = sum(not a.ok for a in legit)
    error_cell = str(errors)
    if errors:
        kinds = Counter(a.error.split(':')[0] for a in legit if not a.ok)
        error_cell += ' (' + ', '.join(f'{kind} ×{count}' for kind, count in kinds.most_common()) + ')'
    # Over every legitimate stream that began, finished or not: how long the server made each wait to start.
    ttfbs = [a.ttfb for a in legit if a.ttfb] or [float('nan')]
    ttfb = f'{_ms(statistics.median(ttfbs))} / {_ms(_pct(ttfbs, 0.95))}'
    if len(ttfbs) < len(legit):
        ttfb += f' ({len([a for a in legit if a.ttfb])} began)'
    if worst is None:
        workload, hostile = f'{CONCURRENT} legitimate streams alone', '—'
    else:
        workload = f'{CONCURRENT} legitimate streams + {HOSTILE} worst bodies interleaved'
        hostile = _statuses(bad)
    passed = errors == 0
    row = (
        f'| {protocol.name} | {workload} | {error_cell} | {(CONCURRENT - errors) / wall:.0f} | {ttfb} | {memory} '
        f'| {hostile} | 0 errors | {"pass" if passed else "**FAIL**"} |'
    )
    return row, passed


def _candidates_and_ttfb(protocol: Protocol) -> tuple[list[Candidate], Candidate, str, bool]:
    """Each candidate alone, one after the other on a fresh server (its answer, the server's CPU and peak RSS
    growth until the server is idle again), the worst of them (by server CPU), then row 3 on the same server."""
    candidates: list[Candidate] = []
    for name, build in CANDIDATES[protocol.name]:
        body = build()
        raw = _dumps(body)
        _check_admitted(name, body, raw)
        candidates.append(Candidate(name, raw, *_json_values(body)))
        del body
    with _server() as (port, pid):
        for candidate in candidates:
            rest_kb = _status_kb(pid, 'VmRSS')
            peak_known = _reset_peak(pid)
            cpu_before = _cpu_seconds(pid)
            candidate.answer = asyncio.run(_request(port, protocol, candidate.body, CANDIDATE_TIMEOUT))
            # A body not answered in time is still being worked on: its cost is what the server spends on it.
            candidate.idle = _wait_idle(pid)
            candidate.cpu = _cpu_seconds(pid) - cpu_before
            candidate.memory = _peak_growth(pid, rest_kb, peak_known)
            _progress(f'candidate ({protocol.name}) {candidate.name}: {_statuses([candidate.answer])}')
        worst = max(candidates, key=lambda c: c.cpu)
        assert worst.answer is not None
        expected = worst.answer.head if worst.answer.status is not None else CANDIDATE_TIMEOUT
        alone = asyncio.run(_one_by_one(port, protocol))  # the same small requests with nothing else to do
        during: list[Answer] = []
        bigs: list[Answer] = []
        for _ in range(TTFB_ROUNDS):
            _progress(f'{protocol.name}: small requests while the worst body is handled')
            smalls, big = asyncio.run(_ttfb_during(port, protocol, worst.body, expected))
            during += smalls
            bigs.append(big)
            if len(during) >= TTFB_TRIES:
                break
    _log_errors(f'{protocol.name}, small request beside the worst body', during)
    errors = sum(not a.ok for a in during)
    ttfbs = [a.ttfb for a in during if a.ok]
    if ttfbs:
        median = statistics.median(ttfbs)
        ttfb = f'{_ms(median)} (median of {len(ttfbs)}; max {_ms(max(ttfbs))})'
        if alone:
            ttfb += f'; with no worst body: {_ms(statistics.median(alone))}'
    else:
        median, ttfb = float('inf'), 'none landed while the worst body was handled'
    passed = errors == 0 and median < TTFB_BAR
    row = (
        f'| {protocol.name} | 1 small request at a time while 1 worst body is handled ({len(bigs)} sent) '
        f'| {errors} | — | {ttfb} | — | {_statuses(bigs)} | time to first byte < {_ms(TTFB_BAR)} '
        f'| {"pass" if passed else "**FAIL**"} |'
    )
    return candidates, worst, row, passed


def _candidate_note(protocol: Protocol, candidates: list[Candidate], worst: Candidate) -> str:
    parts: list[str] = []
    for c in candidates:
        assert c.answer is not None
        answered = _statuses([c.answer]).split(' (')[0]
        head = f'answer began after {c.answer.head:.2f} s' if c.answer.status is not None else 'no answer'
        picked = ' — **the worst: picked**' if c is worst else ''
        inner = f' + {c.inner:,} inside strings' if c.inner else ''
        cpu = f'{c.cpu:.2f} s server CPU' + ('' if c.idle else f' (still busy {IDLE_WAIT:g} s after)')
        parts.append(
            f'{c.name} ({len(c.body) / 2**20:.2f} MiB, {c.values:,} JSON values{inner}): {answered}, {head}, '
            f'{cpu}, peak RSS +{c.memory}{picked}'
        )
    return f'candidates, {protocol.name} (each alone, one after the other on a fresh server): ' + '; '.join(parts) + '.'


_STARTED = time.perf_counter()


def _progress(text: str) -> None:
    print(f'[{time.perf_counter() - _STARTED:5.0f} s] {text}', file=sys.stderr, flush=True)


def _load() -> str:
    return ' / '.join(f'{load:.2f}' for load in os.getloadavg())


def main() -> bool:
    started = time.perf_counter()
    load_before = _load()
    rows: list[str] = []
    notes: list[str] = []
    passed = True
    for protocol in PROTOCOLS:
        candidates, worst, ttfb_row, ttfb_ok = _candidates_and_ttfb(protocol)
        notes.append(_candidate_note(protocol, candidates, worst))
        for hostile in (None, worst):
            _progress(f'{protocol.name}: {CONCURRENT} legitimate streams {"with" if hostile else "without"} hostile')
            row, ok = _stream_row(protocol, hostile)
            rows.append(row)
            passed &= ok
        rows.append(ttfb_row)
        passed &= ttfb_ok
        del candidates
    print('### Hostile load: legitimate streams beside the worst bodies the default limits admit (127.0.0.1)\n')
    print(
        '| protocol | workload | errors (legitimate) | legitimate streams/s | time to first byte, legitimate '
        '(median / p95) | peak RSS growth | hostile requests | bar | result |'
    )
    print('|---|---|---|---|---|---|---|---|---|')
    for row in rows:
        print(row)
    print()
    for note in notes:
        print(f'- {note}')
    print(
        f'- A fresh uvicorn server (one worker, `e2e_app.py`: default limits, an agent streaming {DELTAS} '
        f'deltas whatever the history) per row; the client (plain asyncio sockets, one connection per request) '
        f'runs in another process on the same {os.cpu_count()}-core machine. The worst body per protocol is the '
        'candidate that cost the server the most CPU alone; in the mixed batch one follows every ten legitimate '
        f'requests, all sent at once, and a worst body not answered within {HOSTILE_WAIT:g} s is reported as '
        'such (the server is stopped after the batch). Legitimate streams/s: those finished, over the time until '
        'the last legitimate one ended.'
    )
    print(
        f'- Last row: after a worst body is sent, {TTFB_TRIES} small requests, one after the other, spread over '
        "the time that body took alone; counted are those whose first byte came before the worst body's answer "
        f'began (up to {TTFB_ROUNDS} worst bodies, until {TTFB_TRIES} such); beside it, the median of {TTFB_TRIES} '
        'such requests to the same server with nothing else to do. Whole run: '
        f'{time.perf_counter() - started:.0f} s; load average (1 / 5 / 15 min) {load_before} before it, '
        f'{_load()} after it.'
    )
    print()
    return passed


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
