"""The bridge's cost: server CPU a remote agent adds over its backend alone, per 100 events, both directions.

The backend is `e2e_app.py` under uvicorn, with either agent of `e2e_agents`: fast (`DELTAS` text deltas as fast
as it yields them, 504 events a run: the backend's writes carry many events each, the throughput case the bar is
for) or slow (`SLOW_DELTAS` deltas 20 ms apart, 54 events a run: one event a write, so every event costs the bridge a
read and a write of its own, as it costs the backend a write). Each row plays the same batch of concurrent requests
twice, on fresh servers:

- alone: the client (bench_e2e's raw-socket client) asks the backend directly, in the frontend's protocol;
- bridged: the client asks `bridge_app.py` (`create_app(RemoteAGUIAgent(...))` / `RemoteVercelAgent`, under
  uvicorn) in the frontend's protocol, and the bridge asks the backend in the other one.

The added CPU is the bridged servers' (bridge and backend) over the backend's alone, per run, divided by the
events of a run; the bridge's own CPU is shown beside it. Every run is checked whole (all deltas and the end
arrived). `--rounds N` (default 3): the median of N rounds, each on fresh servers, rows interleaved.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bench_e2e import (
    APPS,
    PROTOCOLS,
    REQUEST_TIMEOUT,
    Protocol,
    _cpu_seconds,
    _dechunk,
    _free_port,
    _rounds,
    _uvicorn,
    _wait_ready,
    raw_request,
)
from bridge_app import REMOTE_ENV
from e2e_agents import AGENT_ENV, SLOW_DELTAS, STAMP_PATTERN
from e2e_script import DELTAS, TOKENS

REQUESTS = 50
EVENTS = {'fast': DELTAS + 4, 'slow': SLOW_DELTAS + 4}
"""An agent's events a run: `ResponseStart`, `PartStart`, the deltas, `PartEnd`, `RunFinished`."""
BAR_MS_PER_100 = 1.0
"""The bridge adds less than this much server CPU per 100 events."""


@dataclass
class Sample:
    alone: float
    """The backend's CPU per run, asked directly."""
    backend: float
    """The backend's CPU per run, asked by the bridge."""
    bridge: float
    """The bridge's CPU per run."""
    errors: int


@contextmanager
def _server(app: str, env: dict[str, str] | None = None) -> Iterator[tuple[int, int]]:
    """A fresh uvicorn server for `app`: its port and pid."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, *_uvicorn(app, port)], env={**os.environ, **(env or {})})
    try:
        _wait_ready(f'http://127.0.0.1:{port}', server)
        yield port, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


TEXT = ''.join(TOKENS[i % len(TOKENS)] for i in range(DELTAS))
"""What every run says: the client checks it arrived whole (a bridge may join deltas that arrived together)."""
_DELTA = re.compile(rb'^data: (\{"type":"(?:text-delta|TEXT_MESSAGE_CONTENT)".*)$', re.MULTILINE)


async def _ask(port: int, protocol: Protocol, agent: str) -> str:
    """One request over a raw connection (a light client); what went wrong, or `''`."""
    request = raw_request(port, protocol)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            reader, writer = await asyncio.open_connection('127.0.0.1', port)
            try:
                writer.write(request)
                received = await reader.read()
            finally:
                writer.close()
    except (TimeoutError, OSError) as e:
        return f'{type(e).__name__}: {e}'
    head, _, body = received.partition(b'\r\n\r\n')
    if not head.startswith(b'HTTP/1.1 200'):
        return f'{head[:40]!r}: {body[:200]!r}'
    if b'transfer-encoding: chunked' in head.lower():
        body = _dechunk(body)
    text = ''.join(json.loads(frame)['delta'] for frame in _DELTA.findall(body))
    whole = len(STAMP_PATTERN.findall(text.encode())) == SLOW_DELTAS if agent == 'slow' else text == TEXT
    if not whole or protocol.end_marker not in body:
        return (
            f"{len(text)} characters, not the {agent} agent's text; end marker present: {protocol.end_marker in body}"
        )
    return ''


async def _batch(port: int, protocol: Protocol, agent: str, count: int) -> list[str]:
    return list(await asyncio.gather(*(_ask(port, protocol, agent) for _ in range(count))))


def _played(port: int, protocol: Protocol, agent: str, pids: list[int]) -> tuple[list[float], int]:
    """Warm the servers, then one batch: each server's CPU over it, per run, and the requests that failed."""
    warm = [error for error in asyncio.run(_batch(port, protocol, agent, 5)) if error]
    if warm:
        raise RuntimeError(f'{protocol.name} warm-up failed: {warm[:3]}')
    before = [_cpu_seconds(pid) for pid in pids]
    errors = [error for error in asyncio.run(_batch(port, protocol, agent, REQUESTS)) if error]
    spent = [(_cpu_seconds(pid) - start) / REQUESTS for pid, start in zip(pids, before, strict=True)]
    for error in errors[:3]:
        print(f'error ({protocol.name}): {error}', file=sys.stderr)
    return spent, len(errors)


def _sample(front: Protocol, back: Protocol, agent: str) -> Sample:
    backend_env = {AGENT_ENV: agent}
    with _server(APPS['ours'], backend_env) as (port, pid):
        [alone], errors = _played(port, front, agent, [pid])
    with _server(APPS['ours'], backend_env) as (backend_port, backend_pid):
        remote = {REMOTE_ENV: f'http://127.0.0.1:{backend_port}{back.path}'}
        with _server('bridge_app:app', remote) as (bridge_port, bridge_pid):
            [backend, bridge], bridged_errors = _played(bridge_port, front, agent, [backend_pid, bridge_pid])
    return Sample(alone, backend, bridge, errors + bridged_errors)


def _per_100(seconds_per_run: float, agent: str) -> float:
    return seconds_per_run / EVENTS[agent] * 100 * 1e3


def main(rounds: int) -> bool:
    vercel, agui = PROTOCOLS
    plan = [(front, back, agent) for agent in ('fast', 'slow') for front, back in ((vercel, agui), (agui, vercel))]
    results: dict[tuple[str, str], list[Sample]] = {(front.name, agent): [] for front, _, agent in plan}
    for round_ in range(rounds):
        for front, back, agent in plan:
            kind = f'{front.name} frontend, {back.name} backend, {agent} agent'
            print(f'round {round_ + 1}/{rounds}: {kind}', file=sys.stderr)
            results[front.name, agent].append(_sample(front, back, agent))
    print('### The bridge: server CPU a remote agent adds over its backend alone (uvicorn, 127.0.0.1)\n')
    print(
        '| frontend → backend | agent | requests × events | errors | backend alone, CPU per run '
        '| bridged: backend + bridge, CPU per run | added per 100 events (bridge alone) '
        '| backend alone per 100 events | bar | result |'
    )
    print('|---|---|---|---|---|---|---|---|---|---|')
    passed = True
    for front, back, agent in plan:
        samples = results[front.name, agent]
        errors = sum(s.errors for s in samples)
        alone = statistics.median(s.alone for s in samples)
        backend = statistics.median(s.backend for s in samples)
        bridge = statistics.median(s.bridge for s in samples)
        added = _per_100(statistics.median(s.backend + s.bridge - s.alone for s in samples), agent)
        ok = errors == 0 and (agent == 'slow' or added < BAR_MS_PER_100)
        passed &= ok
        bar = f'< {BAR_MS_PER_100:g} ms' if agent == 'fast' else '—'
        print(
            f'| {front.name} → {back.name} | {agent} | {REQUESTS} × {EVENTS[agent]} | {errors} | {alone * 1e3:.2f} ms '
            f'| {backend * 1e3:.2f} + {bridge * 1e3:.2f} ms | {added:.3f} ms ({_per_100(bridge, agent):.3f} ms) '
            f'| {_per_100(alone, agent):.3f} ms | {bar} | {"pass" if ok else "**FAIL**"} |'
        )
    print()
    print(
        f'- every column is the median over {rounds} rounds, each on fresh servers (one uvicorn worker each, '
        f"asyncio loop); {REQUESTS} requests at once, after a warm-up of 5; CPU is each server process's user + "
        'system time over the batch (`/proc/<pid>/task/*/schedstat`), per run. The client runs in this process on '
        f'the same {os.cpu_count()}-core machine.'
    )
    print(
        "- added: the bridged servers' CPU over the backend's alone, per 100 of a run's events. The bridge reads "
        "the backend's stream with the stream decoder and streams it again in the frontend's protocol; the "
        'backend, asked by the bridge, also verifies the signed history the bridge sends.'
    )
    print(
        '- the bar is for the fast agent, whose writes carry many events each. With the slow one every event is '
        "a read (httpx), a decode and a write of its own, where the backend's is an encode and a write (its cost per "
        '100 events is the last column): what forwarding each event as it arrives costs, in system calls and '
        'event-loop wake-ups, more than the work on it.'
    )
    print()
    return passed


if __name__ == '__main__':
    sys.exit(0 if main(_rounds(sys.argv[1:])) else 1)
