"""Media kinds, one table for every protocol: the neutral URL part of each kind, the kind's name, and the kind
a media type is.

The names (`image`, `audio`, `video`, `document`) are AG-UI's content part types; a neutral URL part's own
`kind` is the name and `-url` (`image-url`). A media type's kind is read from its top-level type, without
regard to case (as MIME types are compared): `image/png` is an image, anything that is not an image, audio or
video is a document.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from .messages import AudioUrl, DocumentUrl, ImageUrl, VideoUrl

MediaUrl: TypeAlias = ImageUrl | AudioUrl | VideoUrl | DocumentUrl
MediaKind: TypeAlias = Literal['image', 'audio', 'video', 'document']

URL_PARTS: dict[str, type[MediaUrl]] = {
    'image': ImageUrl,
    'audio': AudioUrl,
    'video': VideoUrl,
    'document': DocumentUrl,
}
"""The neutral URL part for each kind name."""
URL_PARTS_BY_KIND: dict[str, type[MediaUrl]] = {f'{name}-url': part for name, part in URL_PARTS.items()}
"""The same, by the part's own `kind` (`image-url`)."""

_NAMED_MAJOR_TYPES = frozenset({'image', 'audio', 'video'})


def media_kind(media_type: str) -> str:
    """The kind of media `media_type` names (see the module docstring): a `MediaKind`."""
    major = media_type.split('/', 1)[0].lower()
    return major if major in _NAMED_MAJOR_TYPES else 'document'


def kind_name(part: MediaUrl) -> str:
    """The kind name of a neutral URL part (`image` for an `ImageUrl`): a `MediaKind`."""
    return part.kind[:-4]  # without `-url`
