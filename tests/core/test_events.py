"""Neutral stream events: expanding whole messages, and folding events back into messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from uibridge import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.collector import MessageCollector
from uibridge.core.events import (
    CUSTOM_DATA_METADATA_KEY,
    AgentEvent,
    CustomData,
    FileOutput,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseStart,
    RetryFeedback,
    RunCancelled,
    RunError,
    RunFinished,
    ToolCallReady,
    ToolResult,
    events_from_message,
)
from uibridge.core.json_text import compact_json

T0 = datetime(2026, 1, 2, tzinfo=UTC)
FILE = FilePart(content=BinaryContent(data=b'GIF', media_type='image/gif'), id='f1')


def collect(events: list[AgentEvent]) -> MessageCollector:
    collector = MessageCollector()
    for event in events:
        collector.feed(event)
    return collector


def same_response(got: ModelMessage, want: ModelResponse) -> None:
    assert isinstance(got, ModelResponse)
    assert (got.parts, got.model_name, got.provider_name) == (want.parts, want.model_name, want.provider_name)


# ------------------------------------------------------------------------------------ events_from_message


def test_a_response_expands_to_indexed_part_events_with_files_and_signatures() -> None:
    text = TextPart(content='hi', id='t')
    thinking = ThinkingPart(content='hmm', signature='sig', provider_name='p')
    plain_thinking = ThinkingPart(content='plain')
    tool = ToolCallPart(tool_name='t', args={'a': 1}, tool_call_id='c')
    response = ModelResponse(parts=[thinking, FILE, text, tool, plain_thinking], model_name='m', provider_name='p')
    assert list(events_from_message(response)) == [
        ResponseStart(model_name='m', provider_name='p'),
        PartStart(0, ThinkingPart(content='hmm', provider_name='p')),
        PartEnd(0, signature='sig'),
        FileOutput(FILE),
        PartStart(1, text),
        PartEnd(1),
        PartStart(2, tool),
        PartEnd(2),
        PartStart(3, plain_thinking),
        PartEnd(3),
    ]


def test_a_request_expands_to_results_and_feedback() -> None:
    ret = ToolReturnPart(tool_name='t', content='ok', tool_call_id='c1', timestamp=T0)
    retry = RetryPromptPart(content='bad', tool_name='t', tool_call_id='c2', timestamp=T0)
    fb = RetryFeedbackPart(content='x', cause='model_retry', timestamp=T0)
    assert list(events_from_message(ModelRequest(parts=[ret, retry, fb]))) == [
        ToolResult(ret),
        ToolResult(retry),
        RetryFeedback(fb),
    ]


@pytest.mark.parametrize('part', [SystemPromptPart(content='s'), UserPromptPart(content='u')])
def test_input_parts_cannot_be_streamed(part: Any) -> None:
    with pytest.raises(TypeError, match='input, not output'):
        list(events_from_message(ModelRequest(parts=[part])))


# ---------------------------------------------------------------------------------- collecting round trip

_text = st.text(max_size=8)
_response_parts = st.one_of(
    st.builds(TextPart, content=_text, id=st.none() | _text),
    st.builds(
        ThinkingPart, content=_text, id=st.none() | _text, signature=st.none() | _text, provider_name=st.none() | _text
    ),
    st.builds(
        ToolCallPart,
        tool_name=_text,
        args=st.none()
        | st.sampled_from(['{"a": 1}', '[1]', 'not json', ''])
        | st.dictionaries(_text, st.integers(), max_size=2),
        tool_call_id=_text,
    ),
    st.builds(FilePart, content=st.builds(BinaryContent, data=st.binary(max_size=4), media_type=_text)),
)
_request_parts = st.one_of(
    st.builds(ToolReturnPart, tool_name=_text, content=_text, tool_call_id=_text, timestamp=st.just(T0)),
    st.builds(RetryPromptPart, content=_text, tool_name=_text, tool_call_id=_text, timestamp=st.just(T0)),
    st.builds(
        RetryFeedbackPart,
        content=_text,
        cause=st.sampled_from(['validation_error', 'no_output', 'model_retry']),
        timestamp=st.just(T0),
    ),
)


@settings(deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(
                ModelResponse,
                parts=st.lists(_response_parts, max_size=4),
                model_name=st.none() | _text,
                provider_name=st.none() | _text,
            ),
            st.builds(ModelRequest, parts=st.lists(_request_parts, min_size=1, max_size=3)),
        ),
        max_size=5,
    )
)
def test_property_collecting_the_events_of_messages_gives_them_back(messages: list[ModelMessage]) -> None:
    calls = [
        p.tool_call_id for m in messages if isinstance(m, ModelResponse) for p in m.parts if p.part_kind == 'tool-call'
    ]
    assume(len(set(calls)) == len(calls))  # one id names one call in a run (two fail it: tests/adapters)
    # Consecutive requests are one request when streamed: results join the request that follows a response.
    expected: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and expected and isinstance(expected[-1], ModelRequest):
            expected[-1] = ModelRequest(parts=[*expected[-1].parts, *message.parts])
        else:
            expected.append(message)
    got = collect([event for message in messages for event in events_from_message(message)]).messages
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if isinstance(e, ModelResponse):
            same_response(g, e)
        else:
            assert g == e


# ---------------------------------------------------------------------------------------------- streaming


def test_deltas_build_text_thinking_and_tool_arguments() -> None:
    collector = collect(
        [
            ResponseStart(model_name='m'),
            PartStart(0, ThinkingPart(content='Let ')),
            PartDelta(0, 'me think'),
            PartEnd(0, signature='sig'),
            PartStart(1, TextPart(content='')),
            PartDelta(1, 'Hel'),
            PartDelta(1, 'lo'),
            PartEnd(1),
            PartStart(2, ToolCallPart(tool_name='t', args=None, tool_call_id='c')),
            PartDelta(2, '{"city": '),
            PartDelta(2, '"Paris"}'),
            PartEnd(2),
            PartStart(3, ToolCallPart(tool_name='t', args='{"a"', tool_call_id='d')),
            PartDelta(3, ': [1'),
            PartDelta(3, ']}'),
            PartEnd(3),
            PartStart(4, ToolCallPart(tool_name='t', tool_call_id='e')),
            PartDelta(4, '[1, 2]'),
            PartEnd(4),
            RunFinished(finish_reason='tool_call'),
        ]
    )
    [response] = collector.messages
    assert isinstance(response, ModelResponse)
    assert response.parts == [
        ThinkingPart(content='Let me think', signature='sig'),
        TextPart(content='Hello'),
        # Streamed arguments are the text the model wrote (what a client assembles and a signature covers),
        # held as the dict only where that dict's compact text is the same text.
        ToolCallPart(tool_name='t', args='{"city": "Paris"}', tool_call_id='c'),
        ToolCallPart(tool_name='t', args='{"a": [1]}', tool_call_id='d'),
        ToolCallPart(tool_name='t', args='[1, 2]', tool_call_id='e'),  # not an object: kept as text
    ]
    assert response.model_name == 'm'
    assert response.finish_reason == 'tool_call'
    assert collector.finish_reason == 'tool_call'


def test_parallel_tool_calls_may_interleave_their_arguments() -> None:
    collector = collect(
        [
            PartStart(0, ToolCallPart(tool_name='a', tool_call_id='c0')),
            PartStart(1, ToolCallPart(tool_name='b', tool_call_id='c1')),
            PartDelta(1, '{"y":'),
            PartDelta(0, '{"x":'),
            PartDelta(0, '1}'),
            PartDelta(1, '2}'),
            PartEnd(1),
            PartEnd(0),
        ]
    )
    [response] = collector.messages
    assert response.parts == [
        ToolCallPart(tool_name='a', args={'x': 1}, tool_call_id='c0'),
        ToolCallPart(tool_name='b', args={'y': 2}, tool_call_id='c1'),
    ]


@given(st.dictionaries(st.text(), st.integers() | st.text() | st.floats(allow_nan=False) | st.none(), max_size=4))
def test_streamed_arguments_are_the_text_streamed_and_its_dict_only_where_exact(args: dict[str, Any]) -> None:
    for text in (json.dumps(args), json.dumps(args, ensure_ascii=False), compact_json(args)):
        [response] = collect(
            [PartStart(0, ToolCallPart(tool_name='t', tool_call_id='c')), PartDelta(0, text), PartEnd(0)]
        ).messages
        [call] = response.parts
        assert isinstance(call, ToolCallPart) and call.args_as_json_str() == text
        assert call.args_as_dict() == json.loads(text)
        assert isinstance(call.args, dict) == (text == compact_json(args))


def test_arguments_with_an_escaped_lone_surrogate_are_still_parsed() -> None:
    text = '{"emoji": "\\ud83d"}'  # a provider cut a surrogate pair in half; `json.loads` reads it
    [response] = collect(
        [PartStart(0, ToolCallPart(tool_name='t', tool_call_id='c')), PartDelta(0, text), PartEnd(0)]
    ).messages
    assert response.parts == [ToolCallPart(tool_name='t', args=text, tool_call_id='c')]
    assert response.parts[0].args_as_dict() == {'emoji': '\ud83d'}


def test_arguments_that_arrive_whole_are_kept_as_given() -> None:
    for args in ('{"a": 1}', '{}', {'a': 1}, None, 'not json'):
        part = ToolCallPart(tool_name='t', args=args, tool_call_id='c')
        [response] = collect([PartStart(0, part), PartEnd(0)]).messages
        assert response.parts == [part]


def test_a_signature_at_part_end_wins_only_when_given() -> None:
    [response] = collect(
        [
            PartStart(0, ThinkingPart(content='a', signature='early')),
            PartEnd(0),
            PartStart(1, ThinkingPart(content='b')),
            PartEnd(1, signature='late'),
        ]
    ).messages
    assert response.parts == [ThinkingPart(content='a', signature='early'), ThinkingPart(content='b', signature='late')]


def test_results_and_feedback_start_a_request_and_a_part_after_them_a_new_response() -> None:
    ret = ToolReturnPart(tool_name='t', content='ok', tool_call_id='c', timestamp=T0)
    fb = RetryFeedbackPart(content='x', cause='no_output', timestamp=T0)
    collector = collect(
        [
            ResponseStart(),
            PartStart(0, ToolCallPart(tool_name='t', tool_call_id='c')),
            PartDelta(0, '{}'),  # never ended: the result closes it
            ToolResult(ret),
            RetryFeedback(fb),
            PartStart(0, TextPart(content='second')),
            PartEnd(0),
            RetryFeedback(fb),
        ]
    )
    messages = collector.messages
    assert [type(m) for m in messages] == [ModelResponse, ModelRequest, ModelResponse, ModelRequest]
    assert messages[0].parts == [ToolCallPart(tool_name='t', args={}, tool_call_id='c')]
    assert messages[1].parts == [ret, fb]
    assert messages[2].parts == [TextPart(content='second')]
    assert messages[3].parts == [fb]


def test_a_response_start_closes_parts_still_streaming_and_opens_a_new_response() -> None:
    collector = collect([PartStart(0, TextPart(content='a')), PartDelta(0, 'b'), ResponseStart(model_name='n')])
    first, second = collector.messages
    assert first.parts == [TextPart(content='ab')]
    assert isinstance(second, ModelResponse)
    assert (second.parts, second.model_name) == ([], 'n')


def test_files_take_their_place_between_parts() -> None:
    [response] = collect(
        [PartStart(0, TextPart(content='a')), FileOutput(FILE), PartDelta(0, 'b'), PartEnd(0), FileOutput(FILE)]
    ).messages
    assert response.parts == [TextPart(content='ab'), FILE, FILE]


def test_custom_data_is_kept_with_its_position_unless_transient() -> None:
    collector = collect(
        [
            CustomData('first', {'n': 1}),
            PartStart(0, TextPart(content='a')),
            CustomData('live', 1, transient=True),
            PartEnd(0),
            CustomData('second', [1, 2], id='d2'),
            PartStart(1, TextPart(content='b')),
            PartEnd(1),
        ]
    )
    [response] = collector.messages
    assert isinstance(response, ModelResponse)
    assert response.metadata == {
        CUSTOM_DATA_METADATA_KEY: [
            {'name': 'first', 'data': {'n': 1}, 'position': 0},
            {'name': 'second', 'data': [1, 2], 'position': 1, 'id': 'd2'},
        ]
    }


def test_a_snapshot_mid_stream_does_not_disturb_later_deltas_and_is_not_disturbed_by_them() -> None:
    collector = MessageCollector()
    for event in [ResponseStart(), PartStart(0, TextPart(content='He')), PartDelta(0, 'l')]:
        collector.feed(event)
    early = collector.messages
    assert early[0].parts == [TextPart(content='Hel')]
    early[0].parts.append(TextPart(content='caller owns this'))
    for event in [PartDelta(0, 'lo'), PartEnd(0)]:
        collector.feed(event)
    middle = collector.messages
    assert middle[0].parts == [TextPart(content='Hello')]
    for event in [
        PartStart(1, TextPart(content='x')),
        PartEnd(1),
        CustomData('d', 1),
        RunFinished('stop'),
        ToolResult(ToolReturnPart(tool_name='t', content='', tool_call_id='c', timestamp=T0)),
    ]:
        collector.feed(event)
    # Earlier snapshots stay as they were.
    assert early[0].parts == [TextPart(content='Hel'), TextPart(content='caller owns this')]
    assert middle[0].parts == [TextPart(content='Hello')]
    assert isinstance(middle[0], ModelResponse)
    assert (middle[0].finish_reason, middle[0].metadata) == (None, None)
    assert len(middle) == 1
    final = collector.messages
    assert final[0].parts == [TextPart(content='Hello'), TextPart(content='x')]
    assert len(final) == 2


@pytest.mark.parametrize(
    ('events', 'message'),
    [
        ([PartDelta(0, 'x')], 'not streaming'),
        ([PartEnd(0)], 'not streaming'),
        ([PartStart(0, TextPart(content='')), PartEnd(0), PartDelta(0, 'x')], 'not streaming'),
        ([PartStart(0, TextPart(content='')), PartDelta(1, 'x')], 'not streaming'),
        ([PartStart(0, TextPart(content='')), ResponseStart(), PartDelta(0, 'x')], 'not streaming'),
        ([PartStart(0, TextPart(content='')), PartStart(0, TextPart(content=''))], 'started twice'),
        (
            [
                PartStart(0, TextPart(content='')),
                ToolResult(ToolReturnPart(tool_name='t', content='', tool_call_id='c')),
                PartEnd(0),
            ],
            'not streaming',
        ),
    ],
)
def test_events_for_unknown_parts_are_errors(events: list[AgentEvent], message: str) -> None:
    collector = MessageCollector()
    with pytest.raises(ValueError, match=message):
        for event in events:
            collector.feed(event)


def test_close_ends_parts_cut_off_by_an_error_or_a_cancel() -> None:
    collector = collect(
        [
            PartStart(0, TextPart(content='par')),
            PartDelta(0, 'tial'),
            PartStart(1, ToolCallPart(tool_name='t', tool_call_id='c')),
            PartDelta(1, '{"a'),
            ToolCallReady('c', 'client'),
            RunError('boom', code='E1'),
            RunCancelled('user'),
        ]
    )
    collector.close()
    [response] = collector.messages
    assert response.parts == [TextPart(content='partial'), ToolCallPart(tool_name='t', args='{"a', tool_call_id='c')]
    assert collector.error == RunError('boom', code='E1')
    assert collector.cancelled
    collector.close()  # nothing left open: a no-op
    assert collector.messages[0].parts == response.parts


def test_run_finished_without_a_response_only_records_the_reason() -> None:
    collector = collect([RunFinished('stop')])
    assert collector.messages == []
    assert collector.finish_reason == 'stop'


def test_the_collector_finds_a_finished_tool_call_and_the_last_message_in_constant_time() -> None:
    collector = MessageCollector()
    assert collector.last_message is None
    collector.feed(ResponseStart())
    collector.feed(PartStart(0, ToolCallPart(tool_name='t', args=None, tool_call_id='c1')))
    collector.feed(PartDelta(0, '{"a": 1}'))
    assert collector.tool_call('c1') is None  # still streaming: not a finished call yet
    collector.feed(PartEnd(0))
    call = collector.tool_call('c1')
    assert call is not None and call.args == '{"a": 1}'
    assert collector.last_message is not None and collector.last_message.parts == [call]
    assert collector.tool_call('unknown') is None


def test_subclassed_events_are_collected_like_their_base_classes() -> None:
    # The collector takes the frequent events by exact type first; a subclass takes the pattern path.
    @dataclass(frozen=True, slots=True)
    class MyStart(ResponseStart):
        pass

    @dataclass(frozen=True, slots=True)
    class MyDelta(PartDelta):
        pass

    events: list[AgentEvent] = [
        MyStart(model_name='m'),
        PartStart(0, TextPart(content='')),
        MyDelta(0, 'Hi'),
        PartEnd(0),
    ]
    [response] = collect(events).messages
    assert isinstance(response, ModelResponse)
    assert response.model_name == 'm' and response.parts == [TextPart(content='Hi')]


def test_a_surrogate_pair_cut_between_deltas_is_collected_as_its_character() -> None:
    # What every client builds from the same deltas, and what UTF-8 can encode for the next provider call.
    events: list[AgentEvent] = [
        PartStart(0, TextPart(content='a\ud83d')),
        PartDelta(0, '\ude00b'),
        PartDelta(0, ' and a lone \udc00'),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name='t', tool_call_id='c')),
        PartDelta(1, '{"emoji": "\ud83d'),
        PartDelta(1, '\ude00"}'),
        PartEnd(1),
    ]
    [response] = collect(events).messages
    assert response.parts == [
        TextPart(content='a😀b and a lone \udc00'),  # a half that never found its partner stays as it came
        ToolCallPart(tool_name='t', args='{"emoji": "😀"}', tool_call_id='c'),
    ]
