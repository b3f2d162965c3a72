"""`core.json_text`: the JSON the streams put on the wire is always valid JSON that reads back as the value."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from uibridge.core import json_text
from uibridge.core.json_text import compact_json, json_values, parse_json, sse_data, utf8_json, wire_json

# Any text, lone surrogates included (a provider may cut a pair in half between two deltas).
_text = st.text(st.characters(), max_size=12)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)


def _no_constant(token: str) -> Any:
    raise AssertionError(f'{token} is no JSON: JSON.parse rejects it')


def _read(data: bytes) -> Any:
    # Strict UTF-8 and strict JSON: a frame the client could not decode or parse fails here.
    return json.loads(data.decode(), parse_constant=_no_constant)


@given(_values)
def test_wire_json_reads_back_as_the_value(value: Any) -> None:
    assert _read(utf8_json(wire_json(value))) == value


@given(_values)
def test_sse_data_is_one_event_holding_wire_json(value: Any) -> None:
    frame = sse_data(value)
    assert frame == utf8_json(f'data: {wire_json(value)}\n\n')
    assert frame.startswith(b'data: ') and frame.endswith(b'\n\n') and b'\n' not in frame[:-2]
    assert _read(frame[len(b'data: ') : -2]) == value


_any_keys = _text | st.integers() | st.floats() | st.booleans() | st.none() | st.tuples(st.integers())
_odd_values = st.recursive(
    _values | st.floats() | st.datetimes() | st.binary(max_size=3).map(lambda b: b.decode('latin-1')),
    lambda inner: st.lists(inner, max_size=3).map(tuple) | st.dictionaries(_any_keys, inner, max_size=3),
    max_leaves=8,
)


@given(_odd_values)
def test_anything_becomes_one_valid_json_frame(value: Any) -> None:
    # Whatever an agent puts in custom data or tool results, the chunk stays valid JSON: never a crash.
    frame = sse_data(value)
    _read(frame[len(b'data: ') : -2])
    assert frame == utf8_json(f'data: {wire_json(value)}\n\n')


def test_a_lone_surrogate_is_written_as_its_escape() -> None:
    assert sse_data({'d': 'a\ud83d'}) == b'data: {"d":"a\\ud83d"}\n\n'
    assert utf8_json(wire_json(['\udc00'])) == b'["\\udc00"]'


def test_nan_and_infinities_are_null_never_a_token_json_parse_rejects() -> None:
    for value in (math.nan, math.inf, -math.inf):
        assert wire_json({'x': value}) == '{"x":null}'
        assert sse_data([value, '\ud800']) == b'data: [null,"\\ud800"]\n\n'  # the fallback path too


def test_values_json_has_no_form_for_are_written_as_pydantic_writes_them_or_as_text() -> None:
    class Opaque:
        def __str__(self) -> str:
            return 'opaque'

    moment = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    assert wire_json({'at': moment, 'tags': {'a'}, 'raw': b'hi', 'other': Opaque()}) == (
        '{"at":"2026-11-30T09:00:00Z","tags":["a"],"raw":"hi","other":"opaque"}'
    )
    assert sse_data({'at': moment, 'x': '\ud800', 'other': Opaque()}) == (
        b'data: {"at":"2026-11-30T09:00:00Z","x":"\\ud800","other":"opaque"}\n\n'
    )


# ----------------------------------------------------------------------------- compact_json: the exact bytes
# Derived ids hash `compact_json` and feedback markers are compared as text, so its pydantic-core fast path must
# write exactly what its definition (the json module) writes, and fail where that fails.


def _reference_compact_json(value: Any) -> str:
    try:
        plain = json_values.dump_python(value, mode='json')
    except UnicodeEncodeError:
        # pydantic-core will not write a lone surrogate: each one stood in for by a private-use character first,
        # then put back in the text the `json` module writes (which keeps a lone surrogate as it is).
        text = _reference_compact_json(_stand_ins(value))
        return _STAND_IN.sub(lambda m: chr(ord(m.group()) - 0xF0000 + 0xD800), text)
    return json.dumps(plain, separators=(',', ':'), ensure_ascii=False)


_STAND_IN = re.compile('[\U000f0000-\U000f07ff]')


def _stand_ins(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub('[\ud800-\udfff]', lambda m: chr(ord(m.group()) - 0xD800 + 0xF0000), value)
    if isinstance(value, dict):
        return {_stand_ins(k): _stand_ins(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return type(value)(_stand_ins(item) for item in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return value


_WEATHER = {'city': 'Paris', 'temp_c': 21.5, 'sky': 'clear', 'note': 'légère brise', 'hourly': [{'h': 1, 't': 19}]}


_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 1e16])
_ints = st.integers() | st.sampled_from([10**4000 - 1, 10**4000, -(10**4000), 2**64])
_strings = st.text() | st.sampled_from(['\ud800', 'a\udfffb', '\x00\x1f\x7f"\\/', 'é 😀 \u2028'])
_keys = _strings | st.integers(-5, 5) | st.booleans() | st.none() | _floats
_scalars = st.none() | st.booleans() | _ints | _floats | _strings
_values = st.recursive(
    _scalars | st.datetimes(timezones=st.just(UTC)) | st.binary(max_size=4),
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(_strings, children, max_size=4)
        | st.dictionaries(_keys, children, max_size=3)
    ),
    max_leaves=12,
)


def _outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return 'ok', function(value)
    except Exception as e:  # the reference's own failure must be kept too
        return 'error', type(e)


@settings(deadline=None)
@given(_values)
def test_compact_json_writes_the_reference_bytes(value: Any) -> None:
    # The reference stands private-use characters in for lone surrogates: a value holding such a character
    # already would have two keys collapse into one there (`{'\U000f0000': None, '\ud800': None}`).
    assume(not any(_STAND_IN.search(text) for text in _texts(value)))
    assert _outcome(compact_json, value) == _outcome(_reference_compact_json, value)


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in cast('dict[Any, Any]', value).items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in cast('list[Any]', value):
            yield from _texts(item)


class _Float(float):
    pass


@pytest.mark.parametrize(
    'value',
    [
        1e-5,
        -3.5e-7,
        float('inf'),
        float('nan'),
        10**5000,
        ['\ud800'],
        {1: 'int key'},
        {None: 1, True: 2},
        {'when': datetime(2026, 1, 1, tzinfo=UTC)},
        (1, 'two', [3.0]),
        [[[[[[[[[[{'deep': 1e-9}]]]]]]]]]],
        [10**5000],  # inside a container too
        {'\ud800': None, float('inf'): None, float('nan'): 1},  # a non-finite key beside a lone surrogate: "None"
        _Float(1e-5),  # a float of another class (numpy's `float64` is one), spelled as `json` spells floats
    ],
    ids=lambda value: type(value).__name__,
)
def test_compact_json_edge_cases(value: Any) -> None:
    assert _outcome(compact_json, value) == _outcome(_reference_compact_json, value)


def test_compact_json_takes_the_fast_path_for_plain_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reference is not called for what tool results, arguments and markers usually are...
    def refuse(value: Any) -> str:
        raise AssertionError('the reference was called')

    monkeypatch.setattr(json_text, '_compact_json_reference', refuse)
    assert compact_json(_WEATHER) == json.dumps(_WEATHER, separators=(',', ':'), ensure_ascii=False)
    assert compact_json({'t': 21.5, 'ok': True, 'x': None, 'n': [1, -2, 0.0]}) == (
        '{"t":21.5,"ok":true,"x":null,"n":[1,-2,0.0]}'
    )
    # ... and is for what pydantic-core would spell differently.
    with pytest.raises(AssertionError, match='the reference was called'):
        compact_json({'t': 1e-5})
    with pytest.raises(AssertionError, match='the reference was called'):
        compact_json({1: 'a'})


@settings(deadline=None)
@given(_values)
def test_indented_json_writes_what_json_dumps_writes_with_an_indent(value: Any) -> None:
    assert _outcome(json_text.indented_json, value) == _outcome(
        lambda value: json.dumps(value, indent=2, ensure_ascii=False), value
    )


def test_indented_json_indents() -> None:
    assert json_text.indented_json({'a': [1, 1e-5]}) == '{\n  "a": [\n    1,\n    1e-05\n  ]\n}'


def test_the_fallback_for_a_lone_surrogate_writes_any_key_and_a_tuple_as_json() -> None:
    # A key the json module writes (`1`) is written so; `None` as pydantic-core writes it, a tuple as its text.
    assert json.loads(wire_json({1: '\ud800', None: 'x', (1, 2): 'y'})) == {'1': '\ud800', 'None': 'x', '(1, 2)': 'y'}
    assert json.loads(wire_json((1, '\ud800'))) == [1, '\ud800']


def test_timestamps_are_written_with_z_and_read_back_strictly() -> None:
    moment = datetime(2026, 11, 30, 9, 0, 5, 120000, tzinfo=UTC)
    assert json_text.iso_utc(moment) == '2026-11-30T09:00:05.120000Z'
    assert json_text.parse_iso(json_text.iso_utc(moment)) == moment
    for not_a_timestamp in (1764493205, None, 'yesterday', ['2026-11-30']):
        assert json_text.parse_iso(not_a_timestamp) is None


# -------------------------------------------------------------------------------------------- parse_json

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _floats | _strings,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_strings, children, max_size=4),
    max_leaves=12,
)
_json_texts = st.one_of(
    st.builds(json.dumps, _json_values),
    st.builds(lambda value: json.dumps(value, ensure_ascii=False), _json_values),
    st.text(max_size=30),
    st.text(alphabet='{}[]":,0123456789.eE+-tfnulraINy \\u', max_size=30),
)


def _comparable(value: Any) -> Any:
    """`value` with NaN made comparable (NaN is never equal to itself)."""
    if isinstance(value, float) and math.isnan(value):
        return 'NaN'
    if isinstance(value, list):
        return [_comparable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def _assert_reads_alike(text: str) -> None:
    ours, reference = _outcome(parse_json, text), _outcome(json.loads, text)
    if reference[0] == 'error':
        assert ours[0] == 'error' and issubclass(ours[1], ValueError)
    else:
        assert _comparable(ours[1]) == _comparable(reference[1])
        assert type(ours[1]) is type(reference[1])


@settings(deadline=None)
@given(_json_texts)
def test_parse_json_reads_what_json_loads_reads(text: str) -> None:
    _assert_reads_alike(text)


@pytest.mark.parametrize(
    'text',
    [
        *['"\\ud800"', '{"a": "\\udfff"}', '"\ud800"', '\ufeff{}', '{"a":1,"a":2}', 'NaN', '[1e400]', '{"a": 1}x', ''],
        *[f'[{sign}{"9" * digits}]' for sign in ('', '-') for digits in (4300, 4301)],  # CPython's digit limit
    ],
)
def test_parse_json_edge_cases(text: str) -> None:
    _assert_reads_alike(text)


@pytest.mark.parametrize(
    ('text', 'args'),
    [
        ('{"city":"Paris"}', {'city': 'Paris'}),
        ('{"city": "Paris"}', '{"city": "Paris"}'),  # a dict would give other text back: the model's own stays
        ('{"city":"x","city":"Paris"}', '{"city":"x","city":"Paris"}'),
        ('{"n":1.0}', {'n': 1.0}),
        ('{"n":1e300}', '{"n":1e300}'),  # the dict's text would be 1e+300
        ('{}', {}),
        ('[1, 2]', '[1, 2]'),
        ('"Paris"', '"Paris"'),
        ('null', 'null'),
        ('{"city": ', '{"city": '),
        ('', ''),
        ('{"s":"\ud800"}', {'s': '\ud800'}),
        ('{"s": "\\ud800"}', '{"s": "\\ud800"}'),
    ],
)
def test_tool_args_is_the_dict_of_a_json_object_else_the_text(text: str, args: Any) -> None:
    assert json_text.tool_args(text) == args


def test_the_lone_surrogate_pattern_finds_only_surrogates() -> None:
    assert json_text.LONE_SURROGATE.search('plain ascii, é and 😀') is None
    assert json_text.LONE_SURROGATE.findall('a\ud83d b\ude00 \ud83d\ude00') == ['\ud83d', '\ude00', '\ud83d', '\ude00']
