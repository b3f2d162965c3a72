"""README's "Add uibridge to your app", as a new user follows it: the wheel built from this tree is installed into
fresh virtual environments (one with every extra, one with the core alone), and the README's own app (its code
block, read from the README so the two cannot drift) runs under uvicorn and `python -m uibridge serve` there,
answering the real `ai@7` client and the README's own `@ag-ui/client` snippet.

Building and installing take much of this module's time: it is a module of its own, so `make test`'s other worker
runs the rest of the suite meanwhile (`--dist loadfile`). uv (a dev dependency) builds the wheel and makes and fills
the environments: it reads the same metadata and resolves from the same package index as pip, at a fraction of
pip's CPU time (pip's resolver and installer are Python, run once per environment)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_support import CLIENTS, run_node, serving_command
from uv import find_uv_bin

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / 'README.md').read_text(encoding='utf-8')
EXTRAS = sorted(set(tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['optional-dependencies']) - {'dev'})
"""Every extra a user can install (dev is this repository's own tooling)."""
OPTIONAL_MODULES = ('uvicorn', 'redis', 'openai', 'anthropic', 'pydantic_ai', 'opentelemetry', 'psycopg')
"""What the extras bring; the core must import none of them, and must not need them installed."""
INSTALL_TIMEOUT = 600  # a hang guard for a slow package index, not a measurement
SECRET = 'quickstart-secret'


def readme_block(name: str) -> str:
    """The fenced code block right after the README's `<!-- quickstart: NAME ... -->` marker."""
    found = re.search(rf'<!-- quickstart: {re.escape(name)}\b[^>]*-->\n```[a-z]*\n(.*?)\n```', README, re.DOTALL)
    assert found, f'README has no quickstart block {name!r}'
    return found.group(1) + '\n'


def run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    assert done.returncode == 0, f'{" ".join(map(str, args))} failed ({done.returncode}):\n{done.stderr[-4000:]}'
    return done


def fresh_venv(folder: Path, requirement: str) -> Path:
    """A new virtual environment (of this interpreter's Python, without pip) with `requirement` installed from the
    package index, as a user's would be; its python."""
    run([find_uv_bin(), 'venv', '--quiet', '--python', sys.executable, str(folder)])
    python = folder / 'bin' / 'python'
    run([find_uv_bin(), 'pip', 'install', '--quiet', '--python', str(python), requirement])
    return python


@pytest.fixture(scope='module')
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel built from this tree (by its build backend, in an isolated build environment, as `pip wheel`
    does), installed with every extra and with none; each one's python."""
    base = tmp_path_factory.mktemp('quickstart')
    run([find_uv_bin(), 'build', '--quiet', '--wheel', '--out-dir', str(base / 'dist'), str(ROOT)])
    (wheel,) = (base / 'dist').glob('uibridge-*.whl')
    wanted = {'full': f'uibridge[{",".join(EXTRAS)}] @ {wheel.as_uri()}', 'core': f'uibridge @ {wheel.as_uri()}'}
    with ThreadPoolExecutor(len(wanted)) as pool:
        made = {name: pool.submit(fresh_venv, base / name, requirement) for name, requirement in wanted.items()}
        return {name: future.result() for name, future in made.items()}


def test_the_readme_names_the_extras_that_exist() -> None:
    named = {extra for found in re.findall(r'uibridge\[([a-z,-]+)\]', README) for extra in found.split(',')}
    assert {'server', 'pydantic-ai'} <= named
    assert named <= set(EXTRAS), f'the README names extras pyproject.toml does not declare: {named - set(EXTRAS)}'
    for extra in ('server', 'pydantic-ai', 'openai', 'anthropic', 'redis', 'postgres', 'otel'):
        assert f'`{extra}`' in README.split('## Set up')[0]  # each one explained in "Add uibridge to your app"


CORE_CHECK = """
import importlib.util, json, sys
import uibridge
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.server import create_app
from uibridge.server.store import store_from_url
app = create_app(store=store_from_url('memory:'))
print(json.dumps({
    'imported': sorted({name.split('.')[0] for name in sys.modules} & set(sys.argv[1:])),
    'installed': sorted(name for name in sys.argv[1:] if importlib.util.find_spec(name) is not None),
}))
"""


def test_the_core_installs_and_imports_nothing_optional(venvs: dict[str, Path]) -> None:
    done = run([str(venvs['core']), '-c', CORE_CHECK, *OPTIONAL_MODULES])
    assert json.loads(done.stdout) == {'imported': [], 'installed': []}
    # The dev server says which extra it needs, rather than failing on an import.
    serve = subprocess.run([str(venvs['core']), '-m', 'uibridge', 'serve'], capture_output=True, text=True, timeout=60)
    assert (serve.returncode, serve.stderr) == (1, 'uibridge serve needs uvicorn: pip install "uibridge[server]"\n')


def test_every_extra_brings_what_its_module_imports(venvs: dict[str, Path]) -> None:
    modules = ['uvicorn', 'uibridge.integrations.pydantic_ai', 'uibridge.integrations.openai',
               'uibridge.integrations.anthropic', 'uibridge.server.store.redis',
               'uibridge.server.store.postgres', 'uibridge.server.otel']  # fmt: skip
    run([str(venvs['full']), '-c', ';'.join(f'import {module}' for module in modules)])


@contextmanager
def started(python: Path, args: list[str], cwd: Path) -> Iterator[str]:
    """`python ARGS` (`-m uvicorn app:app`, `-m uibridge serve app:agent`) in `cwd` with the README's environment
    (the secret, and `MODEL=test`: pydantic-ai's offline model); its base URL."""
    env = {**os.environ, 'UIBRIDGE_SECRET': SECRET, 'MODEL': 'test'}
    with serving_command([str(python), *args], cwd=cwd, env=env) as base:
        yield base


@pytest.fixture(scope='module')
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp('your-project')
    (folder / 'app.py').write_text(readme_block('app.py'))
    return folder


ANSWER = 'success (no tool calls)'
"""What pydantic-ai's test model answers a prompt when it called no tool."""


def texts(message: dict[str, Any]) -> list[str]:
    return [part['text'] for part in message['parts'] if part['type'] == 'text']


def test_the_quickstart_app_answers_the_real_clients(venvs: dict[str, Path], app_dir: Path, tmp_path: Path) -> None:
    with started(venvs['full'], ['-m', 'uvicorn', 'app:app'], app_dir) as base:
        spec = {'api': base + '/api/chat', 'scenarios': [
            {'name': 'hello', 'chatId': 'quickstart', 'steps': [{'op': 'send', 'text': 'Hello!'}]},
        ]}  # fmt: skip
        (step,) = run_node('e2e_vercel.mjs', spec)['hello']['steps']
        assert (step['error'], step['status'], step['valid']) == (None, 'ready', True)
        _, assistant = step['messages']
        assert texts(assistant) == [ANSWER]
        # A managed app: the chat is the server's, in the file the README names ...
        stored = httpx.get(f'{base}/api/chat/quickstart').json()
        assert [m['role'] for m in stored] == ['user', 'assistant'] and texts(stored[1]) == [ANSWER]
        assert (app_dir / 'chats.db').is_file()
        assert httpx.get(base + '/readyz').json() == {'status': 'ready'}
        # ... and the real client that loses its connection mid-answer resumes it (`resume: true` on a reload).
        resumed = run_node('vercel_resume.mjs', {'api': base + '/api/chat', 'lastOnly': True, 'runs': [
            {'name': 'dropped', 'chatId': 'quickstart-resumed', 'text': 'Hello!', 'dropAfter': 1},
        ]})['dropped']  # fmt: skip
        assert (resumed['dropped'], resumed['resumeStatus'], resumed['status']) == (True, 200, 'ready')
        assert [m['role'] for m in resumed['messages']] == ['user', 'assistant']
        assert texts(resumed['messages'][1]) == [ANSWER]
        assert run_snippet('ag-ui.mjs', base, tmp_path) == ANSWER + '\n'


def test_the_dev_server_serves_the_quickstart_agent(venvs: dict[str, Path], app_dir: Path) -> None:
    with started(venvs['full'], ['-m', 'uibridge', 'serve', 'app:agent'], app_dir) as base:
        assert '<body data-agent="yours">' in httpx.get(base + '/').text
        message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Hello!'}]}
        answer = httpx.post(base + '/api/chat', json={'id': 'c1', 'messages': [message]})
        deltas = re.findall(r'"type":"text-delta","id":"[^"]+","delta":"([^"]*)"', answer.text)
        assert ''.join(deltas) == ANSWER


def run_snippet(name: str, base: str, folder: Path) -> str:
    """The README's JavaScript block `name`, pointed at `base` instead of the README's address, run by Node with
    the suite's client packages; its stdout."""
    snippet = readme_block(name)
    assert 'http://127.0.0.1:8000' in snippet
    (folder / 'node_modules').symlink_to(CLIENTS / 'node_modules')  # Node resolves imports from the script's folder
    script = folder / name
    script.write_text(snippet.replace('http://127.0.0.1:8000', base))
    done = run(['node', str(script)], cwd=folder)
    return done.stdout
