"""Attachments through the real clients, against a live server with a store: `ai`@7 sends file parts with their
`filename`, `@ag-ui/client` sends media parts (a legacy `binary` part it upgrades itself, a provider's `file`
source, a `data:` URL). The agent is told each file's name, media type and size; the store keeps the names;
a file past `max_file_bytes` is a 413 and one of a media type `allowed_media_types` does not allow a 415, each
naming the file, before the agent runs or anything is stored."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_support import run_node, serve

from uibridge import ModelResponse, TextPart
from uibridge.core.media import attachments
from uibridge.server import AgentRun
from uibridge.server.app import create_app

MAX_FILE_BYTES = 1000
PNG = base64.b64encode(b'\x89PNG\r\n\x1a\n' + bytes(24)).decode()


def describe(run: AgentRun) -> str:
    """What the agent reads of the files in its history: one line each (class, name, media type, size)."""
    seen = [f'{type(a.content).__name__} {a.filename} {a.media_type} {a.size}' for a in attachments(run.messages)]
    return ' | '.join(seen) or 'no files'


class Server:
    def __init__(self, base_url: str, runs: list[str]) -> None:
        self.base_url = base_url
        self.runs = runs
        """The thread of every run the agent was given."""

    def stored(self, api: str, chat_id: str) -> httpx.Response:
        return httpx.get(f'{self.base_url}{api}/{chat_id}', timeout=30)


@pytest.fixture(scope='module')
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """Two apps: one that lets the agent see the provider file handles a client names, and one with the defaults
    (handles removed); both with a 1000-byte file limit and the default media types."""
    directory = tmp_path_factory.mktemp('attachments')
    made: dict[str, Server] = {}
    with _app(directory / 'handles.db', allow_file_handles=True) as handles, _app(directory / 'strict.db') as strict:
        made['handles'], made['strict'] = handles, strict
        yield made


@contextmanager
def _app(path: Path, **options: Any) -> Iterator[Server]:
    runs: list[str] = []

    async def agent(run: AgentRun) -> AsyncIterator[ModelResponse]:
        runs.append(run.thread_id)
        yield ModelResponse(parts=[TextPart(content=describe(run))])

    app = create_app(agent, store=f'sqlite:///{path}', max_file_bytes=MAX_FILE_BYTES, **options)
    with serve(app) as base_url:
        yield Server(base_url, runs)


def drive(server: Server, vercel: list[dict[str, Any]], agui: list[dict[str, Any]]) -> dict[str, Any]:
    spec = {
        'vercel': {'api': f'{server.base_url}/api/chat', 'cases': vercel},
        'agui': {'url': f'{server.base_url}/ag-ui', 'cases': agui},
    }
    return run_node('attachments.mjs', spec)


def answer_text(messages: list[dict[str, Any]]) -> str:
    last = messages[-1]
    if 'parts' in last:
        return ''.join(part.get('text', '') for part in last['parts'] if part['type'] == 'text')
    return last['content']


def error_body(error: str) -> dict[str, Any]:
    """The JSON error body a client reported (the transport's error carries the response's text)."""
    start = error.index('{')
    return json.loads(error[start : error.rindex('}') + 1])


def test_the_clients_files_reach_the_agent_and_the_store_with_their_names(servers: dict[str, Server]) -> None:
    server = servers['handles']
    hello = base64.b64encode(b'hello').decode()
    result = drive(
        server,
        vercel=[
            {
                'name': 'vercel',
                'chatId': 'files-vercel',
                'text': 'look',
                'files': [
                    {'type': 'file', 'mediaType': 'text/plain', 'filename': 'notes.txt', 'url': 'data:,hello%20world'},
                    {
                        'type': 'file',
                        'mediaType': 'image/png',
                        'filename': 'dot.png',
                        'url': f'data:image/png;base64,{PNG}',
                    },
                    {'type': 'file', 'mediaType': 'application/pdf', 'url': 'https://example.com/q3.pdf'},
                ],
            }
        ],
        agui=[
            {
                'name': 'agui',
                'threadId': 'files-agui',
                'content': [
                    {'type': 'text', 'text': 'look'},
                    {'type': 'binary', 'mimeType': 'text/plain', 'data': hello, 'filename': 'hello.txt'},
                    {
                        'type': 'document',
                        'source': {
                            'type': 'file',
                            'value': 'file-abc',
                            'provider': 'openai',
                            'mimeType': 'application/pdf',
                        },
                        'metadata': {'filename': 'q3.pdf'},
                    },
                    {'type': 'image', 'source': {'type': 'url', 'value': f'data:image/png;base64,{PNG}'}},
                ],
            }
        ],
    )
    vercel, agui = result['vercel'], result['agui']
    assert (vercel['error'], agui['error']) == (None, None)
    assert answer_text(vercel['messages']) == (
        'BinaryContent notes.txt text/plain 11 | BinaryContent dot.png image/png 32 | '
        'DocumentUrl None application/pdf None'
    )
    assert answer_text(agui['messages']) == (
        'BinaryContent hello.txt text/plain 5 | UploadedFile q3.pdf application/pdf None | '
        'BinaryContent None image/png 32'
    )
    # The store keeps the names: what a reload gets back, in each protocol's own form.
    stored_vercel = server.stored('/api/chat', 'files-vercel').json()
    files = [part for part in stored_vercel[0]['parts'] if part['type'] == 'file']
    assert [(f.get('filename'), f['mediaType']) for f in files] == [
        ('notes.txt', 'text/plain'),
        ('dot.png', 'image/png'),
        (None, 'application/pdf'),
    ]
    assert base64.b64decode(files[0]['url'].partition(',')[2]) == b'hello world'
    stored_agui = server.stored('/ag-ui', 'files-agui').json()
    media = stored_agui[0]['content'][1:]
    assert [part.get('metadata') for part in media] == [{'filename': 'hello.txt'}, {'filename': 'q3.pdf'}, None]
    assert media[1]['source'] == {
        'type': 'file',
        'value': 'file-abc',
        'provider': 'openai',
        'mimeType': 'application/pdf',
    }


def test_a_provider_file_handle_reaches_the_agent_only_where_the_application_allows_it(
    servers: dict[str, Server],
) -> None:
    content = [
        {'type': 'text', 'text': 'summarise'},
        {'type': 'document', 'source': {'type': 'file', 'value': 'file-xyz', 'provider': 'openai'}},
    ]
    result = drive(servers['strict'], vercel=[], agui=[{'name': 'agui', 'threadId': 'handle', 'content': content}])
    assert result['agui']['error'] is None
    assert answer_text(result['agui']['messages']) == 'no files'


def test_a_file_past_the_limits_is_refused_naming_it_before_the_agent_runs(servers: dict[str, Server]) -> None:
    server = servers['handles']
    big = 'x' * (MAX_FILE_BYTES + 1)
    result = drive(
        server,
        vercel=[
            {
                'name': 'too-big',
                'chatId': 'refused-big',
                'text': 'look',
                'files': [{'type': 'file', 'mediaType': 'text/plain', 'filename': 'big.txt', 'url': f'data:,{big}'}],
            },
            {
                'name': 'wrong-type',
                'chatId': 'refused-type',
                'text': 'run this',
                'files': [
                    {'type': 'file', 'mediaType': 'image/png', 'url': f'data:image/png;base64,{PNG}'},
                    {
                        'type': 'file',
                        'mediaType': 'application/x-msdownload',
                        'filename': 'setup.exe',
                        'url': 'data:application/x-msdownload;base64,TVo=',
                    },
                ],
            },
        ],
        agui=[
            {
                'name': 'agui-too-big',
                'threadId': 'refused-agui',
                'content': [
                    {'type': 'text', 'text': 'look'},
                    {
                        'type': 'audio',
                        'source': {
                            'type': 'data',
                            'value': base64.b64encode(big.encode()).decode(),
                            'mimeType': 'audio/wav',
                        },
                    },
                ],
            }
        ],
    )
    too_big = error_body(result['too-big']['error'])
    assert too_big['error'] == f'file 0 ("big.txt") is {MAX_FILE_BYTES + 1} bytes, more than max_file_bytes (1000)'
    wrong_type = error_body(result['wrong-type']['error'])
    assert wrong_type['error'].startswith('file 1 ("setup.exe") is \'application/x-msdownload\', a media type')
    assert 'allowed_media_types' in wrong_type['error']
    assert 'file 0 is' in error_body(result['agui-too-big']['error'])['error']  # no name: its index
    assert result['agui-too-big']['status'] == 'error'
    # Nothing ran and nothing was stored: each chat is unknown.
    for thread in ('refused-big', 'refused-type', 'refused-agui'):
        assert thread not in server.runs
    assert server.stored('/api/chat', 'refused-big').status_code == 404
    assert server.stored('/api/chat', 'refused-type').status_code == 404
    assert server.stored('/ag-ui', 'refused-agui').status_code == 404
