"""Bad input against both endpoints: only 400/413/415/422 or a valid stream; never a 500, never a hang.

Hypothesis writes the bodies (wrong types, deep nesting, huge strings, invalid UTF-8, unknown parts and
roles, protocol-shaped bodies with any field replaced) and sends them to the demo app in-process, which
lets it try hundreds of them in seconds; a few bodies that need a real socket (a lying or missing
Content-Length, a body past the default 8 MiB limit) go to the app under uvicorn.
"""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import anyio
import httpx
import pydantic
import pytest
from ag_ui.core import Event
from e2e_support import LiveServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uibridge.adapters.vercel_ai import UIMessageChunkAdapter
from uibridge.server import create_app
from uibridge.server.demo import DemoAgent

ENDPOINTS = ('/api/chat', '/ag-ui')
REFUSALS = {400, 413, 415, 422}
LIMIT = 64 * 1024
AGUI_EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Event)

# --------------------------------------------------------------------------------------------- bodies

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
keywords = st.sampled_from(['hello', 'think', 'weather', 'retry', 'feedback', 'client', 'delete', 'error'])
texts = keywords | st.text(max_size=30) | st.integers(0, 200_000).map(lambda n: 'x' * n)
part_types = st.sampled_from(
    ['text', 'reasoning', 'file', 'step-start', 'tool-get_weather', 'dynamic-tool', 'data-x', 'source-url', 'nope']
)
tool_states = st.sampled_from(
    ['input-streaming', 'input-available', 'approval-requested', 'approval-responded', 'output-available',
     'output-error', 'output-denied', 'bogus']
)  # fmt: skip


def maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, or anything else in its place (a wrong type), or nothing."""
    return st.one_of(value, json_values, st.just(...))


def shaped(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: maybe(v) for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not ...}
    )


vercel_parts = shaped(
    {
        'type': part_types,
        'text': texts,
        'toolCallId': st.text(max_size=8),
        'state': tool_states,
        'input': json_values,
        'output': json_values,
        'url': st.sampled_from(['https://x/y.png', 's3://b/k', 'file:///etc/passwd', 'data:image/png;base64,AAAA']),
        'mediaType': st.sampled_from(['image/png', 'text/plain', '']),
        'approval': shaped({'id': st.text(max_size=8), 'approved': st.booleans()}),
        'providerMetadata': json_values,
        'data': json_values,
    }
)
vercel_messages = shaped(
    {
        'id': st.text(max_size=8),
        'role': st.sampled_from(['user', 'assistant', 'system', 'tool', 'bogus']),
        'parts': st.lists(vercel_parts, max_size=4),
        'metadata': json_values,
    }
)
vercel_bodies = shaped(
    {
        'id': st.text(max_size=8),
        'messages': st.lists(vercel_messages, max_size=4),
        'trigger': st.sampled_from(['submit-message', 'regenerate-message', 'bogus']),
        'messageId': st.text(max_size=8),
    }
)
agui_content = st.one_of(
    texts,
    st.lists(
        shaped(
            {
                'type': st.sampled_from(['text', 'image', 'audio', 'document', 'binary', 'nope']),
                'text': texts,
                'source': shaped(
                    {
                        'type': st.sampled_from(['url', 'data', 'file', 'nope']),
                        'value': st.sampled_from(['https://x/y.png', 's3://b/k', 'AAAA', '']),
                        'mimeType': st.sampled_from(['image/png', 'text/plain']),
                    }
                ),
            }
        ),
        max_size=3,
    ),
)
agui_messages = shaped(
    {
        'id': st.text(max_size=8),
        'role': st.sampled_from(['user', 'assistant', 'system', 'developer', 'tool', 'reasoning', 'activity', 'x']),
        'content': agui_content,
        'toolCallId': st.text(max_size=8),
        'toolCalls': st.lists(
            shaped(
                {
                    'id': st.text(max_size=8),
                    'type': st.just('function'),
                    'function': shaped({'name': st.text(max_size=8), 'arguments': st.text(max_size=20)}),
                }
            ),
            max_size=2,
        ),
        'encryptedValue': st.text(max_size=40),
    }
)
agui_bodies = shaped(
    {
        'threadId': st.text(max_size=8),
        'runId': st.text(max_size=8),
        'protocolVersion': st.sampled_from(['1.0', '0.9', 'x']),
        'messages': st.lists(agui_messages, max_size=4),
        'state': json_values,
        'tools': st.lists(shaped({'name': st.text(max_size=8), 'description': st.text(max_size=8)}), max_size=2),
        'context': json_values,
        'forwardedProps': json_values,
        'resume': st.lists(
            shaped({'interruptId': st.text(max_size=8), 'status': st.sampled_from(['resolved', 'cancelled'])}),
            max_size=2,
        ),
    }
)

# Nearly valid bodies, so that many examples get past parsing and stream: a user's message (with any text,
# keywords included) plus parts, roles and keys this version does not know.
unknown_vercel_parts = st.fixed_dictionaries({'type': st.text(min_size=1, max_size=12)}, optional={'data': json_values})
near_vercel_bodies = st.builds(
    lambda text, extra_parts, extra: {
        'id': 'chat',
        'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': text}, *extra_parts]}],
        'trigger': 'submit-message',
        **extra,
    },
    texts,
    st.lists(unknown_vercel_parts | vercel_parts, max_size=2),
    st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ('id', 'messages', 'trigger')), json_values, max_size=2
    ),
)
near_agui_bodies = st.builds(
    lambda content, extra_messages, state: {
        'threadId': 't',
        'runId': 'r',
        'protocolVersion': '1.0',
        'messages': [*extra_messages, {'id': 'u1', 'role': 'user', 'content': content}],
        'state': state,
        'tools': [],
        'context': [],
        'forwardedProps': {},
    },
    agui_content,
    st.lists(agui_messages, max_size=2),
    json_values,
)


def deep(depth: int) -> bytes:
    return b'{"messages": ' + b'[' * depth + b']' * depth + b'}'


raw_bodies = st.one_of(
    st.binary(max_size=200),
    st.integers(1, 5000).map(deep),
    st.integers(1, 2000).map(lambda n: b'{"messages": [' + b'{"a": ' * n + b'1' + b'}' * n + b']}'),
    st.tuples(json_values, st.binary(min_size=1, max_size=4)).map(lambda t: json.dumps(t[0]).encode() + b'\xff' + t[1]),
    st.integers(LIMIT - 50, LIMIT + 50).map(lambda n: b'{"id": "' + b'a' * n + b'"}'),
)
other_bodies = st.one_of(
    vercel_bodies.map(lambda b: json.dumps(b).encode()),
    agui_bodies.map(lambda b: json.dumps(b).encode()),
    json_values.map(lambda b: json.dumps(b).encode()),
    raw_bodies,
)
requests = st.one_of(
    near_vercel_bodies.map(lambda b: ('/api/chat', json.dumps(b).encode())),
    near_agui_bodies.map(lambda b: ('/ag-ui', json.dumps(b).encode())),
    st.tuples(st.sampled_from(ENDPOINTS), other_bodies),
)
content_types = st.sampled_from(['application/json'] * 6 + ['text/plain', 'application/json; charset=latin-1', ''])

# ---------------------------------------------------------------------------------------------- checks


def check_stream(path: str, response: httpx.Response) -> None:
    """A 200 must be a complete, well-formed stream of the endpoint's protocol."""
    assert response.headers['content-type'].startswith('text/event-stream')
    frames = [f for f in response.text.split('\n\n') if f.strip()]
    payloads = [f[len('data: ') :] for f in frames if f.startswith('data: ')]
    assert all(f.startswith(('data: ', ':')) for f in frames), frames
    if path == '/api/chat':
        assert payloads[-1] == '[DONE]'
        chunks = [UIMessageChunkAdapter.validate_json(p) for p in payloads[:-1]]
        assert chunks[0].type == 'start'
        assert chunks[-1].type == 'finish'
    else:
        events = [AGUI_EVENTS.validate_json(p) for p in payloads]
        assert events[0].type == 'RUN_STARTED'
        assert events[-1].type in ('RUN_FINISHED', 'RUN_ERROR')


class Bugs(logging.Handler):
    """Collects log records that mean a parser or encoder raised something other than `InputError`."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if 'parser failed' in message or 'Preparing' in message or 'encoder' in message:
            self.records.append(message)


@pytest.fixture(scope='module')
def app() -> Any:
    return create_app(DemoAgent(delay=0), max_body_bytes=LIMIT, keep_alive=None)


async def send(app: Any, path: str, body: bytes, content_type: str) -> httpx.Response:
    headers = {'content-type': content_type} if content_type else {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        with anyio.fail_after(10):
            return await client.post(path, content=body, headers=headers)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=requests, content_type=content_types)
def test_any_body_gets_a_4xx_or_a_valid_stream(app: Any, request: tuple[str, bytes], content_type: str) -> None:
    path, body = request
    bugs = Bugs()
    logger = logging.getLogger('uibridge.server')
    logger.addHandler(bugs)
    try:
        response = anyio.run(send, app, path, body, content_type)
    finally:
        logger.removeHandler(bugs)
    assert response.status_code in REFUSALS | {200}, (response.status_code, response.text[:300])
    assert not bugs.records, bugs.records
    if response.status_code == 200:
        check_stream(path, response)
    else:
        error = response.json()
        assert set(error) == {'error', 'path'}
        assert len(response.content) < 1000  # short, whatever came in
        if not content_type.startswith('application/json') or 'latin-1' in content_type:
            assert response.status_code == 415


# ------------------------------------------------------------------------------------- over a real socket


@pytest.mark.parametrize('path', ENDPOINTS)
def test_a_body_past_the_default_limit_is_413_over_the_wire(live_server: LiveServer, path: str) -> None:
    # The declared length is refused before a byte of the body is read, so the client sends only the head: a
    # client still writing 9 MiB when the server answers and closes may fail to write instead of reading the
    # answer, which is the client's race, not the server's.
    host, port = live_server.base_url.removeprefix('http://').split(':')
    head = (
        f'POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n'
        f'content-length: {9 * 1024 * 1024}\r\n\r\n'
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        answer = b''
        while b'\r\n\r\n' not in answer or not answer.endswith(b'}'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    status_line, _, rest = answer.partition(b'\r\n')
    assert status_line.split()[1] == b'413'
    assert b'connection: close' in rest.lower()
    body = json.loads(rest.partition(b'\r\n\r\n')[2])
    assert body == {'error': f'the body exceeds {8 * 1024 * 1024} bytes', 'path': ''}


@pytest.mark.parametrize('path', ENDPOINTS)
def test_a_streamed_body_without_length_is_cut_at_the_limit(live_server: LiveServer, path: str) -> None:
    sent = 0

    def chunks() -> Any:
        nonlocal sent
        yield b'{"messages": ["'
        for _ in range(200):  # 200 MiB if the server kept reading
            sent += 1
            yield b'a' * (1024 * 1024)

    with httpx.Client(base_url=live_server.base_url, timeout=10) as client:
        try:
            response = client.post(path, content=chunks(), headers={'content-type': 'application/json'})
        except httpx.HTTPError:
            response = None  # the server may close the connection while the client is still sending
    if response is not None:
        assert response.status_code == 413
    assert sent < 200


@pytest.mark.parametrize('path', ENDPOINTS)
@pytest.mark.parametrize(
    ('body', 'status'),
    [
        (b'{"messages": "\xff\xfe"}', 400),
        (b'{"messages": [' * 10_000, 422),
        (b'', 422),
        (b'null', 422),
    ],
)
def test_raw_bad_bodies_over_the_wire(live_server: LiveServer, path: str, body: bytes, status: int) -> None:
    with httpx.Client(base_url=live_server.base_url, timeout=10) as client:
        response = client.post(path, content=body, headers={'content-type': 'application/json'})
    assert response.status_code == status
    assert set(response.json()) == {'error', 'path'}
