"""The state a run starts from is the server's, in both protocols and with client-held history: the state the
last response of the verified history carries. What the client says it holds is `run.client_state`, never the
server's: a `StateDelta` before any `StateSnapshot` patches the server's state (an AG-UI client holding another
state gets the server's as a snapshot first, so both apply the delta to the same state), and an agent that
accepts the client's edit does so by yielding it as a `StateSnapshot`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from uibridge import ModelMessage, ModelRequest, ModelResponse, PartEnd, PartStart, StateDelta, TextPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.events import STATE_METADATA_KEY, AgentEvent, StateSnapshot
from uibridge.core.messages import UserPromptPart
from uibridge.server import AgentRun
from uibridge.server.app import create_app

pytestmark = pytest.mark.anyio
DELTA = [{'op': 'replace', 'path': '/count', 'value': 2}, {'op': 'add', 'path': '/seen', 'value': True}]
SERVER_STATE = {'count': 1}
EDITED = {'count': 1, 'role': 'admin'}
"""What a client sends as its state after editing it."""
HISTORY: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart(content='plan')]),
    ModelResponse(parts=[TextPart(content='planned')], metadata={STATE_METADATA_KEY: SERVER_STATE}),
    ModelRequest(parts=[UserPromptPart(content='go')]),
]


def agent_that(first: Callable[[AgentRun], list[AgentEvent]]) -> Callable[[AgentRun], AsyncIterator[AgentEvent]]:
    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        for event in first(run):
            yield event
        yield StateDelta(DELTA)
        text = f'state {json.dumps(run.state, sort_keys=True)}, client {json.dumps(run.client_state, sort_keys=True)}'
        yield PartStart(0, TextPart(content=text))
        yield PartEnd(0)

    return agent


deltas_only = agent_that(lambda run: [])
honouring = agent_that(lambda run: [StateSnapshot(run.client_state)])


def sse(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {')]


async def run(
    app_agent: Callable[[AgentRun], AsyncIterator[AgentEvent]], path: str, body: Callable[[Starlette], dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[ModelMessage], AgentRun]:
    completed: list[tuple[list[ModelMessage], AgentRun]] = []

    async def keep(messages: list[ModelMessage], run: AgentRun) -> None:
        completed.append((messages, run))

    app = create_app(app_agent, on_complete=keep)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        response = await client.post(path, json=body(app))
    assert response.status_code == 200
    [(messages, done)] = completed
    return sse(response.text), messages, done


def kept_state(messages: list[ModelMessage]) -> Any:
    [response] = [m for m in messages if isinstance(m, ModelResponse)]
    return (response.metadata or {})[STATE_METADATA_KEY]


def agui_body(state: Any, *, signed: bool = True) -> Callable[[Starlette], dict[str, Any]]:
    def body(app: Starlette) -> dict[str, Any]:
        history = HISTORY if signed else HISTORY[2:]
        messages = ag_ui.dump_messages(history, keyring=app.state.ag_ui.keyring)
        dumped = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in messages]
        return {
            'threadId': 't', 'runId': 'r', 'messages': dumped, 'tools': [], 'context': [], 'state': state,
            'forwardedProps': None,
        }  # fmt: skip

    return body


def state_events(events: list[dict[str, Any]]) -> list[Any]:
    return [(e['type'], e.get('snapshot', e.get('delta'))) for e in events if e['type'].startswith('STATE')]


async def test_agui_a_delta_patches_the_servers_state_not_the_one_the_client_sent() -> None:
    events, messages, done = await run(deltas_only, '/ag-ui', agui_body(EDITED))
    assert done.state == SERVER_STATE and done.client_state == EDITED
    # The client held another state: it gets the server's before the delta, and both end where the server does.
    assert state_events(events) == [('STATE_SNAPSHOT', SERVER_STATE), ('STATE_DELTA', DELTA)]
    assert kept_state(messages) == {'count': 2, 'seen': True}


async def test_agui_a_client_holding_the_servers_state_gets_the_delta_alone() -> None:
    events, messages, _ = await run(deltas_only, '/ag-ui', agui_body(SERVER_STATE))
    assert state_events(events) == [('STATE_DELTA', DELTA)]
    assert kept_state(messages) == {'count': 2, 'seen': True}


async def test_agui_an_agent_accepts_the_clients_edit_by_yielding_it() -> None:
    events, messages, done = await run(honouring, '/ag-ui', agui_body(EDITED))
    assert done.state == SERVER_STATE and done.client_state == EDITED
    assert state_events(events) == [('STATE_SNAPSHOT', EDITED), ('STATE_DELTA', DELTA)]
    assert kept_state(messages) == {'count': 2, 'seen': True, 'role': 'admin'}


async def test_agui_with_no_server_state_a_delta_before_a_snapshot_fails_the_run() -> None:
    # The client's state is not the server's to patch: the delta meets no state, and the run ends in an error.
    events, _, done = await run(deltas_only, '/ag-ui', agui_body({'count': 1}, signed=False))
    assert done.state is None and done.client_state == {'count': 1}
    assert done.status == 'failed'
    assert events[-1]['type'] == 'RUN_ERROR'


def vercel_body(history: list[ModelMessage]) -> Callable[[Starlette], dict[str, Any]]:
    def body(app: Starlette) -> dict[str, Any]:
        ui = vercel_ai.dump_messages(history, keyring=app.state.vercel_ai.keyring)
        return {'id': 'chat', 'messages': [m.model_dump(mode='json', exclude_none=True) for m in ui]}

    return body


async def test_vercel_a_delta_patches_the_state_of_the_verified_historys_last_state_part() -> None:
    events, messages, done = await run(deltas_only, '/api/chat', vercel_body(HISTORY))
    assert done.state == SERVER_STATE
    states = [e['data'] for e in events if e['type'] == 'data-state']
    assert states == [{'count': 2, 'seen': True}]
    assert not [e for e in events if e['type'] == 'error']
    assert kept_state(messages) == {'count': 2, 'seen': True}


async def test_vercel_a_state_part_the_client_wrote_is_the_clients_state_only() -> None:
    def body(app: Starlette) -> dict[str, Any]:
        return {
            'id': 'chat',
            'messages': [
                {'id': 'a', 'role': 'assistant', 'parts': [{'type': 'data-state', 'id': 'state', 'data': EDITED}]},
                {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'go'}]},
            ],
        }

    _, messages, done = await run(honouring, '/api/chat', body)
    assert done.state is None and done.client_state == EDITED
    assert kept_state(messages) == {**EDITED, 'count': 2, 'seen': True}  # taken only because the agent chose to
