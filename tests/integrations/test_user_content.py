"""A user prompt's media, as each vendor API spells it: every kind the API takes inline or by link, and a
`ValueError` naming the API for what it does not take (never a part silently dropped)."""

from __future__ import annotations

from typing import Any

import pytest

from uibridge.core.messages import (
    AudioUrl,
    BinaryContent,
    ImageUrl,
    ModelRequest,
    OpaqueContent,
    UserContent,
    UserPromptPart,
)
from uibridge.integrations.anthropic import to_messages
from uibridge.integrations.openai import to_chat_completions_messages, to_responses_input

_PNG = BinaryContent(data=b'\x89PNG', media_type='image/png')
_PDF = BinaryContent(data=b'%PDF-1', media_type='application/pdf')
_WAV = BinaryContent(data=b'RIFF', media_type='audio/wav')
_OGG = BinaryContent(data=b'OggS', media_type='audio/ogg')


def _history(*content: UserContent) -> list[Any]:
    return [ModelRequest(parts=[UserPromptPart(content=list(content))])]


def test_chat_completions_spells_text_images_audio_and_pdfs() -> None:
    [message] = to_chat_completions_messages(_history('look', ImageUrl(url='https://x.test/a.png'), _PNG, _WAV, _PDF))
    assert message == {
        'role': 'user',
        'content': [
            {'type': 'text', 'text': 'look'},
            {'type': 'image_url', 'image_url': {'url': 'https://x.test/a.png'}},
            {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,iVBORw=='}},
            {'type': 'input_audio', 'input_audio': {'data': 'UklGRg==', 'format': 'wav'}},
            {'type': 'file', 'file': {'file_data': 'data:application/pdf;base64,JVBERi0x', 'filename': 'document.pdf'}},
        ],
    }


def test_the_responses_api_spells_text_images_and_pdfs() -> None:
    [item] = to_responses_input(_history('look', ImageUrl(url='https://x.test/a.png'), _PNG, _PDF))
    assert item == {
        'type': 'message',
        'role': 'user',
        'content': [
            {'type': 'input_text', 'text': 'look'},
            {'type': 'input_image', 'image_url': 'https://x.test/a.png', 'detail': 'auto'},
            {'type': 'input_image', 'image_url': 'data:image/png;base64,iVBORw==', 'detail': 'auto'},
            {'type': 'input_file', 'file_data': 'data:application/pdf;base64,JVBERi0x', 'filename': 'document.pdf'},
        ],
    }


def test_the_messages_api_spells_text_images_and_pdfs() -> None:
    [message] = to_messages(_history('look', ImageUrl(url='https://x.test/a.png'), _PNG, _PDF))
    assert message == {
        'role': 'user',
        'content': [
            {'type': 'text', 'text': 'look'},
            {'type': 'image', 'source': {'type': 'url', 'url': 'https://x.test/a.png'}},
            {'type': 'image', 'source': {'type': 'base64', 'media_type': 'image/png', 'data': 'iVBORw=='}},
            {'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': 'JVBERi0x'}},
        ],
    }


_CONVERTERS = {
    'Chat Completions': to_chat_completions_messages,
    'The Responses API': to_responses_input,
    'The Messages API': to_messages,
}


@pytest.mark.parametrize('api', list(_CONVERTERS))
@pytest.mark.parametrize(
    ('item', 'what'),
    [
        (_OGG, 'audio/ogg content'),
        (BinaryContent(data=b'x', media_type='text/csv'), 'text/csv content'),
        (AudioUrl(url='https://x.test/a.wav'), 'audio-url link'),
        (OpaqueContent(kind='cache-point'), 'cache-point link'),
    ],
)
def test_what_an_api_does_not_take_is_refused_naming_the_api(api: str, item: UserContent, what: str) -> None:
    with pytest.raises(ValueError, match=f'^{api} takes no {what} in a user prompt'):
        _CONVERTERS[api](_history('before', item))


def test_only_chat_completions_takes_audio_inline() -> None:
    assert to_chat_completions_messages(_history(_WAV))
    for api in ('The Responses API', 'The Messages API'):
        with pytest.raises(ValueError, match=f'^{api} takes no audio/wav content'):
            _CONVERTERS[api](_history(_WAV))


def test_a_pdfs_name_is_the_one_the_user_gave_it() -> None:
    named = BinaryContent(data=b'%PDF-1', media_type='application/pdf', filename='q3-report.pdf')
    [chat] = to_chat_completions_messages(_history(named))
    assert chat['content'][0]['file']['filename'] == 'q3-report.pdf'
    [responses] = to_responses_input(_history(named))
    assert responses['content'][0]['filename'] == 'q3-report.pdf'
    [messages] = to_messages(_history(named))
    assert messages['content'][0]['title'] == 'q3-report.pdf'
