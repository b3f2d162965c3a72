"""The dump, load, stream and `neutralize_tags` rows by instruction count, for two source trees: an A/B.

    bench/.venv/bin/python bench/instructions.py BASE_SRC [NEW_SRC] [ROW ...]

`BASE_SRC` and `NEW_SRC` are directories holding the `uibridge` package (`git worktree add ../base <commit>`
then `../base/src`; `NEW_SRC` defaults to this checkout's `src`). Each row's workload runs 0 and 2 times in
a fresh interpreter under valgrind's callgrind and the difference is halved, so start-up and imports cancel
out. Wall time on a shared machine does not resolve 5%; these counts repeat within about 0.3%, because every
source of run-to-run variation is pinned: garbage collector off (as `_harness.compare` times), hash seed 0,
address randomisation off, every module compiled beforehand and no bytecode written during the runs (a module
compiled in one of the two runs but not the other would land in the difference).

Needs `valgrind` and `setarch` (Debian: `valgrind`, `util-linux`). Not part of `make test`.
"""

from __future__ import annotations

import compileall
import gc
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROWS = {
    'vdump': 'Vercel `dump_messages`, 1,000 messages',
    'vload': 'Vercel `load_messages`, 1,000 messages',
    'vvload': 'Vercel validate + load, 1,000 messages',
    'adump': 'AG-UI `dump_messages`, 1,000 messages',
    'aload': 'AG-UI `load_messages`, 1,000 messages',
    'avload': 'AG-UI validate + load, 1,000 messages',
    'vverify': 'Vercel load with claims + `verify_history`, 1,000 messages',
    'averify': 'AG-UI load with claims + `verify_history`, 1,000 messages',
    'vtext': 'Vercel stream, 10,000 text deltas',
    'vstream': 'Vercel stream, 1,000 tool calls',
    'atext': 'AG-UI stream, 10,000 text deltas',
    'astream': 'AG-UI stream, 1,000 tool calls',
    'vserve': 'Vercel endpoint: one request, 500 deltas from a fast agent',
    'aserve': 'AG-UI endpoint: one request, 500 deltas from a fast agent',
    'vfloor': 'Vercel floor: one request, the same 500 deltas pre-encoded (bare Starlette)',
    'afloor': 'AG-UI floor: one request, the same 500 deltas pre-encoded (bare Starlette)',
    'vpaced': 'Vercel endpoint: one request, 50 deltas, the agent waiting before each',
    'apaced': 'AG-UI endpoint: one request, 50 deltas, the agent waiting before each',
    'vpacedfloor': 'Vercel floor: one request, the same 50 deltas, waiting before each',
    'apacedfloor': 'AG-UI floor: one request, the same 50 deltas, waiting before each',
    'fprose': '`neutralize_tags`, 1 MB prose',
    'fwide': '`neutralize_tags`, 1 MB prose, some words beyond ASCII',
    'flook': '`neutralize_tags`, 1 MB prose, beyond ASCII, some look-alike tags',
    'fnear': '`neutralize_tags`, 1 MB `<syste` near misses',
}
"""The `serve`, `floor` and `paced` rows run one request in process through the apps `bench_e2e.py` serves
(`e2e_app.py`, ours, and `e2e_floor_app.py`, the bare-Starlette floor) under uvicorn's HTTP/1.1 protocol with
a transport that keeps what is written: the server's CPU per request as `bench_e2e.py` measures it, system
calls aside. `paced`: the slow agent of `e2e_agents.py` with no delay, so it still waits (a checkpoint)
before each delta, and the floor's slow stream likewise."""
_REPEATS = 2


def _workload(row: str) -> Callable[[], Any]:
    """The row's work, its inputs built beforehand (not counted)."""
    sys.path.insert(0, str(HERE))
    warnings.simplefilter('ignore')
    import bench_streams
    import history

    from uibridge.adapters import ag_ui, vercel_ai

    if row not in ROWS:
        raise SystemExit(f'unknown row {row!r}: one of {", ".join(ROWS)}')
    if row[0] == 'f':
        return _framing_workload(row)
    if row[1:] in ('serve', 'floor', 'paced', 'pacedfloor'):
        return _request(row)
    adapter: Any = vercel_ai if row[0] == 'v' else ag_ui  # the two adapters' functions share their names
    stream_options = {'message_id': 'm'} if adapter is vercel_ai else {}
    messages = history.ours(1000)
    match row[1:]:
        case 'dump':
            return lambda: adapter.dump_messages(messages)
        case 'load':
            sdk = adapter.dump_messages(messages)
            return lambda: adapter.load_messages(sdk)
        case 'vload':
            plain = [_plain(m) for m in adapter.dump_messages(messages)]
            return lambda: adapter.load_messages(plain)
        case 'verify':
            return _verify_workload(adapter, adapter.dump_messages(messages))
        case 'text':
            text = bench_streams.ours_text()
            return lambda: adapter.encode_events(text, **stream_options)
        case _:
            tools = bench_streams.ours_tools()
            return lambda: adapter.encode_events(tools, **stream_options)


def _verify_workload(adapter: Any, dumped: Any) -> Callable[[], Any]:
    """What an endpoint pays for a signed history: load it with its claims, then verify it."""
    from uibridge.core.provenance import default_keyring
    from uibridge.core.verification import SignatureClaims, verify_history

    keyring = default_keyring()

    def work() -> None:
        claims = SignatureClaims()
        verified = verify_history(adapter.load_messages(dumped, claims=claims), claims, keyring)
        if verified.dropped:
            raise SystemExit(f'the signed history did not verify whole: {verified.dropped}')

    return work


def _request(row: str) -> Callable[[], Any]:
    """One POST through the row's app under uvicorn's own HTTP/1.1 protocol (h11), on an event loop kept across
    calls, with a transport that keeps what is written: the app's work and the server's per `send`, every
    system call left out."""
    import asyncio

    os.environ['UIBRIDGE_BENCH_AGENT'] = 'slow' if 'paced' in row else 'fast'  # read by e2e_agents at import
    os.environ['UIBRIDGE_BENCH_INTERVAL'] = '0'
    from e2e_agents import AG_UI_BODY, VERCEL_BODY
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    if row.endswith('floor'):
        from e2e_floor_app import app
    else:
        from e2e_app import app
    path, body = ('/api/chat', VERCEL_BODY) if row[0] == 'v' else ('/ag-ui', AG_UI_BODY)
    request = (
        f'POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n'
        f'content-length: {len(body)}\r\nconnection: close\r\n\r\n'
    ).encode() + body
    loop = asyncio.new_event_loop()
    config = Config(app, lifespan='off', log_level='warning', access_log=False)
    config.load()
    state = ServerState()

    class Transport(asyncio.Transport):
        def __init__(self) -> None:
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

    async def one() -> bytes:
        transport = Transport()
        protocol = H11Protocol(config=config, server_state=state, app_state={}, _loop=loop)
        protocol.connection_made(transport)
        protocol.data_received(request)
        await transport.closed
        protocol.connection_lost(None)
        return bytes(transport.written)

    def work() -> None:
        written = loop.run_until_complete(one())
        if not written.endswith(b'0\r\n\r\n') or not (b'[DONE]' in written[-300:] or b'RUN_FINISHED' in written[-300:]):
            raise SystemExit(f'{row}: the response did not finish: {written[-300:]!r}')

    return work


def _framing_workload(row: str) -> Callable[[], Any]:
    import bench_framing

    from uibridge.core.framing import neutralize_tags

    match row:
        case 'fprose':
            text = bench_framing.prose(bench_framing.MB)
        case 'fwide':
            text = bench_framing.prose(bench_framing.MB, non_ascii=True)
        case 'flook':
            text = bench_framing.prose(bench_framing.MB, non_ascii=True, lookalikes=True)
        case _:
            text = bench_framing.syste_near_misses(bench_framing.MB)
    return lambda: neutralize_tags(text)


def _plain(message: Any) -> dict[str, Any]:
    """A message as the JSON a client sends (what the validate + load rows start from)."""
    return message.model_dump(mode='json', by_alias=True, exclude_none=True)


def _child(row: str, times: int) -> None:
    work = _workload(row)
    work()  # warm: first-call caches (pydantic's, ours) are not the row's cost
    gc.collect()
    gc.disable()
    for _ in range(times):
        work()


def _count(src: Path, row: str, times: int) -> int:
    return callgrind(src, __file__, '--child', row, str(times))


def callgrind(src: Path, script: str, *args: str) -> int:
    """The instructions `python script *args` executes with `src` first on its path, every source of
    run-to-run variation pinned (see the module)."""
    env = {
        **os.environ,
        'PYTHONPATH': str(src),
        'PYTHONHASHSEED': '0',
        'PYTHONDONTWRITEBYTECODE': '1',
        'UIBRIDGE_SECRET': 'instruction-count',
    }
    command = ['setarch', '-R', 'valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null']
    command += [sys.executable, script, *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    found = re.search(r'Collected : (\d+)', result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f'no instruction count from valgrind:\n{result.stderr[-2000:]}')
    return int(found.group(1))


def compile_trees(*trees: Path) -> None:
    """Compile every module beforehand: one compiled in one run of a pair and not the other would count."""
    for tree in (*trees, HERE):
        compileall.compile_dir(tree, quiet=1)


def _per_run(src: Path, row: str) -> int:
    return (_count(src, row, _REPEATS) - _count(src, row, 0)) // _REPEATS


def main(argv: list[str]) -> int:
    if argv[:1] == ['--child']:
        _child(argv[1], int(argv[2]))
        return 0
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    base = Path(argv[0]).resolve()
    rest = argv[1:]
    new = HERE.parent / 'src'
    if rest and rest[0] not in ROWS:
        new = Path(rest.pop(0)).resolve()
    rows = rest or list(ROWS)
    compile_trees(base, new)
    print('| row | instructions, base → new | change |\n|---|---|---|')
    for row in rows:
        before, after = _per_run(base, row), _per_run(new, row)
        change = (after - before) / before * 100
        print(f'| {ROWS[row]} | {before / 1e6:.1f}M → {after / 1e6:.1f}M | {change:+.1f}% |', flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
