"""Slow, self-contained subprocesses (pyright, a fresh interpreter checking its imports) started when their test
module is imported, so they run on the machine's other core while pytest collects and runs everything before
them; the test then takes the finished result (or waits for it).

A single worker runs them one after another, in collection order: one such process at a time beside pytest.
What a test asserts is unchanged; only when the process runs moves. Its failure (a timeout, say) is raised in the
test that asks for the result. `pytest_sessionfinish` in tests/conftest.py calls `drop_pending`, so a run that
selects few tests does not wait at exit for processes nobody will read.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar('T')

_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix='tests-background')


def start(job: Callable[[], T]) -> Future[T]:
    """`job()` on the background worker; `.result()` on the future gives its value or raises its error."""
    return _worker.submit(job)


def run(args: Sequence[str], **options: Any) -> Future[subprocess.CompletedProcess[str]]:
    """`subprocess.run(args, capture_output=True, text=True, **options)` on the background worker, in the working
    directory and with the environment of now: a test running meanwhile may change either for itself
    (`monkeypatch.chdir`, `monkeypatch.setenv`)."""
    options = {'cwd': os.getcwd(), 'env': dict(os.environ), **options}
    return start(lambda: subprocess.run(args, capture_output=True, text=True, **options))


def drop_pending() -> None:
    """Cancel what has not started; the process under way (if any) finishes on its own."""
    _worker.shutdown(wait=False, cancel_futures=True)
