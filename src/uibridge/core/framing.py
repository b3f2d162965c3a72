r"""Frame data in the tags uibridge writes into prompt text, so that content can't break out of them.

Where a protocol or provider has no channel for something, it is said in prompt text and framed in a tag:
validation errors in `<validation_errors>`, a validator's message in `<retry_feedback>`, and so on.
`<system>` is the one *voice* tag: it means the application is speaking, and only uibridge renders it
(`_render_system`). The public functions take *data* tags only: the built-in `DataTag`s and tags an
extension registers with `register_tag`. A data tag's body can't open or close any framing tag, so a tool
result can't close your frame and your frame's content can't forge a `<system>` block.

What counts as a framing-tag spelling (each has its opener replaced by `&lt;`, and nothing else changes):

- An *opener*, an optional gap, an optional *slash* with an optional gap after it, a framing tag's name, and
  then a gap, a slash, a *closer* or the end of the text. So attributes (`<system role="x">`), self-closing
  forms (`<tool_result/>`) and tags cut off at the end of the text (`x </system`, which a wrapper's own `>`
  would complete) are all covered, while a longer name (`<systems>`, `<tool_result_x>`, `<system-prompt>`)
  is a different tag and stays as written, and so does a name followed by an opener (`<system<`).
- *Openers, slashes and closers* are `<`, `/` and `>` and every character a reader takes for one of them:
  each character Unicode's confusables data (UTS #39, version 18.0.0) gives one of the three as its
  prototype (`‹ ❮ ˂ ᐸ` read as `<`, `› ❯ ˃` as `>`, `∕ ⁄ ⧸ ╱ ノ` as `/`), the single angle brackets
  (`〈 ⟨ ❬` and their closing forms, to which UTS #39 gives a prototype of their own), and every character
  that folds (below) to one of these (`＜ ﹤ ≮ ／ ＞`). The table is generated once from that data
  (`uibridge.core.lookalikes`, written by `fixtures/core/generate_lookalikes.py`). So `‹∕retry_feedback>`,
  `<⁄system>`, `</system›` and `〈/system〉` are all escaped.
- A *gap* is whitespace as Python's `\s` and `str.isspace` see it (tabs, newlines, NBSP, U+2028, U+3000,
  NEL, the information separators `\x1c`-`\x1f` ...) or U+2800 BRAILLE PATTERN BLANK, which renders as an
  empty cell: anything a reader takes for a space. A gap inside a name splits it (`<sys tem>` is no tag).
- *Invisible characters and marks*: what follows the opener is read after removing, wherever they stand
  (before or after the slash, inside or after the name), every character that renders as nothing or is no
  text at all, and every combining mark. The first are Unicode's default-ignorable code points (soft
  hyphen, zero-width space/joiners, directional marks and isolates, word joiner, BOM, tag characters,
  variation selectors, the combining grapheme joiner, Hangul fillers, and the code points Unicode reserves
  as ignorable), every other format character (category Cf), and the C0 and C1 control characters and DEL
  that are not whitespace (`\x00`-`\x08`, `\x0e`-`\x1b`, `\x7f`-`\x84`, `\x86`-`\x9f`), derived from
  `unicodedata` when the module is imported (`uibridge.core.ignorable`). The marks (categories Mn, Mc, Me)
  attach to the character before them without making it another one to a reader: a mark on the opener or
  the slash leaves it what it was, and a name with marks on its letters is still the name. So
  `<sys\u200btem>`, `<\u200b/system>`, `<sys\u3164tem>`, `<\x00system>`, `</\u0338system>`,
  `<sy\u0301stem>` and `<system\u20dd>` are all escaped, and a name is never too long to be read:
  characters padding it out do not hide it.
- *Case and compatibility forms*: compatibility decomposition (NFKD) and full case folding, so `<SYSTEM>`,
  `<ſystem>` (long s), `<ｓｙｓｔｅｍ>` (full-width), `<systém>` (é is e and a mark) are all escaped. We fold
  generously on purpose: escaping an opener too many costs a reader little, while a spelling a model reads
  as `<system>` but we let through is a forged voice. Letters from other scripts that merely look Latin
  (Cyrillic `ѕ`) are not folded: UTS #39 serves here for the three delimiters only, whose look-alikes no
  tag name needs, while a confusable table for letters would fold words of other scripts into tag names.
- Only the opener changes: `<` or its look-alike becomes `&lt;`, which a reader takes for an escaped `<`
  whatever stood there. `&lt;system>` is inert, so escaping twice changes nothing, and every other
  character (`&`, `>`, a bare `<` in `a < b`, unregistered tags like `<div>`) stays byte for byte. Text
  that merely holds these characters (`1∕2`, braille, Korean with Hangul fillers, accented words, French
  `‹ guillemets ›` around a word that is no tag's name) has no tag in it and is left as written.

Matching is linear in the text. One compiled pattern, whose name alternation is a trie, settles every
ASCII spelling, so the cost per `<` is bounded by the longest name, not by how many tags are registered
(it compiles on first use after a registration, so registering many tags costs one compile). A guard in
front of the trie turns away, in a few character tests, every `<` not followed by a whole word that could
be a name, which is most of them in prose and all of them in near misses like `<syste<`. ASCII control
characters are read by the same pattern: where the plain trie fails, a second one that allows them between
the letters is tried, so prose never pays for them. Text with non-ASCII characters takes a second pass over
the remaining `<`s whose head holds a non-ASCII character or an ASCII control, and one pass for each
look-alike opener the text holds: each candidate (up to the next opener or closer) is folded as above, and
the name read from it is looked up in a set. Candidates never overlap, so these passes read each character
at most once more. Finding the look-alike openers costs one `str` search for each (no pattern scans for a
class of characters nearly as fast); in text whose characters are all Latin-1 they are ruled out at once.
"""

from __future__ import annotations

import functools
import html
import re
import threading
import unicodedata
import warnings
from typing import Literal, NewType, TypeAlias, get_args

from .errors import UserError
from .ignorable import IGNORABLE_RANGES, char_class, mark_ranges
from .lookalikes import GREATER_THAN, LESS_THAN, MARK_RANGES, MARKS_UNICODE_VERSION, SOLIDUS

__all__ = [
    'DataTag',
    'RegisteredTag',
    'UserError',
    'close_tag',
    'neutralize_tags',
    'open_tag',
    'register_tag',
    'wrap',
]


DataTag: TypeAlias = Literal[
    'tool_result',
    'assistant_thinking',
    'context',
    'context_diff',
    'validation_errors',
    'retry_feedback',
    'conversation_summary',
]
"""uibridge's own data tags, which say where content came from."""

RegisteredTag = NewType('RegisteredTag', str)
"""A data tag registered by an extension with `register_tag`."""

_VOICE_TAG = 'system'
_DATA_TAGS: frozenset[str] = frozenset(get_args(DataTag))
_NAME_RE = re.compile(r'[a-z][a-z0-9]*(?:_[a-z0-9]+)*')
_ATTR_NAME_RE = re.compile(r'[a-z_][a-z0-9_]*')
_MAX_NAME = 64

_IGNORABLE_RANGES = IGNORABLE_RANGES
# The combining marks, held for one Unicode version and derived again on a Python with another.
_MARK_RANGES = list(MARK_RANGES) if unicodedata.unidata_version == MARKS_UNICODE_VERSION else mark_ranges()
# A character that renders as an empty cell, like a space, yet is neither whitespace nor ignorable: read as a gap.
_BLANKS = '\u2800'  # BRAILLE PATTERN BLANK
# What the folding reads each character as, where that is not the character itself: nothing for the ignorable
# characters and the combining marks, the delimiter for each look-alike, a space for a blank, and `i` for
# dotless `ı`, as the first pass's case-insensitive classes (`_CASE_FOLDS`) read it (case folding keeps it
# apart). One table for `str.translate`: a regex class of these several hundred ranges, many beyond the BMP,
# tests each character against them one by one.
_READ_AS: dict[int, str | None] = {
    **dict.fromkeys(point for first, last in (*_IGNORABLE_RANGES, *_MARK_RANGES) for point in range(first, last + 1)),
    **str.maketrans(dict.fromkeys(LESS_THAN, '<') | dict.fromkeys(GREATER_THAN, '>') | dict.fromkeys(SOLIDUS, '/')),
    **str.maketrans(dict.fromkeys(_BLANKS, ' ') | {'\u0131': 'i'}),
}
_OPENERS = '<' + LESS_THAN
# The ASCII ones (C0 controls that are not whitespace, and DEL): the first pass reads them itself.
_ASCII_IGNORABLE = char_class([(first, min(last, 0x7F)) for first, last in _IGNORABLE_RANGES if first < 0x80])
# The first pass matches ASCII spellings case-insensitively without `re.IGNORECASE`: each letter of a name
# becomes a class of itself, its upper case and the non-ASCII letters that IGNORECASE also takes for it
# (Python's `re` has four: `İ` and `ı` for i, the Kelvin sign for k, `ſ` for s), so it matches exactly what
# IGNORECASE would, while each trie branch opens with a character class that `re` tests before entering it.
_CASE_FOLDS = {'i': '\u0130\u0131', 'k': '\u212a', 's': '\u017f'}
_NAME_CHARS = 'a-zA-Z0-9_' + ''.join(_CASE_FOLDS.values())
# After `<`: whitespace, then an optional `/` and more whitespace, all possessive, so a long run of spaces
# after a `<` is read once and never backtracked into.
_GAP = r'\s*+/?+\s*+'
# The same for a spelling with ASCII ignorable characters in it, which the folding would remove: they may
# stand anywhere in the gap, and `_SKIP` follows each letter of a name.
_SKIP = f'[{_ASCII_IGNORABLE}]*+'
_SKIPPING_GAP = f'[\\s{_ASCII_IGNORABLE}]*+/?+[\\s{_ASCII_IGNORABLE}]*+'
# A name is followed by whitespace, `/`, `>` or the end of the text.
_END = r'(?![^\s/>])'


class _TrieNode:
    __slots__ = ('children', 'terminal')

    def __init__(self) -> None:
        self.children: dict[str, _TrieNode] = {}
        self.terminal = False


def _spellings(char: str) -> str:
    """The characters IGNORECASE takes for `char` (a lowercase letter, digit or underscore of a name)."""
    return char + char.upper() + _CASE_FOLDS.get(char, '') if char.isalpha() else char


def _letter(char: str, skip: str) -> str:
    return (f'[{_spellings(char)}]' if char.isalpha() else re.escape(char)) + skip


def _trie_alternation(names: list[str], skip: str = '') -> str:
    """A regex alternation of `names` shaped as a trie, so matching branches by character, not by name.

    `skip` follows each letter: what may stand between the letters of a name (and after it).
    """
    root = _TrieNode()
    for name in names:
        node = root
        for char in name:
            node = node.children.setdefault(char, _TrieNode())
        node.terminal = True

    def render(node: _TrieNode) -> str:
        branches = [_letter(char, skip) + render(child) for char, child in sorted(node.children.items())]
        if not branches:
            return ''
        body = branches[0] if len(branches) == 1 else '(?:' + '|'.join(branches) + ')'
        if node.terminal:
            body = body + '?' if len(branches) > 1 else f'(?:{body})?'
        return body

    return render(root)


class _Matcher:
    """The names to escape and the pattern for them; replaced whole on registration, never mutated.

    The pattern compiles on first use, so registering many tags at import time costs one compile, not one
    per tag. Two threads may both compile it; they build the same pattern, so the race is harmless.
    """

    __slots__ = ('_pattern', 'names')

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self._pattern: re.Pattern[str] | None = None

    @property
    def ascii_pattern(self) -> re.Pattern[str]:
        pattern = self._pattern
        if pattern is None:
            pattern = re.compile(_ascii_pattern(self.names))
            self._pattern = pattern
        return pattern


def _ascii_pattern(names: frozenset[str]) -> str:
    """`<` (only it is replaced) when a gap, one of `names` and an `_END` follow.

    A guard runs first: possessive runs read the gap and the word after it, and what follows the word must
    be able to end a name. Most `<` that are no tag (`a < b.`, `<syste<`, `< <`, `<` and a long run of
    spaces) fail it within a few character tests, without entering the trie, whatever the number of
    registered names. The guard only turns away what the tries would turn away too: a name is a whole word
    of `_NAME_CHARS`, and the gap is whitespace and `/`; where an ASCII ignorable character stands in the
    gap or the word, the guard reads up to it and lets it through.

    Then two tries: the plain one, which settles every spelling without ASCII ignorable characters (all
    of them in prose), and, where it fails, one that skips those characters between the letters.
    """
    first = ''.join(sorted({_spellings(name[0]) for name in names}))
    guard = f'(?=[\\s/]*+[{first}{_ASCII_IGNORABLE}][{_NAME_CHARS}]*+(?![^\\s/>{_ASCII_IGNORABLE}]))'
    plain = f'(?={_GAP}{_trie_alternation(sorted(names))}{_END})'
    skipping = f'(?={_SKIPPING_GAP}{_trie_alternation(sorted(names), _SKIP)}{_END})'
    return f'<{guard}(?:{plain}|{skipping})'


# A tag-like candidate in text that holds non-ASCII characters: an opener (`<` or a look-alike of it) and
# everything up to the next character read as `<` or `>`. It is folded whole before it is read, so a
# full-width `／`, a mark or an ignorable character anywhere in it counts as what it stands for. Candidates
# never overlap (none holds an opener but its first character), so folding each one keeps the pass linear.
# Of the candidates `<` opens, only those whose head (up to the end of the name) holds a non-ASCII character
# or an ASCII ignorable one are read: any other head is ASCII, which the first pass already settled. (A head
# with ASCII ignorables only is settled by the first pass too, but one with both needs the folding.) The
# head is read as ASCII whitespace and slashes, then ASCII that can stand in a name, then the character
# that decides; classes of ASCII alone are tested fastest, and a non-ASCII space in the gap only makes one
# candidate more, which the folding then reads as the gap it is.
_WIDE_HEAD = f'(?=[\\t-\\r\\x1c-\\x20/]*+[!-.0-;=?-~]*+[{_ASCII_IGNORABLE}\\x80-\\U0010ffff])'
_WIDE_HEAD_RE = re.compile(_WIDE_HEAD)
_CANDIDATE_BODY = f'[^<>{re.escape(LESS_THAN + GREATER_THAN)}]*+'
_WIDE_CANDIDATE = re.compile(f'<{_WIDE_HEAD}{_CANDIDATE_BODY}')


@functools.cache
def _candidates_opened_by(opener: str) -> re.Pattern[str]:
    """The candidates a look-alike `opener` opens, one pattern each: a pattern that starts with one character
    finds it as fast as `str.find`, while one that starts with a class of them tests every character."""
    return re.compile(re.escape(opener) + _CANDIDATE_BODY)


# The tag shape, read on the folded candidate: the name, then the first character after it (if any).
_FOLDED_TAG = re.compile(r'\s*+(?:/\s*+)?([^\s/>]++)(.?)', re.DOTALL)

_lock = threading.Lock()
_registered: dict[str, RegisteredTag] = {}
_matcher = _Matcher(frozenset({_VOICE_TAG, *_DATA_TAGS}))
_voice_matcher = _Matcher(frozenset({_VOICE_TAG}))
_escaped_once = False


def _fold(text: str) -> str:
    """`text` as it reads: compatibility forms decomposed, case folded, invisible characters and marks removed,
    look-alikes of `<`, `>` and `/` read as those, blanks as a space."""
    return unicodedata.normalize('NFKD', unicodedata.normalize('NFKD', text).casefold()).translate(_READ_AS)


def _escape(text: str, matcher: _Matcher) -> str:
    if '<' in text:
        text = matcher.ascii_pattern.sub('&lt;', text)
        if text.isascii():
            return text
        return _escape_wide(text, matcher.names, after_lt=True)
    if text.isascii():
        return text
    return _escape_wide(text, matcher.names, after_lt=False)


def _escape_wide(text: str, names: frozenset[str], *, after_lt: bool) -> str:
    """The passes over text that holds non-ASCII characters, after the ASCII pass (which `after_lt` says ran)."""

    def escape(match: re.Match[str]) -> str:
        candidate, end = match.group(0), match.end()
        if candidate.isascii() and (end == len(text) or text[end] in '<>'):
            return candidate  # the ASCII pass already decided this one
        rest = candidate[1:]
        # A head of plain ASCII (what a look-alike often opens in prose: `a ‹ b`) reads as it is but for case.
        folded = _FOLDED_TAG.match(_fold(rest) if _WIDE_HEAD_RE.match(rest) else rest.lower())
        if folded is None or folded.group(1) not in names:
            return candidate
        # A name that runs to the end of the candidate must be followed by `>` or the end of the text; the
        # candidate stopped at one of those (or a look-alike) or at an opener, which ends no tag name.
        if not folded.group(2) and end < len(text) and text[end] in _OPENERS:
            return candidate
        return '&lt;' + candidate[1:]

    if after_lt:
        text = _WIDE_CANDIDATE.sub(escape, text)
    # One scan for each look-alike of `<` (no pattern finds a class of characters as fast); a character wider
    # than any in the text, which all of them are in Latin-1 text, is ruled out without one.
    for opener in LESS_THAN:
        if opener in text:
            text = _candidates_opened_by(opener).sub(escape, text)
    return text


def neutralize_tags(text: str) -> str:
    """Replace the `<` of every opening or closing framing tag in `text` with `&lt;`; leave the rest as written.

    That covers `<system>`, the built-in data tags and every registered tag, in any case, with whitespace
    around the `/`, with attributes, self-closing, or cut off at the end of the text, and spelled with
    invisible characters, combining marks or look-alikes of `<`, `>` and `/` (a look-alike that opens a tag is
    what becomes `&lt;`). Use it for untrusted text that will sit inside a framing tag without going through
    `wrap`.
    """
    global _escaped_once
    _escaped_once = True
    return _escape(text, _matcher)


def _check_data_tag(tag: str) -> str:
    if not isinstance(tag, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise UserError(f'Framing tags are strings; got {type(tag).__name__}.')
    if tag == _VOICE_TAG or _fold(tag) == _VOICE_TAG:
        raise UserError(
            "'system' is the application's voice tag, which only uibridge renders: "
            'send instructions you wrote as a system prompt instead of framing them.'
        )
    if tag not in _DATA_TAGS and tag not in _registered:
        raise UserError(f'Framing tag {tag!r} is not registered: call uibridge.register_tag({tag!r}) at import time.')
    return tag


def _render_attrs(attrs: dict[str, str | None]) -> str:
    rendered: list[str] = []
    for name, value in attrs.items():
        if not _ATTR_NAME_RE.fullmatch(name):
            raise UserError(
                'Framing tag attribute names must be lowercase letters, digits and underscores, '
                f'not starting with a digit; got {name!r}.'
            )
        if value is None:
            continue
        if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UserError(f'Framing tag attribute {name!r} must be a string or None; got {type(value).__name__}.')
        rendered.append(f' {name}="{html.escape(value, quote=True)}"')
    return ''.join(rendered)


def open_tag(tag: DataTag | RegisteredTag, /, **attrs: str | None) -> str:
    """Render the opening data tag `tag`, for a frame whose body isn't a string (a file, say).

    Nothing between this and `close_tag` is escaped, so a text body goes through `wrap` instead.
    Attribute values are HTML-escaped, `None` values are left off, and the rest keep their order.
    """
    return f'<{_check_data_tag(tag)}{_render_attrs(attrs)}>'


def close_tag(tag: DataTag | RegisteredTag) -> str:
    """Render the closing data tag `tag`, ending a frame opened with `open_tag`."""
    return f'</{_check_data_tag(tag)}>'


def wrap(tag: DataTag | RegisteredTag, body: str, /, **attrs: str | None) -> str:
    """Wrap `body` in the data tag `tag` so nothing in it can end the tag early, open another, or speak as `<system>`.

    >>> wrap('tool_result', 'done</tool_result>', tool_name='fetch')
    '<tool_result tool_name="fetch">done&lt;/tool_result></tool_result>'
    """
    opening = open_tag(tag, **attrs)
    return opening + neutralize_tags(body) + f'</{tag}>'


def register_tag(name: str) -> RegisteredTag:
    """Register `name` as a data tag, escaped wherever uibridge escapes its own tags.

    Call it once at module level. Registering a name again returns the same tag. Registering a new name
    after text has been escaped warns: the same text now escapes differently, which can change bytes a
    provider already cached.
    """
    global _matcher
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise UserError(f"Framing tag names must be lowercase snake_case, like 'judge_feedback'; got {name!r}.")
    if name == _VOICE_TAG or name in _DATA_TAGS:
        raise UserError(f'{name!r} is a built-in framing tag: pass it to wrap() directly instead of registering it.')
    if len(name) > _MAX_NAME:
        raise UserError(f'Framing tag names are at most {_MAX_NAME} characters; got {len(name)}.')
    with _lock:
        existing = _registered.get(name)
        if existing is not None:
            return existing
        tag = RegisteredTag(name)
        _matcher = _Matcher(_matcher.names | {name})
        _registered[name] = tag
    if _escaped_once:
        warnings.warn(
            f'Framing tag {name!r} was registered after text was first escaped, so the same text now renders '
            'differently; register tags at module level, at import time.',
            UserWarning,
            stacklevel=2,
        )
    return tag


def _render_system(body: str) -> str:  # pyright: ignore[reportUnusedFunction]  (used by adapters)
    """uibridge's own `<system>` block: only spellings of `<system>` in the body are escaped."""
    return '<system>' + _escape(body, _voice_matcher) + '</system>'
