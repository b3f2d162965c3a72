"""The demo page's "reload" in headless Chromium, against a server that keeps the history: the chat comes
back from the server and an answer in flight resumes, over both protocols (tests/clients/page_reload.mjs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import run_node, serve

from uibridge.server import create_app
from uibridge.server.cli import demo_authorize
from uibridge.server.demo import DemoAgent
from uibridge.server.store import MemoryStore

CHROMIUM = Path('/usr/bin/chromium')
SLOW_ANSWER = ' '.join(f'{n},' for n in range(1, 50)) + ' 50.'


@pytest.fixture(scope='module')
def reloaded() -> Iterator[dict[str, Any]]:
    if not CHROMIUM.exists():
        if os.environ.get('CI'):  # CI installs it (.ci/run): there, a missing browser is a failure, not a skip
            pytest.fail(f'{CHROMIUM} is missing')
        pytest.skip(f'{CHROMIUM} is not installed (apt-get install chromium; CI installs it)')
    app = create_app(DemoAgent(delay=0, slow_seconds=3), store=MemoryStore(), authorize=demo_authorize)
    with serve(app) as base_url:
        yield run_node('page_reload.mjs', args=[base_url, str(CHROMIUM)])


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_a_reload_restores_the_chat_and_resumes_the_answer_in_flight(reloaded: dict[str, Any], protocol: str) -> None:
    out = reloaded[protocol]
    assert out['protocolChecked']
    assert 0 < out['partialChars'] < len(SLOW_ANSWER)  # the page went away mid-answer
    api = '/api/chat/' if protocol == 'vercel' else '/ag-ui/'
    [resume] = out['resumeRequests']  # one resume request, after the reload
    assert resume.startswith('GET ' + api) and resume.endswith('/stream')
    roles = [m['role'] for m in out['afterReload']]
    assert roles == ['user', 'assistant', 'user', 'assistant']
    assert [m['text'].strip() for m in out['afterReload'] if m['role'] == 'user'] == ['hello', 'slow']
    assert out['afterReload'][-1]['text'].strip() == SLOW_ANSWER
    # Reloaded after the end: the same chat, nothing doubled.
    assert out['afterSecondReload'] == out['afterReload']
    assert out['status'] == 'ready'


def test_the_reloads_raise_no_page_errors(reloaded: dict[str, Any]) -> None:
    assert reloaded['pageErrors'] == []
    assert reloaded['consoleErrors'] == []
