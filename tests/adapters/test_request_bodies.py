"""Both adapters' `parse_request` read client input the same way (`core.client_input`): one strict JSON body
decoder, and of several validation problems the deepest is the one the client is told."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.errors import InputError

VERCEL = {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'x'}]}]}
AG_UI = {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': 'x'}]}
ADAPTERS: list[Any] = [
    pytest.param(vercel_ai.parse_request, VERCEL, 'the body', id='vercel_ai'),
    pytest.param(ag_ui.parse_request, AG_UI, 'the request body', id='ag_ui'),
]
Parse = Callable[[Any], object]


def _spliced(body: dict[str, Any], value: bytes) -> bytes:
    """`body` as JSON with one more key whose value is the raw bytes `value`."""
    return json.dumps(body).encode()[:-1] + b', "extra": ' + value + b'}'


@pytest.mark.parametrize(('parse', 'body', 'subject'), ADAPTERS)
@pytest.mark.parametrize(
    'value', [b'NaN', b'-Infinity', b'1e999999', b'-1E400', b'9' * 5000, b'[' * 200 + b']' * 200, b'"\xff"']
)
def test_the_body_is_read_strictly(parse: Parse, body: dict[str, Any], subject: str, value: bytes) -> None:
    assert parse(_spliced(body, b'1.5')) is not None
    with pytest.raises(InputError) as info:
        parse(_spliced(body, value))
    assert (info.value.path, info.value.message) == ('', f'{subject} is not valid JSON')


@pytest.mark.parametrize(('parse', 'body', 'subject'), ADAPTERS)
def test_only_utf8_is_read(parse: Parse, body: dict[str, Any], subject: str) -> None:
    assert parse(json.dumps(body).encode()) is not None
    with pytest.raises(InputError) as info:
        parse(json.dumps(body).encode('utf-16'))
    assert info.value.message == f'{subject} is not valid JSON'


@pytest.mark.parametrize(
    ('parse', 'message', 'path'),
    [
        # A bad id beside a bad part.
        pytest.param(
            vercel_ai.parse_request,
            {'id': 5, 'role': 'user', 'parts': [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 5}]},
            'messages.1.parts.1.text',
            id='vercel_ai',
        ),
        # No id beside a text part without text.
        pytest.param(
            ag_ui.parse_request,
            {'role': 'user', 'content': [{'type': 'text'}]},
            'messages.1.content.0.text',
            id='ag_ui',
        ),
    ],
)
def test_of_several_problems_the_deepest_is_reported(parse: Parse, message: dict[str, Any], path: str) -> None:
    body = VERCEL if parse is vercel_ai.parse_request else AG_UI
    with pytest.raises(InputError) as info:
        parse({**body, 'messages': [*body['messages'], message]})
    assert info.value.path == path
