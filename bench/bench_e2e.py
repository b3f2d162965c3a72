"""End to end: 200 concurrent streaming requests to the demo app under uvicorn on loopback, 500 deltas each.

The server (`e2e_app.py`: `create_app` with an agent that streams 500 text deltas and nothing else) runs
in its own uvicorn process on 127.0.0.1; this process is the client (plain asyncio
sockets, one connection per request, so that the client costs little next to the server).
Reported per protocol: errors (the bar: none), requests/s over the whole batch, time to first byte (from
sending the request to the first body bytes), and the server's peak memory: the growth of its peak
resident set (`VmHWM`, reset before the batch) over its resident set at rest, divided by the number of
concurrent streams. Bounded: one batch per protocol, each request and each batch under a time limit;
the server is stopped at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from e2e_script import DELTAS

HERE = Path(__file__).resolve().parent
CONCURRENT = 200
REQUEST_TIMEOUT = 60.0
BATCH_TIMEOUT = 180.0

VERCEL_BODY = json.dumps(
    {
        'id': 'bench-chat',
        'trigger': 'submit-message',
        'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Tell me about the weather.'}]}],
    }
).encode()
AG_UI_BODY = json.dumps(
    {
        'threadId': 'bench-thread',
        'runId': 'bench-run',
        'state': None,
        'messages': [{'id': 'u1', 'role': 'user', 'content': 'Tell me about the weather.'}],
        'tools': [],
        'context': [],
        'forwardedProps': {},
    }
).encode()


@dataclass
class Protocol:
    name: str
    path: str
    body: bytes
    delta_marker: bytes
    end_marker: bytes


PROTOCOLS = [
    Protocol('Vercel AI', '/api/chat', VERCEL_BODY, b'"type":"text-delta"', b'data: [DONE]\n\n'),
    Protocol('AG-UI', '/ag-ui', AG_UI_BODY, b'"type":"TEXT_MESSAGE_CONTENT"', b'"type":"RUN_FINISHED"'),
]


@dataclass
class Outcome:
    ok: bool
    ttfb: float
    total: float
    error: str = ''


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


async def _one(port: int, protocol: Protocol) -> Outcome:
    """One request over a raw connection: a light client, so the server, not the client, is what is measured."""
    start = time.perf_counter()
    ttfb = 0.0
    received = bytearray()
    request = (
        f'POST {protocol.path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n'
        f'accept: text/event-stream\r\ncontent-length: {len(protocol.body)}\r\nconnection: close\r\n\r\n'
    ).encode() + protocol.body
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            reader, writer = await asyncio.open_connection('127.0.0.1', port)
            try:
                writer.write(request)
                await writer.drain()
                while chunk := await reader.read(1 << 16):
                    received += chunk
                    if not ttfb and b'data:' in received:
                        ttfb = time.perf_counter() - start
            finally:
                writer.close()
    except (TimeoutError, OSError) as e:
        return Outcome(False, ttfb, time.perf_counter() - start, f'{type(e).__name__}: {e}')
    total = time.perf_counter() - start
    head, _, body = bytes(received).partition(b'\r\n\r\n')
    status = head.split(b'\r\n', 1)[0]
    if not status.startswith(b'HTTP/1.1 200'):
        return Outcome(False, ttfb, total, f'{status!r}: {body[:200]!r}')
    if b'transfer-encoding: chunked' in head.lower():
        body = _dechunk(body)
    deltas = body.count(protocol.delta_marker)
    if deltas != DELTAS or protocol.end_marker not in body:
        return Outcome(False, ttfb, total, f'{deltas} deltas, end marker present: {protocol.end_marker in body}')
    return Outcome(True, ttfb, total)


async def _batch(port: int, protocol: Protocol, count: int) -> tuple[list[Outcome], float]:
    start = time.perf_counter()
    async with asyncio.timeout(BATCH_TIMEOUT):
        outcomes = await asyncio.gather(*(_one(port, protocol) for _ in range(count)))
    return list(outcomes), time.perf_counter() - start


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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime


def _serve(protocol: Protocol, side: str, app: str) -> tuple[str, bool]:
    """Start a fresh server for `app`, warm it up, run one batch, stop it; one markdown row."""
    port = _free_port()
    base = f'http://127.0.0.1:{port}'
    cmd = [sys.executable, '-m', 'uvicorn', app, '--app-dir', str(HERE), '--host', '127.0.0.1']
    cmd += ['--port', str(port), '--log-level', 'warning', '--no-access-log', '--backlog', str(4 * CONCURRENT)]
    server = subprocess.Popen(cmd, env={**os.environ, 'PYTHONUNBUFFERED': '1'})
    try:
        _wait_ready(base, server)
        warm, _ = asyncio.run(_batch(port, protocol, 10))  # imports, first-request caches
        if not all(o.ok for o in warm):
            raise RuntimeError(f'{protocol.name} warm-up failed: {[o.error for o in warm if not o.ok][:3]}')
        rest_kb = _status_kb(server.pid, 'VmRSS')
        peak_known = _reset_peak(server.pid)
        cpu_before, client_before = _cpu_seconds(server.pid), time.process_time()
        outcomes, wall = asyncio.run(_batch(port, protocol, CONCURRENT))
        cpu, client_cpu = _cpu_seconds(server.pid) - cpu_before, time.process_time() - client_before
        peak_kb = _status_kb(server.pid, 'VmHWM') if peak_known else None
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    errors = [o.error for o in outcomes if not o.ok]
    for error in errors[:5]:
        print(f'error ({side}, {protocol.name}): {error}', file=sys.stderr)
    ok = [o for o in outcomes if o.ok] or [Outcome(False, float('nan'), float('nan'))]
    ttfbs = [o.ttfb for o in ok]
    if peak_kb is None:
        memory = 'n/a (cannot reset VmHWM)'
    else:
        growth = max(0, peak_kb - rest_kb)
        memory = f'{growth / 1024:.1f} MiB ({growth / CONCURRENT:.0f} KiB/stream)'
    ttfb = f'{statistics.median(ttfbs) * 1e3:.0f} ms / {_pct(ttfbs, 0.95) * 1e3:.0f} ms'
    row = (
        f'| {protocol.name} | {side} | {CONCURRENT} × {DELTAS} | {len(errors)} | {wall:.2f} s '
        f'| {CONCURRENT / wall:.0f} '
        f'| {ttfb} | {statistics.median(o.total for o in ok) * 1e3:.0f} ms '
        f'| {cpu / CONCURRENT * 1e3:.1f} ms ({client_cpu / CONCURRENT * 1e3:.1f} ms) '
        f'| {rest_kb / 1024:.1f} MiB | {memory} '
        f'| {"pass" if not errors else "**FAIL**"} |'
    )
    return row, not errors


def main() -> bool:
    rows: list[str] = []
    passed = True
    for protocol in PROTOCOLS:
        for side, app in (('ours', 'e2e_app:app'), ('peer', 'e2e_peer_app:app')):
            row, ok = _serve(protocol, side, app)
            rows.append(row)
            if side == 'ours':
                passed &= ok
    print('### End to end: concurrent streaming requests under uvicorn (127.0.0.1)\n')
    print(
        '| protocol | server | requests × deltas | errors | wall | requests/s | time to first byte (median / p95) '
        '| stream time (median) | CPU per request: server (client) | server RSS at rest | peak RSS growth (per stream) '
        '| result |'
    )
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for row in rows:
        print(row)
    print()
    print(
        f'- bar: no errors. A fresh uvicorn server per protocol (one worker, asyncio loop, h11); the client '
        f'(plain asyncio sockets, {CONCURRENT} connections at once) runs in another process on the same '
        f'{os.cpu_count()}-core machine, so the two share its cores. '
        f'The agent streams {DELTAS} deltas without any model latency.'
    )
    print(
        "- peer: the same requests to pydantic-ai's `VercelAIAdapter` / `AGUIAdapter.dispatch_request` with an "
        '`Agent` whose `FunctionModel` streams the same deltas (`e2e_peer_app.py`), so its side also runs '
        "pydantic-ai's agent loop. The bar (no errors) is ours; the peer's rows are for comparison."
    )
    print()
    return passed


def profile_server(protocol: Protocol, lines: int = 40) -> None:
    """One batch against a server running under pyinstrument; print where the server's time went."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / 'server.txt'
        cmd = [sys.executable, '-m', 'pyinstrument', '-r', 'text', '--no-color', '-o', str(report)]
        cmd += ['-m', 'uvicorn', 'e2e_app:app', '--app-dir', str(HERE), '--host', '127.0.0.1', '--port', str(port)]
        cmd += ['--log-level', 'warning', '--no-access-log', '--backlog', str(4 * CONCURRENT)]
        server = subprocess.Popen(cmd)
        try:
            _wait_ready(f'http://127.0.0.1:{port}', server)
            outcomes, wall = asyncio.run(_batch(port, protocol, CONCURRENT))
        finally:
            server.send_signal(signal.SIGINT)  # pyinstrument writes its report when the program is interrupted
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        text = report.read_text(encoding='utf-8') if report.exists() else '(no report)'
    tree = [line for line in text.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(tree) if line[:1].isdigit()), 0)
    tree = tree[first:]
    errors = sum(not o.ok for o in outcomes)
    print(
        f'#### Server under pyinstrument: {protocol.name}, {CONCURRENT} × {DELTAS} deltas '
        f'({errors} errors, {wall:.1f} s under the profiler)'
    )
    print('\n```')
    print('\n'.join(tree[:lines]) + (f'\n… ({len(tree) - lines} more lines)' if len(tree) > lines else ''))
    print('```\n')


if __name__ == '__main__':
    if sys.argv[1:] == ['--profile']:
        profile_server(PROTOCOLS[0])
        sys.exit(0)
    sys.exit(0 if main() else 1)
