"""What a user prompt may hold besides text: media by URL or inline bytes, and content kinds kept opaquely.

Field names and `kind` tags follow pydantic-ai's stored JSON (see `uibridge.core.messages`).
"""

from __future__ import annotations

import base64
from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from .tagged_unions import OPAQUE, TaggedBy

__all__ = [
    'AudioUrl',
    'BinaryContent',
    'DocumentUrl',
    'ImageUrl',
    'MultiModalContent',
    'OpaqueContent',
    'UserContent',
    'VideoUrl',
]


class _Model(BaseModel):
    # Unknown keys are kept, so a history written by pydantic-ai (which stores more) round-trips whole.
    model_config = ConfigDict(extra='allow', ser_json_bytes='base64', val_json_bytes='base64')


class _FileUrl(_Model):
    """Media by URL: the four kinds differ only in their `kind` tag (the media they promise)."""

    url: str
    media_type: str | None = None


class ImageUrl(_FileUrl):
    kind: Literal['image-url'] = 'image-url'


class AudioUrl(_FileUrl):
    kind: Literal['audio-url'] = 'audio-url'


class VideoUrl(_FileUrl):
    kind: Literal['video-url'] = 'video-url'


class DocumentUrl(_FileUrl):
    kind: Literal['document-url'] = 'document-url'


class BinaryContent(_Model):
    """Inline bytes; base64 in JSON."""

    data: bytes
    media_type: str
    kind: Literal['binary'] = 'binary'

    @property
    def data_url(self) -> str:
        return f'data:{self.media_type};base64,{base64.b64encode(self.data).decode()}'

    @classmethod
    def from_data_url(cls, url: str) -> BinaryContent:
        """Parse a `data:<media type>;base64,<data>` URL; raises `ValueError` for anything else."""
        if not url.startswith('data:'):
            raise ValueError('not a data URL')
        header, sep, payload = url[5:].partition(',')
        if not sep or not header.endswith(';base64'):
            raise ValueError('only base64 data URLs are supported')
        media_type = header[: -len(';base64')] or 'application/octet-stream'
        try:
            data = base64.b64decode(payload, validate=True)
        except ValueError as e:
            raise ValueError('invalid base64 in data URL') from e
        return cls(data=data, media_type=media_type)


class OpaqueContent(_Model):
    """User content of a kind uibridge does not know (pydantic-ai's `text-content`, `cache-point`,
    `uploaded-file`, ...): every key kept, dumped back as it came, never shown to a UI."""

    kind: str
    union_tag: ClassVar[str] = OPAQUE


MultiModalContent: TypeAlias = Annotated[
    ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent | OpaqueContent, TaggedBy('kind')
]
UserContent: TypeAlias = str | MultiModalContent
