"""The events beyond text and tool calls through the AG-UI adapter: each one's wire form, and native parts,
citations and usage through dump and load (signed, and verified back).

What the real `@ag-ui/client` makes of a stream holding every one of them is in `test_agui_client.py`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import ActivitySnapshotEvent, RawEvent, StateSnapshotEvent
from agui_helpers import comparable_history, sse_events
from agui_scenarios import DOC_SOURCE, SEARCH_RETURN, T0, WEB_SOURCE

from neutral_views import agent_view, as_verified
from uibridge import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from uibridge.adapters.ag_ui import AGUIEventStream, dump_messages, encode_events, load_messages
from uibridge.core import events as ev
from uibridge.core.citations import Citation
from uibridge.core.messages import ImageUrl, NativeToolCallPart, NativeToolReturnPart, UserPromptPart
from uibridge.core.provenance import Keyring
from uibridge.core.usage import Usage
from uibridge.core.verification import SignatureClaims, verify_history

KEYRING = Keyring(b'agui-new-events')


def events(*agent_events: ev.AgentEvent, **kwargs: Any) -> list[dict[str, Any]]:
    """The stream's events, without RUN_STARTED and timestamps."""
    body = encode_events(list(agent_events), keyring=KEYRING, **kwargs)
    return [{k: v for k, v in e.items() if k != 'timestamp'} for e in sse_events(body)[1:]]


def of_type(stream: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [e for e in stream if e['type'] in kinds]


def sdk(event: Any) -> dict[str, Any]:
    return event.model_dump(mode='json', by_alias=True, exclude_none=True)


def text(index: int, content: str, citations: list[Citation] | None = None) -> list[ev.AgentEvent]:
    return [ev.PartStart(index, TextPart(content=content, citations=citations)), ev.PartEnd(index)]


# ------------------------------------------------------------------------------ beside the messages


def test_state_steps_activity_and_raw_are_the_sdk_events() -> None:
    patch = [{'op': 'add', 'path': '/items/-', 'value': None}, {'op': 'move', 'from': '/a', 'path': '/b'}]
    stream = events(
        ev.StateSnapshot({'items': [], 'a': 1}),
        ev.StateDelta(patch),
        ev.ActivitySnapshot('act', 'plan', {'steps': ['x']}),
        ev.ActivitySnapshot('act', 'plan', {'more': True}, replace=False),
        ev.ActivityDelta('act', 'plan', [{'op': 'replace', 'path': '/steps/0', 'value': 'y'}]),
        ev.RawEvent({'kind': 'delta', 'n': 1}, source='anthropic'),
        ev.RawEvent([1, 2]),
    )
    assert stream[:-1] == [
        sdk(StateSnapshotEvent(snapshot={'items': [], 'a': 1})),
        {'type': 'STATE_DELTA', 'delta': patch},
        sdk(ActivitySnapshotEvent(message_id='act', activity_type='plan', content={'steps': ['x']})),
        {
            **sdk(ActivitySnapshotEvent(message_id='act', activity_type='plan', content={'more': True})),
            'replace': False,
        },
        {
            'type': 'ACTIVITY_DELTA',
            'messageId': 'act',
            'activityType': 'plan',
            'patch': [{'op': 'replace', 'path': '/steps/0', 'value': 'y'}],
        },
        sdk(RawEvent(event={'kind': 'delta', 'n': 1}, source='anthropic')),
        sdk(RawEvent(event=[1, 2])),
    ]
    assert stream[1]['delta'][0] == {'op': 'add', 'path': '/items/-', 'value': None}  # a null value is a value


def test_steps_pair_up_and_the_run_finishes_what_is_open() -> None:
    stream = events(
        ev.StepStarted('a'),
        ev.StepStarted('a'),  # already open: the client refuses a second start
        ev.StepFinished('nope'),  # never started: the client refuses it
        ev.StepStarted('b'),
        ev.StepFinished('a'),
        ev.StepStarted('c'),
    )
    steps = [(e['type'], e['stepName']) for e in of_type(stream, 'STEP_STARTED', 'STEP_FINISHED')]
    assert steps == [
        ('STEP_STARTED', 'a'),
        ('STEP_STARTED', 'b'),
        ('STEP_FINISHED', 'a'),
        ('STEP_STARTED', 'c'),
        ('STEP_FINISHED', 'b'),  # the run's end, in the order they started
        ('STEP_FINISHED', 'c'),
    ]
    assert stream[-1]['type'] == 'RUN_FINISHED'
    cancelled = events(ev.StepStarted('x'), ev.RunCancelled(), client_protocol_version='1.0')
    assert [e['type'] for e in cancelled] == ['STEP_STARTED', 'STEP_FINISHED', 'RUN_FINISHED']
    errored = events(ev.StepStarted('x'), ev.RunError('boom'))
    assert [e['type'] for e in errored] == ['STEP_STARTED', 'RUN_ERROR']  # RUN_ERROR may leave a step open


def test_sources_follow_the_text_or_come_at_once() -> None:
    late = Citation(sources=[DOC_SOURCE])
    stream = events(
        ev.PartStart(0, TextPart(content='a', citations=[Citation(sources=[WEB_SOURCE, DOC_SOURCE])])),
        ev.CitationAdded(0, Citation(sources=[WEB_SOURCE])),
        ev.PartEnd(0),
        *text(1, 'b'),
        ev.CitationAdded(0, late),  # after its end: at once, for the message it names
        ev.CitationAdded(1, late),
    )
    kinds = [(e['type'], e.get('value', {}).get('source', {}).get('kind')) for e in stream]
    assert kinds[:5] == [
        ('TEXT_MESSAGE_START', None),
        ('TEXT_MESSAGE_CONTENT', None),
        ('CUSTOM', 'web'),  # CitationAdded while the text streams
        ('TEXT_MESSAGE_END', None),
        ('CUSTOM', 'web'),  # the citations the part started with, at its end
    ]
    sources = of_type(stream, 'CUSTOM')
    assert {s['name'] for s in sources} == {'uibridge.source'}
    first, second = (e['messageId'] for e in of_type(stream, 'TEXT_MESSAGE_START'))
    assert [s['value']['messageId'] for s in sources] == [first, first, first, first, second]
    assert sources[2]['value']['source'] == DOC_SOURCE.model_dump(mode='json', exclude_none=True)
    # The END record holds what the part cited when it ended, and its signature covers them.
    end = of_type(stream, 'TEXT_MESSAGE_END')[0]['metadata']['uibridge']['part']
    assert [len(c['sources']) for c in end['citations']] == [2, 1]


def test_message_metadata_and_late_response_info() -> None:
    stream = events(
        ev.ResponseStart(model_name='m'),
        ev.MessageMetadata({'early': 1}),
        ev.ResponseInfo(provider_response_id='early-id'),
        *text(0, 'hi'),
        ev.MessageMetadata({'late': [1, None]}),
        ev.ResponseInfo(usage=Usage(input_tokens=3)),  # usage alone: only the run's end carries it
        ev.ResponseInfo(finish_reason='length', model_name='m2', provider_details={'tier': 'x'}),
    )
    start = of_type(stream, 'TEXT_MESSAGE_START')[0]
    record = start['metadata']['uibridge']['response']
    # Known before the response's first message: in its record, as a dump writes it.
    assert record['provider_response_id'] == 'early-id'
    assert record['metadata'] == {'uibridge_message_metadata': {'early': 1}}
    customs = [(e['name'], e['value']) for e in of_type(stream, 'CUSTOM')]
    assert customs == [
        ('uibridge.message_metadata', {'messageId': start['messageId'], 'metadata': {'late': [1, None]}}),
        (
            'uibridge.response_info',
            {
                'messageId': start['messageId'],
                'finish_reason': 'length',
                'model_name': 'm2',
                'provider_details': {'tier': 'x'},
            },
        ),
    ]


def test_late_facts_before_any_response_keep_the_stream_ids_aligned() -> None:
    stream = AGUIEventStream(thread_id='t', run_id='r', keyring=KEYRING)
    body = b''.join(
        [
            stream.start(),
            stream.encode(ev.ToolResult(ToolReturnPart(tool_name='f', content='x', tool_call_id='c', timestamp=T0))),
            stream.encode(ev.MessageMetadata({'k': 'v'})),  # no response yet: the first one takes it
            *(stream.encode(e) for e in text(0, 'answer')),
            stream.close(),
        ]
    )
    ids = [e['messageId'] for e in sse_events(body) if e['type'] in ('TOOL_CALL_RESULT', 'TEXT_MESSAGE_START')]
    dumped = dump_messages(stream.new_messages, keyring=KEYRING)
    assert [m.id for m in dumped] == ids
    assert dumped[-1].metadata['uibridge']['response']['metadata'] == {'uibridge_message_metadata': {'k': 'v'}}


def test_usage_per_provider_and_model_on_the_runs_end() -> None:
    runs = [
        ev.ResponseStart(model_name='big', provider_name='p'),
        *text(0, 'a'),
        ev.ResponseInfo(
            usage=Usage(
                input_tokens=10, output_tokens=4, output_reasoning_tokens=2, cache_read_tokens=6, cache_write_tokens=1
            )
        ),
        ev.ResponseStart(model_name='small', provider_name='p'),
        *text(0, 'b'),
        ev.ResponseInfo(usage=Usage(input_tokens=1, output_tokens=1)),
        ev.ResponseStart(model_name='big', provider_name='p'),
        ev.ResponseInfo(usage=Usage(input_tokens=5, output_tokens=5)),
        ev.ResponseStart(model_name='none'),  # no usage reported: no entry
        *text(0, 'c'),
    ]
    expected = [
        {
            'provider': 'p',
            'model': 'big',
            'inputTokens': 15,
            'outputTokens': 9,
            'totalTokens': 24,
            'reasoningTokens': 2,
            'cachedInputTokens': 6,
            'cacheWriteInputTokens': 1,
        },
        {'provider': 'p', 'model': 'small', 'inputTokens': 1, 'outputTokens': 1, 'totalTokens': 2},
    ]
    assert events(*runs)[-1]['usage'] == expected
    assert events(*runs, ev.RunError('boom'))[-1] == {'type': 'RUN_ERROR', 'message': 'boom', 'usage': expected}
    assert 'usage' not in events(*text(0, 'no usage'))[-1]


# ---------------------------------------------------------------------------------------- native tools


def test_a_native_call_streams_signed_at_once_and_is_never_pending() -> None:
    stream = events(
        ev.PartStart(0, NativeToolCallPart(tool_name='web_search', tool_call_id='ws', provider_name='openai')),
        ev.PartDelta(0, '{"q": "x"}'),
        ev.PartEnd(0),
        ev.ToolCallReady('ws', 'approval'),  # the provider answers it: no approval, no pending call
        ev.NativeToolResult(
            NativeToolReturnPart(tool_name='web_search', content={'hits': 2}, tool_call_id='ws', timestamp=T0)
        ),
        ev.PartStart(1, ToolCallPart(tool_name='local', args={}, tool_call_id='call_l')),
        ev.PartEnd(1),
        ev.ToolCallReady('ws', 'client'),
    )
    types = [e['type'] for e in stream]
    assert types == [
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_END',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',  # not held: nobody here answers it
        'TOOL_CALL_RESULT',
        'TEXT_MESSAGE_START',  # a call after the native result opens a new assistant message, as in a dump
        'TEXT_MESSAGE_END',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',
        'RUN_FINISHED',
    ]
    assert stream[2]['metadata'] == {'uibridge': {'native': True}}
    end = stream[4]['metadata']['uibridge']
    assert end['native'] is True and end['provider_name'] == 'openai'
    assert KEYRING.verify_part(
        NativeToolCallPart(tool_name='web_search', args='{"q": "x"}', tool_call_id='ws', provider_name='openai'),
        end['sig'],
    )
    result = stream[5]
    assert result['content'] == '{"hits":2}' and result['metadata']['uibridge']['part']['native'] is True
    assert stream[-1]['outcome'] == {'type': 'success'}


# --------------------------------------------------------------------------------- dump and load


def native_history() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content='Weather in Paris?', timestamp=T0)]),
        ModelResponse(
            parts=[
                NativeToolCallPart(
                    tool_name='web_search', args={'query': 'paris'}, tool_call_id='ws_1', provider_name='openai'
                ),
                SEARCH_RETURN,
                TextPart(
                    content='Sunny.',
                    citations=[Citation(sources=[WEB_SOURCE]), Citation(sources=[DOC_SOURCE, WEB_SOURCE])],
                ),
                NativeToolCallPart(tool_name='code_execution', args='{"code":"1+1"}', tool_call_id='ce_1'),
                NativeToolReturnPart(tool_name='code_execution', content='2', tool_call_id='ce_1', timestamp=T0),
            ],
            model_name='gpt-x',
            provider_name='openai',
            timestamp=T0,
            finish_reason='stop',
            usage=Usage(input_tokens=9, output_tokens=3, cache_read_tokens=2),
            provider_response_id='resp_9',
            provider_details={'tier': 'default'},
        ),
    ]


def through_the_wire(history: list[ModelMessage]) -> list[dict[str, Any]]:
    return json.loads(
        json.dumps([m.model_dump(mode='json', by_alias=True) for m in dump_messages(history, keyring=KEYRING)])
    )


def test_native_parts_citations_and_usage_round_trip_signed() -> None:
    history = native_history()
    wire = through_the_wire(history)
    assert [m['role'] for m in wire] == ['user', 'assistant', 'tool', 'assistant', 'tool']
    assert wire[1]['toolCalls'][0]['metadata']['uibridge']['native'] is True
    assert wire[2]['metadata']['uibridge']['part']['native'] is True
    assert wire[1]['metadata']['uibridge']['response']['usage'] == {
        'input_tokens': 9,
        'output_tokens': 3,
        'cache_read_tokens': 2,
    }
    claims = SignatureClaims()
    loaded = load_messages(wire, claims=claims)
    assert len(loaded) == 2  # the native results are parts of the response, not a request
    assert comparable_history(loaded) == comparable_history(history)
    assert loaded[1].parts[2] == history[1].parts[2]  # citations and all
    verified = verify_history(loaded, claims, KEYRING)
    assert verified.dropped == {} and agent_view(verified.messages) == as_verified(loaded)
    assert len(claims) == 5
    again = json.loads(
        json.dumps([m.model_dump(mode='json', by_alias=True) for m in dump_messages(loaded, keyring=KEYRING)])
    )
    assert again == wire


@pytest.mark.parametrize(
    ('edit', 'dropped'),
    [
        (lambda w: w[2].update(content='{"results":[]}'), 'builtin-tool-return'),
        (lambda w: w[1]['toolCalls'][0]['function'].update(arguments='{"query":"rome"}'), 'builtin-tool-call'),
        (
            lambda w: w[3]['metadata']['uibridge']['part']['citations'][0]['sources'][0].update(url='https://evil'),
            'text',
        ),
        (lambda w: w[3]['metadata']['uibridge']['part']['citations'].pop(), 'text'),
        (lambda w: w[3]['metadata']['uibridge']['part'].pop('citations'), 'text'),
        (lambda w: w[3]['metadata']['uibridge']['part'].update(citations='not a list'), 'text'),
        (lambda w: w[4]['metadata']['uibridge']['part'].update(provider_name='forged'), 'builtin-tool-return'),
    ],
)
def test_an_edited_native_part_or_citation_does_not_verify(edit: Any, dropped: str) -> None:
    wire = through_the_wire(native_history())
    edit(wire)
    claims = SignatureClaims()
    verified = verify_history(load_messages(wire, claims=claims), claims, KEYRING)
    # A provider-run call and its return are kept only together: either half edited drops both.
    native = {'builtin-tool-call': 1, 'builtin-tool-return': 1}
    assert verified.dropped == (native if dropped.startswith('builtin') else {dropped: 1})


def test_a_client_cannot_make_a_call_native() -> None:
    history = [
        ModelRequest(parts=[UserPromptPart(content='hi', timestamp=T0)]),
        ModelResponse(parts=[ToolCallPart(tool_name='f', args={}, tool_call_id='call_f')], timestamp=T0),
    ]
    wire = through_the_wire(history)
    wire[1]['toolCalls'][0]['metadata']['uibridge']['native'] = True
    claims = SignatureClaims()
    loaded = load_messages(wire, claims=claims)
    assert isinstance(loaded[1].parts[0], NativeToolCallPart)
    verified = verify_history(loaded, claims, KEYRING)
    assert verified.dropped == {'builtin-tool-call': 1}


def test_a_tool_messages_content_parts_load_and_dump_back_as_parts() -> None:
    parts = [{'type': 'text', 'text': '20C'}]
    media = [{'type': 'text', 'text': 'see'}, {'type': 'image', 'source': {'type': 'url', 'value': 'https://x/i.png'}}]
    wire = [
        {'id': 'u', 'role': 'user', 'content': 'weather?'},
        {
            'id': 'a',
            'role': 'assistant',
            'content': '',
            'toolCalls': [
                {'id': 'c1', 'type': 'function', 'function': {'name': 'w', 'arguments': '{}'}},
                {'id': 'c2', 'type': 'function', 'function': {'name': 'm', 'arguments': '{}'}},
            ],
        },
        {'id': 't1', 'role': 'tool', 'toolCallId': 'c1', 'content': parts},
        {'id': 't2', 'role': 'tool', 'toolCallId': 'c2', 'content': media},
    ]
    loaded = load_messages(wire)
    first, second = loaded[2].parts
    assert isinstance(first, ToolReturnPart) and first.content == ['20C']
    assert isinstance(second, ToolReturnPart) and second.content == ['see', ImageUrl(url='https://x/i.png')]
    dumped = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in dump_messages(loaded)]
    assert dumped[2]['content'] == parts and dumped[3]['content'] == media
    assert 'json' not in dumped[2]['metadata']['uibridge']['part']
    assert load_messages(dumped) == loaded
    # A server tool's list of strings stays JSON text, which every client version takes; media cannot be text.
    fresh = [loaded[0], loaded[1], ModelRequest(parts=[first.model_copy(), second.model_copy()])]
    written = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in dump_messages(fresh)]
    assert written[2]['content'] == '["20C"]' and written[3]['content'] == media
