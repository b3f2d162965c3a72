"""The framing rules (`wrap`, `neutralize_tags`, the tag registry), the Unicode decisions documented in
`uibridge.core.framing`, and speed."""

from __future__ import annotations

import functools
import itertools
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable, Iterator
from re import _constants as sre_constants  # pyright: ignore[reportPrivateImportUsage]
from re import _parser as sre_parse  # pyright: ignore[reportPrivateImportUsage]
from typing import Any, get_args

import pytest
from framing_support import (
    OPENERS,
    counting_folds,
    framing_tags,
    ignorable,
    is_mark,
    isolated_registry,
    only_lt_escaped,
    read_as,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import background
from uibridge import DataTag, UserError, close_tag, neutralize_tags, open_tag, register_tag, wrap
from uibridge.core import framing

DATA_TAGS: tuple[str, ...] = get_args(DataTag)
BUILTIN = ('system', *DATA_TAGS)


@pytest.fixture
def registry() -> Iterator[None]:
    with isolated_registry():
        yield


# ---------------------------------------------------------------- the independent checker (framing_support.py)


def test_the_checker_itself() -> None:
    names = frozenset(BUILTIN)
    assert framing_tags('a <system> b </ Tool_Result\n>', names) == [(2, 'system', False), (13, 'tool_result', True)]
    assert framing_tags('<systems> <system-x> <div> &lt;system> <system<', names) == []
    assert framing_tags('<\x00sys\u034ftem\ufe0f> <sys\ttem>', names) == [(0, 'system', False)]
    assert framing_tags('\u2039\u2215sy\u0301stem\u203a <\u2800/\u2800system> \u2039sys tem>', names) == [
        (0, 'system', True),
        (11, 'system', True),
    ]
    assert ignorable('\x00') and ignorable('\u3164') and ignorable('\U000e0100') and ignorable('\U000e0fff')
    assert not ignorable('\t') and not ignorable('\x85') and not ignorable('a') and not ignorable('\u0301')
    assert is_mark('\u0301') and is_mark('\u20dd') and is_mark('\u0903') and not is_mark('a')
    assert read_as('\u00e9') == 'e' and read_as('\uff0f') == '/' and read_as('\u226e') == '<'
    assert read_as('\u200b') == '' and read_as('\u2800') == ' ' and read_as('\u0130') == 'i'
    assert only_lt_escaped('<a><b>', '&lt;a><b>')
    assert only_lt_escaped('\u2039a', '&lt;a')
    assert not only_lt_escaped('<a>', '&lt;a&gt;')
    assert not only_lt_escaped('a&b', 'a&amp;b')


# ------------------------------------------------------------------------------------------- the rules


@pytest.mark.parametrize('name', BUILTIN)
@pytest.mark.parametrize(
    'spelling',
    [
        '<{}>',
        '</{}>',
        '<{} >',
        '< {}>',
        '< / {} >',
        '</\t{}\n>',
        '<\n/\n{}\n>',
        '<{} a="b" c=d>',
        '<{}/>',
        '<{} />',
        '</{}/>',
        'x <{}',
        'x </{}',
        'x </ {}',
        'x </{}\n',
        'x </{} ',
    ],
)
def test_every_spelling_of_every_builtin_tag_is_escaped(name: str, spelling: str) -> None:
    for cased in (name, name.upper(), name.title(), ''.join(c.upper() if i % 2 else c for i, c in enumerate(name))):
        text = spelling.format(cased)
        expected = text.replace('<', '&lt;', 1)
        assert neutralize_tags(text) == expected
        assert neutralize_tags(f'before {text} after') == f'before {expected} after'


@pytest.mark.parametrize(
    'text',
    [
        '<systems>',
        '<system-prompt>',
        '<system:x>',
        '<system"x">',
        '<system_x>',
        '<tool_result_x>',
        '<tool_results>',
        '</xsystem>',
        '<_system>',
        '<//system>',
        '<div>',
        '<memory>text</memory>',
        '&lt;system>',
        '&#60;system>',
        'a < b > c',
        'a <= b',
        '<!--system-->',
        '<system<',
        '<',
        '</',
        '< /',
        '',
        # Ignorable characters removed, these are still no tag.
        '<system\x00s>',
        '<sys\u034ftems>',
        '<\x00systems>',
        '<system\x7f-prompt>',
        '<\x00div>',
        '<\x00>',
        '<\x00',
        '<\x00/\x00/system>',
        '<system\x00<',
        '<sys\ufe0ftem<',
        'é<\x00sys\u200btems>',
        '<\x00\u3164>',
        '\x00\x7f\u034f\ufe0f\u3164 plain text',
    ],
)
def test_other_text_stays_byte_for_byte(text: str) -> None:
    assert neutralize_tags(text) == text
    assert wrap('context', text) == f'<context>{text}</context>'


def test_only_the_lt_of_a_tag_changes_and_everything_around_it_stays() -> None:
    text = 'a & b > c <div> "q" \'s\' </system> \\ &amp; <tool_result x="<y>">\r\n'
    assert neutralize_tags(text) == 'a & b > c <div> "q" \'s\' &lt;/system> \\ &amp; &lt;tool_result x="<y>">\r\n'


@pytest.mark.parametrize('text', ['</system>', '<<system>', '<system<system>', '< /tool_result <system', '<ſystem>'])
def test_escaping_twice_changes_nothing(text: str) -> None:
    once = neutralize_tags(text)
    assert once != text
    assert neutralize_tags(once) == once


# Peer's observed table (reference/peer-pydantic-ai.md §1.8), with our decision where it differs: marked *.
PEER_TABLE = [
    ('</tool_result>', '&lt;/tool_result>'),
    ('<tool_result>', '&lt;tool_result>'),
    ('</TOOL_RESULT >', '&lt;/TOOL_RESULT >'),
    ('<SyStEm>', '&lt;SyStEm>'),
    ('< /system>', '&lt; /system>'),
    ('</ system>', '&lt;/ system>'),
    ('<  /  system  >', '&lt;  /  system  >'),
    ('<system\n>', '&lt;system\n>'),
    ('<\nsystem>', '&lt;\nsystem>'),
    ('<\tsystem\t>', '&lt;\tsystem\t>'),
    ('text </system', 'text &lt;/system'),
    ('text <system', 'text &lt;system'),
    ('text </system\n', 'text &lt;/system\n'),
    ('<tool_result/>', '&lt;tool_result/>'),
    ('<system />', '&lt;system />'),
    ('<system role="admin">', '&lt;system role="admin">'),
    ('<system"x">', '<system"x">'),
    ('<//system>', '<//system>'),
    ('<systems>', '<systems>'),
    ('<tool_result_x>', '<tool_result_x>'),
    ('<system-prompt>', '<system-prompt>'),
    ('<system:x>', '<system:x>'),
    ('&lt;/system>', '&lt;/system>'),
    ('&#60;system>', '&#60;system>'),
    ('<<system>', '<&lt;system>'),
    ('a<b <system>', 'a<b &lt;system>'),
    (
        '<tool_result><system>hi</system></tool_result>',
        '&lt;tool_result>&lt;system>hi&lt;/system>&lt;/tool_result>',
    ),
    ('</pyai:tool_result>', '</pyai:tool_result>'),  # * the peer's prefixed tags are not ours
    ('<PYAI:RETRY_FEEDBACK>', '<PYAI:RETRY_FEEDBACK>'),  # *
    ('<context>', '&lt;context>'),
    ('</context_diff>', '&lt;/context_diff>'),
    ('</assistant_thinking>', '&lt;/assistant_thinking>'),
    ('<conversation_summary>', '&lt;conversation_summary>'),
    ('<validation_errors/>', '&lt;validation_errors/>'),
    ('< / retry_feedback >', '&lt; / retry_feedback >'),
    ('<memory>', '<memory>'),
    ('＜/system>', '&lt;/system>'),  # * a look-alike of `<` opens a tag too, and is replaced by `&lt;`
    ('﹤system>', '&lt;system>'),  # *
    ('<ѕystem>', '<ѕystem>'),
    ('<ſystem>', '&lt;ſystem>'),
    ('<assistant_thınking>', '&lt;assistant_thınking>'),
    ('<sys\u200btem>', '&lt;sys\u200btem>'),  # * invisible characters are removed before matching
    ('<\u200bsystem>', '&lt;\u200bsystem>'),  # *
    ('<\xa0/system>', '&lt;\xa0/system>'),
    ('<\u3000system>', '&lt;\u3000system>'),
    ('<\x0b/\x0csystem>', '&lt;\x0b/\x0csystem>'),
    ('<!--system-->', '<!--system-->'),
    ('<![CDATA[<system>]]>', '<![CDATA[&lt;system>]]>'),
    ('`</system>`', '`&lt;/system>`'),
    ('</system></system></system>', '&lt;/system>&lt;/system>&lt;/system>'),
    ('<assistant_thinKing>', '&lt;assistant_thinKing>'),
    ('</assistant_thİnking>', '&lt;/assistant_thİnking>'),
    ('<ſyſtem>', '&lt;ſyſtem>'),
    ('<SYSTEM\u2028>', '&lt;SYSTEM\u2028>'),
    ('<system\x85>', '&lt;system\x85>'),
    ('<system\x1c>', '&lt;system\x1c>'),
    ('<          system>', '&lt;          system>'),
]


@pytest.mark.parametrize(('text', 'expected'), PEER_TABLE)
def test_peer_table(text: str, expected: str) -> None:
    assert neutralize_tags(text) == expected
    assert neutralize_tags(expected) == expected


def test_peer_table_registered_rows(registry: None) -> None:
    register_tag('judge_feedback')
    assert neutralize_tags('</judge_feedback>') == '&lt;/judge_feedback>'
    assert neutralize_tags('<JUDGE_FEEDBACK x=1>') == '&lt;JUDGE_FEEDBACK x=1>'


# ------------------------------------------------------------------------ the documented Unicode decisions


@pytest.mark.parametrize(
    'text',
    [
        '<ſystem>',  # long s casefolds to s
        '<ｓｙｓｔｅｍ>',  # full-width letters: NFKC
        '</ＳＹＳＴＥＭ>',
        '<ｔｏｏｌ＿ｒｅｓｕｌｔ>',
        '<sys\u200btem>',  # zero-width space inside the name
        '<sy\u00adstem>',  # soft hyphen
        '<system\u2060>',  # word joiner after the name
        '<\ufeffsystem>',  # BOM before the name
        '<\u200b/system>',  # before the slash
        '</\u200dsystem>',  # ZWJ after the slash
        '< \u200b/ system>',  # invisible characters among the spaces
        'é< / \u2060system x=1>',
        '<\xa0\u200bsystem>',
        '<sys\U000e0041tem>',  # a tag character
        '<sys' + '\u200b' * 200 + 'tem>',  # padding does not make the name too long to read
        '<／system>',  # full-width solidus reads as /
        '<system＞',  # full-width > ends the name
        '＜system>',  # full-width and small < open one
        '﹤/system>',
        '<\xa0system>',  # NBSP is whitespace
        '<system\xa0>',
        '<\u2028/system>',  # LINE SEPARATOR
        '<system\u2029>',
        '<\x1csystem\x1f>',  # information separators are whitespace to Python
        '<\x85system>',  # NEL
        '<\u3000/\u3000system>',
        'é </ſystem',  # truncated, non-ASCII
        '<K_tag>'.replace('K_tag', 'conversation_summary'.replace('s', 'ſ')),
        '<valı\u200bdation_errors>',  # dotless ı reads as i, as IGNORECASE reads it, where the folding decides
    ],
)
def test_documented_folding_and_whitespace_decisions_escape(text: str) -> None:
    out = neutralize_tags(text)
    at = next(i for i, char in enumerate(text) if char in OPENERS)
    assert out == text[:at] + '&lt;' + text[at + 1 :]
    assert neutralize_tags(out) == out


@pytest.mark.parametrize(
    'text',
    [
        '<ѕystem>',  # Cyrillic dze: looks Latin, no normalisation relates it
        '<ѕуѕтем>',
        '<ꜱʏꜱᴛᴇᴍ>',  # small capitals are letters of their own
        '<system\u200bs>',  # with the invisible character removed this is `systems`
        '<ſystems>',
        '<ſystem-prompt>',
        '<ſystem<',
        '<sys tem>',
        'é<systems>',
    ],
)
def test_documented_decisions_leave_these_alone(text: str) -> None:
    assert neutralize_tags(text) == text


def test_the_wide_pass_agrees_with_the_ascii_pass_next_to_non_ascii_text() -> None:
    assert neutralize_tags('é<system>é</systems>é<tool_result/>') == 'é&lt;system>é</systems>é&lt;tool_result/>'


# ------------------------------------------------------------------------------------ ignorable characters

# One of each kind of ignorable character: zero-width, combining grapheme joiner, variation selectors,
# Hangul filler, C0 control, DEL, C1 control, tag character.
_IGNORABLES = ['\u200b', '\u034f', '\ufe0f', '\U000e0100', '\u3164', '\x00', '\x7f', '\x9f', '\U000e0041']


@functools.cache
def ignorable_chars() -> str:
    """Every ignorable character by the checker's rule, in code point order."""
    return ''.join(char for char in map(chr, range(0x110000)) if ignorable(char))


def test_the_module_removes_exactly_the_documented_ignorable_characters_and_the_marks() -> None:
    derived = ''.join(chr(point) for first, last in framing._IGNORABLE_RANGES for point in range(first, last + 1))
    assert derived == ignorable_chars()
    # Maximal runs, in order: consecutive code points make one range.
    for ranges in (framing._IGNORABLE_RANGES, framing._MARK_RANGES):
        assert all(first <= last < following - 1 for (first, last), (following, _) in itertools.pairwise(ranges))
    # The folding removes exactly them and the combining marks of this Python's Unicode (the marks held for
    # one Unicode version are this one's), from all of the code space.
    removed = {point for point, read in framing._READ_AS.items() if read is None}
    assert removed == {point for point in range(0x110000) if ignorable(chr(point)) or is_mark(chr(point))}


@pytest.mark.parametrize(
    'text',
    ['<sys\u034ftem>', '<system\ufe0f>', '<\x00system>', '<sys\u3164tem>'],
    ids=['combining-grapheme-joiner', 'variation-selector', 'nul', 'hangul-filler'],
)
def test_the_issues_examples_are_escaped_in_feedback_and_in_the_system_block(text: str) -> None:
    escaped = text.replace('<', '&lt;', 1)
    assert neutralize_tags(text) == escaped
    assert wrap('retry_feedback', f'bad: {text}') == f'<retry_feedback>bad: {escaped}</retry_feedback>'
    assert framing._render_system(text) == f'<system>{escaped}</system>'


@pytest.mark.parametrize(
    'char',
    [
        '\u034f',  # combining grapheme joiner
        *('\u180b', '\u180f', '\ufe00', '\ufe0f', '\U000e0100', '\U000e01ef'),  # variation selectors
        *('\u115f', '\u1160', '\u3164', '\uffa0'),  # Hangul fillers
        *('\u17b4', '\u17b5'),  # Khmer inherent vowels (default-ignorable)
        *('\u2065', '\ufff0', '\ufff8', '\U000e0000', '\U000e0002', '\U000e0080', '\U000e0fff'),  # reserved ones
        *('\x00', '\x01', '\x08', '\x0e', '\x1b', '\x7f'),  # C0 controls that are not whitespace, DEL
        *('\x80', '\x84', '\x86', '\x9f'),  # C1 controls
        *('\u00ad', '\u200b', '\u2060', '\ufeff', '\U000e0001', '\U000e0041'),  # format characters as before
        *('\u0600', '\u06dd', '\U000110bd', '\U00013430', '\U0001bca0', '\U0001d173'),  # and all other Cf
    ],
    ids=repr,
)
def test_each_kind_of_ignorable_character_is_removed_before_the_name_is_read(char: str) -> None:
    templates = [
        '<{c}system>',
        '<sys{c}tem>',
        '<system{c}>',
        '</{c}system>',
        '<{c}/system>',
        '<{c} / {c}system{c} x="1">',
        '<tool{c}_result/>',
        '</TOOL_{c}RESULT',
        '<\u200b{c}system>',  # with a non-ASCII ignorable in the same head
        '<{c}sys\u200btem>',
    ]
    for template in templates:
        for times in (1, 3):
            text = template.format(c=char * times)
            for before in ('', 'é '):  # all-ASCII text (if the character is) and text with a wide character
                assert neutralize_tags(before + text) == before + text.replace('<', '&lt;', 1), (before, text)


def test_every_ignorable_character_anywhere_inside_a_tag_is_removed(registry: None) -> None:
    register_tag('judge_feedback')
    tags = ['<system>', '</system>', '< / tool_result >', '</judge_feedback/>']
    missed: list[str] = []
    for char in ignorable_chars():
        for tag in tags:
            for at in range(1, len(tag)):
                text = tag[:at] + char + tag[at:]
                if neutralize_tags(text) != '&lt;' + text[1:]:
                    missed.append(text)
        if char.isascii():  # the same in text that holds a non-ASCII character elsewhere
            for text in (f'<{char}system>', f'</sys{char}tem>'):
                if neutralize_tags('é' + text) != 'é&lt;' + text[1:]:
                    missed.append('é' + text)
    assert missed == [], missed[:20]


@pytest.mark.parametrize('char', ['\t', '\n', '\x0b', '\x0c', '\r', '\x1c', '\x1d', '\x1e', '\x1f', '\x85'], ids=repr)
def test_whitespace_controls_stay_gaps(char: str) -> None:
    assert neutralize_tags(f'<{char}/{char}system{char}>') == f'&lt;{char}/{char}system{char}>'
    assert neutralize_tags(f'<sys{char}tem>') == f'<sys{char}tem>'
    assert neutralize_tags(f'é<sys{char}tem>') == f'é<sys{char}tem>'


@pytest.mark.parametrize(
    'make',
    [
        lambda n: 'é<' + '\u034f' * n,
        lambda n: 'é' + '<\x00' * n,
        lambda n: 'é' + '<\x00sys\ufe0ftem ' * n,
        lambda n: '<\x00' * n + 'é',
        lambda n: 'é<' + '\x00\u200b' * n,
        lambda n: 'é' + '< \x00/ \u3164' * n,
    ],
    ids=['cgj-run', 'lt-nul-pairs', 'tags', 'nul-pairs-then-wide', 'mixed-run', 'gaps'],
)
def test_the_folding_pass_reads_each_character_at_most_once(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[int], str]
) -> None:
    # Work counted, not timed: the candidates folded never overlap, so together they are no longer than the
    # text (all-ASCII candidates, `<\x00` here, the first pass settled and are not folded at all).
    lengths = counting_folds(monkeypatch)
    text = make(50_000)
    neutralize_tags(text)
    assert sum(lengths) <= len(text)


def test_ascii_text_with_controls_is_settled_without_folding(monkeypatch: pytest.MonkeyPatch) -> None:
    lengths = counting_folds(monkeypatch)
    text = '<\x00system> </sys\x7ftem x <sys\x01tems> <\x1b/\x1btool_result/>'
    escaped = '&lt;\x00system> &lt;/sys\x7ftem x <sys\x01tems> &lt;\x1b/\x1btool_result/>'
    assert neutralize_tags(text * 1000) == escaped * 1000
    assert lengths == []


@settings(deadline=None)
@given(
    # A letter read as a slash or `>` (katakana NO, Canadian syllabics PO) ends the name before it instead:
    # `<contextノ_diff>` reads as `<context/`, a tag.
    letter=st.characters(categories=('Lu', 'Ll', 'Lt', 'Lm', 'Lo')).filter(
        lambda c: not ignorable(c) and read_as(c) not in ('/', '>')
    ),
    name=st.sampled_from(BUILTIN),
    data=st.data(),
)
def test_property_a_letter_that_is_not_ignorable_makes_another_name(
    letter: str, name: str, data: st.DataObject
) -> None:
    at = data.draw(st.integers(1, len(name) - 1))
    spelled = name[:at] + letter + name[at:]
    for text in (f'<{spelled}>', f'</{spelled}>', f'é< / {spelled} x=1', f'x <{spelled}'):
        assert neutralize_tags(text) == text


@settings(deadline=None)
@given(
    text=st.lists(
        st.one_of(st.characters(exclude_characters='<'), st.sampled_from([*_IGNORABLES, '<1', '< ='])), max_size=40
    ).map(''.join)
)
def test_property_text_without_a_tag_is_unchanged_byte_for_byte(text: str) -> None:
    # Every `<` here is followed by a digit or by a space and `=`, which no tag name starts with.
    assert neutralize_tags(text) == text


# ------------------------------------------------------------------------------ attributes and tag names


def test_attribute_values_are_html_escaped_none_dropped_and_order_kept() -> None:
    assert wrap('tool_result', 'x', a='1', b=None, c='<"&\'>') == (
        '<tool_result a="1" c="&lt;&quot;&amp;&#x27;&gt;">x</tool_result>'
    )
    assert open_tag('context', z='1', a='2', m=None, b='3') == '<context z="1" a="2" b="3">'
    assert open_tag('context', a='2', z='1') == '<context a="2" z="1">'
    assert open_tag('context', v='') == '<context v="">'
    # The same call renders the same bytes.
    assert wrap('context', 'b', k='v', j='w') == wrap('context', 'b', k='v', j='w')


@pytest.mark.parametrize('name', ['a', '_ref', 'a__b', 'tool_name', 'x9', 'a_1_b', '_'])
def test_attribute_names_that_are_allowed(name: str) -> None:
    assert open_tag('context', **{name: 'v'}) == f'<context {name}="v">'


@pytest.mark.parametrize('name', ['Bad', 'A', '9lives', '1', 'a-b', 'a:b', 'a b', 'é', 'a"', 'a>', '', 'ａ'])
def test_attribute_names_that_are_refused(name: str) -> None:
    with pytest.raises(UserError, match='attribute names'):
        open_tag('context', **{name: 'v'})
    with pytest.raises(UserError, match='attribute names'):
        wrap('context', 'body', **{name: 'v'})


def test_a_non_string_attribute_value_is_a_user_error() -> None:
    with pytest.raises(UserError, match='string or None'):
        open_tag('context', n=3)  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    'tag', ['System', 'SYSTEM', 'ſystem', 'ｓｙｓｔｅｍ', 'sys\u034ftem', '\x00system', 'system\ufe0f']
)
def test_spellings_of_system_are_refused_as_the_voice_tag(tag: str) -> None:
    with pytest.raises(UserError, match='voice tag'):
        wrap(tag, 'x')  # pyright: ignore[reportArgumentType]


def test_every_builtin_data_tag_renders() -> None:
    for tag in DATA_TAGS:
        assert wrap(tag, '</system>') == f'<{tag}>&lt;/system></{tag}>'  # pyright: ignore[reportArgumentType]
        assert open_tag(tag) == f'<{tag}>'  # pyright: ignore[reportArgumentType]
        assert close_tag(tag) == f'</{tag}>'  # pyright: ignore[reportArgumentType]


def test_a_non_string_tag_is_a_user_error() -> None:
    with pytest.raises(UserError):
        wrap(3, 'x')  # pyright: ignore[reportArgumentType]


# --------------------------------------------------------------------------------------------- register


@pytest.mark.parametrize('name', ['Bad', 'bad-name', 'a__b', '_a', 'a_', '9lives', '', 'a b', 'é', 'ａ', 'a' * 65])
def test_register_tag_refuses_names_that_are_not_lowercase_snake_case(registry: None, name: str) -> None:
    with pytest.raises(UserError):
        register_tag(name)
    assert name not in framing._registered


@pytest.mark.parametrize('name', BUILTIN)
def test_register_tag_refuses_builtin_names(registry: None, name: str) -> None:
    with pytest.raises(UserError, match='built-in'):
        register_tag(name)


def test_register_tag_returns_the_same_tag_again_and_neutralizes_it(registry: None) -> None:
    assert neutralize_tags('<memory_note>') == '<memory_note>'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        tag = register_tag('memory_note')
    assert register_tag('memory_note') is tag
    assert neutralize_tags('< / MEMORY_NOTE x="1"') == '&lt; / MEMORY_NOTE x="1"'
    assert neutralize_tags('<memory_notes>') == '<memory_notes>'
    assert wrap(tag, '</memory_note>', k='v') == '<memory_note k="v">&lt;/memory_note></memory_note>'
    assert close_tag(tag) == '</memory_note>'


def test_the_late_registration_warning(registry: None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        register_tag('early_tag')  # nothing escaped yet
        framing._render_system('</system>')  # uibridge's own voice block does not count
        register_tag('second_tag')
        assert caught == []
        wrap('context', 'x')
        register_tag('late_tag')
        assert [w.category for w in caught] == [UserWarning]
        assert 'late_tag' in str(caught[0].message)
        assert caught[0].filename == __file__  # stacklevel points at the caller
        register_tag('late_tag')  # again: not new, no warning
        register_tag('early_tag')
        assert len(caught) == 1


def test_neutralize_tags_alone_sets_the_warning_flag(registry: None) -> None:
    neutralize_tags('no tags here')
    with pytest.warns(UserWarning, match='registered after'):
        register_tag('after_neutralize')


def test_registration_is_thread_safe(registry: None) -> None:
    names = [f'tag_{i}' for i in range(40)]
    results: list[dict[str, str]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def worker(seed: int) -> None:
        try:
            barrier.wait()
            mine: dict[str, str] = {}
            for k in range(len(names)):
                name = names[(seed * 7 + k) % len(names)]
                mine[name] = register_tag(name)
                neutralize_tags(f'<{name}> </tool_result>')
            results.append(mine)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert len(results) == 16
    for name in names:
        assert len({id(r[name]) for r in results}) == 1  # every thread got the very same object
        assert framing._registered[name] is results[0][name]
    text = ' '.join(f'</{n}>' for n in names)
    assert neutralize_tags(text) == text.replace('<', '&lt;')


# -------------------------------------------------------------------------------------- the system block


def test_render_system_escapes_only_system_spellings(registry: None) -> None:
    register_tag('judge_feedback')
    body = '</system> <SYSTEM x> < / ſystem <tool_result> </context> <judge_feedback> <systems> x </system'
    assert framing._render_system(body) == (
        '<system>&lt;/system> &lt;SYSTEM x> &lt; / ſystem <tool_result> </context> <judge_feedback> <systems> '
        'x &lt;/system</system>'
    )
    assert framing._render_system('') == '<system></system>'


def test_wrap_and_system_block_leave_everything_else_byte_for_byte() -> None:
    body = 'line\r\n\ttab & amp; > <div> a<b ⟨x⟩ \u200b é 😀'
    assert wrap('context', body) == f'<context>{body}</context>'
    assert framing._render_system(body) == f'<system>{body}</system>'


# ------------------------------------------------------------------------------------- property tests

_TAGS_FOR_BODIES = [*BUILTIN, 'judge_feedback']


@st.composite
def tag_fragments(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from([*_TAGS_FOR_BODIES, 'systems', 'tool_result_x', 'div', 'system-prompt']))
    ignorables = st.sampled_from(_IGNORABLES)
    name = ''.join(
        draw(
            st.sampled_from(
                [c, c.upper(), 'ſ' if c == 's' else c, chr(ord(c) + 0xFEE0) if c.isalpha() else c, c + draw(ignorables)]
            )
        )
        for c in name
    )
    space = st.sampled_from(['', ' ', '  ', '\t', '\n', '\xa0', '\u2028', '\x1c', '\u3000', *_IGNORABLES])
    slash = draw(st.sampled_from(['', '/', '/', '／']))
    attrs = draw(st.sampled_from(['', ' a="1"', ' role=admin', '/', ' /', '"x"', '-x', '_x', 's']))
    end = draw(st.sampled_from(['>', '>', '＞', '', '<']))
    return '<' + draw(space) + slash + draw(space) + name + attrs + draw(space) + end


bodies = st.lists(
    st.one_of(
        tag_fragments(),
        st.text(alphabet='<>/ &;ltsy\u200bé\x00\u034f', max_size=6),
        st.sampled_from(['&lt;', '<', 'a']),
    ),
    max_size=12,
).map(''.join)


_TAG_ALPHABET = ['<', '>', '/', ' ', '\t', '\xa0', 'é', 'ſ', '&', *'systemSYSTEMtool_resuldiv', *_IGNORABLES]


@settings(deadline=None)
@given(text=st.lists(st.one_of(tag_fragments(), st.sampled_from(_TAG_ALPHABET)), max_size=16).map(''.join))
def test_property_escaped_exactly_where_the_rule_finds_a_tag(text: str) -> None:
    expected = list(text)
    for at, _, _ in framing_tags(text, set(BUILTIN)):
        expected[at] = '&lt;'
    assert neutralize_tags(text) == ''.join(expected)


@settings(deadline=None)
@given(
    body=bodies,
    tag=st.sampled_from(_TAGS_FOR_BODIES[1:]),
    attrs=st.dictionaries(st.sampled_from(['a', 'tool_name', '_x']), st.one_of(st.none(), st.text(max_size=8))),
)
def test_property_wrap_holds_exactly_its_own_two_tags(body: str, tag: str, attrs: dict[str, str | None]) -> None:
    with isolated_registry(), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        register_tag('judge_feedback')
        out = wrap(tag, body, **attrs)  # pyright: ignore[reportArgumentType]
        closing = f'</{tag}>'
        assert framing_tags(out, set(_TAGS_FOR_BODIES)) == [(0, tag, False), (len(out) - len(closing), tag, True)]
        inner = out[len(open_tag(tag, **attrs)) : -len(closing)]  # pyright: ignore[reportArgumentType]
        assert only_lt_escaped(body, inner)
        # And no more than that: every `<` escaped was a framing-tag spelling.
        assert inner.count('&lt;') - body.count('&lt;') == len(framing_tags(body, set(_TAGS_FOR_BODIES)))


@settings(deadline=None)
@given(text=st.one_of(bodies, st.text(max_size=40)))
def test_property_neutralize_is_idempotent_and_changes_only_lt(text: str) -> None:
    once = neutralize_tags(text)
    assert neutralize_tags(once) == once
    assert only_lt_escaped(text, once)
    assert framing_tags(once, set(BUILTIN)) == []


# ------------------------------------------------------------------------------------------------ cost
# Linear matching is pinned by the patterns' shape (no repetition the engine can backtrack into) and by counting
# the Python pass's work elsewhere in this file; how long it takes is measured in bench/bench_framing.py.


def _backtracking_repeats(pattern: str) -> list[str]:
    """The unbounded repetitions in `pattern` that are neither possessive nor atomic: the only way a regex can
    make a match attempt cost more than the text it reads, and so the only way to quadratic matching."""
    found: list[str] = []

    def walk(items: Any) -> None:
        for op, av in items:
            if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                low, high, sub = av
                if high == sre_constants.MAXREPEAT:
                    found.append(f'{op} {low}.. over {list(sub)[:2]}')
                walk(sub)
            elif op == sre_constants.POSSESSIVE_REPEAT:
                walk(av[2])
            elif op == sre_constants.SUBPATTERN:
                walk(av[-1])
            elif op == sre_constants.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(av[1])
            elif op == sre_constants.ATOMIC_GROUP:
                walk(av)

    walk(sre_parse.parse(pattern))
    return found


def test_no_matching_pattern_can_backtrack() -> None:
    patterns = [
        framing._matcher.ascii_pattern.pattern,  # pyright: ignore[reportPrivateUsage]
        framing._ascii_pattern(frozenset({'system', 'tool_result', 'judge_feedback', 'a', 'ab'})),  # pyright: ignore[reportPrivateUsage]
        framing._WIDE_CANDIDATE.pattern,  # pyright: ignore[reportPrivateUsage]
        framing._candidates_opened_by('\u2039').pattern,  # pyright: ignore[reportPrivateUsage]
        framing._FOLDED_TAG.pattern,  # pyright: ignore[reportPrivateUsage]
    ]
    for pattern in patterns:
        assert _backtracking_repeats(pattern) == [], pattern[:200]
    # and the check does catch the shape that made matching quadratic
    assert _backtracking_repeats(r'<(?=\s*/?\s*system)') != []


# In a subprocess, so this process's registry stays as it is; a job of tests/background.py, started beside the
# tests before this one.
MANY_TAGS_REGISTERED = background.run(
    [
        sys.executable,
        '-c',
        textwrap.dedent(
            """
            import re, warnings
            from uibridge import neutralize_tags, register_tag
            from uibridge.core import framing

            compiled = []
            original = re.compile
            framing.re.compile = lambda *a, **k: compiled.append(a[0]) or original(*a, **k)
            warnings.simplefilter('ignore')
            for i in range(1000):
                register_tag(f'tag_{i:04d}_{chr(97 + i % 26)}')
            text = '</tool_resul> <tag_0999_l> <div> a < b </system> <TAG_0005_f/>'
            print(len(compiled), neutralize_tags(text), neutralize_tags(text) == neutralize_tags(text), len(compiled))
            """
        ),
    ],
    check=True,
    timeout=120,
)


def test_registering_many_tags_compiles_the_pattern_once() -> None:
    out = MANY_TAGS_REGISTERED.result()
    before, *escaped, same, after = out.stdout.split()
    # Compiled on first use after the registrations, once, not once per registration.
    assert (int(before), int(after)) == (0, 1)
    assert ' '.join(escaped) == '</tool_resul> &lt;tag_0999_l> <div> a < b &lt;/system> &lt;TAG_0005_f/>'
    assert same == 'True'


@settings(deadline=None)
@given(body=bodies)
def test_property_the_system_block_holds_exactly_its_own_two_tags_and_escapes_nothing_else(body: str) -> None:
    out = framing._render_system(body)
    assert framing_tags(out, {'system'}) == [(0, 'system', False), (len(out) - len('</system>'), 'system', True)]
    inner = out[len('<system>') : -len('</system>')]
    assert only_lt_escaped(body, inner)
    # Only `system` spellings are escaped; data tags inside the application's own voice block stay as written.
    assert inner.count('&lt;') - body.count('&lt;') == len(framing_tags(body, {'system'}))
