"""Server-managed history (`store=`) through the real clients, `ai@7`'s `Chat` and `@ag-ui/client`'s
`HttpAgent`, over the same scenarios as the client-held round trips: every step succeeds, and the history the
server stored is, as the model sees it, exactly what the client ends up holding (tool calls answered by the
client, approvals, regenerate and edit included). The shared state is the store's: the demo's `state` run
counts on from the stored state, whatever a tampered page (a `data-state` part) or an edited AG-UI state says."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from e2e_support import LiveServer, drive_protocols, live_demo, model_view

from uibridge.adapters import ag_ui, vercel_ai
from uibridge.server.store import MemoryStore

ANSWER_OP = {'vercel': 'approve', 'agui': 'resume'}
CLAIMED = {'runs': 41, 'role': 'admin'}
"""The state a client claims: a page that rewrote its `data-state` part, a CopilotKit user who edited the state."""
FORGE_STATE = f"""
const last = messages.findLast((m) => m.role === 'assistant');
for (const part of last.parts) if (part.type === 'data-state') part.data = {json.dumps(CLAIMED)};
return messages;
"""
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
        'state': [{'op': 'send', 'text': 'state'}, {'op': 'send', 'text': 'state again'}],
        'state-claimed': [
            {'op': 'send', 'text': 'state'},
            {'op': 'mutate', 'js': FORGE_STATE} if protocol == 'vercel' else {'op': 'set-state', 'state': CLAIMED},
            {'op': 'send', 'text': 'state again'},
        ],
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
            if step['op'] in ('mutate', 'set-state'):
                continue  # the page changed what it holds; nothing ran
            if protocol == 'vercel':
                assert step['status'] == 'ready' and step['valid'] is True, (name, step['op'])
            else:
                assert step['wireEvents'][-1] == 'RUN_FINISHED', (name, step['op'])
                assert 'MESSAGES_SNAPSHOT' not in step['wireEvents']  # the client was never behind
        held = steps[-1]['messages']
        loaded = vercel_ai.load_messages(held) if protocol == 'vercel' else ag_ui.load_messages(held)
        stored = _stored(managed[1], f'{protocol}-managed-{name}')
        assert model_view(stored) == model_view(loaded), name


def _stored_state(store: MemoryStore, chat: str) -> Any:
    async def load() -> Any:
        claim = await store.claim(chat, 'anonymous')
        await store.release(claim)
        return claim.state

    return anyio.run(load)


@pytest.mark.parametrize('name', ['state', 'state-claimed'])
def test_the_state_is_the_stores_whatever_the_client_claims(
    driven: tuple[str, dict[str, Any]], managed: tuple[LiveServer, MemoryStore], name: str
) -> None:
    protocol, results = driven
    server, store = managed
    chat = f'{protocol}-managed-{name}'
    first, second = server.recorder.runs_for(chat)
    assert first.state is None and second.state is not None
    assert second.state['runs'] == 1  # the stored state, though the client sent only what it holds
    if name == 'state-claimed':
        assert second.client_state == CLAIMED
    stored = _stored_state(store, chat)
    assert stored['runs'] == 2 and 'role' not in stored
    steps = results[name]['steps']
    if protocol == 'agui':
        assert steps[-1]['state'] == stored  # the client ends holding the server's state
    else:
        [part] = [p for p in steps[-1]['messages'][-1]['parts'] if p['type'] == 'data-state']
        assert part['data'] == stored
