"""One AG-UI message (or a record in it) as the neutral part it stands for: `load`'s converters for what needs
no more than the message itself (thinking, system and user prompts, content parts, citations, records)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import pydantic
from ag_ui.core import DeveloperMessage, ReasoningMessage, SystemMessage, UserMessage

from ...core.citations import Citation
from ...core.content import is_data_url
from ...core.errors import InputError
from ...core.feedback import retry_feedback_from_marker
from ...core.media import URL_PARTS
from ...core.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelRequestPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    ThinkingPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from ...core.records import read_thinking_fields
from ...core.trusted import construct
from ...core.verification import SignatureClaims
from ._wire import SIG_KEY, parse_iso, read_marker, warn

_citations_adapter = pydantic.TypeAdapter(list[Citation])


def text_field(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def citations(value: Any) -> list[Citation] | None:
    """A text record's citations; what does not validate is left out (its signature then no longer holds)."""
    try:
        return _citations_adapter.validate_python(value) or None
    except pydantic.ValidationError:
        return None


def part_timestamp(part_record: dict[str, Any]) -> datetime | None:
    return parse_iso(part_record.get('timestamp'))


def thinking_part(message: ReasoningMessage) -> ThinkingPart:
    fields: dict[str, Any] = {}
    encrypted = message.encrypted_value
    if encrypted:
        payload: dict[str, Any] | None = read_marker(encrypted, 'thinking')
        if isinstance(payload, dict):
            fields = read_thinking_fields(payload)
    fields['content'] = message.content
    return construct(ThinkingPart, fields)


def system_part(
    message: SystemMessage | DeveloperMessage, part_record: dict[str, Any], claims: SignatureClaims | None
) -> ModelRequestPart:
    content = message.content
    if isinstance(message, SystemMessage) and (encrypted := message.encrypted_value):
        payload = read_marker(encrypted, 'retry_feedback')
        feedback: RetryFeedbackPart | RetryPromptPart | None = retry_feedback_from_marker(payload, content)
        if feedback is not None:
            if claims is not None:
                claims.add(feedback, cast('dict[str, Any]', payload).get(SIG_KEY))
            return feedback
    fields: dict[str, Any] = {'content': content}
    timestamp = part_timestamp(part_record)
    if timestamp is not None:
        fields['timestamp'] = timestamp
    dynamic_ref = part_record.get('dynamic_ref')
    if isinstance(dynamic_ref, str):
        fields['dynamic_ref'] = dynamic_ref
    return construct(SystemPromptPart, fields)


def user_part(message: UserMessage, part_record: dict[str, Any], index: int) -> UserPromptPart:
    content = message.content
    if not isinstance(content, str):
        content = user_content(content, index)
    timestamp = part_timestamp(part_record)
    if timestamp is None:
        return construct(UserPromptPart, {'content': content})
    return construct(UserPromptPart, {'content': content, 'timestamp': timestamp})


def user_content(parts: Sequence[Any], index: int) -> list[UserContent]:
    result: list[UserContent] = []
    for position, item in enumerate(parts):
        kind: str = item.type
        if kind == 'text':
            result.append(item.text)
            continue
        source = item.source
        source_type: str = source.type
        filename = _filename(item.metadata)
        if source_type == 'url' and is_data_url(source.value):
            # The bytes are in the URL: what a `data` source carries, loaded as one.
            try:
                content = BinaryContent.from_data_url(source.value, media_type=source.mime_type, filename=filename)
            except ValueError as error:
                raise InputError(str(error), f'{index}.content.{position}.source.value') from None
            result.append(content)
        elif source_type == 'url':
            result.append(_named(URL_PARTS[kind](url=source.value, media_type=source.mime_type), filename))
        elif source_type == 'data':
            try:
                data = base64.b64decode(source.value, validate=True)
            except (binascii.Error, ValueError):
                raise InputError(
                    'source.value is not valid base64', f'{index}.content.{position}.source.value'
                ) from None
            result.append(_named(BinaryContent(data=data, media_type=source.mime_type), filename))
        elif source_type == 'file':
            handle = UploadedFile(file_id=source.value, provider_name=source.provider, media_type=source.mime_type)
            result.append(_named(handle, filename))
        else:
            warn(f'{index}.content.{position}.source: skipped a {source_type!r} source, a kind uibridge does not know.')
    return result


_File = TypeVar('_File', bound=ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent | UploadedFile)


def _named(content: _File, filename: str | None) -> _File:
    if filename is not None:
        content.filename = filename  # set only when given, so `model_fields_set` says whether it was
    return content


def _filename(metadata: Any) -> str | None:
    """A media part's file name: `metadata.filename`, where `@ag-ui/client` puts the name a legacy binary part
    carried (`None` when it holds no string there)."""
    if isinstance(metadata, Mapping):
        name = cast('Mapping[str, Any]', metadata).get('filename')
        if isinstance(name, str):
            return name
    return None
