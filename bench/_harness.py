"""Timing and reporting shared by the benchmarks.

Every measurement is the median of several repetitions in one process, ours and the peer's interleaved so
that a noisy neighbour slows both alike. Each benchmark prints one markdown table (work, our median, the
peer's median, the ratio, the bar, pass or fail); `run_all.py` gathers them into `RESULTS.md`.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ['Row', 'compare', 'fmt_time', 'print_table', 'time_one']


def time_one(fn: Callable[[], object], *, repeat: int = 7, warmup: int = 1) -> float:
    """The median wall time of `fn()` in seconds."""
    return compare([fn], repeat=repeat, warmup=warmup)[0]


SLOW = 2.0
"""A run longer than this (seconds) in the warm-up caps the repetitions at three: the median of three is
enough to show a cost that large, and seven would keep the whole suite waiting for minutes."""


def compare(fns: list[Callable[[], object]], *, repeat: int = 7, warmup: int = 1) -> list[float]:
    """The median wall time of each of `fns`, run in turn `repeat` times (after `warmup` rounds)."""
    for _ in range(warmup):
        for fn in fns:
            start = time.perf_counter()
            fn()
            if time.perf_counter() - start > SLOW:
                repeat = min(repeat, 3)
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, times in zip(fns, samples, strict=True):
            gc.collect()
            # The collector would otherwise fire inside whichever run happens to cross its threshold.
            gc.disable()
            try:
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            finally:
                gc.enable()
    return [statistics.median(times) for times in samples]


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return '—'
    if seconds >= 1:
        return f'{seconds:.2f} s'
    if seconds >= 1e-3:
        return f'{seconds * 1e3:.2f} ms'
    return f'{seconds * 1e6:.1f} µs'


@dataclass
class Row:
    work: str
    ours: str
    peer: str
    ratio: str
    bar: str
    passed: bool | None
    """`None` for a row that is reported but has no bar."""


def print_table(title: str, rows: list[Row], notes: list[str] | None = None) -> bool:
    """Print `rows` as a markdown table under `title`; True when every row with a bar passed."""
    print(f'### {title}\n')
    print('| work | ours (median) | peer (median) | ratio | bar | result |')
    print('|---|---|---|---|---|---|')
    for row in rows:
        result = '—' if row.passed is None else ('pass' if row.passed else '**FAIL**')
        print(f'| {row.work} | {row.ours} | {row.peer} | {row.ratio} | {row.bar} | {result} |')
    print()
    for note in notes or []:
        print(f'- {note}')
    if notes:
        print()
    return all(row.passed is not False for row in rows)
