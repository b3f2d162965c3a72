"""The characters that are no character of a tag to a reader, for `framing` to remove before it reads one.

One concept apart from the matcher that uses it: which code points a reader does not see (`IGNORABLE_RANGES`,
derived from Python's own Unicode data: held for Python 3.11's Unicode version, derived again at import on a
Python with another), which ones only mark the character before them (`mark_ranges`), and a regex character
class for either.
"""

from __future__ import annotations

import re
import unicodedata

# What is removed from a tag-like span before its name is read: every character that renders as nothing or
# is not text at all, derived from `unicodedata`.
#
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) is Other_Default_Ignorable_Code_Point +
# format characters (Cf) + Variation_Selector, minus White_Space, U+FFF9-FFFB, U+13430-1343F and the prepended
# concatenation marks. `unicodedata` has general categories but neither that property nor its two PropList
# inputs, so those two are written out below, from PropList.txt (Unicode 14.0, the version Python 3.11's
# `unicodedata` implements). The set used here is larger than Default_Ignorable_Code_Point: it keeps the Cf
# characters the property leaves out (prepended concatenation marks such as U+0600 ARABIC NUMBER SIGN, the
# interlinear annotation and Egyptian hieroglyph format controls), which belong in no tag name either, so
# removing them only escapes more; and it adds the controls (Cc: C0, DEL and C1). It leaves out whatever
# `str.isspace` calls whitespace (tab, newline, `\x1c`-`\x1f`, NEL ...): the matcher reads those as a gap.
_OTHER_DEFAULT_IGNORABLE = (
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ, AA
    (0x2065, 0x2065),  # reserved
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0xE0000, 0xE0000),  # reserved
    (0xE0002, 0xE001F),  # reserved
    (0xE0080, 0xE00FF),  # reserved
    (0xE01F0, 0xE0FFF),  # reserved
)
_VARIATION_SELECTORS = (
    (0x180B, 0x180D),  # MONGOLIAN FREE VARIATION SELECTOR ONE to THREE
    (0x180F, 0x180F),  # MONGOLIAN FREE VARIATION SELECTOR FOUR
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1 to -16
    (0xE0100, 0xE01EF),  # VARIATION SELECTOR-17 to -256
)
_CODE_SPACE = 0x110000
_ASSIGNED_PLANES = frozenset({0, 1, 2, 3, 14})
"""The planes that hold characters other than private use: planes 4-13 are unassigned and 15-16 private use
(category Co), so no control or format character can stand there. Skipping them saves most of the import
time (unassigned code points are not printable, so each would be read); a test checks the whole code space."""
_CONTROL_OR_FORMAT = re.compile('C[cf]')
_MARK = re.compile('M[nce]')


def _all_code_points() -> str:
    """Every code point, U+0000 to U+10FFFF, as one string (surrogates included), built without 1.1M `chr` calls.

    Each code point is four little-endian bytes of UTF-32: its low byte cycles through 0-255, its second byte
    steps once per 256 code points, its third once per plane.
    """
    raw = bytearray(4 * _CODE_SPACE)
    raw[0::4] = bytes(range(256)) * (_CODE_SPACE // 256)
    raw[1::4] = b''.join(bytes([byte]) * 256 for byte in range(256)) * (_CODE_SPACE // 65536)
    raw[2::4] = b''.join(bytes([plane]) * 65536 for plane in range(_CODE_SPACE // 65536))
    return raw.decode('utf-32-le', 'surrogatepass')


def _ignorable_ranges() -> list[tuple[int, int]]:
    """The code points removed before a name is read (see above), as sorted ranges of consecutive ones.

    Categories are read 1,024 code points at a time, as one string of two-letter codes in which `Cc` and
    `Cf` can only stand at even offsets (the second letter of a code is lowercase). A block that
    `str.isprintable` passes is skipped whole: no Cc or Cf character is printable.
    """
    points = set[int]()
    for first, last in (*_OTHER_DEFAULT_IGNORABLE, *_VARIATION_SELECTORS):
        points.update(range(first, last + 1))
    category = unicodedata.category
    everything = _all_code_points()
    for start in range(0, _CODE_SPACE, 1024):
        if (start >> 16) not in _ASSIGNED_PLANES:
            continue
        block = everything[start : start + 1024]
        if block.isprintable():
            continue
        categories = ''.join(map(category, block))
        if 'Cc' in categories or 'Cf' in categories:
            points.update(start + found.start() // 2 for found in _CONTROL_OR_FORMAT.finditer(categories))
    return _merged(sorted(point for point in points if not chr(point).isspace()))


def _merged(points: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as ranges of consecutive ones."""
    ranges: list[tuple[int, int]] = []
    for point in points:
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return ranges


def mark_ranges() -> list[tuple[int, int]]:
    """The combining marks (general categories Mn, Mc, Me) of this Python's `unicodedata`, as sorted ranges.

    Marks are printable, so unlike the ignorable characters no block can be skipped unread: this takes tens of
    milliseconds, which is why `uibridge.core.lookalikes` holds them for one Unicode version and `framing`
    calls this only on a Python with another.
    """
    category = unicodedata.category
    everything = _all_code_points()
    points: list[int] = []
    for start in range(0, _CODE_SPACE, 1024):
        if (start >> 16) not in _ASSIGNED_PLANES:
            continue
        categories = ''.join(map(category, everything[start : start + 1024]))
        points.extend(start + found.start() // 2 for found in _MARK.finditer(categories))
    return _merged(points)


def _escaped(point: int) -> str:
    return f'\\x{point:02x}' if point < 0x100 else f'\\u{point:04x}' if point < 0x10000 else f'\\U{point:08x}'


def char_class(ranges: list[tuple[int, int]]) -> str:
    """The body of a regex character class (without its brackets) holding exactly `ranges`."""
    return ''.join(
        _escaped(first) if first == last else f'{_escaped(first)}-{_escaped(last)}' for first, last in ranges
    )


IGNORABLE_UNICODE_VERSION = '14.0.0'
_HELD_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008),
    (0x000E, 0x001B),
    (0x007F, 0x0084),
    (0x0086, 0x009F),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""`_ignorable_ranges()` on Python 3.11's Unicode (a test derives it again): deriving them reads the categories of
every assigned plane, a noticeable part of a server process's start, and Python's Unicode version changes only
with Python."""

IGNORABLE_RANGES = (
    list(_HELD_RANGES) if unicodedata.unidata_version == IGNORABLE_UNICODE_VERSION else _ignorable_ranges()
)
"""Sorted ranges of consecutive code points (first, last), both ends included: held for one Unicode version,
derived again on a Python with another."""
