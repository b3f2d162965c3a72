"""Several workers: a deployment that cannot work is refused when the endpoint is built, where the number of
workers is known (`WEB_CONCURRENCY`), saying what to do; where it is not, the first request carrying another key's
signatures is logged once, saying what to set. (tests/server/store/test_workers.py runs the real `uvicorn
--workers 2` without a shared key.)"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

from uibridge.core.provenance import Keyring
from uibridge.server import create_app
from uibridge.server.demo import DemoAgent
from uibridge.server.deployment import declared_workers

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(('value', 'workers'), [(None, 1), ('1', 1), ('4', 4), ('0', 1), ('many', 1)])
def test_the_workers_asked_for_are_read_as_uvicorn_reads_them(value: str | None, workers: int) -> None:
    assert declared_workers({} if value is None else {'WEB_CONCURRENCY': value}) == workers


def test_several_workers_on_a_memory_store_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv('WEB_CONCURRENCY', '2')
    with pytest.raises(ValueError, match='WEB_CONCURRENCY=2 asks for 2 worker processes, which cannot share a memory:'):
        create_app(DemoAgent(), store='memory:')
    with pytest.raises(ValueError, match=r'use sqlite:///path.db on one host, or redis://… or postgresql://…'):
        create_app(DemoAgent(), store='memory:')
    create_app(DemoAgent(), store=f'sqlite:///{tmp_path}/chats.db')  # a file the workers share


def test_several_workers_without_a_shared_key_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('WEB_CONCURRENCY', '3')
    with pytest.raises(ValueError, match='set the same UIBRIDGE_SECRET on every worker'):
        create_app(DemoAgent(), secret=Keyring())  # a random key of this process's own
    create_app(DemoAgent(), secret='shared')
    monkeypatch.setenv('WEB_CONCURRENCY', '1')
    create_app(DemoAgent(), secret=Keyring())  # one process: its own key is all it needs


def _user(text: str) -> dict[str, Any]:
    return {'id': f'u-{text}', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}


async def test_another_keys_signatures_are_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes without a shared key, as two apps each with a random key: a history one signed, sent to the
    other, is dropped there, and the other says why, once."""
    from uibridge.server import deployment

    monkeypatch.setattr(deployment, '_reported', False)  # once per process: as if this one had just started
    first = create_app(DemoAgent(delay=0), secret=Keyring())
    second = create_app(DemoAgent(delay=0), secret=Keyring())
    body: dict[str, Any] = {'id': 'c', 'messages': [_user('hello')]}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=first), base_url='http://first') as client:
        answer = await client.post('/api/chat', json=body)
    assert answer.status_code == 200
    chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith('data: {')]
    text = ''.join(c['delta'] for c in chunks if c['type'] == 'text-delta')
    signature = next(c['providerMetadata'] for c in chunks if c['type'] == 'text-end')
    part = {'type': 'text', 'text': text, 'providerMetadata': signature}
    assistant = {'id': 'a1', 'role': 'assistant', 'parts': [part]}
    signed = {'id': 'c', 'messages': [_user('hello'), assistant, _user('again')]}
    with caplog.at_level(logging.ERROR, logger='uibridge.server'):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=first), base_url='http://first') as client:
            assert (await client.post('/api/chat', json=signed)).status_code == 200  # verifies where it was signed
        assert not [r for r in caplog.records if 'another key' in r.getMessage()]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=second), base_url='http://second') as client:
            for _ in range(2):
                assert (await client.post('/api/chat', json=signed)).status_code == 200
    said = [r.getMessage() for r in caplog.records if 'another key' in r.getMessage()]
    assert len(said) == 1
    assert said[0].startswith('Signatures made with another key were seen (1 history item(s), 0 approval(s)')
    assert said[0].endswith('Set the same UIBRIDGE_SECRET on every worker.')
