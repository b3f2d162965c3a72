"""`bench_managed_turns.py`'s rows by instruction count: one managed turn at turn 10 and at turn 300, for two trees.

    bench/.venv/bin/python bench/managed_turn_instructions.py BASE_SRC [NEW_SRC] [--turns N] [--protocol agui]

The same two chats as `bench_managed_turns.py` (demo echo agent, SQLite, the endpoint called as an ASGI app), grown
natively beforehand by each tree to turn 5 and turn 295 in one database file (its copy per count). Then, under
valgrind's callgrind (`instructions.callgrind`: hash seed, address randomisation and bytecode pinned), a fresh
process opens the file, takes one turn of a chat to warm what the endpoint keeps per chat (the store's history
cache, the settled view, the AG-UI body memo), then `N` more turns of it (4 by default) or none; the difference,
divided by `N`, is what one turn costs. Every thread is counted (the store's included). The client's own work (the
body's `json.dumps`, reading the answer) is counted too, the same for both trees; it is small beside the server's.

Instruction counts do not see what waiting costs (a hop to a worker thread is counted by the instructions it
runs, not by the wake-ups the scheduler makes); `bench_managed_turns.py`'s CPU time does.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHORT, LONG = 5, 295


def _prepare(protocol: str, directory: Path) -> None:
    """Grow the two chats (natively, with the tree on `sys.path`), and keep what the AG-UI client holds."""
    sys.path.insert(0, str(HERE))
    import bench_managed_turns as bench

    from uibridge.server import AGUIEndpoint, VercelAIEndpoint
    from uibridge.server.demo import DemoAgent
    from uibridge.server.store import SqliteStore

    async def grow() -> None:
        store = SqliteStore(directory / 'chats.db')
        endpoint_class = VercelAIEndpoint if protocol == 'vercel' else AGUIEndpoint
        endpoint = endpoint_class(DemoAgent(delay=0), store=store, secret=bench.SECRET, keep_alive=None)
        chats = {'short': bench._AGUIChat('short'), 'long': bench._AGUIChat('long')}  # pyright: ignore[reportPrivateUsage]
        for chat, turns in (('long', LONG), ('short', SHORT)):
            for number in range(turns):
                await _turn(bench, endpoint, protocol, chats[chat], chat, number)
        await store.aclose()
        held = {chat: chats[chat].held for chat in chats}
        (directory / 'held.json').write_text(json.dumps(held))

    asyncio.run(grow())


async def _turn(bench: Any, endpoint: Any, protocol: str, agui: Any, chat: str, number: int) -> None:
    path, body = bench._vercel_turn(chat, number) if protocol == 'vercel' else agui.turn(number)
    answer = await bench._post(endpoint, path, json.dumps(body).encode())
    if protocol == 'agui':
        agui.answered(answer)


def _child(protocol: str, chat: str, prepared: Path, times: int) -> None:
    import gc
    import warnings

    warnings.simplefilter('ignore')
    sys.path.insert(0, str(HERE))
    import bench_managed_turns as bench

    from uibridge.server import AGUIEndpoint, VercelAIEndpoint
    from uibridge.server.demo import DemoAgent
    from uibridge.server.store import SqliteStore

    with tempfile.TemporaryDirectory() as directory:
        shutil.copy(prepared / 'chats.db', Path(directory) / 'chats.db')
        held = json.loads((prepared / 'held.json').read_text())

        async def run() -> None:
            store = SqliteStore(Path(directory) / 'chats.db')
            endpoint_class = VercelAIEndpoint if protocol == 'vercel' else AGUIEndpoint
            endpoint = endpoint_class(DemoAgent(delay=0), store=store, secret=bench.SECRET, keep_alive=None)
            agui = bench._AGUIChat(chat)  # pyright: ignore[reportPrivateUsage]
            agui.held = held[chat]
            first = SHORT if chat == 'short' else LONG
            await _turn(bench, endpoint, protocol, agui, chat, first)  # warm: what the endpoint keeps per chat
            gc.collect()
            gc.disable()
            for number in range(first + 1, first + 1 + times):
                await _turn(bench, endpoint, protocol, agui, chat, number)
            await store.aclose()

        asyncio.run(run())


def main(argv: list[str]) -> int:
    if argv[:1] == ['--prepare']:
        _prepare(argv[1], Path(argv[2]))
        return 0
    if argv[:1] == ['--child']:
        _child(argv[1], argv[2], Path(argv[3]), int(argv[4]))
        return 0
    import os

    from instructions import callgrind, compile_trees

    turns, protocols = 4, ['vercel', 'agui']
    if '--turns' in argv:
        at = argv.index('--turns')
        turns = int(argv[at + 1])
        del argv[at : at + 2]
    if '--protocol' in argv:
        at = argv.index('--protocol')
        protocols = [argv[at + 1]]
        del argv[at : at + 2]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    trees = [Path(argv[0]).resolve(), Path(argv[1]).resolve() if len(argv) > 1 else HERE.parent / 'src']
    compile_trees(*trees)
    with tempfile.TemporaryDirectory() as work:
        counts: dict[tuple[int, str, str], float] = {}
        for number, tree in enumerate(trees):
            for protocol in protocols:
                prepared = Path(work) / f'{number}-{protocol}'
                prepared.mkdir()
                env = {**os.environ, 'PYTHONPATH': str(tree), 'PYTHONHASHSEED': '0'}
                subprocess.run([sys.executable, __file__, '--prepare', protocol, str(prepared)], env=env, check=True)
                for chat in ('short', 'long'):
                    args = ('--child', protocol, chat, str(prepared))
                    many = callgrind(tree, __file__, *args, str(turns))
                    none = callgrind(tree, __file__, *args, '0')
                    counts[number, protocol, chat] = (many - none) / turns
                    print(f'{tree} {protocol} {chat}: {counts[number, protocol, chat] / 1e6:.2f}M', flush=True)
    print('\n| protocol | tree | turn 10 | turn 300 | ratio |\n|---|---|---|---|---|')
    for protocol in protocols:
        for number, tree in enumerate(trees):
            short, long = counts[number, protocol, 'short'], counts[number, protocol, 'long']
            print(f'| {protocol} | {tree} | {short / 1e6:.2f}M | {long / 1e6:.2f}M | {long / short:.2f}x |')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
