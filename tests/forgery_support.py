"""What the forgery suites share: a history as each protocol's client holds it, and a client's edit of it.

A client that edits a signed history keeps the signatures it was given and changes what they sign. `forged`
plays that: it dumps the history as the server would (`wire`), dumps the edited history the same way, and gives
the edited wire the original wire's signatures, in document order (`SIGNATURE_KEYS`), so only the edit differs
from what the server sent.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any, cast

from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.messages import ModelMessage
from uibridge.core.provenance import Keyring

__all__ = ['SIGNATURE_KEYS', 'agui_body', 'forged', 'request_body', 'signatures', 'vercel_body', 'wire']

SIGNATURE_KEYS = frozenset({'sig', 'state_sig'})
"""Where the adapters put a signature: a part's or marker's `sig`, a state's `state_sig`."""


def wire(protocol: str, history: Sequence[ModelMessage], keyring: Keyring) -> list[dict[str, Any]]:
    """`history` as the client of `protocol` (`vercel` or `agui`) holds it, as JSON."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # AG-UI has no place for a file a model produced: left out, with a warning
        if protocol == 'vercel':
            return [
                m.model_dump(mode='json', exclude_none=True) for m in vercel_ai.dump_messages(history, keyring=keyring)
            ]
        dumped = ag_ui.dump_messages(history, keyring=keyring)
        return [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in dumped]


def signatures(value: Any) -> list[str]:
    """Every signature in a wire, in document order."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in cast('dict[str, Any]', value).items():
            if key in SIGNATURE_KEYS and isinstance(item, str):
                found.append(item)
            elif key == 'encryptedValue' and isinstance(item, str) and item.startswith('{"uibridge"'):
                found += signatures(json.loads(item))
            else:
                found += signatures(item)
    elif isinstance(value, list):
        for item in cast('list[Any]', value):
            found += signatures(item)
    return found


def _replaced(value: Any, given: list[str]) -> Any:
    """`value` with its signatures replaced, in document order, by `given` (consumed)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in cast('dict[str, Any]', value).items():
            if key in SIGNATURE_KEYS and isinstance(item, str):
                out[key] = given.pop(0)
            elif key == 'encryptedValue' and isinstance(item, str) and item.startswith('{"uibridge"'):
                out[key] = json.dumps(_replaced(json.loads(item), given), separators=(',', ':'), ensure_ascii=False)
            else:
                out[key] = _replaced(item, given)
        return out
    if isinstance(value, list):
        return [_replaced(item, given) for item in cast('list[Any]', value)]
    return value


def forged(
    protocol: str, history: Sequence[ModelMessage], edited: Sequence[ModelMessage], keyring: Keyring
) -> list[dict[str, Any]]:
    """The wire of `edited` carrying the signatures the server gave `history`: a client's edit of its copy."""
    original = signatures(wire(protocol, history, keyring))
    edited_wire = wire(protocol, edited, keyring)
    if len(signatures(edited_wire)) != len(original):
        count = len(signatures(edited_wire))
        raise AssertionError(f'the edit changed which items are signed: {len(original)} signatures, then {count}')
    return cast('list[dict[str, Any]]', _replaced(edited_wire, list(original)))


def vercel_body(messages: list[dict[str, Any]], thread_id: str) -> dict[str, Any]:
    return {'id': thread_id, 'messages': messages, 'trigger': 'submit-message'}


def agui_body(messages: list[dict[str, Any]], thread_id: str) -> dict[str, Any]:
    return {
        'threadId': thread_id, 'runId': f'run-{thread_id}', 'messages': messages, 'tools': [], 'context': [],
        'state': None, 'forwardedProps': None,
    }  # fmt: skip


def request_body(protocol: str, messages: list[dict[str, Any]], thread_id: str) -> dict[str, Any]:
    return vercel_body(messages, thread_id) if protocol == 'vercel' else agui_body(messages, thread_id)
