"""What the tests of streams resumed across processes share (test_resume_processes.py, test_workers.py): the
servers' signing key, a free port, a slow answer started and left unread, and how a resumed answer is checked
against one that was never cut."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from typing import Any

import httpx

SECRET = 'resume-test-secret'
HANG_GUARD = 60.0
"""No test waits longer than this for a process or a request: it only keeps a broken build from hanging."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


def comparable(message: dict[str, Any]) -> dict[str, Any]:
    """A UI message without what differs between two runs of the same answer (ids, signed metadata)."""
    drop = {'providerMetadata', 'callProviderMetadata', 'resultProviderMetadata'}
    parts = [{k: v for k, v in part.items() if k not in drop} for part in message['parts']]
    return {'role': message['role'], 'parts': parts}


SLOW_ANSWER = ' '.join(f'{n},' for n in range(1, 50)) + ' 50. '


def check_resumed(result: dict[str, Any]) -> None:
    reference, resumed = result['reference'], result['dropped']
    assert reference['status'] == 'ready' and reference['error'] is None
    assert resumed['dropped']  # the connection was cut mid-answer ...
    partial = resumed['afterDrop']['messages']
    assert len(partial) == 2 and partial[1]['parts'][-1].get('text', '') != SLOW_ANSWER.strip()
    assert resumed['resumeStatus'] == 200  # ... and resumed from the log
    assert resumed['status'] == 'ready'
    assert [comparable(m) for m in resumed['messages']] == [comparable(m) for m in reference['messages']]
    texts = [p['text'] for p in resumed['messages'][1]['parts'] if p['type'] == 'text']
    assert [t.strip() for t in texts] == [SLOW_ANSWER.strip()]


def resume_spec(api: str, resume_api: str) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    return {
        'api': api + '/api/chat',
        'resumeApi': resume_api + '/api/chat',
        'headers': {'x-demo-user': 'alice'},
        'runs': [
            {'name': 'reference', 'chatId': f'ref-{tag}', 'text': 'slow please'},
            {'name': 'dropped', 'chatId': f'drop-{tag}', 'text': 'slow please', 'dropAfter': 6},
        ],
    }


def start_slow(client: httpx.Client, base: str, chat: str) -> Iterator[bytes]:
    body = {'id': chat, 'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'slow'}]}]}
    request = client.build_request('POST', f'{base}/api/chat', json=body)
    response = client.send(request, stream=True)
    assert response.status_code == 200
    return response.iter_raw()
