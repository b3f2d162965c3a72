"""`core.content`: user content's file names, provider file handles, and `data:` URLs read as browsers read them
(RFC 2397, the Fetch standard's data URL processor)."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uibridge import (
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    UploadedFile,
    UserPromptPart,
)
from uibridge.core.content import DEFAULT_DATA_URL_MEDIA_TYPE, is_data_url, parse_data_url

# ------------------------------------------------------------------------------------------- data URLs


@pytest.mark.parametrize(
    ('url', 'media_type', 'data'),
    [
        ('data:text/plain,hello', 'text/plain', b'hello'),
        ('data:,hello', None, b'hello'),
        ('data:,', None, b''),
        ('data:text/plain;charset=utf-8,caf%C3%A9', 'text/plain;charset=utf-8', 'café'.encode()),
        ('data:text/plain;charset=UTF-8;base64,Y2Fmw6k=', 'text/plain;charset=UTF-8', 'café'.encode()),
        ('data:;charset=utf-8,x', 'text/plain;charset=utf-8', b'x'),
        ('data:;base64,aGk=', None, b'hi'),
        ('data:image/png;base64,AGhp', 'image/png', b'\x00hi'),
        ('DATA:Image/PNG;BASE64,AGhp', 'image/png', b'\x00hi'),
        ('data:image/png;base64,AGhp#fragment', 'image/png', b'\x00hi'),
        ('data:image/png;base64,AG hp', 'image/png', b'\x00hi'),  # whitespace is no part of base64
        ('data:text/plain;base64,aGk', 'text/plain', b'hi'),  # padding is optional
        ('data:text/plain;base64,aGk%3D', 'text/plain', b'hi'),  # and may be percent-encoded
        ('data:application/octet-stream,%00%FF', 'application/octet-stream', b'\x00\xff'),
        ('data:text/plain,a%20b%2Cc', 'text/plain', b'a b,c'),
        ('data:text/plain,100%', 'text/plain', b'100%'),  # a % that escapes nothing stays itself
        ('data:text/html,<p>hi</p>', 'text/html', b'<p>hi</p>'),
        ('data:text/plain,héllo', 'text/plain', 'héllo'.encode()),  # what a URL parser would percent-encode
        ('  data:text/plain,x  ', 'text/plain', b'x'),
        ('data:text/plain ; charset=utf-8 ,x', 'text/plain;charset=utf-8', b'x'),
        ('data:image png,x', None, b'x'),  # no media type that parses: the default applies
        ('data:image/png;base64;x=1,aGk=', 'image/png;x=1', b'aGk='),  # `;base64` not last: not base64
    ],
)
def test_every_legal_data_url_loads(url: str, media_type: str | None, data: bytes) -> None:
    parsed = parse_data_url(url)
    assert (parsed.media_type, parsed.data) == (media_type, data)
    assert is_data_url(url)
    content = BinaryContent.from_data_url(url)
    assert content.data == data
    assert content.media_type == (media_type or DEFAULT_DATA_URL_MEDIA_TYPE)


def test_a_url_that_names_no_media_type_takes_the_one_its_holder_gives() -> None:
    # A Vercel file part says what the file is beside its URL; the URL's own media type, when it has one, wins.
    assert BinaryContent.from_data_url('data:,x', media_type='text/markdown').media_type == 'text/markdown'
    assert BinaryContent.from_data_url('data:;base64,aGk=', media_type='image/png').media_type == 'image/png'
    assert BinaryContent.from_data_url('data:text/csv,x', media_type='image/png').media_type == 'text/csv'


@pytest.mark.parametrize(
    'url',
    [
        'https://example.com/a.png',
        'data:text/plain',  # no comma
        'data:image/png;base64,***',
        'data:image/png;base64,a',  # one character past a whole group
        'data:image/png;base64,aG=k',  # padding inside
        'dat:text/plain,x',
    ],
)
def test_what_is_no_data_url_is_a_value_error(url: str) -> None:
    with pytest.raises(ValueError):
        parse_data_url(url)
    with pytest.raises(ValueError):
        BinaryContent.from_data_url(url)


@given(st.binary(max_size=64), st.sampled_from(['image/png', 'text/plain;charset=utf-8', 'application/pdf']))
def test_a_data_url_written_here_reads_back_as_the_same_bytes(data: bytes, media_type: str) -> None:
    content = BinaryContent(data=data, media_type=media_type)
    assert BinaryContent.from_data_url(content.data_url) == content
    percent = f'data:{media_type},' + ''.join(f'%{byte:02X}' for byte in data)
    assert parse_data_url(percent).data == data
    assert parse_data_url(f'data:{media_type};base64,{base64.b64encode(data).decode().rstrip("=")}').data == data


# ------------------------------------------------------------------------------------- names and handles


def test_a_file_name_is_kept_and_written_only_when_there_is_one() -> None:
    named = [
        BinaryContent(data=b'hi', media_type='text/plain', filename='notes.txt'),
        ImageUrl(url='https://example.com/a.png', filename='a.png'),
        UploadedFile(file_id='file-1', provider_name='openai', filename='report.pdf'),
    ]
    history = [ModelRequest(parts=[UserPromptPart(content=['look', *named, DocumentUrl(url='https://e.com/d')])])]
    stored = json.loads(ModelMessagesTypeAdapter.dump_json(history))
    items = stored[0]['parts'][0]['content']
    assert [item.get('filename') for item in items[1:]] == ['notes.txt', 'a.png', 'report.pdf', None]
    assert 'filename' not in items[4]  # no name: no key (pydantic-ai's JSON has none)
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history)) == history


def test_a_provider_file_handle_is_the_uploaded_file_pydantic_ai_stores() -> None:
    stored = {
        'file_id': 'file-1',
        'provider_name': 'anthropic',
        'media_type': 'application/pdf',
        'kind': 'uploaded-file',
    }
    part = UserPromptPart.model_validate({'content': [stored]})
    assert isinstance(part.content, list)
    handle = part.content[0]
    assert isinstance(handle, UploadedFile)
    assert (handle.file_id, handle.provider_name, handle.media_type) == ('file-1', 'anthropic', 'application/pdf')
    assert json.loads(handle.model_dump_json()) == stored
