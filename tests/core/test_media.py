"""`core.media`: one table of media kinds for every protocol."""

from __future__ import annotations

import pytest

from uibridge import AudioUrl, DocumentUrl, ImageUrl, VideoUrl
from uibridge.core.media import URL_PARTS, URL_PARTS_BY_KIND, kind_name, media_kind


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
