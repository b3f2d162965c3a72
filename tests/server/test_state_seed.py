"""A `StateDelta` before any `StateSnapshot` patches the state the client sent, as the client applies it (AG-UI
agents usually send only deltas against the input state), in both protocols."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from uibridge import ModelMessage, ModelResponse, PartEnd, PartStart, StateDelta, TextPart
from uibridge.core.events import STATE_METADATA_KEY, AgentEvent
from uibridge.server import AgentRun
from uibridge.server.app import create_app

pytestmark = pytest.mark.anyio
DELTA = [{'op': 'replace', 'path': '/count', 'value': 2}, {'op': 'add', 'path': '/seen', 'value': True}]


async def deltas_only(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield StateDelta(DELTA)
    yield PartStart(0, TextPart(content=f'state was {json.dumps(run.state, sort_keys=True)}'))
    yield PartEnd(0)


def sse(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {')]


async def run(path: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[ModelMessage]]:
    completed: list[list[ModelMessage]] = []

    async def keep(messages: list[ModelMessage], run: AgentRun) -> None:
        completed.append(messages)

    app = create_app(deltas_only, on_complete=keep)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        response = await client.post(path, json=body)
    assert response.status_code == 200
    return sse(response.text), completed[0]


def kept_state(messages: list[ModelMessage]) -> Any:
    [response] = [m for m in messages if isinstance(m, ModelResponse)]
    return (response.metadata or {})[STATE_METADATA_KEY]


async def test_agui_a_delta_patches_the_state_the_client_sent() -> None:
    body = {
        'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'go'}],
        'tools': [], 'context': [], 'state': {'count': 1}, 'forwardedProps': None,
    }  # fmt: skip
    events, messages = await run('/ag-ui', body)
    assert [e['type'] for e in events if e['type'].startswith(('STATE', 'RUN'))] == [
        'RUN_STARTED',
        'STATE_DELTA',
        'RUN_FINISHED',
    ]
    assert kept_state(messages) == {'count': 2, 'seen': True}


async def test_vercel_a_delta_patches_the_state_of_the_historys_last_state_part() -> None:
    body = {
        'id': 'chat',
        'messages': [
            {'id': 'a', 'role': 'assistant', 'parts': [{'type': 'data-state', 'id': 'state', 'data': {'count': 1}}]},
            {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'go'}]},
        ],
    }
    events, messages = await run('/api/chat', body)
    states = [e['data'] for e in events if e['type'] == 'data-state']
    assert states == [{'count': 2, 'seen': True}]
    assert not [e for e in events if e['type'] == 'error']
    assert kept_state(messages) == {'count': 2, 'seen': True}
