"""End to end: 200 concurrent streaming requests under uvicorn on loopback, ours beside a bare floor and the peer.

Three servers answer the same requests (`e2e_agents.VERCEL_BODY`, `AG_UI_BODY`) with the same run:
- ours: `e2e_app.py`, `create_app` with an agent that yields the run's events;
- floor: `e2e_floor_app.py`, a bare Starlette app that parses the body and streams the same frames,
  pre-encoded, through `StreamingResponse`: what a stream costs with nothing but the frames to send;
- peer: `e2e_peer_app.py`, pydantic-ai's adapters with a `FunctionModel` streaming the same deltas.

Two runs (`e2e_agents`): fast (500 deltas as fast as the agent yields them, 200 requests at once: the server's
CPU per request is the measure) and slow (50 deltas 20 ms apart, each stamped with when it was yielded, 200
requests at once and then 10: the measure is how long a delta takes from the agent's `yield` to the client's
read, so that coalescing writes is seen never to add latency).

Each server runs in its own uvicorn process on 127.0.0.1; this process is the client (plain asyncio sockets,
one connection per request, so that the client costs little next to the server). Per row: errors (the bar:
none), requests/s over the whole batch, time to first byte (from sending the request to the first `data:`),
the server's CPU per request (its user + system time over the batch, divided by the requests), and its peak
memory: the growth of its peak resident set (`VmHWM`, reset before the batch) over its resident set at rest,
per concurrent stream. `--rounds N` (default 3) runs every row N times (the peer's once), rows interleaved
and a fresh server each time, and reports the median of each column. Bounded: each request and each batch
under a time limit; every server is stopped whatever happens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from e2e_agents import AG_UI_BODY, AGENT_ENV, SLOW_DELTAS, SLOW_INTERVAL, STAMP_PATTERN, VERCEL_BODY
from e2e_script import DELTAS

HERE = Path(__file__).resolve().parent
CONCURRENT = 200
LIGHT = 10
REQUEST_TIMEOUT = 120.0
BATCH_TIMEOUT = 300.0
DEFAULT_ROUNDS = 3
CPU_BAR = 1.5
"""Our server CPU per request, at most this many times the floor's (issue 13)."""


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
APPS = {'ours': 'e2e_app:app', 'floor': 'e2e_floor_app:app', 'peer': 'e2e_peer_app:app'}


@dataclass(frozen=True)
class Load:
    slow: bool
    concurrent: int


FAST = Load(slow=False, concurrent=CONCURRENT)
SLOW = Load(slow=True, concurrent=CONCURRENT)
SLOW_LIGHT = Load(slow=True, concurrent=LIGHT)
SIDES = {FAST: ['ours', 'floor', 'peer'], SLOW: ['ours', 'floor'], SLOW_LIGHT: ['ours', 'floor']}


@dataclass
class Outcome:
    ok: bool
    ttfb: float
    total: float
    error: str = ''
    latencies: list[float] = field(default_factory=list[float])
    """Slow run: for each delta, seconds from the agent's yield (its stamp) to the client's read."""


@dataclass
class Sample:
    """One batch against one fresh server."""

    errors: list[str]
    wall: float
    ttfb_p50: float
    ttfb_p95: float
    total_p50: float
    cpu: float
    client_cpu: float
    rest_kb: int
    peak_growth_kb: int | None
    latency_p50: float = float('nan')
    latency_p95: float = float('nan')
    latency_max: float = float('nan')


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


def _status_kb(pid: int, name: str) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith(name + ':'):
            return int(line.split()[1])
    raise LookupError(name)


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


def raw_request(port: int, protocol: Protocol) -> bytes:
    """The protocol's request, as bytes for one connection of its own."""
    return (
        f'POST {protocol.path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n'
        f'accept: text/event-stream\r\ncontent-length: {len(protocol.body)}\r\nconnection: close\r\n\r\n'
    ).encode() + protocol.body


async def _one(port: int, protocol: Protocol, deltas: int, stamped: bool) -> Outcome:
    """One request over a raw connection: a light client, so the server, not the client, is what is measured."""
    start = time.perf_counter()
    ttfb = 0.0
    received = bytearray()
    latencies: list[float] = []
    scanned = 0
    request = raw_request(port, protocol)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            reader, writer = await asyncio.open_connection('127.0.0.1', port)
            try:
                writer.write(request)
                await writer.drain()
                while chunk := await reader.read(1 << 16):
                    now = time.monotonic()
                    received += chunk
                    if not ttfb and b'data:' in received:
                        ttfb = time.perf_counter() - start
                    if stamped:
                        # Only whole SSE frames (a stamp is never split across HTTP chunks: each is whole frames).
                        end = received.rfind(b'\n\n') + 2
                        if end > scanned:
                            stamps = STAMP_PATTERN.findall(received, scanned, end)
                            latencies += [now - float(s) for s in stamps]
                            scanned = end
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
    count = body.count(protocol.delta_marker)
    if count != deltas or protocol.end_marker not in body:
        return Outcome(False, ttfb, total, f'{count} deltas, end marker present: {protocol.end_marker in body}')
    if stamped and len(latencies) != deltas:
        return Outcome(False, ttfb, total, f'{len(latencies)} stamps read for {deltas} deltas')
    return Outcome(True, ttfb, total, latencies=latencies)


async def _batch(port: int, protocol: Protocol, count: int, slow: bool) -> tuple[list[Outcome], float]:
    deltas = SLOW_DELTAS if slow else DELTAS
    start = time.perf_counter()
    async with asyncio.timeout(BATCH_TIMEOUT):
        outcomes = await asyncio.gather(*(_one(port, protocol, deltas, slow) for _ in range(count)))
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
    """The server's CPU time so far: nanoseconds on a CPU from the scheduler, summed over its threads (the
    clock-tick counts in `stat` are 10 ms apart: too coarse for a batch of 10 requests)."""
    try:
        return sum(int(p.read_text().split()[0]) for p in Path(f'/proc/{pid}/task').glob('*/schedstat')) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime


def _uvicorn(app: str, port: int) -> list[str]:
    cmd = ['-m', 'uvicorn', app, '--app-dir', str(HERE), '--host', '127.0.0.1', '--port', str(port)]
    return [*cmd, '--log-level', 'warning', '--no-access-log', '--backlog', str(4 * CONCURRENT)]


def _serve(protocol: Protocol, side: str, load: Load) -> Sample:
    """Start a fresh server for `side`, warm it up, run one batch, stop it."""
    port = _free_port()
    slow = load.slow
    env = {**os.environ, 'PYTHONUNBUFFERED': '1', AGENT_ENV: 'slow' if slow else 'fast'}
    server = subprocess.Popen([sys.executable, *_uvicorn(APPS[side], port)], env=env)
    try:
        _wait_ready(f'http://127.0.0.1:{port}', server)
        warm, _ = asyncio.run(_batch(port, protocol, 10, slow))  # imports, first-request caches
        if not all(o.ok for o in warm):
            raise RuntimeError(f'{protocol.name} warm-up failed: {[o.error for o in warm if not o.ok][:3]}')
        rest_kb = _status_kb(server.pid, 'VmRSS')
        peak_known = _reset_peak(server.pid)
        cpu_before, client_before = _cpu_seconds(server.pid), time.process_time()
        outcomes, wall = asyncio.run(_batch(port, protocol, load.concurrent, slow))
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
    ok = [o for o in outcomes if o.ok] or [Outcome(False, float('nan'), float('nan'), latencies=[float('nan')])]
    ttfbs = [o.ttfb for o in ok]
    sample = Sample(
        errors=errors,
        wall=wall,
        ttfb_p50=statistics.median(ttfbs),
        ttfb_p95=_pct(ttfbs, 0.95),
        total_p50=statistics.median(o.total for o in ok),
        cpu=cpu / load.concurrent,
        client_cpu=client_cpu / load.concurrent,
        rest_kb=rest_kb,
        peak_growth_kb=None if peak_kb is None else max(0, peak_kb - rest_kb),
    )
    if slow:
        latencies = [latency for o in ok for latency in o.latencies]
        sample.latency_p50 = statistics.median(latencies)
        sample.latency_p95 = _pct(latencies, 0.95)
        sample.latency_max = max(latencies)
    return sample


def _median(samples: list[Sample], name: str) -> float:
    return statistics.median(float(getattr(s, name)) for s in samples)


def _ms(seconds: float) -> str:
    return f'{seconds * 1e3:.1f} ms' if seconds < 0.1 else f'{seconds * 1e3:.0f} ms'


def _memory(samples: list[Sample]) -> str:
    growths = [s.peak_growth_kb for s in samples if s.peak_growth_kb is not None]
    if not growths:
        return 'n/a (cannot reset VmHWM)'
    growth = statistics.median(growths)
    return f'{growth / 1024:.1f} MiB ({growth / CONCURRENT:.0f} KiB/stream)'


def _fast_row(protocol: Protocol, side: str, samples: list[Sample], floor: list[Sample]) -> tuple[str, bool]:
    errors = sum(len(s.errors) for s in samples)
    cpu = _median(samples, 'cpu')
    ratio = cpu / _median(floor, 'cpu')
    within = side != 'ours' or ratio <= CPU_BAR
    ok = errors == 0 and within
    row = (
        f'| {protocol.name} | {side} | {CONCURRENT} × {DELTAS} | {errors} '
        f'| {CONCURRENT / _median(samples, "wall"):.0f} '
        f'| {_ms(_median(samples, "ttfb_p50"))} / {_ms(_median(samples, "ttfb_p95"))} '
        f'| {_ms(_median(samples, "total_p50"))} '
        f'| {cpu * 1e3:.2f} ms ({_median(samples, "client_cpu") * 1e3:.1f} ms) | {ratio:.2f}x '
        f'| {_median(samples, "rest_kb") / 1024:.1f} MiB | {_memory(samples)} '
        f'| {("pass" if ok else "**FAIL**") if side == "ours" else "—"} |'
    )
    return row, ok


def _slow_row(
    protocol: Protocol, side: str, load: Load, samples: list[Sample], floor: list[Sample]
) -> tuple[str, bool]:
    errors = sum(len(s.errors) for s in samples)
    cpu = _median(samples, 'cpu')
    row = (
        f'| {protocol.name} | {side} | {load.concurrent} × {SLOW_DELTAS} | {errors} '
        f'| {_ms(_median(samples, "latency_p50"))} / {_ms(_median(samples, "latency_p95"))} '
        f'/ {_ms(_median(samples, "latency_max"))} '
        f'| {_ms(_median(samples, "ttfb_p50"))} / {_ms(_median(samples, "ttfb_p95"))} '
        f'| {cpu * 1e3:.2f} ms | {cpu / _median(floor, "cpu"):.2f}x '
        f'| {("pass" if not errors else "**FAIL**") if side == "ours" else "—"} |'
    )
    return row, errors == 0


def main(rounds: int) -> bool:
    plan = [(p, side, load) for load in (FAST, SLOW, SLOW_LIGHT) for p in PROTOCOLS for side in SIDES[load]]
    results: dict[tuple[str, str, Load], list[Sample]] = {(p.name, s, load): [] for p, s, load in plan}
    for round_ in range(rounds):
        for protocol, side, load in plan:
            if side == 'peer' and round_:
                continue  # ten times off and slow to serve: once is enough to compare
            kind = f'{"slow" if load.slow else "fast"}, {load.concurrent} at once'
            print(f'round {round_ + 1}/{rounds}: {protocol.name}, {side}, {kind}', file=sys.stderr)
            results[protocol.name, side, load].append(_serve(protocol, side, load))
    passed = True
    print('### End to end: concurrent streaming requests under uvicorn (127.0.0.1)\n')
    print(
        '| protocol | server | requests × deltas | errors | requests/s | time to first byte (median / p95) '
        '| stream time (median) | CPU per request: server (client) | server CPU / floor '
        '| server RSS at rest | peak RSS growth (per stream) | result |'
    )
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for protocol, side, load in plan:
        if load == FAST:
            row, ok = _fast_row(
                protocol, side, results[protocol.name, side, load], results[protocol.name, 'floor', load]
            )
            print(row)
            passed &= ok or side != 'ours'
    print()
    print(
        f'#### The same servers with a slow agent: a delta every {SLOW_INTERVAL * 1e3:.0f} ms, '
        f'{CONCURRENT} streams at once (a loaded server) and {LIGHT} (a quiet one)\n'
    )
    print(
        '| protocol | server | requests × deltas | errors | delta latency, yield to client read '
        '(median / p95 / max) | time to first byte (median / p95) | CPU per request: server | server CPU / floor '
        '| result |'
    )
    print('|---|---|---|---|---|---|---|---|---|')
    for protocol, side, load in plan:
        if load != FAST:
            floor = results[protocol.name, 'floor', load]
            row, ok = _slow_row(protocol, side, load, results[protocol.name, side, load], floor)
            print(row)
            passed &= ok or side != 'ours'
    print()
    print(
        f'- every column is the median over {rounds} rounds (the peer: one), rows interleaved, a fresh uvicorn '
        f'server per row and round (one worker, asyncio loop, h11). The client (plain asyncio sockets, one '
        f'connection per request, all at once) runs in another process on the same {os.cpu_count()}-core '
        'machine, so the two share its cores.'
    )
    print(
        f"- bar: no errors, and our server CPU per request at most {CPU_BAR}x the floor's with the fast agent "
        f'({DELTAS} deltas without any model latency).'
    )
    print(
        '- floor: a bare Starlette app that parses the same body and streams the same frames, pre-encoded at '
        'import, through `StreamingResponse` (one `send` per frame; `e2e_floor_app.py`).'
    )
    print(
        "- peer: the same requests to pydantic-ai's `VercelAIAdapter` / `AGUIAdapter.dispatch_request` with an "
        '`Agent` whose `FunctionModel` streams the same deltas (`e2e_peer_app.py`), so its side also runs '
        "pydantic-ai's agent loop; for comparison."
    )
    print(
        '- delta latency: each slow delta carries the `time.monotonic()` at which the agent yielded it; the client '
        'subtracts it from the moment its read returned the frame. All streams start together, so with '
        f'{CONCURRENT} of them their deltas come due in bursts and the latency includes waiting behind the others.'
    )
    print()
    return passed


def profile_server(protocol: Protocol, lines: int = 40) -> None:
    """One batch against a server running under pyinstrument; print where the server's time went."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / 'server.txt'
        cmd = [sys.executable, '-m', 'pyinstrument', '-r', 'text', '--no-color', '-o', str(report)]
        server = subprocess.Popen(cmd + _uvicorn(APPS['ours'], port))
        try:
            _wait_ready(f'http://127.0.0.1:{port}', server)
            outcomes, wall = asyncio.run(_batch(port, protocol, CONCURRENT, False))
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


def _rounds(args: list[str]) -> int:
    if args[:1] == ['--rounds'] and len(args) == 2 and args[1].isdigit() and int(args[1]) > 0:
        return int(args[1])
    if args:
        raise SystemExit(f'usage: {sys.argv[0]} [--rounds N | --profile]')
    return DEFAULT_ROUNDS


if __name__ == '__main__':
    if sys.argv[1:] == ['--profile']:
        profile_server(PROTOCOLS[0])
        sys.exit(0)
    sys.exit(0 if main(_rounds(sys.argv[1:])) else 1)
