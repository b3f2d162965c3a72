"""Hostile load against a real uvicorn server: each worst body the default limits admit, and its neighbours.

Each attack goes to the app under uvicorn on a loopback port while a legitimate stream runs beside it; the
assertions are on the status, on the work the server did (counted: signatures computed, bytes canonicalised,
never wall-clock time), and on the legitimate stream finishing cleanly. Loops are bounded in count and time.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from e2e_support import serve

from uibridge.adapters import ag_ui
from uibridge.core import provenance
from uibridge.core.events import ANSWERED_BY_METADATA_KEY, AgentEvent, PartEnd, PartStart, ResponseStart, ToolCallReady
from uibridge.core.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from uibridge.core.provenance import Keyring
from uibridge.server import AgentRun, create_app, endpoint
from uibridge.server.demo import DemoAgent

KEYRING = Keyring('hostile-load')


class Counted:
    """Signature work done while the block runs: MACs computed and bytes put in canonical form."""

    def __init__(self) -> None:
        self.macs = 0
        self.canonical_bytes = 0


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    counted = Counted()
    mac, canonical = Keyring._mac, provenance.canonical_json  # pyright: ignore[reportPrivateUsage]

    def counting_mac(base: Any, domain: str, payload: bytes) -> str:
        counted.macs += 1
        return mac(base, domain, payload)

    def counting_canonical(value: Any) -> bytes:
        out = canonical(value)
        counted.canonical_bytes += len(out)
        return out

    with monkeypatch.context() as patch:
        patch.setattr(Keyring, '_mac', staticmethod(counting_mac))
        patch.setattr(provenance, 'canonical_json', counting_canonical)
        yield counted


def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
    """The demo agent, and three misbehaving ones chosen by the last user text."""
    text = ''
    for message in run.messages:
        for part in message.parts:
            if part.part_kind == 'user-prompt' and isinstance(part.content, str):
                text = part.content
    if text.startswith('yield '):
        return _yield_junk(text.removeprefix('yield '))
    if text == 'cancel yourself':
        return _cancel_itself()
    if text == 'many calls':
        return _many_calls(600)
    return DemoAgent(delay=0)(run)


async def _yield_junk(kind: str) -> AsyncIterator[Any]:
    yield ResponseStart()
    yield PartStart(0, TextPart(content='partial'))
    yield PartEnd(0)
    yield 'some text' if kind == 'str' else {'type': 'text-delta', 'delta': 'x'}


async def _cancel_itself() -> AsyncIterator[Any]:
    import asyncio

    yield PartStart(0, TextPart(content='partial'))
    raise asyncio.CancelledError


async def _many_calls(count: int) -> AsyncIterator[Any]:
    yield ResponseStart()
    for i in range(count):
        yield PartStart(i, ToolCallPart(tool_name='delete_file', args={'path': f'f{i}'}, tool_call_id=f'call_{i}'))
        yield PartEnd(i)
    for i in range(count):
        yield ToolCallReady(f'call_{i}', 'approval')


@pytest.fixture(scope='module')
def server() -> Iterator[str]:
    app = create_app(agent, secret=KEYRING, expose_errors=True, body_timeout=1.0)
    with serve(app) as base_url:
        yield base_url


# ---------------------------------------------------------------------------------------------- helpers


def vercel_body(messages: list[dict[str, Any]], chat_id: str = 'hostile') -> dict[str, Any]:
    return {'id': chat_id, 'messages': messages, 'trigger': 'submit-message'}


def user_message(text: str, message_id: str = 'u1') -> dict[str, Any]:
    return {'id': message_id, 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}


def agui_body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        'threadId': 'hostile',
        'runId': 'r1',
        'state': {},
        'tools': [],
        'context': [],
        'forwardedProps': {},
        'messages': messages,
    }
    return {**body, **extra}


def post(base_url: str, path: str, body: Any = None, *, content: bytes | None = None) -> httpx.Response:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        if content is None:
            content = json.dumps(body).encode()
        return client.post(path, content=content, headers={'content-type': 'application/json'})


def legitimate_stream_beside(base_url: str) -> tuple[threading.Thread, dict[str, Any]]:
    """Start a 'weather' run on the Vercel endpoint in a thread; its result says whether it finished cleanly."""
    result: dict[str, Any] = {}

    def run() -> None:
        response = post(base_url, '/api/chat', vercel_body([user_message('weather')], 'beside'))
        result['status'] = response.status_code
        result['finished'] = '"type":"finish"' in response.text and '"type":"error"' not in response.text

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def assert_beside_finished(thread: threading.Thread, result: dict[str, Any]) -> None:
    thread.join(60)
    assert not thread.is_alive()
    assert result == {'status': 200, 'finished': True}


def sse_events(response: httpx.Response) -> list[Any]:
    return [
        json.loads(line[6:])
        for line in response.text.split('\n')
        if line.startswith('data: ') and line != 'data: [DONE]'
    ]


# ----------------------------------------------------------------------------------------------- the rows


def test_n_trailing_calls_and_n_resume_entries_cost_one_signature_each(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 600
    calls = [
        ToolCallPart(tool_name='delete_file', args={'path': f'f{i}'}, tool_call_id=f'call_{i}') for i in range(count)
    ]
    pending = ModelResponse(
        parts=list(calls), metadata={ANSWERED_BY_METADATA_KEY: {c.tool_call_id: 'approval' for c in calls}}
    )
    prompt = ModelRequest(parts=[UserPromptPart(content='delete them all')])
    history = [
        m.model_dump(mode='json', by_alias=True, exclude_none=True)
        for m in ag_ui.dump_messages([prompt, pending], keyring=KEYRING)
    ]
    resume = [
        {'interruptId': KEYRING.approval_id('hostile', call), 'status': 'resolved', 'payload': {'approved': False}}
        for call in calls
    ]
    thread, beside = legitimate_stream_beside(server)
    with counting(monkeypatch) as counted:
        response = post(server, '/ag-ui', agui_body(history, resume=resume))
    assert_beside_finished(thread, beside)
    assert response.status_code == 200
    denied = [e for e in sse_events(response) if e['type'] == 'TOOL_CALL_RESULT']
    assert len(denied) == count  # every answer was verified, matched to its call, and acted on
    # One signature per call to verify it, one per call for its approval ids, one per streamed result: linear
    # (matching every entry against every call, as before, was 360,000 for this body).
    assert counted.macs <= 4 * count


def test_many_approvals_naming_one_huge_call_canonicalise_its_arguments_once(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = 'x' * 3_500_000
    call = ToolCallPart(tool_name='delete_file', args={'path': huge}, tool_call_id='call_huge')
    sig = KEYRING.sign_part(call)
    part = {
        'type': 'tool-delete_file',
        'toolCallId': 'call_huge',
        'state': 'approval-responded',
        'input': {'path': huge},
        'callProviderMetadata': {'uibridge': {'sig': sig, 'approval': True}},
        'approval': {'id': 'apr_0000', 'approved': True},
    }
    assistant = {'id': 'a1', 'role': 'assistant', 'parts': [{'type': 'step-start'}, *[part] * 1]}
    extra = [{**part, 'input': {'path': 'x'}, 'approval': {'id': f'apr_{i:04d}', 'approved': True}} for i in range(19)]
    assistant['parts'] += extra  # 20 approvals naming one call: a 422 (one id, several calls) ...
    with counting(monkeypatch) as counted:
        response = post(server, '/api/chat', vercel_body([user_message('delete'), assistant]))
    assert response.status_code == 422 and 'tool call id' in response.json()['error']
    assert counted.canonical_bytes == 0  # refused before a signature is checked
    # ... and 20 answers to one call (the protocol allows one; a client may repeat it) cost one canonical form.
    assistant['parts'] = [{'type': 'step-start'}, part]
    with counting(monkeypatch) as counted:
        response = post(server, '/api/chat', vercel_body([user_message('delete'), assistant]))
    assert response.status_code == 200
    assert counted.canonical_bytes < 3 * len(huge)


@pytest.mark.parametrize(
    ('path', 'body', 'limit'),  # each body built when its test runs, not at collection by every worker
    [
        (
            '/ag-ui',
            lambda: agui_body([{'id': f'm{i}', 'role': 'user', 'content': 'x'} for i in range(150_000)]),
            'max_messages',
        ),
        (
            '/api/chat',
            lambda: vercel_body([{'id': 'a', 'role': 'assistant', 'parts': [{'type': 'step-start'}] * 350_000}]),
            'max_parts_per_message',
        ),
        (
            '/api/chat',
            lambda: vercel_body([user_message('x', f'msg_{i:024x}') for i in range(60_000)]),
            'max_messages',
        ),
        (
            '/api/chat',
            lambda: vercel_body(
                [{'id': f'a{i}', 'role': 'assistant', 'parts': [{'type': 'step-start'}] * 74} for i in range(4000)]
            ),
            'max_parts',
        ),
        (
            '/ag-ui',
            lambda: agui_body(
                [{'id': f'm{i}', 'role': 'user', 'content': [{'type': 'text', 'text': 'x'}] * 60} for i in range(4000)]
            ),
            'max_parts',
        ),
        ('/ag-ui', lambda: agui_body([], runId='r' * 1_000_000), 'max_id_length'),
        (
            '/api/chat',
            lambda: vercel_body([{'id': 'u', 'role': 'user', 'parts': [{'type': 'x' * 1_000_000}]}]),
            'max_string_length',
        ),
    ],
    ids=[
        '150k-agui-messages',
        '350k-step-starts',
        '60k-derived-ids',
        '296k-step-starts-in-4k-messages',
        '240k-agui-content-parts',
        '1mb-run-id',
        '1mb-part-type',
    ],
)
def test_bodies_past_a_limit_are_a_413_naming_it(
    server: str, path: str, body: Callable[[], dict[str, Any]], limit: str, caplog: pytest.LogCaptureFixture
) -> None:
    content = json.dumps(body(), separators=(',', ':')).encode()
    assert len(content) < 8 * 1024 * 1024  # within the body limit: the count or size limit answers
    thread, beside = legitimate_stream_beside(server)
    with caplog.at_level(logging.WARNING):
        response = post(server, path, content=content)
    assert_beside_finished(thread, beside)
    assert response.status_code == 413
    assert limit in response.json()['error']
    assert all(len(record.getMessage()) < 2_000 for record in caplog.records)


@pytest.mark.parametrize(
    ('path', 'content'),
    [
        ('/ag-ui', b'{"threadId": "a\\ud800", "runId": "r", "messages": []}'),
        ('/ag-ui', b'{"threadId": "t", "runId": "\\udfff", "messages": []}'),
        (
            '/api/chat',
            b'{"id": "c", "trigger": "submit-message", "messages": [{"id": "u", "role": "user", "parts": '
            b'[{"type": "text", "text": "hi"}]}, {"id": "\\ud800", "role": "assistant", "parts": []}]}',
        ),
    ],
    ids=['agui-thread-id', 'agui-run-id', 'vercel-continuation-id'],
)
def test_an_id_no_encoder_can_write_is_a_422_not_a_broken_stream(server: str, path: str, content: bytes) -> None:
    response = post(server, path, content=content)
    assert response.status_code == 422
    assert 'surrogate' in response.json()['error']


@pytest.mark.parametrize('spelling', [b'1e999999', b'-1e400', b'Infinity', b'NaN'])
def test_non_finite_numbers_are_refused_in_every_spelling(server: str, spelling: bytes) -> None:
    content = b'{"threadId": "t", "runId": "r", "messages": [], "state": {"n": %s}}' % spelling
    assert post(server, '/ag-ui', content=content).status_code == 422


def test_a_trickled_body_is_a_408_and_the_connection_closes(server: str) -> None:
    host, port = server.removeprefix('http://').split(':')
    head = f'POST /ag-ui HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n'
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + b'{"threadId"')  # then nothing more: the server's body_timeout is 1 s
        answer = b''
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break  # closed by the server
            answer += chunk
    assert answer.split(b'\r\n', 1)[0].split()[1] == b'408'
    assert b'connection: close' in answer.lower()


def test_a_websocket_upgrade_is_refused_cleanly(server: str) -> None:
    host, port = server.removeprefix('http://').split(':')
    handshake = (
        f'GET /ag-ui HTTP/1.1\r\nhost: {host}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n'
        'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n'
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(handshake.encode())
        status = sock.recv(65536).split(b'\r\n', 1)[0]
    assert status.split()[1] == b'403'
    assert post(server, '/ag-ui', agui_body([{'id': 'u1', 'role': 'user', 'content': 'hi'}])).status_code == 200


@pytest.mark.parametrize('kind', ['str', 'dict'])
def test_an_agent_yielding_junk_ends_the_run_with_the_protocols_error(server: str, kind: str) -> None:
    vercel = post(server, '/api/chat', vercel_body([user_message(f'yield {kind}')], f'junk-{kind}'))
    errors = [e for e in sse_events(vercel) if e.get('type') == 'error']
    assert len(errors) == 1 and 'neither an agent event nor a message' in errors[0]['errorText']
    agui = post(server, '/ag-ui', agui_body([{'id': 'u1', 'role': 'user', 'content': f'yield {kind}'}]))
    events = sse_events(agui)
    assert events[-1]['type'] == 'RUN_ERROR' and 'neither an agent event' in events[-1]['message']
    assert not [e for e in events if e['type'] == 'RUN_FINISHED']


def test_an_agent_cancelling_itself_is_a_failed_run_not_a_success(server: str) -> None:
    agui = post(server, '/ag-ui', agui_body([{'id': 'u1', 'role': 'user', 'content': 'cancel yourself'}]))
    events = sse_events(agui)
    assert events[-1]['type'] == 'RUN_ERROR'
    assert not [e for e in events if e['type'] == 'RUN_FINISHED']
    vercel = post(server, '/api/chat', vercel_body([user_message('cancel yourself')], 'cancels'))
    assert [e for e in sse_events(vercel) if e.get('type') == 'error']


def test_the_event_loop_serves_others_while_a_large_body_is_parsed(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large body is parsed in a worker thread: held there (until a small request has been served whole),
    it cannot hold the event loop. Parsed on the loop, it would block the small request and this would time
    out instead of passing."""
    small_served = threading.Event()
    real_check = endpoint.check_limits

    def held_check(body: Any, limits: Any, **options: Any) -> int:
        if len(body.get('messages', [])) >= 4000:  # only the large request waits
            assert small_served.wait(30), 'the small request was not served while the large body was held'
        return real_check(body, limits, **options)

    monkeypatch.setattr(endpoint, 'check_limits', held_check)
    large = agui_body([{'id': f'm{i}', 'role': 'user', 'content': 'x' * 1500} for i in range(4500)])
    big: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: big.update(response=post(server, '/ag-ui', large)))
    thread.start()
    small = post(server, '/ag-ui', agui_body([{'id': 'u1', 'role': 'user', 'content': 'hi'}], threadId='small'))
    small_served.set()
    thread.join(60)
    assert small.status_code == 200 and sse_events(small)[-1]['type'] == 'RUN_FINISHED'
    assert big['response'].status_code == 200
