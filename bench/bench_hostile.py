"""Hostile load (issue 11): 200 legitimate streams, alone and beside 20 worst-case bodies the limits admit.

The server is `e2e_app.py` (`create_app` with an agent that streams 500 text deltas whatever the history) in
its own uvicorn process on 127.0.0.1, with the endpoints' default limits (8 MiB body, 5,000 messages, 2,000
parts per message, 256-character ids, 1,000,000 JSON values); this process is the client (plain asyncio
sockets, one connection per request, as in `bench_e2e.py`). Per protocol:

1. candidates: a few bodies at the limits, each sent alone to a fresh server; the one that costs the server
   the most CPU is the protocol's worst body;
2. 200 legitimate streams alone (a fresh server);
3. the same 200 with 20 worst bodies (10% more requests) interleaved, one after every ten (a fresh server);
4. one small request at a time, sent while one worst body is being handled: its time to first byte (issue
   11's bar: under 250 ms), median over several tries (on the candidates' server).

Reported per row: errors among the legitimate streams (the bar: none), their time to first byte (median /
p95), legitimate streams finished per second, the server's peak RSS growth over the batch (`VmHWM`, reset
before it) and the hostile requests' statuses. Bounded: every request and batch has a deadline (in the mixed
batch a legitimate stream not finished within `LEGIT_WAIT` seconds is an error, and a worst body not answered
within `HOSTILE_WAIT` seconds is reported as such, not waited for), every loop a fixed count, and each
server is stopped at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from e2e_script import DELTAS

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
CANDIDATE_TIMEOUT = 40.0
TTFB_TRIES = 7
"""Small requests sent, one after the other, while one worst body is handled."""
TTFB_ROUNDS = 3
"""Worst bodies sent at most for that row, when too few small requests landed while one was handled."""
TTFB_BAR = 0.250
MAX_BODY = 8 * 1024 * 1024


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


def _sig(i: int) -> str:
    """A well-formed signature (`v1.` and 32 hex digits) that the server never made: it does not verify."""
    return f'v1.{(i * 0x9E3779B97F4A7C15) % 16**32:032x}'


def _dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(',', ':')).encode()


def _vercel(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {'id': 'hostile', 'trigger': 'submit-message', 'messages': messages}


def _vercel_user(i: int) -> dict[str, Any]:
    return {'id': f'u{i}', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Tell me about the weather.'}]}


def vercel_tool_calls(state: str = 'output-available', calls: int = 1_999, items: int = 480) -> dict[str, Any]:
    """A user message, then one assistant message: a step start and `calls` tool parts whose signatures do
    not verify, each input a list of `items` short strings (so the body fills 8 MiB and the value budget).
    `approval-responded`: each part also answers an approval the server never asked for (a forged id), and
    the request continues that message."""
    parts: list[dict[str, Any]] = [{'type': 'step-start'}]
    for i in range(calls):
        part: dict[str, Any] = {
            'type': 'tool-delete_file',
            'toolCallId': f'call_{i}',
            'state': state,
            'input': {'items': [f'{j:05d}' for j in range(items)]},
            'callProviderMetadata': {'uibridge': {'sig': _sig(i)}},
        }
        if state == 'output-available':
            part['output'] = 'ok'
            part['resultProviderMetadata'] = {'uibridge': {'sig': _sig(calls + i)}}
        else:
            part['approval'] = {'id': f'apr_{_sig(i)[3:]}', 'approved': True}
        parts.append(part)
    return _vercel([_vercel_user(0), {'id': 'a1', 'role': 'assistant', 'parts': parts}])


def vercel_step_starts(messages: int = 4_999, parts: int = 74) -> dict[str, Any]:
    """`messages` assistant messages of `parts` step starts each (370k parts: each starts a new response),
    then a user message."""
    history = [{'id': f'm{i}', 'role': 'assistant', 'parts': [{'type': 'step-start'}] * parts} for i in range(messages)]
    return _vercel([*history, _vercel_user(messages)])


def vercel_text_parts(messages: int = 5_000, parts: int = 60) -> dict[str, Any]:
    """`messages` messages, user and assistant in turn, of `parts` one-letter text parts each (300k parts, at
    the value budget); the assistant's carry no signature."""
    history = [
        {'id': f'm{i}', 'role': 'user' if i % 2 == 0 else 'assistant', 'parts': [{'type': 'text', 'text': 'a'}] * parts}
        for i in range(messages - 1)
    ]
    return _vercel([*history, _vercel_user(messages)])


def _agui(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {'threadId': 'hostile', 'runId': 'r1', 'state': None, 'messages': messages}
    return {**body, 'tools': [], 'context': [], 'forwardedProps': {}, **extra}


def _agui_user(i: int) -> dict[str, Any]:
    return {'id': f'u{i}', 'role': 'user', 'content': 'Tell me about the weather.'}


def _agui_call(i: int, arguments: str) -> dict[str, Any]:
    function = {'name': 'delete_file', 'arguments': arguments}
    return {'id': f'call_{i}', 'type': 'function', 'function': function, 'metadata': {'uibridge': {'sig': _sig(i)}}}


def _zeros(count: int) -> str:
    return '{"items":[' + ','.join(['0'] * count) + ']}'


def agui_messages(pairs: int = 2_499, zeros: int = 1_450) -> dict[str, Any]:
    """5,000 messages filling 8 MiB: `pairs` assistant messages, each a tool call (its arguments a list of
    `zeros` numbers) answered by a tool message, all signed with signatures that do not verify."""
    arguments = _zeros(zeros)
    history = [_agui_user(0)]
    for i in range(pairs):
        meta = {'uibridge': {'part': {'sig': _sig(i)}}}
        history.append({'id': f'a{i}', 'role': 'assistant', 'toolCalls': [_agui_call(i, arguments)], 'metadata': meta})
        meta = {'uibridge': {'part': {'sig': _sig(pairs + i)}}}
        history.append({'id': f't{i}', 'role': 'tool', 'content': 'ok', 'toolCallId': f'call_{i}', 'metadata': meta})
    return _agui([*history, _agui_user(1)])


def agui_trailing_calls(calls: int = 2_000, zeros: int = 1_950) -> dict[str, Any]:
    """The history ends with `calls` tool calls (signatures that do not verify), and `resume` answers each
    with a forged approval (issue 11's first row, at the parts limit and 8 MiB)."""
    arguments = _zeros(zeros)
    tool_calls = [_agui_call(i, arguments) for i in range(calls)]
    resume = [
        {'interruptId': f'apr_{_sig(i)[3:]}', 'status': 'resolved', 'payload': {'approved': True}} for i in range(calls)
    ]
    return _agui([_agui_user(0), {'id': 'a1', 'role': 'assistant', 'toolCalls': tool_calls}], resume=resume)


def agui_content_parts(messages: int = 5_000, parts: int = 60) -> dict[str, Any]:
    """`messages` user messages of `parts` one-letter text content parts each (300k parts, at the value budget)."""
    part = {'type': 'text', 'text': 'a'}
    return _agui([{'id': f'u{i}', 'role': 'user', 'content': [part] * parts} for i in range(messages)])


def agui_argument_values(calls: int = 20, objects: int = 139_000) -> dict[str, Any]:
    """`calls` tool calls whose arguments strings hold `objects` empty objects each: 2.8M JSON values parsed from
    strings, which the body's value budget does not count."""
    arguments = '{"items":[' + ','.join(['{}'] * objects) + ']}'
    tool_calls = [_agui_call(i, arguments) for i in range(calls)]
    return _agui([_agui_user(0), {'id': 'a1', 'role': 'assistant', 'toolCalls': tool_calls}, _agui_user(1)])


CANDIDATES: dict[str, list[tuple[str, Callable[[], dict[str, Any]]]]] = {
    'Vercel AI': [
        ('1,999 tool calls (signatures that do not verify), 480-item inputs', vercel_tool_calls),
        ('1,999 forged approvals of such calls', lambda: vercel_tool_calls('approval-responded')),
        ('4,999 messages × 74 `step-start` parts', vercel_step_starts),
        ('5,000 messages × 60 text parts', vercel_text_parts),
    ],
    'AG-UI': [
        ('5,000 messages: 2,499 tool calls and results (signatures that do not verify)', agui_messages),
        ('2,000 trailing tool calls and 2,000 forged `resume` approvals', agui_trailing_calls),
        ('5,000 user messages × 60 text content parts', agui_content_parts),
        ('20 tool calls with 139k objects each in their arguments strings', agui_argument_values),
    ],
}


def _json_values(value: Any) -> int:
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        elif isinstance(item, list):
            stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
    return count


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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith(field + ':'):
            return int(line.split()[1])
    raise LookupError(field)


def _reset_peak(pid: int) -> bool:
    """Reset the server's peak resident set (`VmHWM`), so the next reading is this batch's peak."""
    try:
        Path(f'/proc/{pid}/clear_refs').write_text('5')
    except OSError:
        return False
    return True


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime


def _wait_ready(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f'uvicorn exited with {server.returncode}')
        try:
            if httpx.get(base + '/', timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError('uvicorn did not start within 30 s')


@contextmanager
def _server() -> Iterator[tuple[int, int]]:
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
    answer: Answer | None = None
    cpu: float = 0.0
    memory: str = ''


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
    """Each candidate alone on a fresh server (its answer, the server's CPU and peak RSS growth), the worst of
    them (by server CPU), then row 3 on the same server."""
    candidates: list[Candidate] = []
    for name, build in CANDIDATES[protocol.name]:
        body = build()
        raw = _dumps(body)
        if len(raw) > MAX_BODY:
            raise RuntimeError(f'candidate {name!r} is {len(raw)} bytes: over the 8 MiB limit')
        candidates.append(Candidate(name, raw, _json_values(body)))
        del body
    with _server() as (port, pid):
        for candidate in candidates:
            rest_kb = _status_kb(pid, 'VmRSS')
            peak_known = _reset_peak(pid)
            cpu_before = _cpu_seconds(pid)
            candidate.answer = asyncio.run(_request(port, protocol, candidate.body, CANDIDATE_TIMEOUT))
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
        parts.append(
            f'{c.name} ({len(c.body) / 2**20:.2f} MiB, {c.values:,} JSON values): {answered}, {head}, '
            f'{c.cpu:.2f} s server CPU, peak RSS +{c.memory}{picked}'
        )
    return f'candidates, {protocol.name} (each alone on a fresh server): ' + '; '.join(parts) + '.'


_STARTED = time.perf_counter()


def _progress(text: str) -> None:
    print(f'[{time.perf_counter() - _STARTED:5.0f} s] {text}', file=sys.stderr, flush=True)


def main() -> bool:
    started = time.perf_counter()
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
        f'{time.perf_counter() - started:.0f} s.'
    )
    print()
    return passed


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
