"""Chat ids follow one grammar (`CHAT_ID_RULE`): with a store, a `POST` naming another id is a 422 that states
it, before any chat is made, and `GET`/`DELETE` of one is a 404 like an unknown chat. Every id the real clients
make (ai@7's `generateId`, `@ag-ui/client`'s thread ids) fits."""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from uibridge.core.events import AgentEvent, PartEnd, PartStart
from uibridge.core.messages import ModelMessage, TextPart
from uibridge.server import AgentRun, create_app
from uibridge.server.store import CHAT_ID_RULE, MemoryStore, is_chat_id

pytestmark = pytest.mark.anyio
CLIENTS = Path(__file__).resolve().parents[1] / 'clients'
MADE_BY_CLIENTS = """
import { generateId } from 'ai';
import { HttpAgent } from '@ag-ui/client';
const thread = new HttpAgent({ url: 'http://x' }).threadId;
console.log(JSON.stringify([generateId(), generateId(), thread, crypto.randomUUID()]));
"""


@functools.cache
def ids_the_clients_make() -> list[str]:
    result = subprocess.run(
        ['node', '--input-type=module', '-e', MADE_BY_CLIENTS], cwd=CLIENTS, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
    yield PartStart(0, TextPart(content='ok'))
    yield PartEnd(0)


def client_for(store: MemoryStore | None) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(agent, store=store)), base_url='http://test')


def vercel(chat_id: str) -> dict[str, Any]:
    return {'id': chat_id, 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}


def agui(thread_id: str) -> dict[str, Any]:
    return {
        'threadId': thread_id, 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'hi'}], 'tools': [],
        'context': [], 'state': {}, 'forwardedProps': {},
    }  # fmt: skip


NANOID_STYLE = ['V1StGXR8_Z5jdHi6B-myT', '-leading_dash', '_leading_underscore', '01HZX3K4M5N6P7Q8R9S0T1V2W3']
OUTSIDE = ['a/b', '', 'x' * 129, '.', '..', 'a b', 'a?b', 'a#b', 'a%2Fb', 'ünïcode', '{hash}tag', 'a\nb', 'a:b']


def test_the_rule_takes_the_ids_clients_make_and_nothing_a_path_segment_would_change() -> None:
    for chat_id in [*ids_the_clients_make(), *NANOID_STYLE, 'x' * 128, '...', 'a.b~c']:
        assert is_chat_id(chat_id), chat_id
    for chat_id in OUTSIDE:
        assert not is_chat_id(chat_id), chat_id
    assert not is_chat_id(None) and not is_chat_id(7)


async def test_a_post_with_an_id_outside_the_rule_is_a_422_naming_it_and_makes_no_chat() -> None:
    store = MemoryStore()
    async with client_for(store) as client:
        for chat_id in OUTSIDE:
            for path, body, where in (('/api/chat', vercel(chat_id), 'id'), ('/ag-ui', agui(chat_id), 'threadId')):
                response = await client.post(path, json=body)
                assert response.status_code == 422, (chat_id, response.text)
                assert response.json() == {'error': f'a chat id is {CHAT_ID_RULE}', 'path': where}
        assert store.state.chats == {}
        for chat_id in [*ids_the_clients_make(), *NANOID_STYLE]:
            assert (await client.post('/api/chat', json=vercel(chat_id))).status_code == 200
            assert (await client.get(f'/api/chat/{chat_id}')).status_code == 200
            assert (await client.get(f'/api/chat/{chat_id}/stream')).status_code == 200
            assert (await client.delete(f'/api/chat/{chat_id}/stream')).status_code == 204
            assert (await client.post('/ag-ui', json=agui(chat_id + 'a'))).status_code == 200
            assert (await client.get(f'/ag-ui/{chat_id}a')).status_code == 200


async def test_get_and_delete_of_an_id_outside_the_rule_are_a_404() -> None:
    async with client_for(MemoryStore()) as client:
        for escaped in ('a%20b', 'a%3Fb', '%7Bx%7D', 'a%3Ab', '%C3%BC', 'x' * 129):
            for request in (
                client.get(f'/api/chat/{escaped}'),
                client.get(f'/api/chat/{escaped}/stream'),
                client.delete(f'/api/chat/{escaped}/stream'),
                client.get(f'/ag-ui/{escaped}'),
            ):
                response = await request
                assert (response.status_code, response.json()) == (404, {'error': 'no such chat', 'path': ''})


async def test_without_a_store_chat_ids_are_the_clients_business() -> None:
    async with client_for(None) as client:
        assert (await client.post('/api/chat', json=vercel('a/b'))).status_code == 200
