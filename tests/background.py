"""Slow, self-contained jobs (pyright, a fresh interpreter checking its imports) that a test module declares and a
test asks for; a job can run on the machine's other core while pytest runs the tests before the one that needs it.

Declaring a job (`run`, `start`) runs nothing: importing a test module starts no process and no thread. A job runs
at the latest when its test asks for `result()`, in that test's thread. Without pytest-xdist, tests/conftest.py
also starts the jobs of the modules the session selected once collection is over (`start_jobs`), one after
another on a single worker thread, so one such process at a time runs beside pytest; `drop_pending` at the end of
the session cancels those nobody started. Under pytest-xdist the other worker already keeps the second core busy,
so jobs run only when asked for.

What a test asserts is unchanged by when its job ran. A job's failure (a timeout, say) is raised in the test that
asks for its result.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import ModuleType
from typing import Any, Generic, TypeVar

T = TypeVar('T')


class _Worker:
    """The one thread declared jobs run on when started ahead of their test; created on the first such start."""

    executor: ThreadPoolExecutor | None = None

    @classmethod
    def submit(cls, work: Callable[[], T]) -> Future[T]:
        if cls.executor is None:
            cls.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix='tests-background')
        return cls.executor.submit(work)


class Job(Generic[T]):
    """`work()`, run once: started ahead on the background worker (`start`) or, failing that, by the first
    `result()`, in the asking thread. Its value, or its error, is kept for every later `result()`."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._future: Future[T] | None = None

    def start(self) -> None:
        """Queue the job on the background worker, unless it has started already."""
        with self._lock:
            if self._future is None:
                self._future = _Worker.submit(self._work)

    def result(self) -> T:
        with self._lock:
            future, runs_here = self._future, self._future is None
            if future is None:
                future = self._future = Future()
        if runs_here:
            try:
                future.set_result(self._work())
            except BaseException as error:
                future.set_exception(error)
        return future.result()


def start(work: Callable[[], T]) -> Job[T]:
    """Declare `work()` as a job; nothing runs until the session starts it or a test asks for its result."""
    return Job(work)


def run(args: Sequence[str], **options: Any) -> Job[subprocess.CompletedProcess[str]]:
    """Declare `subprocess.run(args, capture_output=True, text=True, **options)` as a job, in the working directory
    and with the environment of now: a test running meanwhile may change either for itself (`monkeypatch.chdir`,
    `monkeypatch.setenv`)."""
    options = {'cwd': os.getcwd(), 'env': dict(os.environ), **options}
    return Job(lambda: subprocess.run(args, capture_output=True, text=True, **options))


def start_jobs(modules: Iterable[ModuleType]) -> None:
    """Start, in order, the jobs these modules declare at their top level (the session's selected modules)."""
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Job):
                value.start()  # pyright: ignore[reportUnknownMemberType]


def drop_pending() -> None:
    """Cancel the started jobs that have not begun; the one under way (if any) finishes on its own."""
    if _Worker.executor is not None:
        _Worker.executor.shutdown(wait=False, cancel_futures=True)
