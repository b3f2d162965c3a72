"""Bounded chats: a stored chat's messages and bytes are limited (a 413 naming the limit before anything is
stored or run), a regenerate or an edit that cuts the chat back is let through, and the application's `quota`
hook may refuse a run (413 or 429, its message, `Retry-After`) before anything is prepared."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from uibridge.core.events import AgentEvent, PartEnd, PartStart
from uibridge.core.messages import ModelMessage, TextPart
from uibridge.server import AgentRun, create_app
from uibridge.server.limits import DEFAULT_MAX_CHAT_BYTES, DEFAULT_MAX_CHAT_MESSAGES, QuotaRefusal, QuotaRequest
from uibridge.server.store import MemoryStore

pytestmark = pytest.mark.anyio


class Short:
    def __init__(self) -> None:
        self.runs: list[AgentRun] = []

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        self.runs.append(run)
        yield PartStart(0, TextPart(content='ok'))
        yield PartEnd(0)


def client_for(agent: Short, store: MemoryStore | None, **options: Any) -> httpx.AsyncClient:
    app = create_app(agent, store=store, **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test')


def user(message_id: str, text: str = 'hi') -> dict[str, Any]:
    return {'id': message_id, 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}


def test_the_defaults_are_what_one_request_may_carry() -> None:
    assert DEFAULT_MAX_CHAT_MESSAGES == 5_000
    assert DEFAULT_MAX_CHAT_BYTES == 8 * 1024 * 1024


async def test_a_chat_past_max_chat_messages_is_a_413_and_nothing_is_stored() -> None:
    agent, store = Short(), MemoryStore()
    async with client_for(agent, store, max_chat_messages=4) as client:
        for number in (1, 2):
            assert (
                await client.post('/api/chat', json={'id': 'c', 'messages': [user(f'u{number}')]})
            ).status_code == 200
        refused = await client.post('/api/chat', json={'id': 'c', 'messages': [user('u3')]})
        assert refused.status_code == 413
        assert refused.json() == {'error': 'the chat would hold more than 4 messages (max_chat_messages)', 'path': ''}
        assert len(agent.runs) == 2
        assert len((await client.get('/api/chat/c')).json()) == 4
        # An edit of the second prompt cuts the chat back below the limit: it runs.
        edited = await client.post('/api/chat', json={'id': 'c', 'messages': [user('u2', 'edited')], 'messageId': 'u2'})
        assert edited.status_code == 200
        assert len(agent.runs) == 3
        # The chat is free again after a refusal: the claim was released.
        assert (await client.post('/ag-ui', json=agui('c', 'u4'))).status_code == 413


def agui(thread: str, message_id: str, text: str = 'hi') -> dict[str, Any]:
    message = {'id': message_id, 'role': 'user', 'content': text}
    return {
        'threadId': thread, 'runId': f'r-{message_id}', 'messages': [message], 'tools': [], 'context': [],
        'state': None, 'forwardedProps': None,
    }  # fmt: skip


async def test_a_chat_past_max_chat_bytes_is_a_413_and_nothing_is_stored() -> None:
    agent, store = Short(), MemoryStore()
    async with client_for(agent, store, max_chat_bytes=4_000) as client:
        assert (await client.post('/ag-ui', json=agui('t', 'u1', 'x' * 1_000))).status_code == 200
        refused = await client.post('/ag-ui', json=agui('t', 'u2', 'x' * 3_000))
        assert refused.status_code == 413
        assert refused.json() == {'error': 'the chat would hold more than 4000 bytes (max_chat_bytes)', 'path': ''}
        assert len(agent.runs) == 1
        assert len((await client.get('/ag-ui/t')).json()) == 2
        # A first message past the limit on its own: refused the same, before the agent runs.
        assert (
            await client.post('/api/chat', json={'id': 'big', 'messages': [user('b', 'x' * 5_000)]})
        ).status_code == 413
        assert (await client.get('/api/chat/big')).json() == []
        # AG-UI reads what a client adds to a chat that does not exist before creating it: none is left behind.
        refused_first = await client.post('/ag-ui', json=agui('big-agui', 'b', 'x' * 5_000))
        assert refused_first.status_code == 413
        assert (await client.get('/ag-ui/big-agui')).status_code == 404
        assert (await client.post('/ag-ui', json=agui('t', 'u3', 'small'))).status_code == 200


async def test_the_quota_hook_sees_the_chat_and_may_refuse_with_a_429_or_a_413() -> None:
    asked: list[QuotaRequest] = []

    async def quota(request: QuotaRequest) -> QuotaRefusal | None:
        asked.append(request)
        if request.principal == 'spender':
            return QuotaRefusal('you have used your daily messages', status=429, retry_after=3600)
        if (request.stored_bytes or 0) > 100:
            return QuotaRefusal('your storage is full', status=413)
        return None

    async def by_header(request: Any) -> str | None:
        return request.headers.get('x-user', 'alice')

    agent, store = Short(), MemoryStore()
    async with client_for(agent, store, quota=quota, authorize=by_header) as client:
        first = await client.post('/api/chat', json={'id': 'c', 'messages': [user('u1')]}, headers={'x-trace': 'a'})
        assert first.status_code == 200
        assert asked[0].principal == 'alice' and asked[0].chat_id == 'c' and asked[0].protocol == 'vercel-ai'
        assert asked[0].stored_messages == 0 and asked[0].stored_bytes == 0
        assert asked[0].body_bytes > 0 and asked[0].headers['x-trace'] == 'a'
        full = await client.post('/api/chat', json={'id': 'c', 'messages': [user('u2')]})
        assert asked[-1].stored_messages == 2 and (asked[-1].stored_bytes or 0) > 100
        assert (full.status_code, full.json()['error']) == (413, 'your storage is full')
        spent = await client.post('/ag-ui', json=agui('s', 'u1'), headers={'x-user': 'spender'})
        assert (spent.status_code, spent.json()['error']) == (429, 'you have used your daily messages')
        assert spent.headers['retry-after'] == '3600'
        assert len(agent.runs) == 1
        assert (await client.get('/api/chat/c')).status_code == 200  # reads are not runs: the hook is not asked
        assert len(asked) == 3
        assert (await client.post('/api/chat', json={'id': 'c', 'messages': [user('u3')]})).status_code == 413


async def test_without_a_store_the_quota_hook_is_asked_too() -> None:
    asked: list[QuotaRequest] = []

    async def quota(request: QuotaRequest) -> QuotaRefusal | None:
        asked.append(request)
        return QuotaRefusal('slow down', retry_after=1)

    agent = Short()
    async with client_for(agent, None, quota=quota) as client:
        refused = await client.post('/api/chat', json={'id': 'c', 'messages': [user('u1')]})
    assert (refused.status_code, refused.json()['error']) == (429, 'slow down')
    assert asked[0].principal is None and asked[0].stored_messages is None and asked[0].stored_bytes is None
    assert agent.runs == []


def test_a_quota_refusal_is_a_413_or_a_429() -> None:
    with pytest.raises(ValueError, match='413 or a 429'):
        QuotaRefusal('no', status=500)  # pyright: ignore[reportArgumentType]
