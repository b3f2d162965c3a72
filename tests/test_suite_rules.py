"""The suite's own rules, so that a failing test points at its cause: no test module imports another (shared
helpers live in support modules), importing a test module starts no process and no thread, and the slow jobs
modules declare (tests/background.py) run once, when started or when asked for."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import background

TESTS = Path(__file__).parent
TEST_MODULES = sorted(path for path in TESTS.rglob('test_*.py') if 'node_modules' not in path.parts)


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_test_module_imports_another() -> None:
    offenders = {
        f'{path.relative_to(TESTS)} imports {name}'
        for path in TEST_MODULES
        for name in _imported_modules(path)
        if name.split('.')[-1].startswith('test_')
    }
    assert not offenders


def test_importing_a_test_module_starts_no_process_and_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test module, executed again as a fresh module, with process and thread starts recorded."""
    started: list[str] = []

    def no_process(self: Any, args: Any, *rest: Any, **options: Any) -> None:
        started.append(f'process {args!r}')
        raise RuntimeError('no process at import')

    def no_thread(self: threading.Thread) -> None:
        started.append(f'thread {self.name}')
        raise RuntimeError('no thread at import')

    monkeypatch.setattr(subprocess.Popen, '__init__', no_process)
    monkeypatch.setattr(threading.Thread, 'start', no_thread)
    for number, path in enumerate(TEST_MODULES):
        monkeypatch.syspath_prepend(str(path.parent))  # as pytest's own import of a test module has it
        spec = importlib.util.spec_from_file_location(f'_import_check_{number}', path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)  # a dataclass looks its module up while it is built
        try:
            spec.loader.exec_module(module)
        except RuntimeError as error:
            started.append(f'{path.relative_to(TESTS)}: {error}')
    assert started == []


def test_a_declared_job_runs_once_when_asked_for() -> None:
    calls: list[int] = []
    job = background.start(lambda: calls.append(1) or len(calls))
    assert calls == []  # declaring runs nothing
    assert job.result() == 1 and job.result() == 1
    assert calls == [1]


def test_a_started_job_runs_on_the_worker_and_its_error_reaches_every_asker() -> None:
    threads: list[str] = []

    def fails() -> None:
        threads.append(threading.current_thread().name)
        raise ValueError('broken')

    job = background.start(fails)
    job.start()
    job.start()  # a second start queues nothing more
    for _ in range(2):
        with pytest.raises(ValueError, match='broken'):
            job.result()
    assert len(threads) == 1 and threads[0].startswith('tests-background')


def test_the_modules_scheduled_first_exist() -> None:
    """tests/conftest.py's `SLOWEST_FIRST` names modules by path: a renamed or removed one must not drop out of the
    schedule unnoticed."""
    tree = ast.parse((TESTS / 'conftest.py').read_text(encoding='utf-8'))
    [listed] = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == 'SLOWEST_FIRST' for t in node.targets)
    ]
    assert listed and len(set(listed)) == len(listed)
    assert [name for name in listed if not (TESTS / name).is_file()] == []
