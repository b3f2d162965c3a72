r"""Frame data in the tags uibridge writes into prompt text, so that content can't break out of them.

Where a protocol or provider has no channel for something, it is said in prompt text and framed in a tag:
validation errors in `<validation_errors>`, a validator's message in `<retry_feedback>`, and so on.
`<system>` is the one *voice* tag: it means the application is speaking, and only uibridge renders it
(`_render_system`). The public functions take *data* tags only: the built-in `DataTag`s and tags an
extension registers with `register_tag`. A data tag's body can't open or close any framing tag, so a tool
result can't close your frame and your frame's content can't forge a `<system>` block.

What counts as a framing-tag spelling (each of these has its `<` escaped as `&lt;`, and nothing else changes):

- `<`, optional whitespace, an optional `/` with optional whitespace after it, a framing tag's name, and then
  whitespace, `/`, `>` or the end of the text. So attributes (`<system role="x">`), self-closing forms
  (`<tool_result/>`) and tags cut off at the end of the text (`x </system`, which a wrapper's own `>` would
  complete) are all covered, while a longer name (`<systems>`, `<tool_result_x>`, `<system-prompt>`) is a
  different tag and stays as written.
- *Whitespace* is Unicode whitespace as Python's `\s` and `str.isspace` see it (tabs, newlines, NBSP,
  U+2028, U+3000, NEL, the information separators `\x1c`-`\x1f` ...): anything a reader might take for a gap.
- *Ignorable characters*: what follows the `<` is read after removing every character that renders as
  nothing or is no text at all, wherever it stands (before or after the `/`, inside or after the name):
  Unicode's default-ignorable code points (soft hyphen, zero-width space/joiners, directional marks and
  isolates, word joiner, BOM, tag characters, variation selectors, the combining grapheme joiner, Hangul
  fillers, and the code points Unicode reserves as ignorable), every other format character (category Cf),
  and the C0 and C1 control characters and DEL that are not whitespace (`\x00`-`\x08`, `\x0e`-`\x1b`,
  `\x7f`-`\x84`, `\x86`-`\x9f`). The set is derived from `unicodedata` when the module is imported (see
  `uibridge.core.ignorable`). So `<sys\u200btem>`, `<\u200b/system>`, `<sys\u034ftem>`, `<system\ufe0f>`,
  `<sys\u3164tem>`, `<\x00system>`, `</\x01system>` and `<system\x7f>` are all escaped, and a name is
  never too long to be read: ignorable characters padding it out do not hide it.
- *Case and look-alikes*: after that, Unicode compatibility normalisation (NFKC) and full case folding. So
  `<SYSTEM>`, `<ſystem>` (long s), `<ｓｙｓｔｅｍ>` (full-width), `<／system>` and `<system＞` are all
  escaped. We fold generously on purpose: escaping a `<` too many costs a reader nothing, while a spelling
  a model reads as `<system>` but we let through is a forged voice. Letters from other scripts that merely
  look Latin (Cyrillic `ѕ`) are not folded: no Unicode normalisation relates them, and any confusable
  table would be a guess that changes with fonts.
- Only `<` is escaped, never another character, so a tag opened by a full-width `＜` or small-form `﹤` is
  left as written (escaping it would change a character that is not `<`). `&lt;system>` is already inert,
  so escaping twice changes nothing, and every other character (`&`, `>`, a bare `<` in `a < b`,
  unregistered tags like `<div>`) stays byte for byte.

Matching is linear in the text. One compiled pattern, whose name alternation is a trie, settles every
ASCII spelling, so the cost per `<` is bounded by the longest name, not by how many tags are registered
(it compiles on first use after a registration, so registering many tags costs one compile). A guard in
front of the trie turns away, in a few character tests, every `<` not followed by a whole word that could
be a name, which is most of them in prose and all of them in near misses like `<syste<`. ASCII control
characters are read by the same pattern: where the plain trie fails, a second one that allows them between
the letters is tried, so prose never pays for them. Text with non-ASCII characters takes a second pass over
the remaining `<`s whose head holds a non-ASCII character or an ASCII control: each such candidate (up to
the next `<` or `>`) is folded as above, and the name read from it is looked up in a set. Candidates never
overlap, so the second pass reads each character at most once more.
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
import warnings
from typing import Literal, NewType, TypeAlias, get_args

from .errors import UserError
from .ignorable import IGNORABLE_RANGES, char_class

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
_IGNORABLE = char_class(_IGNORABLE_RANGES)
_IGNORABLE_RE = re.compile(f'[{_IGNORABLE}]+')
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


# A tag-like candidate in text that holds non-ASCII characters: `<` and everything up to the next `<` or
# `>`. It is folded whole before it is read, so a full-width `／` or an ignorable character anywhere in it
# counts as what it stands for. Candidates never overlap, so folding each one keeps the pass linear. Only
# candidates whose head (up to the end of the name) holds a non-ASCII character or an ASCII ignorable one
# are read: any other head is ASCII apart from whitespace, which the first pass already settled. (A head
# with ASCII ignorables only is settled by the first pass too, but one with both needs the folding.)
_WIDE_CANDIDATE = re.compile(
    f'<(?=[\\s/]*+[^\\s/<>{_ASCII_IGNORABLE}\\x80-\\U0010ffff]*+[{_ASCII_IGNORABLE}\\x80-\\U0010ffff])[^<>]*+'
)
# The tag shape, read on the folded candidate: the name, then the first character after it (if any).
_FOLDED_TAG = re.compile(r'\s*+(?:/\s*+)?([^\s/>]++)(.?)', re.DOTALL)

_lock = threading.Lock()
_registered: dict[str, RegisteredTag] = {}
_matcher = _Matcher(frozenset({_VOICE_TAG, *_DATA_TAGS}))
_voice_matcher = _Matcher(frozenset({_VOICE_TAG}))
_escaped_once = False


def _fold(name: str) -> str:
    return unicodedata.normalize('NFKC', _IGNORABLE_RE.sub('', name)).casefold()


def _escape(text: str, matcher: _Matcher) -> str:
    if '<' not in text:
        return text
    text = matcher.ascii_pattern.sub('&lt;', text)
    if text.isascii():
        return text
    names = matcher.names

    def escape_wide(match: re.Match[str]) -> str:
        candidate = match.group(0)
        if candidate.isascii():
            return candidate  # the ASCII pass already decided this one
        folded = _FOLDED_TAG.match(_fold(candidate[1:]))
        if folded is None or folded.group(1) not in names:
            return candidate
        # A name that runs to the end of the candidate must be followed by `>` or the end of the text; the
        # candidate stopped at one of those or at a `<`, which ends no tag name.
        if not folded.group(2) and text.startswith('<', match.end()):
            return candidate
        return '&lt;' + candidate[1:]

    return _WIDE_CANDIDATE.sub(escape_wide, text)


def neutralize_tags(text: str) -> str:
    """Escape the `<` of every opening or closing framing tag in `text` as `&lt;`; leave the rest as written.

    That covers `<system>`, the built-in data tags and every registered tag, in any case, with whitespace
    around the `/`, with attributes, self-closing, or cut off at the end of the text. Use it for untrusted
    text that will sit inside a framing tag without going through `wrap`.
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
