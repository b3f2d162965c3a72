"""The shared Node process the end-to-end suites run their drivers in (`run_node`, tests/clients/driver.mjs): each
run gets its own arguments, its own stdout and its own console, and a failure is the run's, never lost, as it would
be for `node script` on its own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from e2e_support import run_node

ECHO = """
import { readFileSync } from 'node:fs';
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
console.warn = (...args) => void warnings.push(args.join(' '));
console.warn('seen by', spec.name);
process.stdout.write(JSON.stringify({ name: spec.name, extra: process.argv.slice(3), warnings }));
"""


def script(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding='utf-8')
    return str(path)


def test_each_run_has_its_own_arguments_output_and_console(tmp_path: Path) -> None:
    echo = script(tmp_path, 'echo.mjs', ECHO)
    first = run_node(echo, {'name': 'first'}, args=['a'])
    second = run_node(echo, {'name': 'second'})
    assert first == {'name': 'first', 'extra': ['a'], 'warnings': ['seen by first']}
    assert second == {'name': 'second', 'extra': [], 'warnings': ['seen by second']}


@pytest.mark.parametrize(
    ('text', 'reason'),
    [
        ("throw new Error('the server answered 500');\n", 'the server answered 500'),
        ("Promise.reject(new Error('nobody awaited this'));\nprocess.stdout.write('{}');\n", 'nobody awaited this'),
    ],
    ids=['a-throw', 'a-rejection-nothing-awaited'],
)
def test_a_failure_in_a_run_fails_that_run_with_its_reason(tmp_path: Path, text: str, reason: str) -> None:
    with pytest.raises(AssertionError, match=reason):
        run_node(script(tmp_path, 'failing.mjs', text), {})


def test_a_failure_after_a_run_fails_the_next_run_naming_the_script_it_came_after(tmp_path: Path) -> None:
    late = script(
        tmp_path,
        'late.mjs',
        "setTimeout(() => { throw new Error('thrown after the output'); }, 50);\nprocess.stdout.write('{}');\n",
    )
    wait = script(tmp_path, 'wait.mjs', "await new Promise((r) => setTimeout(r, 200));\nprocess.stdout.write('{}');\n")
    assert run_node(late, {}) == {}
    time.sleep(0.3)  # the timer fires between the runs
    with pytest.raises(AssertionError, match=r'after .*late\.mjs: Error: thrown after the output'):
        run_node(wait, {})


def test_process_exit_ends_the_run_not_the_shared_process(tmp_path: Path) -> None:
    quits = script(tmp_path, 'quits.mjs', 'process.exit(2);\n')
    echo = script(tmp_path, 'echo.mjs', ECHO)
    with pytest.raises(AssertionError, match=r'process\.exit\(2\)'):
        run_node(quits, {})
    assert run_node(echo, {'name': 'after'})['name'] == 'after'
