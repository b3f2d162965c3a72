"""The demo page's "reload" in headless Chromium, against a server that keeps the history: the chat comes
back from the server and an answer in flight resumes, over both protocols (tests/clients/page_reload.mjs)."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterator
from logging.handlers import BufferingHandler
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e_support import run_node, serve

from uibridge.core.events import AgentEvent, PartDelta
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, create_app
from uibridge.server.cli import demo_authorize
from uibridge.server.demo import DemoAgent
from uibridge.server.store import MemoryStore

CHROMIUM = Path('/usr/bin/chromium')
SLOW_ANSWER = ' '.join(f'{n},' for n in range(1, 50)) + ' 50.'
HELD_AFTER = '5, '
"""The slow answer's word after which the rest waits for the page's resume request."""
HANG_GUARD = 30.0


class HeldUntilResumed:
    """The demo agent, its `slow` answer held in flight until the reloaded page asks to resume it.

    The page reloads a few words into the answer (once it shows '3,'); instead of pacing the answer by the clock
    (a slow answer long enough for any reload), the rest of it waits, after `HELD_AFTER`, for the resume request
    (`GET .../stream`, seen by `app`). So the answer is certainly still in flight when the page comes back, and no
    test waits longer than the page takes. `HANG_GUARD` only keeps a broken page from hanging the suite."""

    def __init__(self) -> None:
        self.demo = DemoAgent(delay=0, slow_seconds=0)
        self.resumed: anyio.Event | None = None

    def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        return self._held(self.demo(run))

    async def _held(self, answer: AsyncIterator[AgentEvent | ModelMessage]) -> AsyncIterator[AgentEvent | ModelMessage]:
        async for item in answer:
            yield item
            if isinstance(item, PartDelta) and item.delta == HELD_AFTER:
                self.resumed = anyio.Event()
                with anyio.move_on_after(HANG_GUARD):
                    await self.resumed.wait()
                self.resumed = None

    def app(self, inner: Any) -> Any:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            resuming = scope['type'] == 'http' and scope['method'] == 'GET' and scope['path'].endswith('/stream')
            if resuming and self.resumed is not None:
                self.resumed.set()
            await inner(scope, receive, send)

        return app


@pytest.fixture(scope='module')
def reloaded() -> Iterator[dict[str, Any]]:
    if not CHROMIUM.exists():
        if os.environ.get('CI'):  # CI installs it (.ci/run): there, a missing browser is a failure, not a skip
            pytest.fail(f'{CHROMIUM} is missing')
        pytest.skip(f'{CHROMIUM} is not installed (apt-get install chromium; CI installs it)')
    agent = HeldUntilResumed()
    app = agent.app(create_app(agent, page=True, store=MemoryStore(), authorize=demo_authorize))
    # The server's warnings (a history item it could not verify, say) while the page drives it.
    warnings = BufferingHandler(capacity=1_000_000)
    warnings.setLevel(logging.WARNING)
    server_log = logging.getLogger('uibridge.server')
    server_log.addHandler(warnings)
    try:
        with serve(app) as base_url:
            result = run_node('page_reload.mjs', args=[base_url, str(CHROMIUM)], own_process=True)
    finally:
        server_log.removeHandler(warnings)
    result['serverWarnings'] = [record.getMessage() for record in warnings.buffer]
    yield result


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


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_a_reload_restores_the_state_the_sources_and_the_usage(reloaded: dict[str, Any], protocol: str) -> None:
    restored = reloaded[protocol]['restored']
    assert restored['state']['runs'] == 1
    assert restored['state']['hotel'] == 'Hôtel du Parc'
    [box] = restored['providerRun']
    assert box.startswith('web_searchprovider-run') and 'output: [' in box
    assert restored['sources'] == ['https://example.com/vercel-ai', 'https://example.com/ag-ui']
    # The first answer ('hello'), the state and the search (the slow answer reports no usage).
    assert restored['usage'] == ['1 in / 16 out tokens', '3 in / 10 out tokens', '3 in / 15 out tokens']
    # The restored state went back with the next request: the agent counted on.
    assert reloaded[protocol]['stateAfter'] == {**restored['state'], 'runs': 2}
    assert reloaded['serverWarnings'] == []


def test_the_reloads_raise_no_page_errors(reloaded: dict[str, Any]) -> None:
    assert reloaded['pageErrors'] == []
    assert reloaded['consoleErrors'] == []
