"""Work whose cost grows with a chat's size, kept off the event loop.

Parsing a large body, decoding a stored history, signing and verifying it, and dumping it for a client are CPU
work in proportion to their input. Done on the event loop, one 8 MiB chat read stalls every other stream of the
process for as long as that takes; done in a worker thread, the loop keeps serving meanwhile, because the
interpreter hands the GIL back and forth between threads every few milliseconds.

Only between two Python-level steps, though: a single call into compiled code (one `validate_json` of a whole
history, one `json.dumps` of it) keeps the GIL until it returns. So the work sent here is also cut into pieces
of bounded size (one message, or a batch of small ones, per call: `store._history_rows`, the bindings'
`dump_json`), and the longest the loop can wait is one such piece.

At most two such jobs run at once per event loop (`worker_limiter`): more threads would only share the same
GIL, and each one more is one more turn the loop waits for. Work on less than `INLINE_BYTES` stays on the loop,
where it costs less than the hop to a thread.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, TypeVarTuple

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar('T')
Ts = TypeVarTuple('Ts')

INLINE_BYTES = 64 * 1024
"""Below this many bytes of input, work runs on the event loop (a few milliseconds at most)."""
WORKER_THREADS = 2
"""History-sized jobs at once, per event loop: one per core of a small machine."""

_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar('uibridge_worker_limiter')


def worker_limiter() -> anyio.CapacityLimiter:
    """The event loop's limiter for history-sized work, shared by every endpoint and store it serves."""
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(WORKER_THREADS)
        _LIMITER.set(limiter)
        return limiter


async def off_loop(function: Callable[[*Ts], T], *args: *Ts, size: int) -> T:
    """`function(*args)`, in a worker thread when `size` (the bytes it works through) is `INLINE_BYTES` or more."""
    if size < INLINE_BYTES:
        return function(*args)
    return await in_worker(function, *args)


async def in_worker(function: Callable[[*Ts], T], *args: *Ts) -> T:
    """`function(*args)` in a worker thread, whatever its size: for work whose size is not known beforehand."""
    return await anyio.to_thread.run_sync(function, *args, limiter=worker_limiter())


def json_array(values: Iterable[Any]) -> bytes:
    """`json.dumps(list(values), ensure_ascii=False).encode()`, the same bytes, written and encoded a value at a
    time: one call over a whole history (and one `.encode()` of all of it) would hold the GIL throughout."""
    return b'[' + b', '.join(json.dumps(value, ensure_ascii=False).encode() for value in values) + b']'
