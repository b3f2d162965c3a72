"""`python -m uibridge serve [MODULE:AGENT]`: the real command, started as a subprocess on a free loopback port,
serving the demo agent or an agent module this module writes into a temporary folder (a generator function found
by a dotted attribute, an async factory, a pydantic-ai `Agent`), driven over both protocols with plain HTTP; and
each command line it cannot serve, refused with exit status 2 and one line saying what to fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_support import serving_command

from uibridge.server.app import YOUR_AGENT
from uibridge.server.cli import main

AGENT_MODULE = """
import sys

from uibridge import ModelResponse, TextPart


async def agent(run):
    prompt = run.messages[-1].parts[-1].content
    loaded = 'pydantic_ai' in sys.modules
    yield ModelResponse(parts=[TextPart(content=f'mine heard {prompt!r} as {run.principal}; pydantic_ai: {loaded}')])


class Agents:
    support = staticmethod(agent)


async def make_async():
    return agent


class NeedsArguments:
    def __init__(self):
        pass


not_an_agent = 42


def broken():
    raise RuntimeError('OPENAI_API_KEY is not set')


async def answers_once(run):
    return 'not a stream'
"""

PYDANTIC_AI_MODULE = """
from pydantic_ai import Agent

agent = Agent('test')  # pydantic-ai's offline model: answers without a provider
"""

SERVED = {
    'demo': [],
    'dotted': ['pkg.chat:Agents.support', '--store', 'memory:'],
    'factory': ['--factory', 'pkg.chat:make_async'],
    'pydantic-ai': ['pydantic_chat:agent'],
}
"""The command lines started for the module (each after `python -m uibridge serve --port N`)."""


@pytest.fixture(scope='module')
def agent_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp('your-app')
    (folder / 'pkg').mkdir()
    (folder / 'pkg' / '__init__.py').write_text('')
    (folder / 'pkg' / 'chat.py').write_text(AGENT_MODULE)
    (folder / 'pydantic_chat.py').write_text(PYDANTIC_AI_MODULE)
    return folder


@pytest.fixture(scope='module')
def servers(agent_dir: Path) -> Iterator[dict[str, str]]:
    """Every command line of `SERVED`, started side by side from the agent's folder (as a developer runs it);
    the base URL of each."""
    with ExitStack() as stack, ThreadPoolExecutor(len(SERVED)) as pool:
        commands = {name: [sys.executable, '-m', 'uibridge', 'serve', *args] for name, args in SERVED.items()}
        starting = {name: pool.submit(stack.enter_context, serving_command(command, cwd=agent_dir))
                    for name, command in commands.items()}  # fmt: skip
        yield {name: future.result() for name, future in starting.items()}


def streamed_text(response: httpx.Response) -> str:
    """The text a stream carried: Vercel's `text-delta` and AG-UI's `TEXT_MESSAGE_CONTENT` deltas, joined."""
    assert response.status_code == 200, response.text
    assert response.headers['content-type'].startswith('text/event-stream')
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith('data: {')]
    return ''.join(e['delta'] for e in events if e['type'] in ('text-delta', 'TEXT_MESSAGE_CONTENT'))


def vercel_turn(base: str, chat_id: str, text: str, **headers: str) -> str:
    message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}
    return streamed_text(httpx.post(base + '/api/chat', json={'id': chat_id, 'messages': [message]}, headers=headers))


def ag_ui_turn(base: str, thread_id: str, text: str) -> str:
    body: dict[str, Any] = {
        'threadId': thread_id, 'runId': 'r1', 'state': {}, 'tools': [], 'context': [], 'forwardedProps': {},
        'messages': [{'id': 'u1', 'role': 'user', 'content': text}],
    }  # fmt: skip
    return streamed_text(httpx.post(base + '/ag-ui', json=body, headers={'accept': 'text/event-stream'}))


@pytest.mark.parametrize(('name', 'principal'), [('dotted', 'anonymous'), ('factory', None)])
def test_your_agent_answers_over_both_protocols(servers: dict[str, str], name: str, principal: str | None) -> None:
    base = servers[name]  # a principal with a store only (the dev server's: the x-demo-user header, or anonymous)
    # pydantic-ai is installed here, but a target that is not a pydantic-ai Agent never imports it.
    assert vercel_turn(base, 'c1', 'hello') == f"mine heard 'hello' as {principal}; pydantic_ai: False"
    assert ag_ui_turn(base, 't1', 'bonjour') == f"mine heard 'bonjour' as {principal}; pydantic_ai: False"


def test_your_agent_gets_the_chat_page_without_the_demos_keywords(servers: dict[str, str]) -> None:
    page = httpx.get(servers['dotted'] + '/')
    assert page.status_code == 200
    assert YOUR_AGENT in page.text


def test_with_a_store_your_agent_keeps_each_principals_chats(servers: dict[str, str]) -> None:
    base = servers['dotted']
    assert vercel_turn(base, 'kept', 'remember me', **{'x-demo-user': 'ada'}) == (
        "mine heard 'remember me' as ada; pydantic_ai: False"
    )
    stored = httpx.get(base + '/api/chat/kept', headers={'x-demo-user': 'ada'})
    assert [m['role'] for m in stored.json()] == ['user', 'assistant']
    assert httpx.get(base + '/api/chat/kept', headers={'x-demo-user': 'bob'}).status_code == 404
    assert httpx.get(base + '/readyz').json() == {'status': 'ready'}


def test_a_pydantic_ai_agent_is_served_as_it_is(servers: dict[str, str]) -> None:
    base = servers['pydantic-ai']
    # pydantic-ai's TestModel answers this when it called no tool: the run went through `PydanticAIAgent`.
    assert vercel_turn(base, 'c1', 'hello') == 'success (no tool calls)'
    assert ag_ui_turn(base, 't1', 'hello') == 'success (no tool calls)'


def test_without_a_target_the_demo_agent_and_its_page_are_served(servers: dict[str, str]) -> None:
    page = httpx.get(servers['demo'] + '/')
    assert page.status_code == 200
    assert 'uibridge demo' in page.text and '<body>' in page.text  # the demo's page, keywords shown
    assert vercel_turn(servers['demo'], 'c1', 'hi').startswith('You said: hi')


@pytest.fixture
def in_agent_dir(agent_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The working directory is the agent's folder; the modules imported meanwhile and the folder put on
    `sys.path` are gone afterwards."""
    monkeypatch.chdir(agent_dir)
    monkeypatch.setattr(sys, 'path', list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.split('.')[0] in ('pkg', 'pydantic_chat'):
            del sys.modules[name]


REFUSED = {
    'no colon': (['pkg.chat'], "'pkg.chat' is not MODULE:AGENT"),
    'a missing module': (
        ['nowhere:agent'],
        "no module 'nowhere' to import from the current directory (run from the folder that holds 'nowhere', "
        'or pass --app-dir)',
    ),
    'a missing attribute': (['pkg.chat:Agents.sales'], "pkg.chat:Agents has no attribute 'sales'"),
    'not callable': (['pkg.chat:not_an_agent'], 'pkg.chat:not_an_agent is an int, not an agent: an agent is'),
    'a class': (
        ['pkg.chat:NeedsArguments'],
        'pkg.chat:NeedsArguments is not an agent: it does not take the run as its one argument; to call it with '
        'no arguments for the agent, pass --factory',
    ),
    'a coroutine function': (['pkg.chat:answers_once'], 'pkg.chat:answers_once is not an agent: agent must be'),
    'a failing factory': (
        ['--factory', 'pkg.chat:broken'],
        'the factory pkg.chat:broken failed: RuntimeError: OPENAI_API_KEY is not set',
    ),
    'a factory of no agent': (
        ['--factory', 'pkg.chat:not_an_agent'],
        'pkg.chat:not_an_agent is an int, not a factory (a function that returns the agent)',
    ),
    'a factory without target': (['--factory'], '--factory needs MODULE:FACTORY'),
    'a demo option': (['pkg.chat:agent', '--delay', '1'], '--delay is an option of the demo agent, not of'),
    'a secret on the command line': (['--secret', 'hunter2'], 'set UIBRIDGE_SECRET in the environment'),
    'a bad store URL': (['pkg.chat:agent', '--store', 'postgres-ish:'], "unsupported store URL 'postgres-ish:'"),
    'a stream log without a store': (
        ['pkg.chat:agent', '--stream-log', 'redis://127.0.0.1:6379/0'],
        '--stream-log keeps the stream logs of a store apart: it needs --store too',
    ),
    'a stream log not in Redis': (
        ['pkg.chat:agent', '--store', 'memory:', '--stream-log', 'sqlite:///logs.db'],
        "unsupported stream log URL 'sqlite:///logs.db': expected 'redis://host:port/N'",
    ),
}


@pytest.mark.parametrize('case', REFUSED)
@pytest.mark.usefixtures('in_agent_dir')
def test_what_cannot_be_served_is_refused_in_one_line(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    args, expected = REFUSED[case]
    assert main(['serve', *args]) == 2
    out, err = capsys.readouterr()
    assert out == ''
    assert err.startswith('uibridge serve: ') and err.count('\n') == 1, err
    assert expected in err
    assert 'hunter2' not in err


def test_the_command_exits_2_on_a_target_it_cannot_serve(agent_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, '-m', 'uibridge', 'serve', 'pkg.chat:not_an_agent'],
        cwd=agent_dir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ''
    assert done.stderr.splitlines() == [
        'uibridge serve: pkg.chat:not_an_agent is an int, not an agent: an agent is an async generator function '
        'taking the run (`async def agent(run): yield ...`), an object called so, or a pydantic-ai Agent'
    ]


def test_app_dir_imports_from_another_folder(agent_dir: Path, in_agent_dir: None, tmp_path: Path) -> None:
    import anyio

    from uibridge.server.cli import load_agent

    os.chdir(tmp_path)  # the agent's folder is not the current one: --app-dir says where it is
    agent = anyio.run(lambda: load_agent('pkg.chat:Agents.support', app_dir=str(agent_dir)))
    assert agent.__name__ == 'agent'  # type: ignore[attr-defined]
