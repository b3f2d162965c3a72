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

What the server's passes over a body's messages find in each message (its id and role, whether it is plain, its
part counts) is kept with it too (`Reused`): those passes then look at the messages the last body did not have
only, and what the turn reads of its body, which decides whether its steps go to a worker thread, is what it does
not share.
"""

from __future__ import annotations

import operator
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, repeat
from typing import Any

from ..adapters.ag_ui.request import ReadBefore, plain_ids_roles
from ..core.client_input import json_object, scan_string, scan_value
from .limits import PART_LISTS, PartCounts, part_lengths

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
    facts: _Facts


@dataclass(frozen=True)
class _Facts:
    """What the server's passes over a body's messages find in each value of an array (parallel to its values), so
    that a later body sharing the first values with it looks only at the rest: `parse_unread`'s ids and roles, and
    the request limits' part counts (`limits.PartCounts`)."""

    ids: list[Any]
    """Each value's `id` (`None` for a value that is not an object)."""
    roles: list[Any]
    plain: int
    """How many of the first values are plain messages (`plain_ids_roles`)."""
    totals: tuple[list[int], ...]
    """For each key of `limits.PART_LISTS`, the parts under it in the values up to each one (a running sum)."""
    most: tuple[list[int], ...]
    """Likewise, the most parts one value holds under it (a running maximum)."""

    def first(self, count: int) -> _Facts:
        """The facts of the first `count` values."""
        return _Facts(
            self.ids[:count],
            self.roles[:count],
            min(self.plain, count),
            tuple(sums[:count] for sums in self.totals),
            tuple(most[:count] for most in self.most),
        )

    def before(self, count: int) -> ReadBefore | None:
        """The ids and roles of the first `count` values, when every one of them is a plain message."""
        return ReadBefore(self.ids[:count], self.roles[:count]) if self.plain >= count else None

    def counted(self, count: int) -> PartCounts:
        """The parts of the first `count` values."""
        if not count:
            return PartCounts(0, (0,) * len(PART_LISTS), (0,) * len(PART_LISTS))
        return PartCounts(count, tuple(sums[count - 1] for sums in self.totals), tuple(m[count - 1] for m in self.most))

    def more(self, values: list[Any]) -> _Facts:
        """These facts, then those of `values`, the values that follow."""
        ids, roles, plain = list(self.ids), list(self.roles), self.plain
        found = plain_ids_roles(values)
        if found is not None:
            plain += len(values) if plain == len(ids) else 0
            ids += found[0]
            roles += found[1]
        else:  # not the common shape: value by value
            for value in values:
                if plain == len(ids) and plain_ids_roles([value]) is not None:
                    plain += 1
                is_object = type(value) is dict
                ids.append(_get(value, 'id') if is_object else None)
                roles.append(_get(value, 'role') if is_object else None)
        lengths = part_lengths(values) or [[] for _ in PART_LISTS]
        totals = tuple(
            [*sums, *_running(counts or repeat(0, len(values)), sums, operator.add)]
            for sums, counts in zip(self.totals, lengths, strict=True)
        )
        most = tuple(
            [*highest, *_running(counts or repeat(0, len(values)), highest, max)]
            for highest, counts in zip(self.most, lengths, strict=True)
        )
        return _Facts(ids, roles, plain, totals, most)


_get: Callable[[Any, str], Any] = dict[Any, Any].get


def _running(counts: Iterable[int], before: list[int], step: Callable[[int, int], int]) -> list[int]:
    """The running sum (`step=operator.add`) or maximum (`step=max`) of `counts`, going on from the end of
    `before`."""
    return list(accumulate(counts, step, initial=before[-1] if before else 0))[1:]


_NO_FACTS = _Facts([], [], 0, tuple([] for _ in PART_LISTS), tuple([] for _ in PART_LISTS))


@dataclass(frozen=True)
class Reused:
    """What a body decoded by `BodyMemo.decode_reusing` shares with the thread's last body: the first `count` values
    of its `messages` array, taken as decoded then, with what the server's passes found in them then."""

    array: list[Any]
    """The body's `messages` array, as decoded."""
    count: int
    chars: int
    """The characters of the body's text those values take."""
    before: ReadBefore | None
    """Their ids and roles, when every one is a plain message (`parse_unread` takes them as they are)."""
    counted: PartCounts
    """Their parts (the request limits count only the rest)."""


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
        return self.decode_reusing(body, principal)[0]

    def decode_reusing(self, body: bytes, principal: str) -> tuple[dict[str, Any], Reused | None]:
        """`decode`, and what the body shares with the thread's last one (`None`: nothing, or not decoded here)."""
        try:
            text = body.decode('utf-8')
        except UnicodeDecodeError:
            return json_object(body, nesting_checked=False), None
        try:
            return self._decode(text, principal)
        except (_Fallback, ValueError, StopIteration, RecursionError, IndexError):
            return json_object(text, nesting_checked=False), None

    def _decode(self, text: str, principal: str) -> tuple[dict[str, Any], Reused | None]:
        index = _space(text, 0)
        if text[index : index + 1] != '{':
            raise _Fallback
        value: dict[str, Any] = {}
        reused: Reused | None = None
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
                    value[key], index, reused = self._messages(text, index + 1, (principal, thread))
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
        # A key given twice keeps its last value, as `json.loads` does: the array reused is then not the value.
        return value, reused if reused is not None and value.get('messages') is reused.array else None

    def _messages(self, text: str, start: int, key: tuple[str, str]) -> tuple[list[Any], int, Reused | None]:
        """The array whose text begins at `start` (after its `[`), where its text ends (after its `]`), and what of
        it the last body had."""
        with self._lock:
            last = self._arrays.get(key)
        values: list[Any] = []
        ends: list[int] = []
        facts = _NO_FACTS
        if last is not None:
            low = len(last.ends)
            # Every value the last body had, when its whole text is here and another value follows (`,` ends the
            # last of them as its `]` did); else the most whole values whose text, and the character after it,
            # are the same here: found by halving, each try one comparison of text in C.
            if not (text.startswith(last.text, start) and text[_space(text, start + len(last.text))] == ','):
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
            facts = last.facts.first(low) if low < len(last.ends) else last.facts
        reused = len(values)
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
        array = list(values)
        found = Reused(array, reused, ends[reused - 1] if reused else 0, facts.before(reused), facts.counted(reused))
        self._keep(key, _Array(text[start:index], values, ends, facts.more(values[reused:])))
        return array, index + 1, found if reused else None

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
