"""What telemetry costs a request: tracing on (the SDK with an exporter that does nothing) against off, and
OpenTelemetry absent, two ways: instructions per request in process, and a served server's CPU per request.

    bench/.venv/bin/python bench/bench_telemetry.py [--base BASE_SRC] [--requests N] [--configs ...]
    bench/.venv/bin/python bench/bench_telemetry.py --served [--before BEFORE_SRC] [--rounds R] [--requests N]

A request, in both: one chat turn to `create_app`'s Vercel AI endpoint, the body parsed, the history verified,
and a run of two model responses, 200 text deltas, one tool call and its result, with usage, encoded and
streamed. The agent awaits between deltas, as a model's stream does, so each delta leaves in its own `send`.

**In process** (the default): instructions counted by valgrind's callgrind (`instructions.callgrind`; `perf stat
-e instructions` is not supported on this virtual machine), the endpoint driven straight over ASGI with no HTTP
server, so the count is uibridge's own CPU with nothing beside it: a harsher denominator than a server's. Each
configuration in a fresh interpreter, `N` requests and none, the difference divided by `N`, so start-up,
imports and the warm-up requests cancel out; the counts repeat to about 0.3%, but two configurations that run
the same per-request code in differently-populated processes (`absent` and `off`) have read up to 2% apart.

**Served** (`--served`): what the issue's bar is stated in, the share of a server's CPU per request. One
uvicorn process per configuration (`telemetry_app.py`, h11, no access log), all up at once; this process is
the client (raw sockets, a connection per request, one request at a time, each answer read to its `[DONE]`).
After a warm-up, every round runs a batch of `N` requests on each server, in an order rotated from round to
round, and reads the server's CPU around the batch: user + system time of all its threads (the scheduler's
nanoseconds from `/proc/<pid>/task/*/schedstat`; `utime + stime` from `/proc/<pid>/stat` where that is
missing, whose 10 ms ticks need larger batches). The machine is shared and its load moves, so each server is
compared with the `off` server of the same tree *in the same round* (batches seconds apart), and the table
gives the median of those paired ratios over the rounds with the middle half of them; `off-again`, a second
`telemetry=False` server, is the A/A control: how far two identical servers read apart, the resolution.
`--before SRC` serves every configuration from a second tree too (before/after side by side, same load).
The kernel's socket work and uvicorn's HTTP parsing and framing are in the denominator, as in production.

Configurations:
- `base`: the tree before telemetry (`--base`, e.g. `git archive <commit> src | tar -x -C ../base`), with
  `opentelemetry` made unimportable;
- `absent`: this tree, `opentelemetry` unimportable (the `otel` extra not installed: a meta path finder that
  refuses it, installed before uibridge is imported; the served app checks nothing of it was imported);
- `off`: this tree, `telemetry=False` (installed, turned off);
- `api`: this tree, the default telemetry, the API installed and no SDK set up (OpenTelemetry's no-op proxies);
- `sdk`: this tree, the SDK's tracer and meter providers set globally, spans through a `SimpleSpanProcessor`
  (each span exported as it ends, on the request's thread) to an exporter that drops them, metrics aggregated
  for a reader that is never read;
- `sdk-batch`: as `sdk`, through a `BatchSpanProcessor` (what production set-ups use: spans queued, exported
  from the SDK's own thread, whose CPU the served count includes);
- `sdk+content`: as `sdk`, with `Telemetry(record_content=True)`;
- `log`: as `off`, with the run log line written (INFO, a formatter, a stream to `/dev/null`).

Bars: `sdk` within 5% of `off`; in process, `absent` within 0.5% of `base`. Needs `valgrind` and `setarch`
(in process); not part of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.abc
import importlib.machinery
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _harness import Row, print_table
from instructions import callgrind, compile_trees

HERE = Path(__file__).resolve().parent
NEW_SRC = HERE.parent / 'src'
DEFAULT_REQUESTS = 20
DELTAS = 200
CONFIGS = {
    'base': 'the tree before telemetry',
    'absent': '`opentelemetry` not installed',
    'off': '`telemetry=False`',
    'api': 'API only, no SDK (no-op)',
    'sdk': 'SDK, no-op exporter',
    'sdk-batch': 'SDK, no-op exporter behind a `BatchSpanProcessor`',
    'sdk+content': 'SDK, no-op exporter, `record_content=True`',
    'log': '`telemetry=False`, run log line at INFO',
}
SERVED_LABELS = {'off-again': '`telemetry=False`, a second server (the A/A control)'}
SDK_BAR = 0.05
ABSENT_BAR = 0.005
CONFIG_ENV = 'UIBRIDGE_BENCH_TELEMETRY'
"""The configuration a `--served` server runs (`telemetry_app.py` reads it)."""
SERVED_CONFIGS = ('absent', 'off', 'off-again', 'api', 'sdk')
"""`off-again`: a second `telemetry=False` server, the A/A control: how far two identical servers read apart."""
DEFAULT_SERVED_REQUESTS = 100
DEFAULT_ROUNDS = 15
WARM_REQUESTS = 30
REQUEST_TIMEOUT = 30.0


class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: object = None) -> importlib.machinery.ModuleSpec:
        if name == 'opentelemetry' or name.startswith('opentelemetry.'):
            raise ModuleNotFoundError(f'No module named {name!r}', name=name)
        return None  # type: ignore[return-value]


def _agent() -> Any:
    from uibridge.core.events import PartDelta, PartEnd, PartStart, ResponseInfo, ResponseStart, ToolResult
    from uibridge.core.messages import TextPart, ToolCallPart, ToolReturnPart
    from uibridge.core.usage import Usage

    async def agent(run: Any) -> AsyncIterator[Any]:
        yield ResponseStart(model_name='bench-model', provider_name='bench')
        yield PartStart(0, TextPart(content=''))
        for index in range(DELTAS // 2):
            await asyncio.sleep(0)  # the model's next token is not there yet
            yield PartDelta(0, f'word{index} ')
        yield PartEnd(0)
        yield PartStart(1, ToolCallPart(tool_name='lookup', args={'city': 'Lyon'}, tool_call_id='call_1'))
        yield PartEnd(1)
        yield ResponseInfo(usage=Usage(input_tokens=120, output_tokens=110), finish_reason='tool_call')
        yield ToolResult(ToolReturnPart(tool_name='lookup', content={'temperature': 21}, tool_call_id='call_1'))
        yield ResponseStart(model_name='bench-model', provider_name='bench')
        yield PartStart(0, TextPart(content=''))
        for index in range(DELTAS // 2):
            await asyncio.sleep(0)
            yield PartDelta(0, f'word{index} ')
        yield PartEnd(0)
        yield ResponseInfo(usage=Usage(input_tokens=260, output_tokens=100), finish_reason='stop')

    return agent


def _body() -> bytes:
    history: list[dict[str, Any]] = []
    for turn in range(3):
        history.append({'id': f'u{turn}', 'role': 'user', 'parts': [{'type': 'text', 'text': f'question {turn}'}]})
    history.append({'id': 'u-last', 'role': 'user', 'parts': [{'type': 'text', 'text': 'what is the weather?'}]})
    return json.dumps({'id': 'chat-1', 'messages': history, 'trigger': 'submit-message'}).encode()


def _app(config: str) -> Any:
    if config in ('base', 'absent'):
        sys.meta_path.insert(0, _NotInstalled())
    from uibridge.server import create_app

    options: dict[str, Any] = {}
    if config in ('off', 'log'):
        options['telemetry'] = False
    if config.startswith('sdk'):
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SimpleSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        class Dropping(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        if config == 'sdk-batch':
            provider.add_span_processor(BatchSpanProcessor(Dropping()))
        else:
            provider.add_span_processor(SimpleSpanProcessor(Dropping()))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
        if config == 'sdk+content':
            from uibridge.server.telemetry import Telemetry

            options['telemetry'] = Telemetry(record_content=True)
    if config == 'log':
        handler = logging.StreamHandler(open(os.devnull, 'w'))  # noqa: SIM115 (kept open for the process)
        handler.setFormatter(logging.Formatter('%(asctime)s %(levelname)s %(name)s %(message)s'))
        logging.getLogger('uibridge.server').addHandler(handler)
        logging.getLogger('uibridge.server').setLevel(logging.INFO)
    return create_app(_agent(), **options)


async def _request(app: Any, body: bytes) -> int:
    """One request straight over ASGI; the bytes of the answer."""
    forever = asyncio.Event()
    received = False
    answered = 0

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {'type': 'http.request', 'body': body, 'more_body': False}
        await forever.wait()
        return {'type': 'http.disconnect'}

    async def send(message: dict[str, Any]) -> None:
        nonlocal answered
        if message['type'] == 'http.response.start' and message['status'] != 200:
            raise SystemExit(f'the request was answered {message["status"]}')
        answered += len(message.get('body', b''))

    scope = {
        'type': 'http',
        'asgi': {'version': '3.0'},
        'http_version': '1.1',
        'method': 'POST',
        'scheme': 'http',
        'path': '/api/chat',
        'raw_path': b'/api/chat',
        'query_string': b'',
        'root_path': '',
        'headers': [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())],
        'client': ('127.0.0.1', 40000),
        'server': ('127.0.0.1', 8000),
    }
    await app(scope, receive, send)
    return answered


async def _requests(app: Any, body: bytes, times: int) -> None:
    for _ in range(times):
        await _request(app, body)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return int(sock.getsockname()[1])


def _server_cpu(pid: int) -> float:
    """The server's CPU seconds so far, user and system: the scheduler's nanoseconds on a CPU summed over its
    threads (`/proc/<pid>/task/*/schedstat`), else `utime + stime` from `/proc/<pid>/stat` (clock ticks, 10 ms
    apart: a batch then needs a second or more of CPU to resolve a few percent)."""
    try:
        return sum(int(p.read_text().split()[0]) for p in Path(f'/proc/{pid}/task').glob('*/schedstat')) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


async def _served_request(port: int, request: bytes) -> None:
    """One request over a connection of its own, read to its end: a raw socket, so the client stays light."""
    async with asyncio.timeout(REQUEST_TIMEOUT):
        reader, writer = await asyncio.open_connection('127.0.0.1', port)
        try:
            writer.write(request)
            received = bytearray()
            while chunk := await reader.read(1 << 16):
                received += chunk
        finally:
            writer.close()
    if not received.startswith(b'HTTP/1.1 200') or b'data: [DONE]' not in received[-200:]:
        raise SystemExit(f'port {port}: the answer did not finish: {bytes(received[:300])!r}')


async def _served_batch(port: int, request: bytes, count: int) -> None:
    for _ in range(count):
        await _served_request(port, request)


class _Server:
    """One uvicorn process serving `telemetry_app` in one configuration, from the `uibridge` in `src`."""

    def __init__(self, config: str, src: Path) -> None:
        self.port = _free_port()
        env = {
            **os.environ,
            'PYTHONPATH': str(src),
            'PYTHONHASHSEED': '0',
            'UIBRIDGE_SECRET': 'bench-telemetry',
            CONFIG_ENV: 'off' if config == 'off-again' else config,
        }
        command = [sys.executable, '-m', 'uvicorn', 'telemetry_app:app', '--app-dir', str(HERE)]
        command += ['--host', '127.0.0.1', '--port', str(self.port), '--log-level', 'warning', '--no-access-log']
        self.process = subprocess.Popen(command, env=env)
        body = _body()
        self.request = (
            f'POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-type: application/json\r\n'
            f'content-length: {len(body)}\r\nconnection: close\r\n\r\n'
        ).encode() + body

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f'a server exited with {self.process.returncode}')
            try:
                with socket.create_connection(('127.0.0.1', self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit('a server did not start within 60 s')

    def batch(self, count: int) -> float:
        """Server CPU seconds per request over `count` requests, one after the other."""
        before = _server_cpu(self.process.pid)
        asyncio.run(_served_batch(self.port, self.request, count))
        return (_server_cpu(self.process.pid) - before) / count

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _served(configs: list[str], trees: dict[str, Path], base: Path | None, requests: int, rounds: int) -> bool:
    """Every server up at once (each configuration from each tree: `trees`, by label); each round runs one batch
    on each, in an order rotated from round to round. Per server: the median over rounds of its CPU per request,
    and the median over rounds of its ratio to the same tree's `off` server in that round (paired: a round's
    batches run within seconds of each other, under the same load on the shared machine)."""
    keys = [(tree, config) for tree in trees for config in configs]
    if base is not None:
        keys.insert(0, ('', 'base'))
    servers = {key: _Server(key[1], base if key[1] == 'base' and base else trees[key[0]]) for key in keys}
    try:
        for server in servers.values():
            server.wait_ready()
        for server in servers.values():
            server.batch(WARM_REQUESTS)  # imports on first use, first-call caches
        samples: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        for index in range(rounds):
            for key in keys[index % len(keys) :] + keys[: index % len(keys)]:
                samples[key].append(servers[key].batch(requests))
            print(f'round {index + 1}/{rounds}', file=sys.stderr, flush=True)
    finally:
        for server in servers.values():
            server.stop()
    rows: list[Row] = []
    passed = True
    for key in keys:
        tree, config = key
        cpu = statistics.median(samples[key])
        reference = ('', 'base') if config == 'absent' and base is not None else (tree, 'off')
        versus, bar, ok = '—', '—', None
        if key != reference and reference in samples:
            ratios = sorted(a / b - 1 for a, b in zip(samples[key], samples[reference], strict=True))
            low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
            change = statistics.median(ratios)
            versus = f'{change:+.1%} vs `{reference[1]}` (middle half of rounds {low:+.1%} to {high:+.1%})'
            if config.startswith('sdk'):
                bar, ok = f'≤ +{SDK_BAR:.0%} of `off`', change <= SDK_BAR
        label = SERVED_LABELS.get(config, CONFIGS.get(config, config))
        rows.append(Row(f'{tree}: {label}' if tree else label, f'{cpu * 1e6:,.0f} µs CPU', '—', versus, bar, ok))
        passed = passed and ok is not False
    notes = [
        f'A request: POST to the Vercel endpoint of `create_app` under uvicorn (h11, a connection per request, one'
        f' request at a time), one chat turn of a 4-message history answered with {DELTAS} text deltas, a tool'
        f' call and its result over two responses. Server CPU (user + system, all threads) per request over a'
        f' batch of {requests}; {rounds} rounds, every server a process of its own, batches interleaved.',
    ]
    print_table('Telemetry served: server CPU per request under uvicorn, tracing on and off', rows, notes)
    return passed


def _h11_requests(app: Any, body: bytes) -> Any:
    """`times` requests through uvicorn's own HTTP/1.1 protocol (h11, what `--served` runs) on a transport that
    keeps what is written: the served request's work in this process, the system calls left out."""
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    request = (
        f'POST /api/chat HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n'
        f'content-length: {len(body)}\r\nconnection: close\r\n\r\n'
    ).encode() + body
    config = Config(app, lifespan='off', log_level='warning', access_log=False)
    config.load()
    state = ServerState()

    class Transport(asyncio.Transport):
        def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
            super().__init__()
            self.written = bytearray()
            self.closed = loop.create_future()

        def write(self, data: Any) -> None:
            self.written += data

        def close(self) -> None:
            if not self.closed.done():
                self.closed.set_result(None)

        def is_closing(self) -> bool:
            return self.closed.done()

        def get_extra_info(self, name: str, default: Any = None) -> Any:
            return {'peername': ('127.0.0.1', 50000), 'sockname': ('127.0.0.1', 8000)}.get(name, default)

        def pause_reading(self) -> None:
            pass

        def resume_reading(self) -> None:
            pass

    async def requests(times: int) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(times):
            transport = Transport(loop)
            protocol = H11Protocol(config=config, server_state=state, app_state={}, _loop=loop)
            protocol.connection_made(transport)
            protocol.data_received(request)
            await transport.closed
            protocol.connection_lost(None)
            if not transport.written.startswith(b'HTTP/1.1 200') or b'[DONE]' not in transport.written[-300:]:
                raise SystemExit(f'the answer did not finish: {bytes(transport.written[-300:])!r}')

    return requests


def _child(config: str, times: int, h11: bool) -> None:
    app = _app(config)
    body = _body()
    if h11:
        through = _h11_requests(app, body)
    else:

        async def through(count: int) -> None:
            await _requests(app, body, count)

    asyncio.run(through(2))  # warm: first-call caches (pydantic's, ours, the SDK's)
    gc.collect()
    gc.disable()
    asyncio.run(through(times))


def _per_request(src: Path, config: str, requests: int, h11: bool) -> float:
    args = ('--child-h11' if h11 else '--child', config)
    return (callgrind(src, __file__, *args, str(requests)) - callgrind(src, __file__, *args, '0')) / requests


def main(argv: list[str]) -> int:
    if argv[:1] in (['--child'], ['--child-h11']):
        _child(argv[1], int(argv[2]), argv[0] == '--child-h11')
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--base', type=Path, help='a directory holding the uibridge package before telemetry')
    parser.add_argument('--requests', type=int, default=DEFAULT_REQUESTS)
    parser.add_argument('--configs', nargs='*', choices=[*CONFIGS, *SERVED_LABELS], default=None)
    parser.add_argument('--served', action='store_true', help='server CPU per request under uvicorn')
    parser.add_argument('--rounds', type=int, default=DEFAULT_ROUNDS, help='with --served')
    parser.add_argument('--before', type=Path, help='with --served: also serve this uibridge tree, side by side')
    parser.add_argument('--h11', action='store_true', help="in process, through uvicorn's HTTP/1.1 protocol")
    parser.add_argument('--src', type=Path, default=NEW_SRC, help="in process: the tree to count (this checkout's)")
    args = parser.parse_args(argv)
    if args.served:
        configs = [config for config in args.configs or SERVED_CONFIGS if config != 'base']
        trees = {'before': args.before.resolve(), 'after': NEW_SRC} if args.before else {'': NEW_SRC}
        requests = DEFAULT_SERVED_REQUESTS if args.requests == DEFAULT_REQUESTS else args.requests
        base = args.base.resolve() if args.base else None
        return 0 if _served(configs, trees, base, requests, args.rounds) else 1
    args.configs = args.configs or list(CONFIGS)
    src = args.src.resolve()
    compile_trees(src, *([args.base] if args.base else []))
    wanted = [config for config in args.configs if config != 'base' or args.base is not None]
    with ThreadPoolExecutor(2) as pool:  # two callgrind runs at a time: counts do not depend on the load
        jobs = {
            c: pool.submit(_per_request, args.base if c == 'base' else src, c, args.requests, args.h11) for c in wanted
        }
        counts = {config: job.result() for config, job in jobs.items()}
    rows: list[Row] = []
    passed = True
    for config, count in counts.items():
        reference = 'base' if config == 'absent' and 'base' in counts else 'off'
        change = count / counts[reference] - 1 if config not in ('base', 'off') and reference in counts else None
        bar, ok = '—', None
        if config.startswith('sdk') and config != 'sdk+content':
            bar, ok = f'≤ +{SDK_BAR:.0%} of `off`', change is not None and change <= SDK_BAR
        elif config == 'absent' and reference == 'base':
            bar, ok = f'within {ABSENT_BAR:.1%} of `base`', change is not None and abs(change) <= ABSENT_BAR
        versus = '—' if change is None else f'{change:+.2%} vs `{reference}`'
        rows.append(Row(CONFIGS[config], f'{count / 1e3:,.0f}K instructions', '—', versus, bar, ok))
        passed = passed and ok is not False
    notes = [
        f'A request: the Vercel endpoint of `create_app`, one chat turn of a 4-message history, answered with'
        f' {DELTAS} text deltas, a tool call and its result over two responses; {args.requests} requests per'
        ' count, in process'
        + (" through uvicorn's h11 protocol (a transport keeping what is written)" if args.h11 else ' over ASGI')
        + '; instructions by callgrind, fresh interpreter per count.',
    ]
    print_table('Telemetry: instructions per request, tracing on and off', rows, notes)
    return 0 if passed else 1


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
