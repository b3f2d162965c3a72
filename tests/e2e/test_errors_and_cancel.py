"""How a run ends badly, over a real socket: an agent that raises, a client that walks away (under every server
of `e2e_support.SERVERS`)."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest
from e2e_support import SERVERS, LiveServer, serve

from uibridge import ModelResponse, TextPart
from uibridge.core.events import AgentEvent, PartDelta, PartStart
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, create_app


def test_an_agent_error_reaches_both_real_clients_as_a_safe_message(live_server: LiveServer) -> None:
    played = live_server.drive_each(
        {
            'vercel': (
                'e2e_vercel.mjs',
                {
                    'api': f'{live_server.base_url}/api/chat',
                    'scenarios': [{'name': 'e', 'chatId': 'errors-vercel', 'steps': [{'op': 'send', 'text': 'error'}]}],
                },
            ),
            'agui': (
                'e2e_agui.mjs',
                {
                    'url': f'{live_server.base_url}/ag-ui',
                    'scenarios': [{'name': 'e', 'threadId': 'errors-agui', 'steps': [{'op': 'send', 'text': 'error'}]}],
                },
            ),
        }
    )
    vercel, agui = played['vercel']['e']['steps'][0], played['agui']['e']['steps'][0]
    assert vercel['status'] == 'error'
    assert vercel['error'] == 'An error occurred.'
    assert vercel['valid'] is True
    assert agui['wireEvents'][-1] == 'RUN_ERROR'
    assert agui['runError'] == 'An error occurred.'
    for thread in ('errors-vercel', 'errors-agui'):
        [run] = live_server.recorder.runs_for(thread)
        assert run.status == 'failed'
        assert 'on purpose' in str(run.error)  # the detail stays on the server
        [produced] = live_server.recorder.completed_for(thread)
        response = produced[0]
        assert isinstance(response, ModelResponse)
        assert response.parts == [TextPart(content='Let me start answering, and then')]


class Endless:
    """An agent that streams until cancelled, and says when its `finally` ran."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cleaned_up = threading.Event()
        self.completed: list[tuple[list[ModelMessage], AgentRun]] = []

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent]:
        try:
            yield PartStart(0, TextPart(content='tick'))
            while True:
                self.started.set()
                await anyio.sleep(0.005)
                yield PartDelta(0, ' tick')
        finally:
            self.cleaned_up.set()

    async def on_complete(self, messages: list[ModelMessage], run: AgentRun) -> None:
        self.completed.append((messages, run))


@pytest.fixture(scope='module', params=SERVERS)
def endless(request: pytest.FixtureRequest) -> Iterator[tuple[str, Endless]]:
    agent = Endless()
    with serve(create_app(agent, on_complete=agent.on_complete, keep_alive=None), request.param) as base_url:
        yield base_url, agent


BODIES: dict[str, dict[str, Any]] = {
    '/api/chat': {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'go'}]}]},
    '/ag-ui': {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'go'}]},
}


@pytest.mark.parametrize('path', list(BODIES))
def test_a_client_that_disconnects_cancels_the_agent(endless: tuple[str, Endless], path: str) -> None:
    base_url, agent = endless
    agent.started.clear()
    agent.cleaned_up.clear()
    agent.completed.clear()
    with (
        httpx.Client(base_url=base_url, timeout=10) as client,
        client.stream('POST', path, json=BODIES[path]) as response,
    ):
        assert response.status_code == 200
        received = 0
        for chunk in response.iter_bytes():
            received += len(chunk)
            if received > 2000:
                break  # leaving the block closes the connection mid-stream
    assert agent.cleaned_up.wait(5), 'the agent kept running after the client left'
    deadline = time.monotonic() + 5
    while not agent.completed and time.monotonic() < deadline:
        time.sleep(0.01)
    [(messages, run)] = agent.completed
    assert run.status == 'cancelled' and run.cancelled
    [response_message] = messages
    assert isinstance(response_message, ModelResponse)
    [text] = response_message.parts
    assert isinstance(text, TextPart) and text.content.startswith('tick tick')
