"""`core.json_text`: the JSON the streams put on the wire is always valid JSON that reads back as the value."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from uibridge.core.json_text import sse_data, utf8_json, wire_json

# Any text, lone surrogates included (a provider may cut a pair in half between two deltas).
_text = st.text(st.characters(), max_size=12)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)


def _read(data: bytes) -> Any:
    return json.loads(data.decode())  # strict UTF-8: a frame the client could not decode fails here


@given(_values)
def test_wire_json_reads_back_as_the_value(value: Any) -> None:
    assert _read(utf8_json(wire_json(value))) == value


@given(_values)
def test_sse_data_is_one_event_holding_wire_json(value: Any) -> None:
    frame = sse_data(value)
    assert frame == utf8_json(f'data: {wire_json(value)}\n\n')
    assert frame.startswith(b'data: ') and frame.endswith(b'\n\n') and b'\n' not in frame[:-2]
    assert _read(frame[len(b'data: ') : -2]) == value


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
