"""How every backend keeps a history: one JSON item per message, where a commit's messages go, and the
histories this process committed, kept decoded (`HistoryCache`).

Shared by the backends, not part of the store interface (`base.py`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from ...core.messages import ModelMessage, ModelMessagesTypeAdapter
from ..offload import off_loop

if TYPE_CHECKING:
    from .base import RunClaim

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


DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
"""Stored bytes of the histories a store keeps decoded, at most (the least recently used chats go first)."""


@dataclass(frozen=True)
class CachedHistory:
    """A chat's history as the commit of claim `revision` left it: the messages it kept, decoded, the items it
    wrote, still encoded (decoded by the claim that takes them, off the loop when large: `load_history`), and every
    message's stored size."""

    revision: str
    kept: tuple[ModelMessage, ...]
    written: tuple[bytes, ...]
    sizes: tuple[int, ...]

    async def load(self) -> tuple[list[ModelMessage], tuple[int, ...]]:
        """The history and its sizes, as a claim holds them."""
        return [*self.kept, *await load_history(self.written)], self.sizes


class HistoryCache:
    """Per chat, the history this process's last commit left, decoded, under the id of the claim that committed it
    (the next claim's `RunClaim.revision`). A claim made at that revision takes it instead of reading and decoding
    the stored items: a turn of a long chat costs its new messages, not its history.

    Nothing here can go stale: a commit needs a claim, and every claim moves the revision on, so a history is used
    only by the claim right after the commit that left it. At most `max_bytes` of stored history is kept, the
    least recently used chats dropped first. The messages are shared by the claims that take them: what a run
    does with its history must not change it (the endpoints copy what they change)."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._chats: OrderedDict[str, CachedHistory] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # the SQLite store commits from its worker threads

    def get(self, chat_id: str) -> CachedHistory | None:
        """The history kept for the chat (check its `revision` against the claim's before using it)."""
        with self._lock:
            found = self._chats.get(chat_id)
            if found is not None:
                self._chats.move_to_end(chat_id)
            return found

    def committed(self, claim: RunClaim, start: int, items: Sequence[bytes]) -> None:
        """Claim `claim` committed `items` from position `start` on: keep the history that left (the claim's up to
        `start`, then the items), for the chat's next claim."""
        sizes = (*claim.sizes[:start], *map(len, items))
        self._put(claim.chat_id, CachedHistory(claim.run_id, tuple(claim.messages[:start]), tuple(items), sizes))

    def forget(self, chat_id: str) -> None:
        with self._lock:
            dropped = self._chats.pop(chat_id, None)
            if dropped is not None:
                self._bytes -= sum(dropped.sizes)

    def _put(self, chat_id: str, history: CachedHistory) -> None:
        size = sum(history.sizes)
        with self._lock:
            dropped = self._chats.pop(chat_id, None)
            if dropped is not None:
                self._bytes -= sum(dropped.sizes)
            if size > self.max_bytes:
                return
            self._chats[chat_id] = history
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, oldest = self._chats.popitem(last=False)
                self._bytes -= sum(oldest.sizes)
