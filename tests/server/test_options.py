"""Endpoint options: typed once (a misspelt option is a type error), and checked when the endpoint is built."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import background
from uibridge.core.events import AgentEvent
from uibridge.server import AgentRun, AGUIEndpoint, VercelAIEndpoint, create_app


async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
    return
    yield


ENDPOINTS: list[Any] = [VercelAIEndpoint, AGUIEndpoint, lambda a, **o: create_app(a, **o)]


@pytest.mark.parametrize('make', ENDPOINTS)
@pytest.mark.parametrize(
    ('options', 'error'),
    [
        ({'on_complet': print}, 'on_complet'),
        ({'keep_alive': 'x'}, 'keep_alive'),
        ({'keep_alive': -1}, 'keep_alive'),
        ({'max_body_bytes': 0}, 'max_body_bytes'),
        ({'max_body_bytes': 1.5}, 'max_body_bytes'),
        ({'body_timeout': 0}, 'body_timeout'),
        ({'allowed_file_url_schemes': 'https'}, 'allowed_file_url_schemes'),
        ({'allowed_content_types': [1]}, 'allowed_content_types'),
        ({'expose_errors': 'yes'}, 'expose_errors'),
        ({'strip_system_prompts': None}, 'strip_system_prompts'),
        ({'on_complete': 'save'}, 'on_complete'),
        ({'max_messages': 0}, 'max_messages'),
        ({'max_chat_messages': 0}, 'max_chat_messages'),
        ({'max_chat_bytes': True}, 'max_chat_bytes'),
        ({'quota': 429}, 'quota'),
        ({'approval_ledger': set()}, 'approval_ledger'),
    ],
)
def test_a_bad_option_is_refused_when_the_endpoint_is_built(make: Any, options: dict[str, Any], error: str) -> None:
    with pytest.raises((TypeError, ValueError), match=error):
        make(agent, **options)


def sync_generator(run: AgentRun) -> Iterator[AgentEvent]:
    yield from ()


async def coroutine(run: AgentRun) -> list[AgentEvent]:
    return []


class CoroutineAgent:
    async def __call__(self, run: AgentRun) -> None:
        return None


@pytest.mark.parametrize('make', ENDPOINTS)
@pytest.mark.parametrize('bad', [sync_generator, coroutine, CoroutineAgent(), 'agent'])
def test_an_agent_that_cannot_stream_is_refused(make: Any, bad: Any) -> None:
    with pytest.raises(TypeError, match='agent'):
        make(bad)


@pytest.mark.parametrize('make', ENDPOINTS)
def test_good_options_and_agents_are_taken(make: Any) -> None:
    def returns_an_iterator(run: AgentRun) -> AsyncIterator[AgentEvent]:
        return agent(run)

    for good in (agent, returns_an_iterator):
        make(good, keep_alive=None, allowed_file_url_schemes=['https'], max_body_bytes=1024, body_timeout=0.5)


PYRIGHT = shutil.which('pyright', path=str(Path(__file__).resolve().parents[2] / '.venv' / 'bin')) or shutil.which(
    'pyright'
)
TYPO = textwrap.dedent(
    """
    from uibridge.server import AGUIEndpoint, VercelAIEndpoint, create_app

    async def agent(run):
        yield None

    VercelAIEndpoint(agent, on_complet=None)
    AGUIEndpoint(agent, keep_alive='x')
    create_app(agent, max_messages='many')
    """
)


def _pyright_on_the_typo(pyright: str, cwd: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / 'typo.py'
        source.write_text(TYPO)
        return subprocess.run([pyright, str(source)], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


# pyright takes seconds (Node, and every type uibridge's signatures reach): a job of tests/background.py, started
# beside the tests before this one, in the working directory of import time, whose configuration it reads.
TYPO_CHECKED = background.start(partial(_pyright_on_the_typo, PYRIGHT, os.getcwd())) if PYRIGHT else None


def test_a_misspelt_option_is_a_type_error() -> None:
    if TYPO_CHECKED is None:
        pytest.fail('pyright is a dev dependency: `make test` installs it')
    done = TYPO_CHECKED.result()
    assert done.returncode == 1, done.stdout
    assert 'on_complet' in done.stdout
    assert 'keep_alive' in done.stdout
    assert 'max_messages' in done.stdout


def sync_authorize(request: Any) -> str:
    return 'alice'


class SyncQuota:
    def __call__(self, request: Any) -> None:
        return None


class AsyncQuota:
    async def __call__(self, request: Any) -> None:
        return None


async def no_arguments() -> str:
    return 'alice'


async def save(new_messages: Any, run: Any, extra: Any) -> None:
    return None


@pytest.mark.parametrize('make', ENDPOINTS)
@pytest.mark.parametrize(
    ('options', 'says'),
    [
        ({'authorize': sync_authorize}, r'authorize must be an async function \(async def authorize\(request\)\)'),
        ({'authorize': lambda request: 'alice'}, 'define it with `async def`'),
        ({'authorize': partial(sync_authorize)}, 'authorize must be an async function'),
        ({'authorize': no_arguments}, r'authorize must take 1 argument, as async def authorize\(request\) does'),
        ({'quota': SyncQuota()}, r'quota must be an async function \(async def quota\(request\)\)'),
        ({'on_complete': print}, r'on_complete must be an async function \(async def on_complete\(new_messages, r'),
        ({'on_complete': save}, 'on_complete must take 2 arguments'),
    ],
)
def test_a_hook_that_cannot_be_awaited_is_refused_when_the_endpoint_is_built(
    make: Any, options: dict[str, Any], says: str
) -> None:
    with pytest.raises(TypeError, match=says):
        make(agent, **options)


@pytest.mark.parametrize('make', ENDPOINTS)
def test_async_hooks_of_every_shape_are_taken(make: Any) -> None:
    async def authorize(request: Any) -> str:
        return 'alice'

    async def scoped(scope: str, request: Any) -> str:
        return scope

    make(agent, authorize=authorize, quota=AsyncQuota())
    make(agent, authorize=partial(scoped, 'tenant'), on_complete=partial(save, extra=None))
