"""The UI message and chunk models: wire names, absent-not-null, required null keys, unknown types."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from uibridge.adapters.vercel_ai import UIMessage, UIMessageChunkAdapter
from uibridge.adapters.vercel_ai.types import (
    DataUIPart,
    DynamicToolUIPart,
    TextUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessagePartAdapter,
    UnknownUIPart,
)


def test_camel_case_on_the_wire_either_spelling_in() -> None:
    part = ToolUIPart(type='tool-x', tool_call_id='c', state='input-available', input={'a': 1})
    assert part.model_dump(mode='json') == {
        'type': 'tool-x',
        'toolCallId': 'c',
        'state': 'input-available',
        'input': {'a': 1},
    }
    assert ToolUIPart.model_validate(part.model_dump(mode='json')) == part
    assert part.tool_name == 'x'


def test_optional_fields_are_left_out_never_null() -> None:
    assert TextUIPart(text='hi').model_dump(mode='json') == {'type': 'text', 'text': 'hi'}
    assert UIMessage(id='m', role='user', parts=[]).model_dump(mode='json') == {'id': 'm', 'role': 'user', 'parts': []}
    assert ToolApprovalUI(id='a').model_dump(mode='json') == {'id': 'a'}


@pytest.mark.parametrize(
    ('part', 'keys'),
    [
        (DataUIPart(type='data-x', data=None), {'type', 'data'}),
        (
            ToolUIPart(type='tool-x', tool_call_id='c', state='input-available'),
            {'type', 'toolCallId', 'state', 'input'},
        ),
        (
            ToolUIPart(type='tool-x', tool_call_id='c', state='output-available'),
            {'type', 'toolCallId', 'state', 'input', 'output'},
        ),
        (ToolUIPart(type='tool-x', tool_call_id='c', state='input-streaming'), {'type', 'toolCallId', 'state'}),
        (
            ToolUIPart(type='tool-x', tool_call_id='c', state='output-error', error_text='e'),
            {'type', 'toolCallId', 'state', 'errorText'},
        ),
    ],
)
def test_required_keys_are_kept_even_when_null(part: pydantic.BaseModel, keys: set[str]) -> None:
    assert set(part.model_dump(mode='json')) == keys


@pytest.mark.parametrize(
    'data',
    [
        {'type': 'tool-x', 'toolCallId': 'c', 'state': 'output-error', 'input': 1},
        {'type': 'tool-x', 'toolCallId': 'c', 'state': 'approval-requested', 'input': 1},
        {'type': 'tool-x', 'toolCallId': 'c', 'state': 'output-denied', 'input': 1, 'approval': {'id': 'a'}},
        {
            'type': 'tool-x',
            'toolCallId': 'c',
            'state': 'output-denied',
            'input': 1,
            'approval': {'id': 'a', 'approved': True},
        },
        {'type': 'data-x'},
        {'type': 'tool-', 'toolCallId': 'c', 'state': 'input-available', 'input': 1},
        {'type': 'dynamic-tool', 'toolCallId': 'c', 'state': 'input-available', 'input': 1},
        {'type': 'dynamic-tool', 'toolName': 't', 'toolCallId': 'c', 'state': 'input-available', 'dynamic': True},
        {'type': 'source-document', 'sourceId': 's', 'mediaType': 'application/pdf'},
    ],
)
def test_parts_the_client_would_reject_are_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        UIMessagePartAdapter.validate_python(data)


def test_every_known_part_type_validates() -> None:
    parts = [
        {'type': 'text', 'text': 't', 'state': 'streaming', 'providerMetadata': {'p': {'k': None}}},
        {'type': 'reasoning', 'text': 'r', 'id': 'r1'},
        {'type': 'custom', 'kind': 'openai.x'},
        {'type': 'source-url', 'sourceId': 's', 'url': 'https://x'},
        {'type': 'source-document', 'sourceId': 's', 'mediaType': 'text/plain', 'title': 'T', 'filename': 'f.txt'},
        {
            'type': 'file',
            'mediaType': 'image',
            'url': 'https://x',
            'filename': 'a.png',
            'providerReference': {'a': 'b'},
        },
        {'type': 'reasoning-file', 'mediaType': 'image/png', 'url': 'data:image/png;base64,AA=='},
        {'type': 'steering-message', 'id': 's', 'parts': [{'type': 'text', 'text': 'x'}]},
        {'type': 'step-start'},
        {'type': 'data-weather', 'id': 'w', 'data': {'a': 1}},
        {
            'type': 'dynamic-tool',
            'toolName': 't',
            'toolCallId': 'c',
            'state': 'output-available',
            'input': {},
            'output': 1,
            'dynamic': False,
        },
        *[
            {'type': 'tool-t', 'toolCallId': 'c', 'state': state, 'input': {}, **extra}
            for state, extra in [
                ('input-streaming', {'rawInput': '{', 'inputEncoding': 'json'}),
                ('input-available', {}),
                ('approval-requested', {'approval': {'id': 'a', 'isAutomatic': False}}),
                ('approval-responded', {'approval': {'id': 'a', 'approved': True}}),
                ('output-available', {'output': None, 'preliminary': True, 'title': 'T', 'toolMetadata': {'m': 1}}),
                ('output-error', {'errorText': 'e', 'resultProviderMetadata': {'p': {}}}),
                ('output-denied', {'approval': {'id': 'a', 'approved': False, 'reason': 'no'}}),
            ]
        ],
    ]
    for data in parts:
        part = UIMessagePartAdapter.validate_python(data)
        assert not isinstance(part, UnknownUIPart)
        assert part.model_dump(mode='json') == data
    assert isinstance(UIMessagePartAdapter.validate_python(parts[10]), DynamicToolUIPart)


def test_an_unknown_part_type_is_kept_whole() -> None:
    part = UIMessagePartAdapter.validate_python({'type': 'hologram', 'depth': 3})
    assert isinstance(part, UnknownUIPart)
    assert part.model_dump(mode='json') == {'type': 'hologram', 'depth': 3}


def test_chunks_validate_and_unknown_chunk_types_do_not() -> None:
    chunk = {'type': 'tool-output-available', 'toolCallId': 'c', 'output': None}
    assert UIMessageChunkAdapter.validate_python(chunk).model_dump(mode='json') == chunk
    data = {'type': 'data-x', 'data': None, 'transient': True}
    assert UIMessageChunkAdapter.validate_python(data).model_dump(mode='json') == data
    with pytest.raises(pydantic.ValidationError):
        UIMessageChunkAdapter.validate_python({'type': 'hologram'})
    with pytest.raises(pydantic.ValidationError):
        UIMessageChunkAdapter.validate_python({'type': 'finish', 'finishReason': 'done'})
