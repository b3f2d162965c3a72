"""`core.media`: one table of media kinds for every protocol, and the files of a request as a policy sees them."""

from __future__ import annotations

import pytest

from uibridge import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from uibridge.core.media import (
    URL_PARTS,
    URL_PARTS_BY_KIND,
    attachments,
    check_media_type_pattern,
    kind_name,
    media_kind,
    media_type_allowed,
)


@pytest.mark.parametrize(
    ('media_type', 'kind'),
    [
        ('image/png', 'image'),
        ('IMAGE/PNG', 'image'),
        ('image', 'image'),
        ('audio/mpeg', 'audio'),
        ('video/mp4', 'video'),
        ('Video/MP4; codecs=avc1', 'video'),
        ('application/pdf', 'document'),
        ('text/plain', 'document'),
        ('application', 'document'),
        ('imagery/x', 'document'),
        ('', 'document'),
    ],
)
def test_a_media_type_is_of_the_kind_its_top_level_type_names(media_type: str, kind: str) -> None:
    assert media_kind(media_type) == kind


def test_the_tables_agree_with_the_parts_own_kinds() -> None:
    assert {'image': ImageUrl, 'audio': AudioUrl, 'video': VideoUrl, 'document': DocumentUrl} == URL_PARTS
    for name, part in URL_PARTS.items():
        instance = part(url='https://example.com/x')
        assert kind_name(instance) == name
        assert URL_PARTS_BY_KIND[instance.kind] is part
    assert set(URL_PARTS_BY_KIND) == {'image-url', 'audio-url', 'video-url', 'document-url'}


# ------------------------------------------------------------------------------------------ attachments


@pytest.mark.parametrize(
    ('media_type', 'patterns', 'allowed'),
    [
        ('image/png', ['image/*'], True),
        ('IMAGE/PNG; x=1', ['image/png'], True),
        ('image', ['image/*'], True),  # a bare top-level type (a Vercel file part may give one)
        ('image', ['image/png'], False),
        ('text/plain;charset=utf-8', ['text/*'], True),
        ('application/pdf', ['image/*', 'text/*'], False),
        ('application/x-msdownload', ['*/*'], True),
        ('', ['image/*'], False),
        ('imagery/png', ['image/*'], False),
    ],
)
def test_a_media_type_is_allowed_by_a_pattern_of_its_type(media_type: str, patterns: list[str], allowed: bool) -> None:
    assert media_type_allowed(media_type, patterns) is allowed


@pytest.mark.parametrize('pattern', ['image', '*', 'image/', '/png', 'image/png; x=1', '*/png', 'im age/png'])
def test_a_pattern_is_type_slash_subtype_or_a_wildcard(pattern: str) -> None:
    with pytest.raises(ValueError, match='type/subtype'):
        check_media_type_pattern(pattern)
    assert check_media_type_pattern(' Image/PNG ') == 'image/png'


def test_attachments_are_the_files_of_client_requests_in_order() -> None:
    png = BinaryContent(data=b'123', media_type='image/png', filename='a.png')
    link = DocumentUrl(url='https://example.com/d.pdf')
    handle = UploadedFile(file_id='file-1', provider_name='openai', media_type='application/pdf')
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content='no files'), UserPromptPart(content=['look', png, link])]),
        ModelResponse(parts=[FilePart(content=BinaryContent(data=b'model', media_type='image/png'))]),
        ModelRequest(parts=[ToolReturnPart(tool_name='t', content=['done', handle], tool_call_id='c')]),
        ModelRequest(parts=[ToolReturnPart(tool_name='t', content=png, tool_call_id='d')]),
    ]
    found = list(attachments(history))
    assert [(a.index, a.content) for a in found] == [(0, png), (1, link), (2, handle), (3, png)]
    assert [(a.filename, a.media_type, a.size) for a in found] == [
        ('a.png', 'image/png', 3),
        (None, None, None),  # a URL without a media type: nothing here fetches it
        (None, 'application/pdf', None),
        ('a.png', 'image/png', 3),
    ]
    assert [a.describe() for a in found[:2]] == ['file 0 ("a.png")', 'file 1']
