"""The neutral fields a protocol has no place for, as the records every adapter carries beside its messages.

A UI message says nothing of the model that wrote a response, when, or why it stopped, nor of a thinking
part's provider signature. Each adapter keeps these in a channel of its own (Vercel: `providerMetadata`,
AG-UI: a message's `metadata` and `encryptedValue`), under the same names, written and read back here. What
comes back is the client's copy: every value is checked, and one that is not what uibridge writes is ignored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, get_args

import pydantic

from .json_text import iso_utc, parse_iso
from .messages import FinishReason, ModelResponse, ThinkingPart
from .usage import Usage

_FINISH_REASONS: frozenset[str] = frozenset(get_args(FinishReason))
_COMMON_KEYS = frozenset({'timestamp', 'model_name', 'provider_name'})
_USAGE_FIELDS = set(Usage.model_fields)  # the counts a UI may show; a provider's extra keys stay in uibridge's JSON


def response_fields(response: ModelResponse, *, finish_reason: bool = True) -> dict[str, Any]:
    """`timestamp`, and those of `model_name`, `provider_name` and (unless `finish_reason` is false: a stream
    knows it only at the end) `finish_reason` that are set, in that order."""
    # Spelled out field by field: this runs once per response on every dump and stream (a hot path).
    fields: dict[str, Any] = {'timestamp': iso_utc(response.timestamp)}
    if response.model_name is not None:
        fields['model_name'] = response.model_name
    if response.provider_name is not None:
        fields['provider_name'] = response.provider_name
    if finish_reason and response.finish_reason is not None:
        fields['finish_reason'] = response.finish_reason
    if response.usage is not None:
        fields['usage'] = response.usage.model_dump(mode='json', include=_USAGE_FIELDS, exclude_defaults=True)
    if response.provider_response_id is not None:
        fields['provider_response_id'] = response.provider_response_id
    if response.provider_details is not None:
        fields['provider_details'] = response.provider_details
    return fields


def read_response_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The `ModelResponse` fields a client's copy of `response_fields` gives back, those that are valid."""
    fields: dict[str, Any] = {}
    timestamp = parse_iso(record.get('timestamp'))
    if timestamp is not None:
        fields['timestamp'] = timestamp
    for key in ('model_name', 'provider_name'):  # a loop, not `_text_fields`: this runs for every step loaded
        if isinstance(value := record.get(key), str):
            fields[key] = value
    if record.keys() <= _COMMON_KEYS:
        return fields  # what most steps carry: the keys below are absent, so their look-ups can be skipped
    finish_reason = record.get('finish_reason')
    if isinstance(finish_reason, str) and finish_reason in _FINISH_REASONS:
        fields['finish_reason'] = finish_reason
    usage = record.get('usage')
    if isinstance(usage, dict):
        with contextlib.suppress(pydantic.ValidationError):  # not what uibridge writes: ignored, like the rest
            fields['usage'] = Usage.model_validate(usage)
    if isinstance(response_id := record.get('provider_response_id'), str):
        fields['provider_response_id'] = response_id
    if isinstance(details := record.get('provider_details'), dict):
        fields['provider_details'] = details
    return fields


def thinking_fields(part: ThinkingPart) -> dict[str, Any]:
    """A thinking part's provider fields that are set: `signature`, then `provider_name`."""
    fields: dict[str, Any] = {}
    if part.signature is not None:
        fields['signature'] = part.signature
    if part.provider_name is not None:
        fields['provider_name'] = part.provider_name
    return fields


def read_thinking_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The `ThinkingPart` fields a client's copy of `thinking_fields` (and the part's `id`) gives back, those
    that are text."""
    return _text_fields(record, 'signature', 'provider_name', 'id')


def _text_fields(record: Mapping[str, Any], *keys: str) -> dict[str, str]:
    """The values of `record` under `keys` that are text (what uibridge writes there), in that order."""
    return {key: value for key in keys if isinstance(value := record.get(key), str)}
