"""Slow, self-contained subprocesses (pyright, a fresh interpreter checking its imports) started when their test
module is imported, so they run on the machine's other core while pytest collects and runs everything before
them; the test then takes the finished result (or waits for it).

A single worker runs them one after another, in collection order: one such process at a time beside pytest.
What a test asserts is unchanged; only when the process runs moves. Its failure (a timeout, say) is raised in the
test that asks for the result. `pytest_sessionfinish` in tests/conftest.py calls `drop_pending`, so a run that
selects few tests does not wait at exit for processes nobody will read.

Under pytest-xdist every worker collects (imports) every module but runs only its share, and the other worker
already keeps the second core busy: there a job runs when its test first asks for it, once, in that worker.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar('T')
T_co = TypeVar('T_co', covariant=True)

_worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix='tests-background')
_ON_DEMAND = 'PYTEST_XDIST_WORKER' in os.environ


class Pending(Protocol[T_co]):
    def result(self) -> T_co: ...


class _OnDemand(Generic[T]):
    """A job run at its first `result()`, in the asking thread; its value (or error) is kept for the next."""

    def __init__(self, job: Callable[[], T]) -> None:
        self._job: Callable[[], T] | None = job
        self._future: Future[T] = Future()

    def result(self) -> T:
        if self._job is not None:
            job, self._job = self._job, None
            try:
                self._future.set_result(job())
            except BaseException as error:
                self._future.set_exception(error)
        return self._future.result()


def start(job: Callable[[], T]) -> Pending[T]:
    """`job()` on the background worker (on demand under xdist); `.result()` gives its value or raises its error."""
    return _OnDemand(job) if _ON_DEMAND else _worker.submit(job)


def run(args: Sequence[str], **options: Any) -> Pending[subprocess.CompletedProcess[str]]:
    """`subprocess.run(args, capture_output=True, text=True, **options)` on the background worker, in the working
    directory and with the environment of now: a test running meanwhile may change either for itself
    (`monkeypatch.chdir`, `monkeypatch.setenv`)."""
    options = {'cwd': os.getcwd(), 'env': dict(os.environ), **options}
    return start(lambda: subprocess.run(args, capture_output=True, text=True, **options))


def drop_pending() -> None:
    """Cancel what has not started; the process under way (if any) finishes on its own."""
    _worker.shutdown(wait=False, cancel_futures=True)
