"""Media kinds, one table for every protocol: the neutral URL part of each kind, the kind's name, and the kind
a media type is; and the files a request carries, as an attachment policy sees them.

The names (`image`, `audio`, `video`, `document`) are AG-UI's content part types; a neutral URL part's own
`kind` is the name and `-url` (`image-url`). A media type's kind is read from its top-level type, without
regard to case (as MIME types are compared): `image/png` is an image, anything that is not an image, audio or
video is a document.

`attachments` lists the files of a client's history in the neutral model (what the agent would be given),
each with its size when its bytes are inline; `media_type_allowed` matches a media type against patterns
(`image/png`, `image/*`, `*/*`). The server's per-file limits (`uibridge.server.limits`) are built on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from .messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)

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


# ------------------------------------------------------------------------------------------ attachments

_Media = BinaryContent | ImageUrl | AudioUrl | VideoUrl | DocumentUrl | UploadedFile


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file in a client's history: a user prompt's media, or media in a tool result a client sent."""

    index: int
    """Its place among the request's files, from 0, in the order the history holds them."""
    content: BinaryContent | ImageUrl | AudioUrl | VideoUrl | DocumentUrl | UploadedFile

    @property
    def filename(self) -> str | None:
        return self.content.filename

    @property
    def media_type(self) -> str | None:
        """The media type the client gave, `None` for a URL or a file handle that came without one."""
        return self.content.media_type

    @property
    def size(self) -> int | None:
        """Its bytes, when they came inline (`None` for a URL or a file handle: nobody here fetches those)."""
        return len(self.content.data) if isinstance(self.content, BinaryContent) else None

    def describe(self) -> str:
        """How an error names it: its name when it has one, and always its index."""
        if self.filename is None:
            return f'file {self.index}'
        name = self.filename if len(self.filename) <= 100 else f'{self.filename[:100]}…'
        return f'file {self.index} ("{name}")'


def attachments(messages: Iterable[ModelMessage]) -> Iterator[Attachment]:
    """Every file in the requests of `messages`, in order: the media of user prompts and of tool results (a
    response's files are the model's, not a client's)."""
    index = 0
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                items: Sequence[Any] = part.content
            elif isinstance(part, ToolReturnPart):
                content: Any = part.content
                items = cast('list[Any]', content) if isinstance(content, list) else [content]
            else:
                continue
            for item in items:
                if isinstance(item, _Media):
                    yield Attachment(index, item)
                    index += 1


_TOKEN = r"[!#$%&'+.^_`|~0-9a-z-]+"  # an HTTP token but `*`, which only a wildcard is
_PATTERN = re.compile(rf'(\*/\*|{_TOKEN}/\*|{_TOKEN}/{_TOKEN})')


def check_media_type_pattern(pattern: str) -> str:
    """`pattern` in lower case, if it is `type/subtype`, `type/*` or `*/*`; a `ValueError` saying so if not."""
    normalised = pattern.strip().lower()
    if not _PATTERN.fullmatch(normalised):
        raise ValueError(f'a media type pattern is type/subtype, type/* or */*, not {pattern!r}')
    return normalised


def media_type_essence(media_type: str) -> str:
    """`type/subtype` in lower case, without parameters (`Text/Plain; charset=utf-8` is `text/plain`)."""
    return media_type.split(';', 1)[0].strip().lower()


def media_type_allowed(media_type: str, patterns: Iterable[str]) -> bool:
    """Whether `media_type` matches one of `patterns` (normalised by `check_media_type_pattern`). A bare
    top-level type (`image`, as a Vercel file part may give it) matches `image/*`, which means as much."""
    essence = media_type_essence(media_type)
    any_of_major = f'{essence.split("/", 1)[0]}/*'
    return any(pattern in ('*/*', essence, any_of_major) for pattern in patterns)
