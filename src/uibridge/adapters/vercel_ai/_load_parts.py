"""Each UI part the model can take, as the neutral part it stands for (the part-level half of `load.py`).

Provider metadata under `uibridge` (see `provider_metadata.py`) restores what the UI part has no field for; it is
client input, so every value is checked for its type and ignored when it is not what uibridge wrote. Being
checked (or a validated UI part's typed field), the values build the neutral parts with `core.trusted.construct`,
without validating them a second time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pydantic

from ...core.content import is_data_url
from ...core.errors import InputError
from ...core.exact_json import carried_value
from ...core.feedback import retry_feedback_from_marker
from ...core.json_text import compact_json, parse_json
from ...core.media import URL_PARTS, URL_PARTS_BY_KIND, media_kind
from ...core.messages import (
    BinaryContent,
    ErrorDetails,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
)
from ...core.metadata import app_metadata
from ...core.provenance import canonical_json
from ...core.records import read_response_fields
from ...core.trusted import construct
from ...core.verification import SignatureClaims
from ._provider_metadata import DENIED, PROVIDER_KEY, SIDECAR_KEY, parse_iso
from .types import DynamicToolUIPart, FileUIPart, TextUIPart, ToolApprovalUI, ToolUIPart, UIMessagePart

_retry_content = pydantic.TypeAdapter(list[ErrorDetails] | str)


def ours(provider_metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `uibridge` entry of a part's provider metadata, or `{}`."""
    if not provider_metadata:
        return {}
    value: dict[str, Any] | None = provider_metadata.get(PROVIDER_KEY)  # checked below: no `cast()` call per part
    return value if isinstance(value, dict) else {}


def system_part(
    texts: list[TextUIPart], first: dict[str, Any]
) -> SystemPromptPart | RetryFeedbackPart | RetryPromptPart:
    if len(texts) == 1 and 'retry_feedback' in first:
        feedback = retry_feedback_from_marker(first['retry_feedback'], texts[0].text)
        if feedback is not None:
            return feedback
    fields: dict[str, Any] = {'content': ''.join(text.text for text in texts)}
    timestamp = parse_iso(first.get('timestamp'))
    if timestamp is not None:
        fields['timestamp'] = timestamp
    if isinstance(first.get('dynamic_ref'), str):
        fields['dynamic_ref'] = first['dynamic_ref']
    return construct(SystemPromptPart, fields)


def user_part(content: list[UserContent], parts: list[UIMessagePart], first: dict[str, Any]) -> UserPromptPart:
    if first.get('empty') is True:
        content = []
    value: str | list[UserContent] = content
    if len(content) == 1 and isinstance(content[0], str) and first.get('list') is not True:
        value = content[0]
    elif not content and first.get('list') is not True:
        value = ''
    # The timestamp rides on the first part that is not UI-only.
    for part in parts:
        if isinstance(part, TextUIPart | FileUIPart):
            first = ours(part.provider_metadata)
            break
    fields: dict[str, Any] = {'content': value}
    timestamp = parse_iso(first.get('timestamp'))
    if timestamp is not None:
        fields['timestamp'] = timestamp
    return construct(UserPromptPart, fields)


def user_file(part: FileUIPart, path: str) -> UserContent:
    """A user's file part: its bytes when the URL is a `data:` URL (of the media type the URL names, else the
    part's), else the media URL; its `filename` kept either way. A part with a `providerReference` (`ai` 7: a
    file uploaded to the model's provider) is that provider file, as `convertToModelMessages` sends it: an
    `UploadedFile` of the first provider it names, which keeps the part's `url` (and the whole reference, when it
    names several providers) beside it for `dump_messages` (`uploaded_file_part`)."""
    named = {'filename': part.filename} if part.filename is not None else {}
    reference = part.provider_reference or _carried_reference(part)
    if reference:
        provider, file_id = next(iter(reference.items()))
        values: dict[str, Any] = {'file_id': file_id, 'provider_name': provider, 'media_type': part.media_type or None}
        values.update(named, url=part.url)
        if len(reference) > 1:
            values['provider_reference'] = dict(reference)
        return UploadedFile.model_validate(values)  # `url` and `provider_reference` ride as extra keys
    if is_data_url(part.url):
        try:
            return BinaryContent.from_data_url(part.url, media_type=part.media_type or None, filename=part.filename)
        except ValueError as e:
            raise InputError(str(e), f'{path}.url') from None
    fields = ours(part.provider_metadata)
    kind = fields.get('kind')
    url_part = URL_PARTS_BY_KIND.get(kind) if isinstance(kind, str) else None
    if url_part is None:
        url_part = URL_PARTS[media_kind(part.media_type)]
    media_type = fields['media_type'] if 'media_type' in fields and fields['media_type'] is None else part.media_type
    return construct(url_part, {'url': part.url, 'media_type': media_type or None, **named})


def _carried_reference(part: FileUIPart) -> dict[str, str] | None:
    """The `providerReference` an `ai` 5 or 6 client's file part carries in its `uibridge` metadata (those
    versions have no field for it: `_sdk_versions`)."""
    value = ours(part.provider_metadata).get('provider_reference')
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in cast('dict[Any, Any]', value).values()):
        return cast('dict[str, str]', value)
    return None


def call_args(value: Any, fields: dict[str, Any]) -> str | dict[str, Any] | None:
    """A call's arguments: the raw text or exact text its metadata carries, else `input` (see `_provider_metadata`).
    Exact text that no dict gives back stays text, which then verifies as nothing the server signed.

    Where the text is carried, `input` is what the UI shows (and what a user approves): when it is not that
    text's value as JavaScript holds it, the client edited one or the other, and `input` is returned, whose text
    is not the signed one either, so the call does not verify."""
    if 'args' in fields and (fields['args'] is None or isinstance(fields['args'], str)):
        text: str | None = fields['args']
        return text if _shows(value, text) else value  # pyright: ignore[reportUnknownVariableType]
    exact = fields.get('args_json')
    if isinstance(exact, str):
        read = carried_value(fields, 'args', None)
        if not isinstance(read, dict):
            return exact
        return read if _shows(value, exact) else value  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        value = cast('dict[str, Any]', value)
        if list(value) == ['INVALID_JSON'] and isinstance(value['INVALID_JSON'], str):
            return value['INVALID_JSON']
        return value
    if value is None:
        return None
    return compact_json(value)


def _shows(value: Any, text: str | None) -> bool:
    """Whether `input` (`value`) is what the UI makes of the argument text: its JSON object as JavaScript holds it
    (a text that is no JSON object is shown as `{"INVALID_JSON": text}`; no arguments as `{}`)."""
    if not isinstance(value, dict):
        return False
    if not text:
        return not value
    try:
        parsed = parse_json(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        parsed = {'INVALID_JSON': text}
    try:
        return canonical_json(value) == canonical_json(parsed)
    except (ValueError, RecursionError):
        return False


def tool_call(part: ToolUIPart | DynamicToolUIPart, call_fields: dict[str, Any]) -> ToolCallPart:
    args = call_args(part.input, call_fields)
    if isinstance(args, dict):
        if not all(type(key) is str for key in args):
            # Only a part built in Python can have such keys; validation refuses them, as it always has.
            return ToolCallPart(tool_name=part.tool_name, args=args, tool_call_id=part.tool_call_id)
        args = dict(args)  # the call's own dict, as validation gives it
    return construct(ToolCallPart, {'tool_name': part.tool_name, 'args': args, 'tool_call_id': part.tool_call_id})


def derived_denial(part: ToolUIPart | DynamicToolUIPart, call_fields: dict[str, Any]) -> ToolApprovalUI | None:
    """The approval `dump_messages` writes for a denial it has no approval for (so it need not be kept)."""
    if part.state != 'output-denied' or part.approval is None:
        return None
    return ToolApprovalUI(id=part.tool_call_id, approved=False, reason=part.approval.reason)


def result_fields(part: ToolUIPart | DynamicToolUIPart, call_fields: dict[str, Any]) -> dict[str, Any]:
    """A result's `uibridge` metadata: in `resultProviderMetadata`, else under `result` in the call's (where a
    denial keeps it, and every result for an `ai` 5 client, which has no result metadata)."""
    fields = ours(part.result_provider_metadata)
    result = call_fields.get('result')
    return cast('dict[str, Any]', result) if not fields and isinstance(result, dict) else fields


def result_part(part: ToolUIPart | DynamicToolUIPart, fields: dict[str, Any]) -> ModelRequestPart | None:
    """The request part for a tool part's result, if it has one (`fields`: its `result_fields`)."""
    state = part.state
    if state not in ('output-available', 'output-error', 'output-denied'):
        return None
    timestamp = parse_iso(fields.get('timestamp'))
    stamp: dict[str, Any] = {'timestamp': timestamp} if timestamp is not None else {}
    name, call_id = part.tool_name, part.tool_call_id
    if state == 'output-error' and isinstance(fields.get('retry'), dict):
        retry = cast('dict[str, Any]', fields['retry'])
        try:
            content = _retry_content.validate_python(carried_value(retry, 'content', retry.get('content')))
        except pydantic.ValidationError:
            content = None
        if content is not None:
            return construct(RetryPromptPart, {'content': content, 'tool_name': name, 'tool_call_id': call_id, **stamp})
    outcome = fields.get('outcome')
    metadata = carried_value(fields, 'metadata', fields.get('metadata'))
    if state == 'output-available':
        content: Any = carried_value(fields, 'content', part.output)
        outcome = outcome if outcome == 'interrupted' else 'success'
    elif state == 'output-error':
        content = carried_value(fields, 'content', fields.get('content', part.error_text))
        outcome = outcome if outcome in ('failed', 'interrupted', 'denied') else 'failed'  # denied: ai 5 and 6
    else:
        reason = part.approval.reason if part.approval is not None else None
        content = carried_value(fields, 'content', fields.get('content', reason or DENIED))
        outcome = 'denied'
    return construct(
        ToolReturnPart,
        {
            'tool_name': name,
            'content': content,
            'tool_call_id': call_id,
            'metadata': metadata,
            'outcome': outcome,
            **stamp,
        },
    )


class _Discarded(SignatureClaims):
    """Where claims go when the caller wants none: recording them would only cost time."""

    __slots__ = ()

    def add(self, part: object, signature: object, *, client: bool = False) -> None:
        return None

    def add_state(self, response: ModelResponse, signature: object) -> None:
        return None


NO_CLAIMS = _Discarded()


def apply_request_info(request: ModelRequest, info: Any) -> None:
    if not isinstance(info, dict):
        return
    info = cast('dict[str, Any]', info)
    if isinstance(info.get('instructions'), str):
        request.instructions = info['instructions']
    metadata = app_metadata(info['metadata']) if isinstance(info.get('metadata'), dict) else None
    if metadata is not None:
        request.metadata = {**metadata, **(request.metadata or {})}


def response_sidecar(response: ModelResponse) -> dict[str, Any]:
    if response.metadata is None:
        response.metadata = {}
    return cast('dict[str, Any]', response.metadata.setdefault(SIDECAR_KEY, {}))


def request_sidecar(request: ModelRequest) -> dict[str, Any]:
    if request.metadata is None:
        request.metadata = {}
    return cast('dict[str, Any]', request.metadata.setdefault(SIDECAR_KEY, {}))


def apply_response_info(response: ModelResponse, info: Any) -> None:
    """Set on `response` what a step's response record (`providerMetadata.uibridge.response`) gives back; a step
    whose first part has none was written by a client, and the sidecar says so (dump adds none back)."""
    if not isinstance(info, dict):
        if not response.parts:
            response_sidecar(response)['bare'] = True
        return
    info = cast('dict[str, Any]', info)
    fields = read_response_fields(info)
    for name, value in fields.items():
        setattr(response, name, value)
    metadata = app_metadata(info['metadata']) if isinstance(info.get('metadata'), dict) else None
    if metadata is not None:
        response.metadata = {**metadata, **(response.metadata or {})}
