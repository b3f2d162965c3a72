"""Where the time goes on each hot path the benchmarks time: a pyinstrument call tree of each.

`python profile_hot_paths.py [name ...]` prints, for each hot path (or those whose name contains one of
`name`), the call tree pyinstrument records, library frames folded, cut to its first `LINES` lines. Each
workload runs in a loop for about a second and a half, so a millisecond workload still gathers enough
samples. Times are seconds over all the runs, under the profiler (which slows the run down).
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import bench_framing
import bench_streams
import history
from pyinstrument import Profiler

SECONDS = 1.5
LINES = 40


def _workloads() -> dict[str, Callable[[], object]]:
    from uibridge.adapters import ag_ui, vercel_ai
    from uibridge.core.framing import neutralize_tags

    prose = bench_framing.prose(bench_framing.MB)
    pairs = bench_framing.lt_space_pairs(bench_framing.MB)
    syste = bench_framing.syste_near_misses(bench_framing.MB)
    ours_history = history.ours()
    vercel_ui = vercel_ai.dump_messages(ours_history)
    ag_ui_messages = ag_ui.dump_messages(ours_history)
    tools = bench_streams.ours_tools()
    text = bench_streams.ours_text()
    kwargs: dict[str, Any] = {'message_id': 'msg_bench'}
    return {
        'neutralize_tags: 1 MB prose': lambda: neutralize_tags(prose),
        'neutralize_tags: 1 MB `< ` repeated': lambda: neutralize_tags(pairs),
        'neutralize_tags: 1 MB `<syste` near misses': lambda: neutralize_tags(syste),
        'Vercel dump_messages': lambda: vercel_ai.dump_messages(ours_history),
        'Vercel load_messages': lambda: vercel_ai.load_messages(vercel_ui),
        'AG-UI dump_messages': lambda: ag_ui.dump_messages(ours_history),
        'AG-UI load_messages': lambda: ag_ui.load_messages(ag_ui_messages),
        'Vercel stream: 1,000 tool calls': lambda: vercel_ai.encode_events(tools, **kwargs),
        'Vercel stream: 10,000 text deltas': lambda: vercel_ai.encode_events(text, **kwargs),
        'AG-UI stream: 1,000 tool calls': lambda: ag_ui.encode_events(tools),
        'AG-UI stream: 10,000 text deltas': lambda: ag_ui.encode_events(text),
    }


def profile(name: str, fn: Callable[[], object]) -> str:
    fn()
    profiler = Profiler(interval=0.001)
    runs = 0
    profiler.start()
    deadline = time.perf_counter() + SECONDS
    while time.perf_counter() < deadline:
        fn()
        runs += 1
    profiler.stop()
    text = profiler.output_text(unicode=True, color=False, show_all=False)
    lines = text.splitlines()
    # Drop pyinstrument's banner: the tree starts at the first line that carries a time.
    first = next(i for i, line in enumerate(lines) if line[:1].isdigit())
    tree = [line for line in lines[first:] if line.strip()]
    cut = '' if len(tree) <= LINES else f'\n… ({len(tree) - LINES} more lines)'
    return f'#### {name} ({runs} runs)\n\n```\n' + '\n'.join(tree[:LINES]) + cut + '\n```\n'


def main(names: list[str]) -> None:
    warnings.simplefilter('ignore')
    workloads = _workloads()
    print('### Profiles (pyinstrument call trees)\n')
    for name, fn in workloads.items():
        if names and not any(wanted.lower() in name.lower() for wanted in names):
            continue
        print(profile(name, fn))


if __name__ == '__main__':
    main(sys.argv[1:])
