"""VercelAIEventStream: framing, chunk schema, steps, finish reasons, errors, approvals, goldens."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from vercel_ai_cases import FIXTURES, HISTORIES, SCENARIOS, T1, Scenario, normalise_sse, scenario_stream

from uibridge import (
    ModelResponse,
    RetryFeedbackPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    retry_feedback_payload,
)
from uibridge.adapters.vercel_ai import UIMessageChunkAdapter, VercelAIEventStream, dump_messages, encode_events
from uibridge.core.events import (
    AgentEvent,
    CustomData,
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
)
from uibridge.core.messages import FinishReason
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.stream import EventStreamEncoder

REGENERATE = os.environ.get('UIBRIDGE_REGENERATE_GOLDENS') == '1'


def encode(scenario: Scenario) -> tuple[bytes, VercelAIEventStream]:
    stream = scenario_stream(scenario)
    data = stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
    return data, stream


def chunks_of(data: bytes) -> list[dict[str, Any]]:
    text = data.decode()
    assert text.endswith('data: [DONE]\n\n')
    events = text.split('\n\n')
    assert events[-1] == ''
    chunks: list[dict[str, Any]] = []
    for event in events[:-2]:
        assert event.startswith('data: ') and '\n' not in event
        chunks.append(json.loads(event[len('data: ') :]))
    return chunks


def test_headers() -> None:
    assert dict(VercelAIEventStream().headers) == {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-vercel-ai-ui-message-stream': 'v1',
        'x-accel-buffering': 'no',
    }


def test_it_is_an_event_stream_encoder() -> None:
    encoder: EventStreamEncoder = VercelAIEventStream()
    assert encoder.start().startswith(b'data: {"type":"start"')


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_every_chunk_is_valid_and_ordered(name: str) -> None:
    chunks = chunks_of(encode(SCENARIOS[name])[0])
    assert chunks[0]['type'] == 'start'
    assert [c['type'] for c in chunks].count('start') == 1
    assert chunks[-1]['type'] in ('finish', 'abort')
    open_ids: set[str] = set()
    steps = 0
    for chunk in chunks:
        model = UIMessageChunkAdapter.validate_python(chunk)
        assert model.model_dump(mode='json') == chunk, 'a key the schema does not know, or a null'
        kind = chunk['type']
        if kind.endswith('-start') and kind != 'tool-input-start':
            open_ids.add(f'{kind[: -len("-start")]}:{chunk.get("id")}')
        elif kind.endswith(('-delta', '-end')) and not kind.startswith('tool'):
            key = f'{kind.rsplit("-", 1)[0]}:{chunk["id"]}'
            assert key in open_ids, f'{kind} before its start'
            if kind.endswith('-end'):
                open_ids.discard(key)
        if kind == 'start-step':
            assert steps == 0
            steps = 1
        elif kind == 'finish-step':
            assert steps == 1
            steps = 0
    assert steps == 0
    assert not {key for key in open_ids if not key.startswith('step')}, 'a part left open'


def test_message_ids_are_unique_unless_continuing() -> None:
    ids = {VercelAIEventStream().message_id for _ in range(50)}
    assert len(ids) == 50
    assert VercelAIEventStream(message_id='m1').start() == b'data: {"type":"start","messageId":"m1"}\n\n'


@pytest.mark.parametrize(
    ('reason', 'expected'),
    [
        (None, 'stop'),
        ('stop', 'stop'),
        ('length', 'length'),
        ('content_filter', 'content-filter'),
        ('tool_call', 'tool-calls'),
        ('error', 'error'),
    ],
)
def test_finish_reason(reason: FinishReason | None, expected: str) -> None:
    assert chunks_of(encode_events([RunFinished(reason)]))[-1] == {'type': 'finish', 'finishReason': expected}


@pytest.mark.parametrize('answered_by', ['client', 'approval'])
def test_a_call_waiting_for_the_client_finishes_with_tool_calls(answered_by: Any) -> None:
    events: list[AgentEvent] = [
        PartStart(0, ToolCallPart(tool_name='t', args={}, tool_call_id='c')),
        PartEnd(0),
        ToolCallReady('c', answered_by),
        RunFinished('stop'),
    ]
    assert chunks_of(encode_events(events))[-1] == {'type': 'finish', 'finishReason': 'tool-calls'}


def test_the_approval_id_is_one_the_server_can_verify() -> None:
    keyring = Keyring('secret')
    call = ToolCallPart(tool_name='delete', args={'all': True}, tool_call_id='c')
    events: list[AgentEvent] = [PartStart(0, call), PartEnd(0), ToolCallReady('c', 'approval')]
    stream = VercelAIEventStream(keyring=keyring, thread_id='chat-1')
    chunks = chunks_of(stream.start() + b''.join(stream.encode(e) for e in events) + stream.close())
    (request,) = [c for c in chunks if c['type'] == 'tool-approval-request']
    assert request['toolCallId'] == 'c'
    assert keyring.verify_approval(request['approvalId'], 'chat-1', call)
    assert not keyring.verify_approval(request['approvalId'], 'chat-2', call)
    assert not keyring.verify_approval(
        request['approvalId'], 'chat-1', call.model_copy(update={'args': {'all': False}})
    )
    assert not Keyring('other').verify_approval(request['approvalId'], 'chat-1', call)
    response = stream.new_messages[0]
    assert isinstance(response, ModelResponse)
    assert response.metadata == {
        'uibridge_answered_by': {'c': 'approval'},
        'uibridge_vercel_ai': {'approvals': {'c': {'id': request['approvalId']}}},
    }


def test_an_error_closes_open_parts_then_sends_error_and_finish() -> None:
    chunks = chunks_of(encode(SCENARIOS['error_mid_text'])[0])
    kinds = [c['type'] for c in chunks]
    assert kinds[-4:] == ['text-end', 'finish-step', 'error', 'finish']
    assert chunks[-2] == {'type': 'error', 'errorText': 'The model is unavailable.'}
    assert chunks[-1]['finishReason'] == 'error'
    assert 'ignored' not in json.dumps(chunks)


def test_an_error_answers_a_call_it_cut_off_as_failed() -> None:
    """The call ends signed with the arguments it got, and its result is the failure, signed too: the next
    turn's history keeps both (tests/e2e/test_next_turn.py)."""
    events: list[AgentEvent] = [
        PartStart(0, ToolCallPart(tool_name='t', args='{"a": ', tool_call_id='c')),
        RunError('Something went wrong.'),
    ]
    chunks = chunks_of(encode_events(events))
    types = [c['type'] for c in chunks]
    assert 'tool-input-error' not in types
    (call,) = [c for c in chunks if c['type'] == 'tool-input-available']
    assert call['providerMetadata']['uibridge']['sig'].startswith('v1.')
    (failed,) = [c for c in chunks if c['type'] == 'tool-output-error']
    assert failed['toolCallId'] == 'c' and failed['errorText'] == 'Something went wrong.'
    assert failed['providerMetadata']['uibridge']['outcome'] == 'failed'
    assert failed['providerMetadata']['uibridge']['sig'].startswith('v1.')
    assert types.index('tool-input-available') < types.index('tool-output-error') < types.index('error')


def test_an_error_ends_a_client_tool_call_it_cut_off_as_an_input_error() -> None:
    """A call a client tool answers is never handed to the client with half its arguments."""
    events: list[AgentEvent] = [
        PartStart(0, ToolCallPart(tool_name='t', args='{"a": ', tool_call_id='c')),
        ToolCallReady('c', 'client'),
        RunError('Something went wrong.'),
    ]
    chunks = chunks_of(encode_events(events))
    (error,) = [c for c in chunks if c['type'] == 'tool-input-error']
    assert error['errorText'] == 'Something went wrong.'
    assert not [c for c in chunks if c['type'] in ('tool-input-available', 'tool-output-error')]


def test_cancel_sends_abort() -> None:
    chunks = chunks_of(encode(SCENARIOS['cancelled'])[0])
    assert chunks[-1] == {'type': 'abort', 'reason': 'user stop'}
    assert 'finish' not in [c['type'] for c in chunks]
    assert chunks_of(encode_events([RunCancelled()]))[-1] == {'type': 'abort'}


def test_nothing_after_the_end() -> None:
    stream = VercelAIEventStream()
    stream.start()
    assert stream.encode(RunFinished()).endswith(b'data: [DONE]\n\n')
    assert stream.encode(PartStart(0, TextPart(content='late'))) == b''
    assert stream.close() == b''


def test_close_finishes_a_stream_that_did_not_end() -> None:
    stream = VercelAIEventStream()
    data = stream.start() + stream.encode(PartStart(0, TextPart(content='x'))) + stream.close()
    assert [c['type'] for c in chunks_of(data)][-4:] == ['text-delta', 'text-end', 'finish-step', 'finish']


def test_retry_feedback_sits_between_steps_as_a_data_part() -> None:
    part = RetryFeedbackPart(content='No tool was called.', cause='model_retry', timestamp=T1)
    events: list[AgentEvent] = [
        ResponseStart(),
        PartStart(0, TextPart(content='bad')),
        PartEnd(0),
        RetryFeedback(part),
        ResponseStart(),
        PartStart(0, TextPart(content='good')),
        PartEnd(0),
    ]
    chunks = chunks_of(encode_events(events))
    kinds = [c['type'] for c in chunks]
    at = kinds.index('data-retry-feedback')
    assert kinds[at - 1] == 'finish-step' and kinds[at + 1] == 'start-step'
    assert chunks[at] == {
        'type': 'data-retry-feedback',
        'data': {**retry_feedback_payload(part), 'sig': default_keyring().sign_part(part)},
    }
    assert kinds.count('start-step') == 2


def test_deltas_are_escaped_json() -> None:
    stream = VercelAIEventStream()
    stream.start()
    stream.encode(PartStart(0, TextPart(content='')))
    nasty = '"}\n\ndata: {"type":"error","errorText":"x"}\n\n\u2028'
    data = stream.encode(PartDelta(0, nasty))
    (chunk,) = chunks_of(data + b'data: [DONE]\n\n')
    assert chunk['delta'] == nasty


def test_new_messages_are_what_the_events_describe() -> None:
    _, stream = encode(SCENARIOS['whole_messages'])
    source = HISTORIES['tool_calls'][1:]
    assert [m.kind for m in stream.new_messages] == [m.kind for m in source]
    assert [m.parts for m in stream.new_messages] == [m.parts for m in source]
    assert stream.new_messages[-1].finish_reason == 'stop'  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_stream_matches_the_golden_file(name: str) -> None:
    path = FIXTURES / f'{name}.sse'
    text = normalise_sse(encode(SCENARIOS[name])[0])
    if REGENERATE:
        path.write_text(text)
    assert path.read_text() == text


def test_a_split_surrogate_pair_stays_valid_json() -> None:
    data = encode_events([PartStart(0, TextPart(content='a\ud83d')), PartDelta(0, '\ude00b'), PartEnd(0)])
    deltas = [c['delta'] for c in chunks_of(data) if c['type'] == 'text-delta']
    assert ''.join(deltas) == 'a\ud83d\ude00b'
    data.decode('utf-8')


def test_custom_data_without_a_json_form_is_made_json() -> None:
    moment = datetime(2026, 1, 2, tzinfo=UTC)
    chunks = chunks_of(encode_events([CustomData('when', {'at': moment, 'raw': b'\x00'})]))
    (data,) = [c for c in chunks if c['type'] == 'data-when']
    assert data['data']['at'] == '2026-01-02T00:00:00Z'


def test_nan_and_infinities_in_custom_data_are_null_so_the_chunk_still_parses() -> None:
    data = encode_events([CustomData('stats', {'mean': math.nan, 'max': math.inf, 'note': 'a\ud83d'})])
    for line in data.decode().split('\n\n'):
        if line.startswith('data: {'):
            json.loads(line[len('data: ') :], parse_constant=lambda token: pytest.fail(f'{token} is no JSON'))
    (stats,) = [c for c in chunks_of(data) if c['type'] == 'data-stats']
    assert stats['data'] == {'mean': None, 'max': None, 'note': 'a\ud83d'}


def test_subclassed_events_are_written_like_their_base_classes() -> None:
    # Events are taken by exact type first; a subclass resolves through its base class.
    @dataclass(frozen=True, slots=True)
    class MyStart(ResponseStart):
        pass

    @dataclass(frozen=True, slots=True)
    class MyEnd(PartEnd):
        pass

    plain = [ResponseStart(model_name='m'), PartStart(0, TextPart(content='Hi')), PartEnd(0)]
    subclassed = [MyStart(model_name='m'), PartStart(0, TextPart(content='Hi')), MyEnd(0)]
    assert normalise_sse(encode_events(subclassed, message_id='msg_1')) == normalise_sse(
        encode_events(plain, message_id='msg_1')
    )


def test_what_is_no_agent_event_is_a_type_error() -> None:
    with pytest.raises(TypeError, match='not an agent event: str'):
        VercelAIEventStream().encode('text')  # pyright: ignore[reportArgumentType]


# ------------------------------------------------------------------------------------------ signatures


def _available(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in chunks if c['type'] == 'tool-input-available']


def test_text_and_reasoning_end_with_their_whole_metadata_signed() -> None:
    events: list[AgentEvent] = [
        ResponseStart(),
        PartStart(0, TextPart(content='Hel', id='t_1')),
        PartDelta(0, 'lo'),
        PartStart(1, ThinkingPart(content='hm')),
        PartEnd(1, signature='provider-sig'),
        PartEnd(0),
    ]
    chunks = chunks_of(encode_events(events))
    keyring = default_keyring()
    (text_end,) = [c for c in chunks if c['type'] == 'text-end']
    ours = text_end['providerMetadata']['uibridge']
    assert ours['id'] == 't_1' and 'response' in ours
    assert keyring.verify_part(TextPart(content='Hello', id='t_1'), ours['sig'])
    assert not keyring.verify_part(TextPart(content='Hello'), ours['sig'])  # the id is signed too
    (reasoning_end,) = [c for c in chunks if c['type'] == 'reasoning-end']
    ours = reasoning_end['providerMetadata']['uibridge']
    assert ours['signature'] == 'provider-sig'
    assert keyring.verify_part(ThinkingPart(content='hm', signature='provider-sig'), ours['sig'])


def test_a_client_tool_call_is_sent_once_with_its_signed_mark() -> None:
    call = ToolCallPart(tool_name='locate', args='', tool_call_id='c')
    events: list[AgentEvent] = [PartStart(0, call), PartDelta(0, '{"precise": true}'), PartEnd(0)]
    stream = VercelAIEventStream()
    body = stream.start() + b''.join(stream.encode(e) for e in events)
    assert b'tool-input-available' not in body  # held: who answers it is not known yet
    body += stream.encode(ToolCallReady('c', 'client')) + stream.close()
    (available,) = _available(chunks_of(body))  # once: a second one would run the client tool twice (onToolCall)
    ours = available['providerMetadata']['uibridge']
    assert ours['client'] is True
    finished = ToolCallPart(tool_name='locate', args='{"precise": true}', tool_call_id='c')  # as the model wrote it
    assert default_keyring().verify_part(finished, ours['sig'], client=True)
    assert not default_keyring().verify_part(finished, ours['sig'])


def test_a_mark_that_comes_while_the_call_streams_is_sent_at_its_end() -> None:
    call = ToolCallPart(tool_name='locate', args={}, tool_call_id='c')
    events: list[AgentEvent] = [PartStart(0, call), ToolCallReady('c', 'client'), PartEnd(0), RunFinished()]
    (available,) = _available(chunks_of(encode_events(events)))
    assert available['providerMetadata']['uibridge']['client'] is True


def test_a_server_call_is_sent_right_before_its_result_or_at_the_end_of_its_step() -> None:
    events: list[AgentEvent] = [
        ResponseStart(),
        PartStart(0, ToolCallPart(tool_name='a', args={}, tool_call_id='a')),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name='b', args={}, tool_call_id='b')),
        PartEnd(1),
        PartStart(2, TextPart(content='Running both.')),
        PartEnd(2),
        ToolResult(ToolReturnPart(tool_name='a', content=1, tool_call_id='a', timestamp=T1)),
        ResponseStart(),
        PartStart(0, TextPart(content='Done.')),
        PartEnd(0),
    ]
    kinds = [(c['type'], c.get('toolCallId')) for c in chunks_of(encode_events(events))]
    at = kinds.index(('tool-input-available', 'a'))
    assert kinds[at + 1] == ('tool-output-available', 'a')
    # `b` got no answer in its step: sent unmarked before the step ends, where the client can still place it.
    assert kinds.index(('tool-input-available', 'b')) == kinds.index(('finish-step', None)) - 1
    assert 'client' not in json.dumps([c for c in kinds if c[0] == 'tool-input-available'])


def test_a_mark_after_the_call_s_step_ended_cannot_reach_the_client_and_says_so() -> None:
    events: list[AgentEvent] = [
        PartStart(0, ToolCallPart(tool_name='t', args={}, tool_call_id='c')),
        PartEnd(0),
        ResponseStart(),
    ]
    stream = VercelAIEventStream()
    for event in events:
        stream.encode(event)
    with pytest.warns(UserWarning, match='came after its step ended'):
        assert stream.encode(ToolCallReady('c', 'client')) == b''


def _refusal(continued: bool) -> list[dict[str, Any]]:
    scenario = SCENARIOS['approval_refused']
    stream = scenario_stream(scenario) if continued else VercelAIEventStream(message_id='msg_continued')
    return chunks_of(stream.start() + b''.join(stream.encode(e) for e in scenario.events) + stream.close())


def test_a_denial_in_the_continued_message_is_sent_with_the_call_metadata_the_client_holds() -> None:
    chunks = _refusal(continued=True)
    (answer,) = [c for c in chunks if c['type'] == 'tool-approval-response']
    assert answer['approvalId'] == 'apr_call_a1' and answer['approved'] is False
    assert 'reason' not in answer  # the client's own answer stays as it wrote it
    ours = answer['providerMetadata']['uibridge']
    content = 'The user denied this call: Too risky'
    stamp = datetime.fromisoformat(ours['result']['timestamp'])
    denial = ToolReturnPart(
        tool_name='delete_all', content=content, tool_call_id='call_a1', outcome='denied', timestamp=stamp
    )
    assert ours['result']['content'] == content  # the client's reason is 'Too risky'
    assert default_keyring().verify_part(denial, ours['result']['sig'])
    assert 'sig' in ours and 'response' in ours  # the call's, echoed as the client sent them
    kinds = [c['type'] for c in chunks]
    assert kinds.index('tool-approval-response') + 1 == kinds.index('tool-output-denied')


def test_without_the_continued_message_a_denial_is_only_marked_denied() -> None:
    kinds = [c['type'] for c in _refusal(continued=False)]
    assert 'tool-approval-response' not in kinds and 'tool-output-denied' in kinds


def test_an_approval_asked_while_the_call_streams_is_asked_when_it_ends() -> None:
    call = ToolCallPart(tool_name='delete', args='', tool_call_id='c')
    events: list[AgentEvent] = [
        PartStart(0, call),
        ToolCallReady('c', 'approval'),
        PartDelta(0, '{"all": true}'),
        PartEnd(0),
        RunFinished(),
    ]
    stream = VercelAIEventStream(thread_id='chat-1')
    chunks = chunks_of(stream.start() + b''.join(stream.encode(e) for e in events) + stream.close())
    kinds = [c['type'] for c in chunks]
    assert kinds.index('tool-input-available') + 1 == kinds.index('tool-approval-request')
    (available,) = _available(chunks)
    assert available['providerMetadata']['uibridge']['approval'] is True
    (request,) = [c for c in chunks if c['type'] == 'tool-approval-request']
    finished = ToolCallPart(tool_name='delete', args='{"all": true}', tool_call_id='c')
    assert default_keyring().verify_approval(request['approvalId'], 'chat-1', finished)


def test_a_call_asked_about_then_denied_in_the_same_run_is_answered_as_the_dump_writes_it() -> None:
    call = ToolCallPart(tool_name='delete', args={'all': True}, tool_call_id='c')
    denial = ToolReturnPart(tool_name='delete', content='Timed out.', tool_call_id='c', outcome='denied', timestamp=T1)
    events: list[AgentEvent] = [PartStart(0, call), PartEnd(0), ToolCallReady('c', 'approval'), ToolResult(denial)]
    stream = VercelAIEventStream(thread_id='chat-1')
    chunks = chunks_of(stream.start() + b''.join(stream.encode(e) for e in events) + stream.close())
    (request,) = [c for c in chunks if c['type'] == 'tool-approval-request']
    (answer,) = [c for c in chunks if c['type'] == 'tool-approval-response']
    assert answer['approvalId'] == request['approvalId'] and answer['reason'] == 'Timed out.'
    assert default_keyring().verify_part(denial, answer['providerMetadata']['uibridge']['result']['sig'])
    (message,) = dump_messages(stream.new_messages)
    tool = message.model_dump(mode='json')['parts'][1]
    assert tool['approval'] == {'id': request['approvalId'], 'approved': False, 'reason': 'Timed out.'}
    assert tool['callProviderMetadata'] == answer['providerMetadata']
