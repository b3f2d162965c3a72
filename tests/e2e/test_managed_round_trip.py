"""Server-managed history (`store=`) through the real clients, `ai@7`'s `Chat` and `@ag-ui/client`'s
`HttpAgent`, over the same scenarios as the client-held round trips: every step succeeds, and the history the
server stored is, as the model sees it, exactly what the client ends up holding (tool calls answered by the
client, approvals, regenerate and edit included)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from e2e_support import LiveServer, drive_protocols, live_demo, model_view

from uibridge.adapters import ag_ui, vercel_ai
from uibridge.server.store import MemoryStore

ANSWER_OP = {'vercel': 'approve', 'agui': 'resume'}
CLIENT_OUTPUT = {'vercel': {'output': {'time': 'noon'}}, 'agui': {'content': '{"time":"noon"}'}}


def scenarios(protocol: str) -> dict[str, list[dict[str, Any]]]:
    answer = ANSWER_OP[protocol]
    played = {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'tools': [{'op': 'send', 'text': 'think, retry the weather'}, {'op': 'send', 'text': 'next'}],
        'feedback': [{'op': 'send', 'text': 'think, then feedback'}, {'op': 'send', 'text': 'next'}],
        'client': [{'op': 'send', 'text': 'client'}, {'op': 'tool-output', **CLIENT_OUTPUT[protocol]}],
        'approve': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': True}],
        'deny': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': False, 'reason': 'keep it'}],
    }
    if protocol == 'vercel':  # AG-UI has no regenerate or edit request: a shorter list reads as a client behind
        played['regenerate'] = [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'think'}, {'op': 'regenerate'}]
        played['edit'] = [
            {'op': 'send', 'text': 'hello'},
            {'op': 'send', 'text': 'weather'},
            {'op': 'edit', 'index': 0, 'text': 'think edited'},
        ]
    return played


@pytest.fixture(scope='module')
def managed() -> Iterator[tuple[LiveServer, MemoryStore]]:
    store = MemoryStore()
    with live_demo(store=store) as server:
        yield server, store


@pytest.fixture(scope='module')
def played(managed: tuple[LiveServer, MemoryStore]) -> dict[str, dict[str, Any]]:
    """Both protocols' scenarios, their drivers side by side: protocol -> the driver's result."""
    server, _ = managed
    return drive_protocols(
        server, {p: scenarios(p) for p in ('vercel', 'agui')}, lambda protocol, name: f'{protocol}-managed-{name}'
    )


@pytest.fixture(scope='module', params=['vercel', 'agui'])
def driven(request: pytest.FixtureRequest, played: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    protocol: str = request.param
    return protocol, played[protocol]


def _stored(store: MemoryStore, chat: str) -> list[Any]:
    async def load() -> list[Any]:
        return await store.load_messages(chat, 'anonymous')

    return anyio.run(load)


def test_the_stored_history_is_what_the_client_holds(
    driven: tuple[str, dict[str, Any]], managed: tuple[LiveServer, MemoryStore]
) -> None:
    protocol, results = driven
    assert set(results) == set(scenarios(protocol))
    for name, result in results.items():
        steps = result['steps']
        for step in steps:
            assert step['error'] is None, (name, step['op'], step['error'])
            if protocol == 'vercel':
                assert step['status'] == 'ready' and step['valid'] is True, (name, step['op'])
            else:
                assert step['wireEvents'][-1] == 'RUN_FINISHED', (name, step['op'])
                assert 'MESSAGES_SNAPSHOT' not in step['wireEvents']  # the client was never behind
        held = steps[-1]['messages']
        loaded = vercel_ai.load_messages(held) if protocol == 'vercel' else ag_ui.load_messages(held)
        stored = _stored(managed[1], f'{protocol}-managed-{name}')
        assert model_view(stored) == model_view(loaded), name
