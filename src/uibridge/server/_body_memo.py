"""A managed AG-UI body decoded without its history's part when that part is the one the last body had.

`@ag-ui/client` sends a thread's whole history with every run, serialized the same way each time: the `messages`
array of one run's body begins with the bytes of the last run's array, whole messages of it. Decoding those again
costs in proportion to the chat. So the endpoint keeps, per principal and thread (`BodyMemo`), the text of the last
body's `messages` array and the values decoded from it, and a body whose array begins with the same bytes, up to
the end of a message and the character after it, takes those values as they are and decodes only what follows.

The result is the value `json.loads` gives (`core.client_input.json_object(..., nesting_checked=False)`): JSON is
read left to right and a message's value ends with its own closing character, so identical text up to there is an
identical value. Anything out of the common shape (the body not an object, no `messages` array, a syntax error
anywhere, a thread id after the messages) is decoded whole by `json_object`, with its refusals. The values reused
are shared with the earlier request of the same principal and thread only, and read, never changed, by the server.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..core.client_input import json_object, scan_string, scan_value

DEFAULT_MEMO_CHATS = 256
"""Threads whose last `messages` array an endpoint keeps, at most (the least recently used go first)."""
DEFAULT_MEMO_BYTES = 8 * 1024 * 1024
"""Characters of those arrays' text kept in all, at most (the values decoded from them come on top, several times
as large): a thread past it is decoded whole each turn, as without the memo."""

_SPACE = re.compile(r'[ \t\n\r]*')


@dataclass(frozen=True)
class _Array:
    text: str
    """The array's text from after its `[` to before its `]`."""
    values: list[Any]
    ends: list[int]
    """Where each value's text ends, in `text`."""


class _Fallback(Exception):
    """Not the common shape: decode the body whole."""


class BodyMemo:
    """Per principal and thread, the last managed AG-UI body's `messages` array: its text and values."""

    def __init__(self, max_chats: int = DEFAULT_MEMO_CHATS, max_bytes: int = DEFAULT_MEMO_BYTES) -> None:
        self.max_chats = max_chats
        self.max_bytes = max_bytes
        self._arrays: OrderedDict[tuple[str, str], _Array] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # bodies are decoded in worker threads too

    def chats(self) -> int:
        """How many threads' arrays are kept."""
        with self._lock:
            return len(self._arrays)

    def decode(self, body: bytes, principal: str) -> dict[str, Any]:
        """`body` as `json_object(body, nesting_checked=False)` decodes it (the same value, the same refusals)."""
        try:
            text = body.decode('utf-8')
        except UnicodeDecodeError:
            return json_object(body, nesting_checked=False)
        try:
            return self._decode(text, principal)
        except (_Fallback, ValueError, StopIteration, RecursionError, IndexError):
            return json_object(text, nesting_checked=False)

    def _decode(self, text: str, principal: str) -> dict[str, Any]:
        index = _space(text, 0)
        if text[index : index + 1] != '{':
            raise _Fallback
        value: dict[str, Any] = {}
        index = _space(text, index + 1)
        thread: str | None = None
        if text[index] != '}':
            while True:
                if text[index] != '"':
                    raise _Fallback
                key, index = scan_string(text, index + 1, True)
                index = _space(text, index)
                if text[index] != ':':
                    raise _Fallback
                index = _space(text, index + 1)
                if key == 'messages' and thread is not None and text[index] == '[':
                    value[key], index = self._messages(text, index + 1, (principal, thread))
                else:
                    value[key], index = scan_value(text, index)
                    if key == 'threadId':
                        thread = value[key] if isinstance(value[key], str) else None
                index = _space(text, index)
                if text[index] == '}':
                    break
                if text[index] != ',':
                    raise _Fallback
                index = _space(text, index + 1)
        if _space(text, index + 1) != len(text):
            raise _Fallback
        return value

    def _messages(self, text: str, start: int, key: tuple[str, str]) -> tuple[list[Any], int]:
        """The array whose text begins at `start` (after its `[`), and where its text ends (after its `]`)."""
        with self._lock:
            last = self._arrays.get(key)
        values: list[Any] = []
        ends: list[int] = []
        if last is not None:
            # The most whole values whose text, and the character after it, are the same here: found by halving,
            # each try one comparison of text in C.
            low, high = 0, len(last.ends)
            while low < high:
                middle = (low + high + 1) // 2
                end = last.ends[middle - 1] + 1
                if end <= len(last.text) and text.startswith(last.text[:end], start):
                    low = middle
                else:
                    high = middle - 1
            values = last.values[:low]
            ends = last.ends[:low]
        index = _space(text, start + ends[-1] if ends else start)
        more = text[index] != ']'
        if ends and more:
            if text[index] != ',':
                raise _Fallback
            index = _space(text, index + 1)
        while more:
            item, index = scan_value(text, index)
            values.append(item)
            ends.append(index - start)
            index = _space(text, index)
            if text[index] == ']':
                break
            if text[index] != ',':
                raise _Fallback
            index = _space(text, index + 1)
        self._keep(key, _Array(text[start:index], values, ends))
        return list(values), index + 1

    def _keep(self, key: tuple[str, str], array: _Array) -> None:
        if len(array.text) > self.max_bytes:
            return
        with self._lock:
            old = self._arrays.pop(key, None)
            if old is not None:
                self._bytes -= len(old.text)
            self._arrays[key] = array
            self._bytes += len(array.text)
            while len(self._arrays) > self.max_chats or self._bytes > self.max_bytes:
                _, dropped = self._arrays.popitem(last=False)
                self._bytes -= len(dropped.text)



def _space(text: str, index: int) -> int:
    """Where the JSON whitespace from `index` on ends."""
    return _SPACE.match(text, index).end()  # pyright: ignore[reportOptionalMemberAccess]: it matches the empty
