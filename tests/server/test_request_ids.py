"""Request ids: the client's `x-request-id` when plausible, else a fresh one, echoed on every answer: streams,
JSON errors, the stored chat, resume, the probes, a route that does not exist, a method a route does not take;
once, under `create_app` or not. And a stream's frames after its first body byte go around the watch."""

from __future__ import annotations

import re

import httpx
import pytest
from telemetry_support import CHAT, Agent, body

from uibridge.server import VercelAIEndpoint, create_app
from uibridge.server.asgi import Message
from uibridge.server.outbox import Outbox
from uibridge.server.request_ids import MAX_REQUEST_ID_LENGTH, ResponseWatch, request_id_for, settled, with_request_id
from uibridge.server.store import MemoryStore

pytestmark = pytest.mark.anyio

GENERATED = re.compile(r'[0-9a-f]{32}')


@pytest.mark.parametrize(
    'given',
    ['3f2a9c', '0af7651916cd43dd8448eb211c80319c', 'Root=1-67891233-abcdef012345678912345678', 'a/b;o=1', 'x' * 128],
)
def test_a_plausible_id_is_kept(given: str) -> None:
    assert request_id_for({'x-request-id': given}) == given


@pytest.mark.parametrize(
    'given', ['', 'x' * (MAX_REQUEST_ID_LENGTH + 1), 'two words', 'line\nbreak', 'quote"d', 'tab\t', 'é', '<script>']
)
def test_anything_else_is_replaced_by_a_fresh_id(given: str) -> None:
    chosen = request_id_for({'x-request-id': given})
    assert GENERATED.fullmatch(chosen)
    assert chosen != request_id_for({'x-request-id': given})


def test_without_a_header_each_request_gets_its_own_id() -> None:
    assert GENERATED.fullmatch(request_id_for({}))
    assert request_id_for({}) != request_id_for({})


def test_the_header_replaces_one_the_answer_had_and_other_messages_pass_unchanged() -> None:
    start = {'type': 'http.response.start', 'status': 200, 'headers': [(b'X-Request-Id', b'old'), (b'a', b'b')]}
    assert with_request_id(start, 'new')['headers'] == [(b'a', b'b'), (b'x-request-id', b'new')]
    assert start['headers'] == [(b'X-Request-Id', b'old'), (b'a', b'b')]  # the message given is not changed
    chunk = {'type': 'http.response.body', 'body': b'x'}
    assert with_request_id(chunk, 'new') is chunk


async def test_every_answer_of_the_app_names_its_request_once() -> None:
    app = create_app(Agent(), store=MemoryStore(), page=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        answers = {
            'stream': await client.post('/api/chat', json=body('vercel-ai'), headers={'x-request-id': 'given-1'}),
            'ag-ui stream': await client.post('/ag-ui', json=body('ag-ui', chat='other')),
            'JSON error': await client.post('/api/chat', content=b'[', headers={'content-type': 'application/json'}),
            'stored chat': await client.get(f'/api/chat/{CHAT}'),
            'resume': await client.get(f'/api/chat/{CHAT}/stream'),
            'stop': await client.delete(f'/api/chat/{CHAT}/stream'),
            'unknown chat': await client.get('/ag-ui/nobody'),
            'healthz': await client.get('/healthz'),
            'readyz': await client.get('/readyz'),
            'page': await client.get('/'),
            'no such route': await client.get('/nowhere'),
            'no such method': await client.post('/healthz'),
        }
    assert [name for name, answer in answers.items() if answer.headers.get_list('x-request-id') == []] == []
    assert {name: len(answer.headers.get_list('x-request-id')) for name, answer in answers.items()} == dict.fromkeys(
        answers, 1
    )
    assert answers['stream'].headers['x-request-id'] == 'given-1'
    others = [answer.headers['x-request-id'] for name, answer in answers.items() if name != 'stream']
    assert all(GENERATED.fullmatch(chosen) for chosen in others)
    assert len(set(others)) == len(others)
    assert [answers['JSON error'].status_code, answers['unknown chat'].status_code] == [422, 404]
    assert [answers['no such route'].status_code, answers['no such method'].status_code] == [404, 405]
    assert sorted(answers['no such method'].headers['allow'].split(', ')) == ['GET', 'HEAD']  # its own headers kept


async def test_an_endpoint_mounted_alone_echoes_the_id_itself() -> None:
    endpoint = VercelAIEndpoint(Agent())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=endpoint), base_url='http://test') as client:
        stream = await client.post('/', json=body('vercel-ai'), headers={'x-request-id': 'alone-1'})
        refused = await client.get('/', headers={'x-request-id': 'alone-2'})
    assert stream.headers.get_list('x-request-id') == ['alone-1']
    assert (refused.status_code, refused.headers.get_list('x-request-id')) == (405, ['alone-2'])


async def test_a_watch_steps_aside_once_the_first_body_byte_is_sent() -> None:
    sent: list[Message] = []

    async def server_send(message: Message) -> None:
        sent.append(message)

    watch = ResponseWatch('id-1', server_send)
    outbox = Outbox(watch.send)
    assert settled(watch.send) == watch.send
    await watch.send({'type': 'http.response.start', 'status': 200, 'headers': []})
    await watch.send({'type': 'http.response.body', 'body': b'', 'more_body': True})  # no byte yet
    assert settled(watch.send) == watch.send and watch.first_byte is None
    outbox.put(b'first')
    await outbox.finish(b'')  # one batch: the first body byte, through the watch
    assert watch.first_byte is not None and watch.status == 200
    assert outbox.send is server_send  # the frames after it go straight to the server's send
    assert settled(server_send) is server_send
    assert [m.get('body') for m in sent] == [None, b'', b'first']
    assert sent[0]['headers'] == [(b'x-request-id', b'id-1')]
