"""A legit conversation keeps everything on every store: integers past 2**53 in a call's argument text and in its
result, an approval, the shared state, across turns, on both protocols (in process; the real clients play the
same conversation without a store in `tests/e2e/test_forgery_corpus.py`).

The stored history is the server's own: what the agent reads on the next turn is what the store gives back,
which must be what the agent wrote, byte for byte where a model reads it (`docs/signed-history.md`).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from store_support import Backend

from corpus_support import ARGS_TEXT, RESULT, RESULT_METADATA, STATE, CorpusAgent, results, transfer_calls
from uibridge.core.exact_json import exact_text
from uibridge.server import create_app

pytestmark = pytest.mark.anyio

SECRET = 'store-signed-history'


def _events(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {')]


async def _vercel(http: httpx.AsyncClient, chat: str) -> None:
    def user(text: str) -> dict[str, Any]:
        return {'id': f'u-{text}', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}

    asked = await http.post('/api/chat', json={'id': chat, 'messages': [user('transfer')], 'trigger': 'submit-message'})
    assert asked.status_code == 200
    # The page reloads the chat from the store, approves the call and sends the message it continues.
    stored = (await http.get(f'/api/chat/{chat}')).json()
    last = stored[-1]
    [call] = [part for part in last['parts'] if part['type'] == 'tool-transfer']
    assert call['state'] == 'approval-requested'
    call.update(state='approval-responded', approval={'id': call['approval']['id'], 'approved': True})
    approved = await http.post('/api/chat', json={'id': chat, 'messages': [last], 'trigger': 'submit-message'})
    assert approved.status_code == 200
    thanks = await http.post('/api/chat', json={'id': chat, 'messages': [user('thanks')], 'trigger': 'submit-message'})
    assert thanks.status_code == 200


async def _agui(http: httpx.AsyncClient, chat: str) -> None:
    def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            'threadId': chat, 'runId': f'run-{len(messages)}-{len(extra)}', 'messages': messages, 'tools': [],
            'context': [], 'state': None, 'forwardedProps': None, **extra,
        }  # fmt: skip

    transfer = [{'id': 'u-1', 'role': 'user', 'content': 'transfer'}]
    asked = await http.post('/ag-ui', json=body(transfer))
    assert asked.status_code == 200
    [finished] = [e for e in _events(asked.text) if e['type'] == 'RUN_FINISHED']
    [interrupt] = finished['outcome']['interrupts']
    resume = [{'interruptId': interrupt['id'], 'status': 'resolved', 'payload': {'approved': True}}]
    assert (await http.post('/ag-ui', json=body(transfer, resume=resume))).status_code == 200
    thanks = [*transfer, {'id': 'u-2', 'role': 'user', 'content': 'thanks'}]
    assert (await http.post('/ag-ui', json=body(thanks))).status_code == 200


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
async def test_a_conversation_with_big_integers_an_approval_and_state_keeps_everything(
    backend: Backend, protocol: str
) -> None:
    agent = CorpusAgent()
    app = create_app(agent, secret=SECRET, store=backend.store())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as http:
        await (_vercel if protocol == 'vercel' else _agui)(http, f'legit-{protocol}')
    asked, approved, after = agent.runs
    assert asked.approvals == [] and len(approved.approvals) == 1
    assert agent.executed == [ARGS_TEXT]  # the tool ran once, with the text the model wrote
    [held] = transfer_calls(after.messages)
    assert held.args_as_json_str() == ARGS_TEXT
    [result] = results(after.messages)
    assert exact_text(result.content) == exact_text(RESULT) and result.metadata == RESULT_METADATA
    assert exact_text(approved.state) == exact_text(STATE) and exact_text(after.state) == exact_text(STATE)
