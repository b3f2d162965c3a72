"""`AttachmentLimits`, the endpoint options `max_file_bytes` and `allowed_media_types`: what one file a client sends
may be, checked on the history as loaded (what the agent would get), answered 413 / 415 naming the file.
(Through the real clients, against a live server with a store: tests/e2e/test_attachments.py.)"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from uibridge import ModelResponse, TextPart
from uibridge.server import AgentRun, VercelAIEndpoint
from uibridge.server.limits import DEFAULT_ALLOWED_MEDIA_TYPES, DEFAULT_MAX_FILE_BYTES, AttachmentLimits

pytestmark = pytest.mark.anyio


async def agent(run: AgentRun) -> AsyncIterator[ModelResponse]:
    yield ModelResponse(parts=[TextPart(content='ok')])


def file_part(media_type: str, data: bytes, filename: str | None = None) -> dict[str, Any]:
    part = {
        'type': 'file',
        'mediaType': media_type,
        'url': f'data:{media_type};base64,{base64.b64encode(data).decode()}',
    }
    return part if filename is None else {**part, 'filename': filename}


async def post(endpoint: VercelAIEndpoint, *parts: dict[str, Any]) -> httpx.Response:
    body = {'id': 'chat', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}, *parts]}]}
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        return await client.post('/', json=body)


async def test_the_defaults_take_what_models_read_up_to_5_mib() -> None:
    assert AttachmentLimits() == AttachmentLimits(DEFAULT_MAX_FILE_BYTES, DEFAULT_ALLOWED_MEDIA_TYPES)
    assert DEFAULT_MAX_FILE_BYTES == 5 * 1024 * 1024
    endpoint = VercelAIEndpoint(agent)
    taken = [
        file_part('image/png', b'x'),
        file_part('audio/wav', b'x'),
        file_part('video/mp4', b'x'),
        file_part('text/plain;charset=utf-8', b'x'),
        file_part('application/pdf', b'x'),
        file_part('application/json', b'{}'),
        {'type': 'file', 'mediaType': 'image/png', 'url': 'https://example.com/a.png'},
    ]
    assert (await post(endpoint, *taken)).status_code == 200
    at_the_limit = file_part('image/png', bytes(DEFAULT_MAX_FILE_BYTES))
    assert (await post(endpoint, at_the_limit)).status_code == 200
    past = await post(endpoint, file_part('image/png', bytes(DEFAULT_MAX_FILE_BYTES + 1), 'huge.png'))
    assert past.status_code == 413
    limit = DEFAULT_MAX_FILE_BYTES
    assert past.json()['error'] == f'file 0 ("huge.png") is {limit + 1} bytes, more than max_file_bytes ({limit})'


async def test_a_media_type_outside_the_allowlist_is_a_415_naming_the_file_by_its_index() -> None:
    endpoint = VercelAIEndpoint(agent)
    refused = await post(endpoint, file_part('image/png', b'x'), file_part('application/zip', b'PK'))
    assert refused.status_code == 415
    assert refused.json()['error'].startswith("file 1 is 'application/zip', a media type allowed_media_types")
    # A URL's declared media type is checked too; a URL without one is not (nothing here fetches it).
    url = {'type': 'file', 'mediaType': 'application/x-sh', 'url': 'https://example.com/run', 'filename': 'run.sh'}
    assert (await post(endpoint, url)).json()['error'].startswith('file 0 ("run.sh") is')


async def test_the_options_choose_the_limits() -> None:
    endpoint = VercelAIEndpoint(agent, max_file_bytes=4, allowed_media_types=['application/zip', 'image/*'])
    assert (await post(endpoint, file_part('application/zip', b'PK..'))).status_code == 200
    assert (await post(endpoint, file_part('image/gif', b'GIF89a'))).status_code == 413
    assert (await post(endpoint, file_part('text/plain', b'x'))).status_code == 415
    anything = VercelAIEndpoint(agent, allowed_media_types=['*/*'])
    assert (await post(anything, file_part('application/x-msdownload', b'MZ'))).status_code == 200


@pytest.mark.parametrize(
    ('options', 'error', 'match'),
    [
        ({'max_file_bytes': 0}, ValueError, 'max_file_bytes'),
        ({'max_file_bytes': True}, ValueError, 'max_file_bytes'),
        ({'allowed_media_types': 'image/*'}, TypeError, 'allowed_media_types'),
        ({'allowed_media_types': ['image']}, ValueError, 'type/subtype'),
        ({'allow_file_handles': 'yes'}, TypeError, 'allow_file_handles'),
    ],
)
def test_the_options_are_checked_when_the_endpoint_is_built(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        VercelAIEndpoint(agent, **options)
