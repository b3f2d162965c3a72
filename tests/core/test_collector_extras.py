"""How the collector keeps what the richer events add: native tools, citations, late response info, message
metadata and shared state. (Steps, activity and raw events are UI-only: nothing of them is kept.)"""

from __future__ import annotations

from typing import Any

import pytest

from uibridge.core import events as ev
from uibridge.core.citations import Citation, DocumentCitationSource, WebCitationSource
from uibridge.core.collector import MessageCollector
from uibridge.core.json_patch import JsonPatchError
from uibridge.core.messages import (
    ModelMessagesTypeAdapter,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    OpaquePart,
    TextPart,
    ToolReturnPart,
)
from uibridge.core.usage import Usage

WEB = Citation(sources=[WebCitationSource(url='https://example.com', title='Example')])
DOC = Citation(sources=[DocumentCitationSource(document_id='d1', media_type='application/pdf', filename='a.pdf')])


def collect(events: list[ev.AgentEvent]) -> MessageCollector:
    collector = MessageCollector()
    for event in events:
        collector.feed(event)
    return collector


def test_a_native_call_streams_its_arguments_and_its_return_joins_the_same_response() -> None:
    call = NativeToolCallPart(tool_name='web_search', tool_call_id='ws1', provider_name='openai')
    returned = NativeToolReturnPart(tool_name='web_search', content={'hits': 2}, tool_call_id='ws1')
    collector = collect(
        [
            ev.PartStart(0, call),
            ev.PartDelta(0, '{"query": '),
            ev.PartDelta(0, '"x"}'),
            ev.PartEnd(0),
            ev.NativeToolResult(returned),
            ev.PartStart(1, TextPart(content='found')),
            ev.PartEnd(1),
        ]
    )
    [response] = collector.messages
    assert isinstance(response, ModelResponse)
    assert response.parts == [call.model_copy(update={'args': '{"query": "x"}'}), returned, TextPart(content='found')]
    assert collector.tool_call('ws1') is None  # no client or server tool answers it: not a pending call


def test_citations_join_their_text_part_whether_it_still_streams_or_has_ended() -> None:
    collector = collect(
        [
            ev.PartStart(0, TextPart(content='a', citations=[WEB])),
            ev.CitationAdded(0, DOC),
            ev.PartDelta(0, 'b'),
            ev.PartEnd(0),
            ev.CitationAdded(0, WEB),
        ]
    )
    [response] = collector.messages
    assert response.parts == [TextPart(content='ab', citations=[WEB, DOC, WEB])]


def test_a_citation_for_what_is_no_text_part_fails() -> None:
    collector = collect([ev.PartStart(0, NativeToolCallPart(tool_name='t')), ev.PartEnd(0)])
    with pytest.raises(ValueError, match='no text part'):
        collector.feed(ev.CitationAdded(0, WEB))
    with pytest.raises(ValueError, match='no text part'):
        collector.feed(ev.CitationAdded(7, WEB))


def test_response_info_sets_the_current_response_and_between_responses_the_last() -> None:
    usage = Usage(input_tokens=10, output_tokens=3, details={'reasoning': 1})
    collector = collect(
        [
            ev.ResponseStart(model_name='m1'),
            ev.PartStart(0, TextPart(content='x')),
            ev.ResponseInfo(usage=usage, provider_response_id='resp_1', finish_reason='tool_call'),
            ev.PartEnd(0),
            ev.ToolResult(ToolReturnPart(tool_name='t', content='ok', tool_call_id='c')),
            ev.ResponseInfo(provider_details={'region': 'eu'}, model_name='m1-2026'),
        ]
    )
    response, _request = collector.messages
    assert isinstance(response, ModelResponse)
    assert (response.usage, response.provider_response_id, response.finish_reason) == (usage, 'resp_1', 'tool_call')
    assert (response.provider_details, response.model_name) == ({'region': 'eu'}, 'm1-2026')
    # Fields left unset by a later event keep their value; the run's reason is its last response's, unless
    # RunFinished says another.
    assert collector.finish_reason == 'tool_call'
    collector.feed(ev.RunFinished())
    assert collector.finish_reason == 'tool_call'


def test_what_describes_a_response_before_any_starts_waits_for_the_first_one() -> None:
    collector = collect(
        [
            ev.MessageMetadata({'a': 1}),
            ev.ResponseInfo(provider_response_id='r'),
            ev.StateSnapshot({'s': 1}),
            ev.ResponseStart(model_name='m'),
            ev.PartStart(0, TextPart(content='x')),
        ]
    )
    [response] = collector.messages  # no empty response before it
    assert isinstance(response, ModelResponse)
    assert (response.model_name, response.provider_response_id) == ('m', 'r')
    assert response.metadata == {ev.MESSAGE_METADATA_KEY: {'a': 1}, ev.STATE_METADATA_KEY: {'s': 1}}


def test_message_metadata_merges_key_by_key() -> None:
    collector = collect(
        [
            ev.MessageMetadata({'a': 1, 'b': 1}),
            ev.PartStart(0, TextPart(content='x')),
            ev.MessageMetadata({'b': 2}),
        ]
    )
    [response] = collector.messages
    assert response.metadata == {ev.MESSAGE_METADATA_KEY: {'a': 1, 'b': 2}}


def test_state_is_the_snapshot_with_every_delta_applied_and_kept_on_the_last_response() -> None:
    collector = collect(
        [
            ev.StateSnapshot({'todo': ['a']}),  # before any response: the first one takes it
            ev.StateDelta([{'op': 'add', 'path': '/todo/-', 'value': 'b'}]),
            ev.PartStart(0, TextPart(content='x')),
            ev.PartEnd(0),
            ev.ToolResult(ToolReturnPart(tool_name='t', content='ok', tool_call_id='c')),
            ev.ResponseStart(),
            ev.StateDelta([{'op': 'replace', 'path': '/todo/0', 'value': 'A'}]),
        ]
    )
    first, _request, second = collector.messages
    assert collector.state == {'todo': ['A', 'b']}
    assert first.metadata is None  # the state moved on to the run's last response
    assert second.metadata == {ev.STATE_METADATA_KEY: {'todo': ['A', 'b']}}
    collector.feed(ev.ToolResult(ToolReturnPart(tool_name='t', content='ok', tool_call_id='d')))
    collector.feed(ev.PartStart(0, TextPart(content='y')))  # a response with no state event of its own
    *_, third = collector.messages
    assert third.metadata == {ev.STATE_METADATA_KEY: {'todo': ['A', 'b']}}
    assert collector.messages[2].metadata is None


def test_a_delta_that_does_not_apply_fails_and_leaves_the_state_as_it_was() -> None:
    collector = collect([ev.StateSnapshot({'n': 1})])
    with pytest.raises(JsonPatchError):
        collector.feed(ev.StateDelta([{'op': 'remove', 'path': '/missing'}]))
    assert collector.state == {'n': 1}


@pytest.mark.parametrize(
    'event',
    [
        ev.StepStarted('plan'),
        ev.StepFinished('plan'),
        ev.ActivitySnapshot('a1', 'plan', {'steps': [1]}),
        ev.ActivityDelta('a1', 'plan', [{'op': 'add', 'path': '/steps/-', 'value': 2}]),
        ev.RawEvent({'type': 'vendor'}, source='openai'),
    ],
)
def test_ui_only_events_keep_nothing(event: ev.AgentEvent) -> None:
    assert collect([event]).messages == []


def test_a_whole_response_expands_to_events_that_collect_back_to_it() -> None:
    stored: list[Any] = [
        {
            'kind': 'response',
            'parts': [
                {'part_kind': 'builtin-tool-call', 'tool_name': 'web_search', 'args': {'q': 1}, 'tool_call_id': 'w'},
                {'part_kind': 'builtin-tool-return', 'tool_name': 'web_search', 'content': [1], 'tool_call_id': 'w'},
                {'part_kind': 'speech', 'audio': 'kept in the history, never streamed'},
                {'part_kind': 'text', 'content': 'hi', 'citations': [WEB.model_dump(mode='json')]},
            ],
            'usage': {'input_tokens': 5, 'output_tokens': 1},
            'provider_response_id': 'r1',
        }
    ]
    [response] = ModelMessagesTypeAdapter.validate_python(stored)
    assert isinstance(response, ModelResponse) and isinstance(response.parts[2], OpaquePart)
    [collected] = collect(list(ev.events_from_message(response))).messages
    assert isinstance(collected, ModelResponse)
    assert collected.parts == [response.parts[0], response.parts[1], response.parts[3]]
    assert (collected.usage, collected.provider_response_id) == (response.usage, 'r1')
