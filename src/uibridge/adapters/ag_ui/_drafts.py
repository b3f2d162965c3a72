"""One part as the AG-UI message (or tool call) it becomes, shared by `dump` and the stream encoder, so a live
stream builds exactly what a dump writes: the wire (camelCase) form, no id yet, with uibridge's records under
`_uib` (see `_wire`) and every server-authored part signed.
"""

from __future__ import annotations

import base64
from typing import Any, cast

from ...core.citations import Citation
from ...core.exact_json import carry_exact
from ...core.feedback import retry_marker, retry_text
from ...core.json_text import compact_json
from ...core.json_text import iso_utc as iso
from ...core.media import kind_name, media_kind
from ...core.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    VideoUrl,
)
from ...core.provenance import Keyring, signs_finish
from ...core.records import thinking_fields
from ._peer_history import FILE_ACTIVITY
from ._wire import SIG_KEY, STATE_SIG_KEY, WIRE_KEY, marker, with_marker

Draft = dict[str, Any]
"""An AG-UI message in wire (camelCase) form, before ids are assigned; `_uib` holds its uibridge records."""


def feedback_message(part: RetryFeedbackPart | RetryPromptPart, keyring: Keyring) -> Draft:
    """The marked `SystemMessage` for retry feedback, or for its older form, a tool-less `RetryPromptPart` (its
    `model_response()` shown, its marker's `part_kind` saying `retry-prompt`); the marker holds the part's
    signature as `sig`."""
    payload = retry_marker(part)
    payload[SIG_KEY] = keyring.sign_part(part)
    return {
        'role': 'system',
        'content': retry_text(part),
        'encryptedValue': marker('retry_feedback', payload),
        '_uib': {},
    }


def file_message(part: FilePart, keyring: Keyring) -> Draft:
    """A file the model produced, as the `pydantic_ai_file` activity message pydantic-ai's adapter writes (the only
    AG-UI form a model's file has): a data URL, its media type and id; uibridge's record holds the part's `sig`
    and its file name (which the activity's content has no key for)."""
    content = part.content
    body: dict[str, Any] = {'url': content.data_url, 'media_type': content.media_type}
    if part.id is not None:
        body['id'] = part.id
    part_record: dict[str, Any] = {SIG_KEY: keyring.sign_part(part)}
    if content.filename is not None:
        part_record['filename'] = content.filename
    return {'role': 'activity', 'activityType': FILE_ACTIVITY, 'content': body, '_uib': {'part': part_record}}


def tool_message(part: ToolReturnPart | RetryPromptPart, keyring: Keyring) -> Draft:
    """The `ToolMessage` for a tool result (wire form, no id, signed): what `TOOL_CALL_RESULT` also builds."""
    part_record: dict[str, Any] = {'timestamp': iso(part.timestamp)}
    draft: Draft = {'role': 'tool', 'toolCallId': part.tool_call_id}
    content = part.content
    if isinstance(part, RetryPromptPart):
        part_record['kind'] = 'retry-prompt'
        if isinstance(content, str):
            draft['content'] = content
        else:
            part_record['json'] = True
            # The errors without `ctx` (arbitrary objects, never shown to the model), as compact JSON.
            draft['content'] = compact_json([{k: v for k, v in e.items() if k != 'ctx'} for e in content])
        draft['error'] = part.model_response()
    else:
        _tool_content(draft, part_record, content)
    if isinstance(part, ToolReturnPart):
        outcome = part.outcome
        if outcome != 'success':
            part_record['outcome'] = outcome
            if outcome == 'failed':
                draft['error'] = part.model_response_str()
        if part.metadata is not None:
            part_record['metadata'] = part.metadata
            carry_exact(part_record, 'metadata', part.metadata)  # a JavaScript object: its exact text if need be
    part_record[SIG_KEY] = keyring.sign_part(part)
    draft['_uib'] = {'part': part_record}
    return draft


def _tool_content(draft: Draft, part_record: dict[str, Any], content: Any) -> None:
    """A tool result's content: text as it is; a list of text and media (what `load` makes of a tool message's
    content parts) as those parts when it holds media, which JSON text cannot carry; anything else as compact
    JSON (`json` in the record). A list of text alone is JSON text as well, which every client takes, unless it
    was loaded from content parts: `draft['_parts']` offers them, used when the stored entry says so."""
    if isinstance(content, str):
        draft['content'] = content
        return
    parts = _as_content_parts(content)
    if parts is not None and not all(isinstance(item, str) for item in content):
        draft['content'] = parts
        return
    part_record['json'] = True
    draft['content'] = compact_json(content)
    if parts is not None:
        draft['_parts'] = parts


def _as_content_parts(content: Any) -> list[dict[str, Any]] | None:
    """A tool's result that is a list of text and media (what `load` makes of a tool message's content parts) as
    those parts; `None` for anything else, which goes as JSON text."""
    if not isinstance(content, list) or not content:
        return None
    items = cast('list[Any]', content)
    if not all(isinstance(item, str | _Media) for item in items):
        return None
    return [content_part(item) for item in items]


_Media = ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent | UploadedFile


def content_part(content: str | _Media) -> dict[str, Any]:
    """A content part: text, or media from a `data`, `url` or `file` source (a provider's file handle), its file
    name in `metadata.filename` (where `@ag-ui/client` puts a legacy binary part's `filename`)."""
    if isinstance(content, str):
        return {'type': 'text', 'text': content}
    source: dict[str, Any]
    if isinstance(content, BinaryContent):
        source = {'type': 'data', 'value': _b64(content.data), 'mimeType': content.media_type}
        part: dict[str, Any] = {'type': media_kind(content.media_type), 'source': source}
    elif isinstance(content, UploadedFile):
        source = {'type': 'file', 'value': content.file_id}
        if content.provider_name is not None:
            source['provider'] = content.provider_name
        if content.media_type is not None:
            source['mimeType'] = content.media_type
        part = {'type': media_kind(content.media_type or ''), 'source': source}
    else:
        source = {'type': 'url', 'value': content.url}
        if content.media_type is not None:
            source['mimeType'] = content.media_type
        part = {'type': kind_name(content), 'source': source}
    if content.filename is not None:
        part['metadata'] = {'filename': content.filename}
    return part


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode('ascii')


def thinking_marker(part: ThinkingPart) -> str | None:
    payload = thinking_fields(part)
    if part.id is not None:
        payload['id'] = part.id
    return marker('thinking', payload) if payload else None


def finish_marker(response: ModelResponse, keyring: Keyring, encrypted_value: str | None) -> str | None:
    """The `encryptedValue` of `response`'s first message with its signed finish reason added (`encrypted_value`:
    what that message carries already), or `None` when the reason is not one a round trip keeps."""
    if not signs_finish(response):
        return None
    payload = {'finish_reason': response.finish_reason, SIG_KEY: keyring.sign_finish(response)}
    return with_marker(encrypted_value, 'finish', payload)


def state_marker(state: Any, keyring: Keyring, encrypted_value: str | None) -> str:
    """`encrypted_value` (what a response's first message carries) with the run's state added, signed: the state an
    agent set after that message's record went out, which the record cannot hold any more."""
    payload: dict[str, Any] = {'state': state}
    carry_exact(payload, 'state', state)[STATE_SIG_KEY] = keyring.sign_state(state)
    return with_marker(encrypted_value, 'state', payload)


def call_record(part: ToolCallPart | NativeToolCallPart, keyring: Keyring, *, client: bool) -> dict[str, Any]:
    """What a tool call's own `metadata.uibridge` holds: its signature, and the `client` mark it was signed with;
    for a provider-run call `native: true` and the provider's name (both covered by its signature)."""
    if isinstance(part, NativeToolCallPart):
        record: dict[str, Any] = {SIG_KEY: keyring.sign_part(part), 'native': True}
        if part.provider_name is not None:
            record['provider_name'] = part.provider_name
        return record
    record = {SIG_KEY: keyring.sign_part(part, client=client)}
    if client:
        record['client'] = True
    return record


def citations_json(citations: list[Citation]) -> list[dict[str, Any]]:
    """A text part's citations as its record holds them (no `null`s: the client drops optional nulls)."""
    return [citation.model_dump(mode='json', exclude_none=True) for citation in citations]


def native_tool_message(part: NativeToolReturnPart, keyring: Keyring) -> Draft:
    """The `ToolMessage` for what a provider-run tool returned (what `TOOL_CALL_RESULT` also builds): a message of
    the response, its record saying `native: true`, the provider's name and the signature."""
    part_record: dict[str, Any] = {'timestamp': iso(part.timestamp), 'native': True}
    if part.provider_name is not None:
        part_record['provider_name'] = part.provider_name
    draft: Draft = {'role': 'tool', 'toolCallId': part.tool_call_id}
    _tool_content(draft, part_record, part.content)
    part_record[SIG_KEY] = keyring.sign_part(part)
    draft['_uib'] = {'part': part_record}
    return draft


def tool_call_wire(part: ToolCallPart | NativeToolCallPart, record: dict[str, Any]) -> dict[str, Any]:
    args = part.args
    # A dict is what `args_as_json_str` writes with `compact_json` too; this adapter's is the faster one.
    arguments = compact_json(args) if isinstance(args, dict) else part.args_as_json_str()
    return {
        'id': part.tool_call_id,
        'type': 'function',
        'function': {'name': part.tool_name, 'arguments': arguments},
        'metadata': {WIRE_KEY: record},
    }
