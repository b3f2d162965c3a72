"""What a user prompt may hold besides text: media by URL, inline bytes or a provider's file handle, and
content kinds kept opaquely.

Field names and `kind` tags follow pydantic-ai's stored JSON (see `uibridge.core.messages`). A file's name
(`filename`, what the UI sent it as) is uibridge's own field: pydantic-ai has none, so it is written only when
there is one, and pydantic-ai reading the JSON ignores it.

`data:` URLs are read as the Fetch standard's data URL processor reads them (RFC 2397 as browsers implement
it): any media type with parameters, or none (then `text/plain;charset=US-ASCII`), base64 or percent-encoded
bytes, a scheme in any case; see `parse_data_url`.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal, TypeAlias
from urllib.parse import unquote_to_bytes

from pydantic import BaseModel, ConfigDict, Field

from .tagged_unions import OPAQUE, TaggedBy

__all__ = [
    'AudioUrl',
    'BinaryContent',
    'DocumentUrl',
    'ImageUrl',
    'MultiModalContent',
    'OpaqueContent',
    'UploadedFile',
    'UserContent',
    'VideoUrl',
]


class _Model(BaseModel):
    # Unknown keys are kept, so a history written by pydantic-ai (which stores more) round-trips whole.
    model_config = ConfigDict(extra='allow', ser_json_bytes='base64', val_json_bytes='base64')


def is_none(value: object) -> bool:
    """`exclude_if` for a field written only when it has a value (a key pydantic-ai's JSON has not)."""
    return value is None


class _NamedFile(_Model):
    """A file that may have a name: `filename` is left out of the JSON when it has none (pydantic-ai's never does)."""

    filename: str | None = Field(default=None, exclude_if=is_none)
    """The file's name as the user's client sent it (Vercel `filename`, AG-UI `metadata.filename`)."""


class _FileUrl(_NamedFile):
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


class BinaryContent(_NamedFile):
    """Inline bytes; base64 in JSON."""

    data: bytes
    media_type: str
    kind: Literal['binary'] = 'binary'

    @property
    def data_url(self) -> str:
        return f'data:{self.media_type};base64,{base64.b64encode(self.data).decode()}'

    @classmethod
    def from_data_url(cls, url: str, *, media_type: str | None = None, filename: str | None = None) -> BinaryContent:
        """The bytes of a `data:` URL (`parse_data_url`), of the media type it names; of `media_type` when it names
        none (a UI's file part says what the file is beside its URL), else of RFC 2397's default,
        `text/plain;charset=US-ASCII`. Raises `ValueError` for what is no data URL."""
        parsed = parse_data_url(url)
        media_type = parsed.media_type or media_type or DEFAULT_DATA_URL_MEDIA_TYPE
        content = cls(data=parsed.data, media_type=media_type)
        if filename is not None:
            content.filename = filename
        return content


class UploadedFile(_NamedFile):
    """A file already at the model's provider, named by the handle the provider issued (an OpenAI or Anthropic
    file id, a Gemini file URI): no bytes travel, and nobody but that provider can resolve it. pydantic-ai's
    `uploaded-file`; AG-UI's `file` source. `provider_name` is `None` when the client did not say (AG-UI:
    the agent's own provider); pydantic-ai requires one of its provider names there."""

    file_id: str
    provider_name: str | None = None
    media_type: str | None = None
    kind: Literal['uploaded-file'] = 'uploaded-file'


class OpaqueContent(_Model):
    """User content of a kind uibridge does not know (pydantic-ai's `text-content`, `cache-point`, ...): every
    key kept, dumped back as it came, never shown to a UI."""

    kind: str
    union_tag: ClassVar[str] = OPAQUE


MultiModalContent: TypeAlias = Annotated[
    ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent | UploadedFile | OpaqueContent, TaggedBy('kind')
]
UserContent: TypeAlias = str | MultiModalContent


# ------------------------------------------------------------------------------------------- data URLs

DEFAULT_DATA_URL_MEDIA_TYPE = 'text/plain;charset=US-ASCII'
"""What a `data:` URL holds when it names no media type (RFC 2397)."""

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ASCII_WHITESPACE = ' \t\n\r\f'
_C0_OR_SPACE = ''.join(map(chr, range(0x21)))
_BASE64_SUFFIX = re.compile(r';[ \t\n\r\f]*base64$', re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DataUrl:
    """A `data:` URL read (`parse_data_url`)."""

    media_type: str | None
    """The media type it names, normalised (`type/subtype` in lower case, then its parameters), or `None` when it
    names none or one that does not parse (the URL's holder then says what the bytes are, else RFC 2397's default
    `text/plain;charset=US-ASCII` applies)."""
    data: bytes


def is_data_url(url: str) -> bool:
    """Whether `url` is a `data:` URL (the scheme in any case, leading blanks aside)."""
    return url.lstrip(_C0_OR_SPACE)[:5].lower() == 'data:'


def parse_data_url(url: str) -> DataUrl:
    """A `data:` URL's media type and bytes, read as the Fetch standard's data URL processor reads one.

    `data:[<media type>][;base64],<data>`: the data is percent-decoded, then base64-decoded when the URL says
    so (ASCII whitespace ignored, padding optional); a fragment (`#...`) is no part of it. Every URL RFC 2397
    allows loads: `data:,hello`, `data:text/plain;charset=utf-8,caf%C3%A9`, `data:;base64,aGk=`. Raises
    `ValueError` for what is no data URL, has no `,`, or whose base64 does not decode.
    """
    # What a URL parser does first: blanks at either end go, and tabs and newlines anywhere.
    text = url.strip(_C0_OR_SPACE).replace('\t', '').replace('\n', '').replace('\r', '')
    if text[:5].lower() != 'data:':
        raise ValueError('not a data URL')
    header, comma, body = text[5:].partition('#')[0].partition(',')
    if not comma:
        raise ValueError('a data URL needs a "," before its data')
    header = header.strip(_ASCII_WHITESPACE)
    data = unquote_to_bytes(body)
    base64_suffix = _BASE64_SUFFIX.search(header)
    if base64_suffix is not None:
        header = header[: base64_suffix.start()]
        data = _forgiving_base64(data)
    if header.startswith(';'):
        header = 'text/plain' + header
    return DataUrl(media_type=_media_type(header), data=data)


def _forgiving_base64(encoded: bytes) -> bytes:
    """Base64 as browsers read it: whitespace ignored, the padding optional."""
    compact = encoded.translate(None, b' \t\n\r\f')  # in C: a large attachment is megabytes of it
    if len(compact) % 4 == 0 and compact.endswith(b'='):
        compact = compact[:-2] if compact.endswith(b'==') else compact[:-1]
    if len(compact) % 4 == 1:
        raise ValueError('invalid base64 in data URL')
    try:
        return base64.b64decode(compact + b'=' * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError('invalid base64 in data URL') from None


def _media_type(text: str) -> str | None:
    """`type/subtype;name=value...` normalised, or `None` for nothing or what does not parse as a media type."""
    essence, *params = text.split(';')
    kind, slash, subtype = essence.strip(_ASCII_WHITESPACE).partition('/')
    if not slash or not _TOKEN.fullmatch(kind) or not _TOKEN.fullmatch(subtype):
        return None
    normalised = [f'{kind.lower()}/{subtype.lower()}']
    for param in params:
        name, equals, value = param.strip(_ASCII_WHITESPACE).partition('=')
        if equals and _TOKEN.fullmatch(name) and value:
            normalised.append(f'{name.lower()}={value}')
    return ';'.join(normalised)
