"""The per-part events written from their values (`core.encoder.frame_writer` of the SDK model), byte for byte
what the SDK encoder writes."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import (
    BaseEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from agui_helpers import sse_events
from hypothesis import given
from hypothesis import strategies as st

from uibridge.adapters.ag_ui import encode_events
from uibridge.core.encoder import frame_writer
from uibridge.core.events import PartDelta, PartEnd, PartStart, ToolResult
from uibridge.core.messages import TextPart, ToolCallPart, ToolReturnPart

_text = st.text(st.characters(exclude_categories=('Cs',)), max_size=30)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_metadata = st.none() | st.dictionaries(_text, _json_values, max_size=3)

# Every event the stream writes through `frame_writer`, with the values it may be given (absent ones as `None`).
_CASES: list[tuple[type[BaseEvent], dict[str, Any]]] = [
    (
        TextMessageStartEvent,
        {'message_id': _text, 'role': st.sampled_from(['assistant', 'user', 'system']), 'metadata': _metadata},
    ),
    (TextMessageEndEvent, {'message_id': _text}),
    (ReasoningStartEvent, {'message_id': _text}),
    (ReasoningMessageStartEvent, {'message_id': _text, 'metadata': _metadata}),
    (ReasoningMessageEndEvent, {'message_id': _text}),
    (ReasoningEncryptedValueEvent, {'subtype': st.just('message'), 'entity_id': _text, 'encrypted_value': _text}),
    (ReasoningEndEvent, {'message_id': _text}),
    (ToolCallStartEvent, {'tool_call_id': _text, 'tool_call_name': _text, 'parent_message_id': st.none() | _text}),
    (ToolCallEndEvent, {'tool_call_id': _text}),
    (
        ToolCallResultEvent,
        {'message_id': _text, 'tool_call_id': _text, 'content': _text, 'metadata': _metadata},
    ),
]


@pytest.mark.parametrize('event_class, fields', _CASES, ids=[case[0].__name__ for case in _CASES])
def test_direct_frames_equal_the_sdk_encoder(event_class: type[BaseEvent], fields: dict[str, Any]) -> None:
    frame = frame_writer(event_class)

    @given(values=st.fixed_dictionaries(fields), timestamp=st.integers(0, 2**53 - 1))
    def check(values: dict[str, Any], timestamp: int) -> None:
        present = {key: value for key, value in values.items() if value is not None}
        sdk = EventEncoder().encode(event_class(timestamp=timestamp, **present)).encode()
        assert frame(timestamp=timestamp, **values) == sdk

    check()


def test_a_misspelt_or_missing_field_is_an_error_not_a_silently_different_event() -> None:
    frame: Any = frame_writer(ToolCallStartEvent)
    with pytest.raises(TypeError, match=r"ToolCallStartEvent\(\) got an unexpected keyword argument 'tool_name'"):
        frame(timestamp=1, tool_call_id='c', tool_name='x')
    with pytest.raises(
        TypeError, match=r"ToolCallStartEvent\(\) missing 1 required keyword-only argument: 'tool_call_name'"
    ):
        frame(timestamp=1, tool_call_id='c')


def test_a_lone_surrogate_reaches_the_client_as_the_same_code_unit() -> None:
    # A provider can split a surrogate pair across deltas; UTF-8 cannot hold half of one, JSON's escape can.
    half = '\ud83d'
    body = encode_events(
        [
            PartStart(0, TextPart(content='')),
            PartDelta(0, f'a{half}'),
            PartEnd(0),
            PartStart(1, ToolCallPart(tool_name='t', args=None, tool_call_id=f'call{half}')),
            PartEnd(1),
            ToolResult(ToolReturnPart(tool_name='t', content=f'r{half}', tool_call_id=f'call{half}')),
        ]
    )
    events = sse_events(body)
    assert [e['delta'] for e in events if e['type'] == 'TEXT_MESSAGE_CONTENT'] == [f'a{half}']
    assert {e['toolCallId'] for e in events if e['type'].startswith('TOOL_CALL')} == {f'call{half}'}
    [result] = [e for e in events if e['type'] == 'TOOL_CALL_RESULT']
    assert result['content'] == f'r{half}'
