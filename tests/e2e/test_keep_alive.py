"""Keep-alive comments in the middle of a slow stream, under every server of `e2e_support.SERVERS`: both real
clients read straight past them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from e2e_support import SERVERS, one_turn_spec, run_nodes, serve

from uibridge.server import create_app
from uibridge.server.demo import DemoAgent
from uibridge.server.outbox import KEEP_ALIVE


@pytest.fixture(scope='module', params=SERVERS)
def slow_server(request: pytest.FixtureRequest) -> Iterator[str]:
    # Words 60 ms apart and a keep-alive after 20 ms of silence: comments between nearly every word.
    with serve(create_app(DemoAgent(delay=0.06), keep_alive=0.02), request.param) as base_url:
        yield base_url


def test_the_stream_carries_keep_alive_comments(slow_server: str) -> None:
    body = {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'weather'}]}
    response = httpx.post(f'{slow_server}/ag-ui', json=body, timeout=10)
    assert response.content.count(KEEP_ALIVE) >= 3


def test_both_real_clients_read_past_keep_alive_comments(slow_server: str) -> None:
    played = run_nodes(
        {
            'vercel': ('e2e_vercel.mjs', one_turn_spec('vercel', slow_server)),
            'agui': ('e2e_agui.mjs', one_turn_spec('agui', slow_server)),
        }
    )
    vercel, agui = played['vercel']['slow']['steps'][0], played['agui']['slow']['steps'][0]
    assert vercel['error'] is None and vercel['status'] == 'ready'
    texts = [p['text'] for p in vercel['messages'][-1]['parts'] if p['type'] == 'text']
    assert texts == ['It is sunny in Paris, 21 °C.']
    assert agui['error'] is None and agui['wireEvents'][-1] == 'RUN_FINISHED'
    assert agui['messages'][-1]['content'] == 'It is sunny in Paris, 21 °C.'
