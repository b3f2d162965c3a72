"""How every backend keeps a history: one JSON item per message, and where a commit's messages go.

Shared by the backends, not part of the store interface (`base.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from ...core.messages import ModelMessage, ModelMessagesTypeAdapter
from ..offload import off_loop

_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)
_BATCH_BYTES = 1024 * 1024
"""Items validated together, at most (a larger item alone): one call into pydantic-core holds the GIL until it
returns, so a batch this size is the longest a history's decoding keeps the event loop waiting."""


def encode_messages(messages: Iterable[ModelMessage]) -> list[bytes]:
    """One JSON item per message; `[` + `,`.join(items) + `]` is exactly what `ModelMessagesTypeAdapter`
    writes for the list, so a history stored here is the pydantic-ai compatible JSON, one row at a time."""
    return [_MESSAGE.dump_json(message) for message in messages]


def decode_messages(items: Sequence[bytes]) -> list[ModelMessage]:
    """The inverse of `encode_messages`: one validation per batch of items joined as an array (a validation
    a message costs more than one of many small ones together, and one of a whole large history would hold
    the GIL for all of it)."""
    messages: list[ModelMessage] = []
    batch: list[bytes] = []
    size = 0
    for item in items:
        if batch and size + len(item) > _BATCH_BYTES:
            messages += ModelMessagesTypeAdapter.validate_json(b'[' + b','.join(batch) + b']')
            batch, size = [], 0
        batch.append(item)
        size += len(item)
    if batch:
        messages += ModelMessagesTypeAdapter.validate_json(b'[' + b','.join(batch) + b']')
    return messages


async def load_history(items: Sequence[bytes]) -> list[ModelMessage]:
    """`decode_messages`, in a worker thread when the history is large (`offload`)."""
    return await off_loop(decode_messages, items, size=sum(map(len, items)))


def encode_state(state: Any) -> bytes:
    """A chat's state as stored: its JSON (what a `StateSnapshot` holds is JSON data; anything pydantic can
    write as JSON is taken, as the stream's encoders take it)."""
    return to_json(state)


def decode_state(stored: bytes | None) -> Any:
    """The state `encode_state` stored, `None` when the chat has none."""
    return None if stored is None else _STATE.validate_json(stored)


_STATE: TypeAdapter[Any] = TypeAdapter(Any)


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
