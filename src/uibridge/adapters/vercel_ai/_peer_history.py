"""UI messages that pydantic-ai's own `VercelAIAdapter` stored, respelled as uibridge's, so they load with
their meaning: a migration path for applications moving their stored chats to uibridge.

pydantic-ai keeps what a UI part has no field for under `pydantic_ai` (message `metadata`, a part's
`providerMetadata`, a tool part's `callProviderMetadata`), as uibridge does under `uibridge`. Respelled here:

- a reasoning part's `id`, `signature` and `provider_name`; a text or file part's `id`;
- the message's `timestamp` (the prompt's, or the response's on the step's first part);
- a tool part's `outcome`: `retried` becomes the tool-bound `RetryPromptPart` (its content: the structured
  errors pydantic-ai keeps beside the call, else the `errorText`), `interrupted` / `failed` stay so; a
  provider-run tool's `provider_name`s (its call's and its return's records apart, `call_meta` / `return_meta`);
- a text part carrying pydantic-ai's retry-feedback marker (`core.peer_feedback`) becomes a system message of
  its own holding uibridge's marker and rendering, which loads as that `RetryFeedbackPart`: only the marker
  makes feedback, never the text.

What the neutral model keeps as a part's extra keys, as it keeps them from pydantic-ai's stored JSON, is read by
the loader from the record left beside the respelled part (`part_extras`, `result_extras`, `feedback_extras`):
a tool call's provider item `id`, `provider_name` and `provider_details` (and `tool_kind`), a text's, a thinking
part's and a file's `provider_details` (and a text's or file's `provider_name`), a provider-run call's and
return's, and a retry's record `{cause, attempt, max_retries}` (a retried tool's with `outcome: 'retried'`, as
pydantic-ai stores it). So the history is the one pydantic-ai stored, field for field.

Nothing here is signed: these are the server's own stored records, so this is for `load_messages` on the
server followed by saving the history again. A message with a `pydantic_ai` record is read as pydantic-ai's
and nothing else: any `uibridge` entry beside the record is dropped, signatures included, so the extra keys a
record gives (which reach a provider, and which no signature covers) never ride on a part that verifies. Sent
through a client, `verify_history` drops the server parts, as it drops any unsigned one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from ...core.feedback import render_retry_feedback
from ...core.peer_feedback import PEER_KEY, our_marker, peer_retry_feedback
from ._provider_metadata import PROVIDER_KEY
from .types import (
    DynamicToolUIPart,
    FileUIPart,
    ReasoningUIPart,
    TextUIPart,
    ToolUIPart,
    UIMessage,
    UIMessagePart,
)

_THINKING_KEYS = ('id', 'signature', 'provider_name')


def _peer(metadata: Any) -> dict[str, Any] | None:
    if isinstance(metadata, Mapping):
        found = cast('Mapping[str, Any]', metadata).get(PEER_KEY)
        if isinstance(found, dict):
            return cast('dict[str, Any]', found)
    return None


def _written_by_peer(message: UIMessage) -> bool:
    # Runs for every message loaded, so it reads the fields straight from `__dict__`: a text, reasoning or
    # file part's `provider_metadata`, a tool part's `call_provider_metadata`, where pydantic-ai writes.
    metadata = message.metadata
    if type(metadata) is dict and PEER_KEY in metadata:
        return True
    for part in message.parts:
        fields = part.__dict__
        found = fields.get('provider_metadata') or fields.get('call_provider_metadata')
        if found and PEER_KEY in found:
            return True
    return False


def peer_messages(message: UIMessage) -> list[UIMessage] | None:
    """`message` as uibridge's UI messages (more than one when it holds retry feedback), or `None` when
    pydantic-ai did not write it (no `pydantic_ai` record anywhere): then it loads as it is."""
    if not _written_by_peer(message):
        return None
    metadata: Any = message.metadata
    stamp: str | None = None
    if isinstance(metadata, dict):
        stamp = (_peer(metadata) or {}).get('timestamp')
        metadata = {k: v for k, v in cast('dict[str, Any]', metadata).items() if k != PEER_KEY} or None
    # Each feedback part becomes a system message of its own, between runs of the message's other parts.
    groups: list[tuple[bool, list[UIMessagePart]]] = []  # (feedback?, parts)
    for part in message.parts:
        feedback = _feedback(part) if message.role != 'assistant' else None
        if feedback is not None:
            groups.append((True, [feedback]))
            continue
        respelled, took_stamp = _respell(part, message.role, stamp if isinstance(stamp, str) else None)
        if took_stamp:
            stamp = None  # on the first part only, where uibridge writes it
        if not groups or groups[-1][0]:
            groups.append((False, []))
        groups[-1][1].append(respelled)
    return [
        UIMessage(
            id=message.id if n == 0 else f'{message.id}-{n}',
            role='system' if feedback else message.role,
            parts=parts,
            metadata=None if feedback else metadata,
        )
        for n, (feedback, parts) in enumerate(groups)
    ]


def _feedback(part: UIMessagePart) -> TextUIPart | None:
    if not isinstance(part, TextUIPart):
        return None
    record = _peer(part.provider_metadata)
    feedback = peer_retry_feedback(record.get('retry_feedback')) if record is not None else None
    if feedback is None:
        return None
    assert record is not None
    return TextUIPart(
        text=render_retry_feedback(feedback),
        state='done',
        # The record stays beside uibridge's marker: its retry record is the part's extra key (`feedback_extras`).
        provider_metadata={PROVIDER_KEY: {'retry_feedback': our_marker(feedback)}, PEER_KEY: record},
    )


def _respell(part: UIMessagePart, role: str, stamp: str | None) -> tuple[UIMessagePart, bool]:
    """`part` with its `pydantic_ai` record respelled as uibridge's, and whether it took the timestamp."""
    if isinstance(part, TextUIPart | ReasoningUIPart | FileUIPart):
        record = _peer(part.provider_metadata) or {}
        keys = _THINKING_KEYS if isinstance(part, ReasoningUIPart) else ('id',)
        fields = {key: record[key] for key in keys if isinstance(record.get(key), str)}
        if stamp is not None:
            fields['response' if role == 'assistant' else 'timestamp'] = (
                {'timestamp': stamp} if role == 'assistant' else stamp
            )
        return part.model_copy(update={'provider_metadata': _ours(part.provider_metadata, fields)}), stamp is not None
    if isinstance(part, ToolUIPart | DynamicToolUIPart):
        record = _peer(part.call_provider_metadata) or {}
        call_fields: dict[str, Any] = {'response': {'timestamp': stamp}} if stamp is not None else {}
        result_fields: dict[str, Any] = {}
        outcome = record.get('outcome')
        if outcome == 'retried' and part.state == 'output-error':
            result_fields['retry'] = {'content': record.get('content', part.error_text)}
        elif outcome in ('interrupted', 'failed'):
            result_fields['outcome'] = outcome
        if part.provider_executed is True:
            call, returned = _native_records(record)
            for fields, meta in ((call_fields, call), (result_fields, returned)):
                provider = meta.get('provider_name', record.get('provider_name'))
                if isinstance(provider, str):
                    fields['provider_name'] = provider
        update = {
            'call_provider_metadata': _ours(part.call_provider_metadata, call_fields),
            'result_provider_metadata': _ours(part.result_provider_metadata, result_fields),
        }
        return part.model_copy(update=update), stamp is not None
    return part, False


def _ours(metadata: Mapping[str, Any] | None, fields: dict[str, Any]) -> dict[str, Any] | None:
    """The provider metadata with `fields` as uibridge's (when any) and pydantic-ai's record kept beside them; a
    `uibridge` entry it held is not pydantic-ai's (see the module docstring) and goes."""
    kept = {k: v for k, v in (metadata or {}).items() if k != PROVIDER_KEY}
    if fields:
        kept[PROVIDER_KEY] = fields
    return kept or None


# ------------------------------------------------------------------------------------------- extra keys

_M = TypeVar('_M', bound=BaseModel)


def with_extras(part: _M, extras: dict[str, Any]) -> _M:
    """`part` with `extras` as its extra keys (the neutral parts keep unknown keys: `extra='allow'`)."""
    return part.model_copy(update=extras) if extras else part


_CALL_KEYS = ('id', 'provider_name', 'provider_details', 'tool_kind')
_PART_KEYS: dict[str, tuple[str, ...]] = {
    'text': ('provider_name', 'provider_details'),
    'reasoning': ('provider_details',),
    'file': ('provider_name', 'provider_details'),
}
_RETRY_KEYS = ('cause', 'attempt', 'max_retries')


def _native_records(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A provider-run tool's call and return records (pydantic-ai keeps them apart only once it returned)."""
    call, returned = record.get('call_meta'), record.get('return_meta')
    if isinstance(call, dict) or isinstance(returned, dict):
        return (
            cast('dict[str, Any]', call) if isinstance(call, dict) else {},
            cast('dict[str, Any]', returned) if isinstance(returned, dict) else {},
        )
    return record, {}


def _picked(record: Mapping[str, Any], keys: tuple[str, ...], taken: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The `keys` a record gives a value of the kind pydantic-ai writes (a string, or an object for details),
    but those `taken` (the part's own fields, respelled already)."""
    extras: dict[str, Any] = {}
    for key in keys:
        value = record.get(key)
        if key in taken or value is None:
            continue
        if isinstance(value, dict if key == 'provider_details' else str):
            extras[key] = value
    return extras


def part_extras(part: UIMessagePart) -> dict[str, Any]:
    """The extra keys of the neutral part a text, reasoning or file part of pydantic-ai's becomes; for a tool
    part, those of its call (a provider-run call's from its call record)."""
    if isinstance(part, ToolUIPart | DynamicToolUIPart):
        record = _peer(part.call_provider_metadata) or {}
        if part.provider_executed is True:
            return _picked(_native_records(record)[0], _CALL_KEYS, frozenset({'provider_name'}))
        return _picked(record, _CALL_KEYS)
    keys = _PART_KEYS.get(part.type)
    record = _peer(getattr(part, 'provider_metadata', None))
    return _picked(record, keys) if keys is not None and record is not None else {}


def result_extras(part: ToolUIPart | DynamicToolUIPart) -> dict[str, Any]:
    """The extra keys of the result a tool part of pydantic-ai's holds: a retried tool's `outcome` and retry
    record, as pydantic-ai stores its retried return; a provider-run return's details."""
    record = _peer(part.call_provider_metadata) or {}
    if part.provider_executed is True:
        return _picked(_native_records(record)[1], ('provider_details',))
    retry = _retry_record(record.get('retry'))
    if record.get('outcome') != 'retried' or part.state != 'output-error' or retry is None:
        return {}
    return {'outcome': 'retried', 'retry': retry}


def feedback_extras(part: TextUIPart) -> dict[str, Any]:
    """The retry record of pydantic-ai's retry feedback, when it counts attempts (uibridge keeps it then, as
    it does from pydantic-ai's stored JSON: `core.stored_spellings`)."""
    record = _peer(part.provider_metadata) or {}
    marker = record.get('retry_feedback')
    retry = _retry_record(cast('dict[str, Any]', marker).get('retry')) if isinstance(marker, dict) else None
    if retry is None or (retry.get('attempt') is None and retry.get('max_retries') is None):
        return {}
    return {'retry': retry}


def _retry_record(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    record = cast('dict[str, Any]', value)
    if not isinstance(record.get('cause'), str):
        return None
    counts = [record.get(key) for key in ('attempt', 'max_retries')]
    if not all(count is None or (type(count) is int and count >= 0) for count in counts):
        return None
    return {key: record.get(key) for key in _RETRY_KEYS}
