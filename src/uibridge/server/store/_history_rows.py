"""How every backend keeps a history: one JSON item per message, and where a commit's messages go.

Shared by the backends, not part of the store interface (`base.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import TypeAdapter

from ...core.messages import ModelMessage, ModelMessagesTypeAdapter

__all__ = ['decode_messages', 'encode_messages', 'history_start', 'outside_history']

_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)


def encode_messages(messages: Iterable[ModelMessage]) -> list[bytes]:
    """One JSON item per message; `[` + `,`.join(items) + `]` is exactly what `ModelMessagesTypeAdapter`
    writes for the list, so a history stored here is the pydantic-ai compatible JSON, one row at a time."""
    return [_MESSAGE.dump_json(message) for message in messages]


def decode_messages(items: Sequence[bytes]) -> list[ModelMessage]:
    """The inverse of `encode_messages`: one validation of the joined array."""
    if not items:
        return []
    return ModelMessagesTypeAdapter.validate_json(b'[' + b','.join(items) + b']')


def history_start(replace_from: int | None, length: int) -> int:
    """Where a commit's messages go in a history of `length` messages: after it, or from `replace_from` on
    (`commit`'s rule for every backend); a `ValueError` when `replace_from` is outside 0 to `length`."""
    start = length if replace_from is None else replace_from
    if not 0 <= start <= length:
        raise outside_history(replace_from, length)
    return start


def outside_history(replace_from: int | None, length: int | None = None) -> ValueError:
    """The error for a `replace_from` outside the history (of `length` messages, when the backend knows it)."""
    bounds = '' if length is None else f' (0 to {length})'
    return ValueError(f'replace_from={replace_from} is outside the history{bounds}')
