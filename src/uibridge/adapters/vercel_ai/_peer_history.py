"""UI messages that pydantic-ai's own `VercelAIAdapter` stored, respelled as uibridge's, so they load with
their meaning: a migration path for applications moving their stored chats to uibridge.

pydantic-ai keeps what a UI part has no field for under `pydantic_ai` (message `metadata`, a part's
`providerMetadata`, a tool part's `callProviderMetadata`), as uibridge does under `uibridge`. Respelled here:

- a reasoning part's `id`, `signature` and `provider_name`; a text or file part's `id`;
- the message's `timestamp` (the prompt's, or the response's on the step's first part);
- a tool part's `outcome`: `retried` becomes the tool-bound `RetryPromptPart` (its content: the structured
  errors pydantic-ai keeps beside the call, else the `errorText`), `interrupted` / `failed` stay so;
- a text part carrying pydantic-ai's retry-feedback marker (`core.peer_feedback`) becomes a system message of
  its own holding uibridge's marker and rendering, which loads as that `RetryFeedbackPart`: only the marker
  makes feedback, never the text.

What it drops (the `pydantic_ai` records once read, a retry's attempt counts, the provider ids and details of
tool calls and texts) the neutral model has no field for. Nothing here is signed: these are the server's own
stored records, so this is for `load_messages` on the server followed by saving the history again; sent
through a client, `verify_history` drops the server parts, as it drops any unsigned one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

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
    return TextUIPart(
        text=render_retry_feedback(feedback),
        state='done',
        provider_metadata={PROVIDER_KEY: {'retry_feedback': our_marker(feedback)}},
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
        update = {
            'call_provider_metadata': _ours(part.call_provider_metadata, call_fields),
            'result_provider_metadata': _ours(part.result_provider_metadata, result_fields),
        }
        return part.model_copy(update=update), stamp is not None
    return part, False


def _ours(metadata: Mapping[str, Any] | None, fields: dict[str, Any]) -> dict[str, Any] | None:
    """The provider metadata without pydantic-ai's record and with `fields` as uibridge's (when any)."""
    kept = {k: v for k, v in (metadata or {}).items() if k != PEER_KEY}
    if fields:
        kept[PROVIDER_KEY] = fields
    return kept or None
