"""Run every benchmark and write `RESULTS.md`: `make bench` (or `bench/.venv/bin/python bench/run_all.py`).

Each benchmark runs in its own process and prints its markdown table; this script gathers them with the
machine, the versions and the command, plus the profiles of the hot paths. Everything in `RESULTS.md`
after the `ANALYSIS` marker line is written by hand and kept as it is when the file is regenerated.

`run_all.py NAME ...` runs only the named benchmarks (`framing`, `messages`, `streams`, `e2e`, `provenance`,
`hostile`, `store`, `big_chat`, `bridge`, `telemetry`, `managed_turns`) and prints their tables without writing
`RESULTS.md`. The exit status is 1 when a benchmark crashed or missed a bar.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / 'RESULTS.md'
ANALYSIS = '<!-- analysis: everything below this line is kept when run_all.py rewrites the file -->'
BENCHMARKS = {
    'framing': 'bench_framing.py',
    'messages': 'bench_messages.py',
    'streams': 'bench_streams.py',
    'e2e': 'bench_e2e.py',
    'provenance': 'bench_provenance.py',
    'hostile': 'bench_hostile.py',
    'store': 'bench_store.py',
    'big_chat': 'bench_big_chat.py',
    'bridge': 'bench_bridge.py',
    'telemetry': 'bench_telemetry.py',
    'managed_turns': 'bench_managed_turns.py',
}
PACKAGES = ['pydantic-ai-slim', 'pydantic', 'pydantic-core', 'ag-ui-protocol', 'starlette', 'uvicorn', 'pyinstrument']


def _run(script: str, *args: str) -> tuple[str, int]:
    """Run one script in a fresh process, echoing its output as it comes; its stdout and exit status."""
    print(f'--- {script} {" ".join(args)}', file=sys.stderr, flush=True)
    process = subprocess.Popen([sys.executable, script, *args], cwd=HERE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    out: list[str] = []
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        out.append(line)
    return ''.join(out), process.wait()


def _cpu_model() -> str:
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def _memory() -> str:
    try:
        for line in Path('/proc/meminfo').read_text().splitlines():
            if line.startswith('MemTotal:'):
                return f'{int(line.split()[1]) / 1024 / 1024:.1f} GiB'
    except OSError:
        pass
    return 'unknown'


def _load() -> str:
    try:
        return ' / '.join(Path('/proc/loadavg').read_text().split()[:3])
    except OSError:
        return 'unknown'


def _git(*args: str) -> str:
    try:
        return subprocess.run(['git', *args], cwd=HERE, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'


def _header(started: datetime, load_before: str, load_after: str) -> str:
    dirty = ' (with uncommitted changes)' if _git('status', '--porcelain', '--', '../src') else ''
    versions = '\n'.join(f'- {name} {version(name)}' for name in PACKAGES)
    return f"""# Benchmarks: uibridge against the peer (pydantic-ai's UI adapters)

Produced by `make bench` (which sets up `bench/.venv` and runs `bench/.venv/bin/python bench/run_all.py`),
started {started:%Y-%m-%d %H:%M} UTC. Every number is the median of several repetitions in one process,
ours and the peer's interleaved; ratios compare the two medians. The peer is `pydantic-ai-slim`, installed
only in the benchmark environment (`bench/requirements.txt`), never a dependency of uibridge.

## Machine

- CPU: {_cpu_model()}, {os.cpu_count()} cores (`nproc`)
- memory: {_memory()}
- load average (1 / 5 / 15 min) before the run: {load_before}; after: {load_after}. The machine is shared,
  so absolute times move with its load; the ratios, measured side by side, move much less.
- {platform.python_implementation()} {platform.python_version()} on {platform.system()} {platform.release()}

## Versions

- uibridge {version('uibridge')} at commit `{_git('rev-parse', '--short', 'HEAD')}`{dirty}
{versions}

## Results
"""


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        print(f'unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}', file=sys.stderr)
        return 2
    started = datetime.now(UTC)
    load_before = _load()
    sections: list[str] = []
    failed: list[str] = []
    for name, script in BENCHMARKS.items():
        if names and name not in names:
            continue
        out, status = _run(script)
        sections.append(out)
        if status != 0:
            failed.append(name)
    if names:
        return 1 if failed else 0
    profiles, status = _run('profile_hot_paths.py')
    server_profile, server_status = _run('bench_e2e.py', '--profile')
    if status != 0 or server_status != 0:
        failed.append('profiles')
    profiles += '\n' + server_profile
    kept = ''
    if RESULTS.exists():
        previous = RESULTS.read_text(encoding='utf-8')
        if ANALYSIS in previous:
            kept = previous.split(ANALYSIS, 1)[1]
    document = _header(started, load_before, _load()) + '\n' + '\n'.join(sections)
    document += '\n## Where the time goes\n\n' + profiles + '\n' + ANALYSIS + kept
    RESULTS.write_text(document.rstrip('\n') + '\n', encoding='utf-8')
    print(f'wrote {RESULTS}', file=sys.stderr)
    if failed:
        print(f'missed a bar or failed: {", ".join(failed)} (see the tables above)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
