"""What the framing tests share: the rule as the documentation states it, a tag registry for one test, and
a count of the folding's work.

The checker (`framing_tags`) is written independently of the module's patterns: it reads a text character
by character, the slow and obvious way, where the module compiles patterns and folds candidates.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from uibridge.core import framing, lookalikes


@contextmanager
def isolated_registry() -> Iterator[None]:
    """Register tags for one test only, and start with nothing escaped yet."""
    saved = framing._registered, framing._matcher, framing._escaped_once
    framing._registered = dict(saved[0])
    framing._escaped_once = False
    try:
        yield
    finally:
        framing._registered, framing._matcher, framing._escaped_once = saved


def counting_folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every candidate the folding pass folds, from now on: work counted, not timed."""
    lengths: list[int] = []
    fold = framing._fold

    def counting(text: str) -> str:
        lengths.append(len(text))
        return fold(text)

    monkeypatch.setattr(framing, '_fold', counting)
    return lengths


# Default_Ignorable_Code_Point as DerivedCoreProperties.txt of Unicode 14.0 (the version of Python 3.11's
# `unicodedata`) lists it, adjacent entries merged: the checker's own statement of the documented rule,
# independent of how the module derives its set.
DEFAULT_IGNORABLE_14 = (
    *((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5)),
    *((0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164)),
    *((0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3)),
    *((0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)),
)
_DEFAULT_IGNORABLE_POINTS = frozenset(point for first, last in DEFAULT_IGNORABLE_14 for point in range(first, last + 1))


def ignorable(char: str) -> bool:
    """The documented rule: a default-ignorable code point, a format character or a control, but no whitespace."""
    if char.isspace():
        return False
    return ord(char) in _DEFAULT_IGNORABLE_POINTS or unicodedata.category(char) in ('Cf', 'Cc')


def is_mark(char: str) -> bool:
    return unicodedata.category(char) in ('Mn', 'Mc', 'Me')


# The look-alikes are data (generated from Unicode's confusables, checked in test_framing_lookalikes.py); how
# they are read is the checker's own.
OPENERS = '<' + lookalikes.LESS_THAN
_READ_AS = {
    **dict.fromkeys(lookalikes.LESS_THAN, '<'),
    **dict.fromkeys(lookalikes.GREATER_THAN, '>'),
    **dict.fromkeys(lookalikes.SOLIDUS, '/'),
    '\u2800': ' ',  # braille pattern blank: a gap
    '\u0131': 'i',  # dotless i, as `re` matches it case-insensitively
}


@functools.cache
def read_as(char: str) -> str:
    """What one character reads as: decomposed (NFKD), case folded, invisible characters and marks dropped,
    look-alikes of `<`, `>`, `/` and the blank read as those."""
    decomposed = unicodedata.normalize('NFKD', unicodedata.normalize('NFKD', char).casefold())
    return ''.join(_READ_AS.get(c, c) for c in decomposed if not ignorable(c) and not is_mark(c))


def framing_tags(text: str, names: frozenset[str] | set[str]) -> list[tuple[int, str, bool]]:
    """Every framing-tag spelling in `text`: (index of its `<` or look-alike, name, is closing).

    Written from the documented rule, not from the module's patterns: for each `<` or look-alike of it, read
    the rest of the text character by character (`read_as`), then read whitespace, an optional `/`,
    whitespace, and a name up to the next whitespace, `/`, `<` or `>`; it is a tag if the name is known and
    is not followed by a `<`.
    """
    found: list[tuple[int, str, bool]] = []
    for i, char in enumerate(text):
        if char not in OPENERS:
            continue
        rest = ''.join(map(read_as, text[i + 1 :]))
        j = 0
        while j < len(rest) and rest[j].isspace():
            j += 1
        closing = j < len(rest) and rest[j] == '/'
        if closing:
            j += 1
            while j < len(rest) and rest[j].isspace():
                j += 1
        k = j
        while k < len(rest) and not rest[k].isspace() and rest[k] not in '/<>':
            k += 1
        if rest[j:k] in names and (k == len(rest) or rest[k] != '<'):
            found.append((i, rest[j:k], closing))
    return found


def only_lt_escaped(before: str, after: str) -> bool:
    """`after` is `before` with some `<` characters (or look-alikes of it) replaced by `&lt;`, and nothing else
    changed."""
    i = j = 0
    while i < len(before):
        if before[i] in OPENERS and after.startswith('&lt;', j):
            i, j = i + 1, j + 4
        elif j < len(after) and before[i] == after[j]:
            i, j = i + 1, j + 1
        else:
            return False
    return j == len(after)
