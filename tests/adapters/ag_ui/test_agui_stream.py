"""AGUIEventStream: the encoder's own rules, its hot path, and golden streams."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from ag_ui.core import ReasoningMessageContentEvent, TextMessageContentEvent, ToolCallArgsEvent
from ag_ui.encoder import EventEncoder
from agui_helpers import golden, sse_events, stable_sse
from agui_scenarios import T0, random_scenario, scenarios
from hypothesis import given, settings
from hypothesis import strategies as st

from uibridge import (
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from uibridge.adapters.ag_ui import AGUIEventStream, dump_messages, encode_events, load_messages
from uibridge.adapters.ag_ui import stream as agui_stream
from uibridge.core.events import (
    STATE_METADATA_KEY,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseStart,
    RetryFeedback,
    RunCancelled,
    RunError,
    RunFinished,
    StateSnapshot,
    ToolCallReady,
    ToolResult,
    events_from_message,
)
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.stream import EventStreamEncoder
from uibridge.core.verification import SignatureClaims, verify_history


def types(body: bytes) -> list[str]:
    return [e['type'] for e in sse_events(body)]


def test_implements_the_encoder_protocol_and_headers() -> None:
    stream: EventStreamEncoder = AGUIEventStream(thread_id='t', run_id='r')
    assert stream.headers['content-type'] == 'text/event-stream'
    assert stream.start().startswith(b'data: {"type":"RUN_STARTED"')
    assert stream.start() == b''


def test_run_started_carries_input_ids_and_protocol_version() -> None:
    [started, finished] = sse_events(encode_events([], thread_id='thread-9', run_id='run-9'))
    assert {k: started[k] for k in ('threadId', 'runId', 'protocolVersion')} == {
        'threadId': 'thread-9',
        'runId': 'run-9',
        'protocolVersion': '1.0',
    }
    assert 'parentRunId' not in started
    assert finished == {
        'type': 'RUN_FINISHED',
        'timestamp': finished['timestamp'],
        'threadId': 'thread-9',
        'runId': 'run-9',
        'outcome': {'type': 'success'},
    }


def test_run_started_echoes_the_parent_run() -> None:
    [started, _] = sse_events(encode_events([], thread_id='t', run_id='r2', parent_run_id='r1'))
    assert started['parentRunId'] == 'r1'


def test_a_call_cut_off_with_unfinished_arguments_gets_its_signature_but_no_end() -> None:
    """`TOOL_CALL_END` says the arguments are complete: a failed run's cut-off call whose text does not parse
    gets none; its signed record rides on an empty `TOOL_CALL_ARGS` the client merges into the call."""
    stream = AGUIEventStream(thread_id='t', run_id='r')
    stream.start()
    stream.encode(PartStart(0, ToolCallPart(tool_name='f', tool_call_id='cut', args='{"city": "Par')))
    stream.encode(PartStart(1, ToolCallPart(tool_name='g', tool_call_id='whole', args='{"a": 1}')))
    events = sse_events(stream.encode(RunError('Something went wrong.')))
    closing = [(e['type'], e['toolCallId']) for e in events[:-1]]
    assert closing == [
        ('TOOL_CALL_ARGS', 'cut'), ('TOOL_CALL_ARGS', 'cut'), ('TOOL_CALL_END', 'whole'), ('TOOL_CALL_RESULT', 'whole')
    ]  # fmt: skip
    assert events[0]['delta'] == '' and events[0]['metadata']['uibridge']['sig'].startswith('v1.')
    # The cut-off call's failed result may not come as a TOOL_CALL_RESULT while the call is open: it rides, signed,
    # in the call's whole record on another empty TOOL_CALL_ARGS (the reducer replaces the record it merged).
    record = events[1]['metadata']['uibridge']
    assert events[1]['delta'] == '' and record['sig'] == events[0]['metadata']['uibridge']['sig']
    result = record['cut_result']
    assert (result['role'], result['toolCallId'], result['content']) == ('tool', 'cut', 'Something went wrong.')
    assert result['metadata']['uibridge']['part']['outcome'] == 'failed'
    assert result['metadata']['uibridge']['part']['sig'].startswith('v1.')
    assert events[-1]['type'] == 'RUN_ERROR'


def test_encode_before_start_opens_the_stream_and_terminal_events_end_it() -> None:
    stream = AGUIEventStream(thread_id='t', run_id='r')
    first = stream.encode(PartStart(0, TextPart(content='hi')))
    assert types(first) == ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT']
    last = stream.encode(RunFinished())
    assert types(last) == ['TEXT_MESSAGE_END', 'RUN_FINISHED']
    assert stream.encode(PartStart(1, TextPart(content='late'))) == b''
    assert stream.encode(RunError('late')) == b''
    assert stream.close() == b''


def test_error_closes_everything_open_then_run_error() -> None:
    stream = AGUIEventStream(thread_id='t', run_id='r')
    stream.start()
    stream.encode(PartStart(0, TextPart(content='a')))
    stream.encode(PartStart(1, ToolCallPart(tool_name='f', tool_call_id='c')))
    body = stream.encode(RunError('Something went wrong.', code='boom'))
    events = sse_events(body)
    # The call the error cut off gets the error as its failed result, signed: the next turn keeps both.
    assert [e['type'] for e in events] == ['TEXT_MESSAGE_END', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'RUN_ERROR']
    result = events[2]
    assert result['toolCallId'] == 'c' and result['content'] == 'Something went wrong.'
    assert result['metadata']['uibridge']['part']['outcome'] == 'failed'
    assert result['metadata']['uibridge']['part']['sig'].startswith('v1.')
    assert events[-1]['message'] == 'Something went wrong.' and events[-1]['code'] == 'boom'
    assert type(events[-1]['timestamp']) is int
    assert 'code' not in sse_events(encode_events([RunError('x')]))[-1]


@pytest.mark.parametrize(
    ('version', 'outcome'),
    [('1.0', {'type': 'cancelled'}), ('1.3', {'type': 'cancelled'}), ('2.0', {'type': 'cancelled'}), (None, None),
     ('0.9', None), ('1', None), ('v1.0', None)],
)  # fmt: skip
def test_cancelled_outcome_only_for_a_1_0_client(version: str | None, outcome: dict[str, Any] | None) -> None:
    finished = sse_events(encode_events([RunCancelled()], client_protocol_version=version))[-1]
    assert finished['type'] == 'RUN_FINISHED'
    assert finished.get('outcome') == outcome


def test_pending_client_calls_exclude_answered_ones() -> None:
    from uibridge import ToolReturnPart
    from uibridge.core.events import ToolResult

    events = [
        PartStart(0, ToolCallPart(tool_name='a', args={}, tool_call_id='c1')),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name='b', args={}, tool_call_id='c2')),
        PartEnd(1),
        ToolCallReady('c1', 'client'),
        ToolCallReady('c2', 'client'),
        ToolResult(ToolReturnPart(tool_name='a', content='done', tool_call_id='c1')),
    ]
    finished = sse_events(encode_events(events))[-1]
    assert finished['outcome'] == {'type': 'success', 'pendingToolCallIds': ['c2']}


def test_interrupt_ids_are_minted_by_the_keyring_for_the_final_call_in_this_thread() -> None:
    keyring = Keyring('interrupt-test')
    events = [
        PartStart(0, ToolCallPart(tool_name='rm', tool_call_id='c')),
        PartDelta(0, '{"path":"notes/x"}'),
        PartEnd(0),
        ToolCallReady('c', 'approval'),
    ]
    finished = sse_events(encode_events(events, thread_id='thread-7', keyring=keyring))[-1]
    [interrupt] = finished['outcome']['interrupts']
    assert finished['outcome'] == {
        'type': 'interrupt',
        'interrupts': [
            {'id': interrupt['id'], 'reason': 'tool_approval', 'message': 'Approve the call to rm?', 'toolCallId': 'c'}
        ],
    }
    final = ToolCallPart(tool_name='rm', args={'path': 'notes/x'}, tool_call_id='c')
    assert interrupt['id'] == keyring.approval_id('thread-7', final)
    assert not keyring.verify_approval(interrupt['id'], 'thread-8', final)
    assert not Keyring('other').verify_approval(interrupt['id'], 'thread-7', final)


def test_fresh_message_ids_per_response_and_tool_calls_name_an_announced_parent() -> None:
    events = [
        ResponseStart(),
        PartStart(0, ToolCallPart(tool_name='f', args={'a': 1}, tool_call_id='c1')),
        PartEnd(0),
        ResponseStart(),
        PartStart(0, TextPart(content='x')),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name='g', args={}, tool_call_id='c2')),
        PartEnd(1),
    ]
    stream_events = sse_events(encode_events(events, run_id='R'))
    announced: set[str] = set()
    for event in stream_events:
        if event['type'] == 'TEXT_MESSAGE_START':
            assert event['messageId'] not in announced
            announced.add(event['messageId'])
        if event['type'] == 'TOOL_CALL_START':
            assert event['parentMessageId'] in announced
    assert announced == {'R.1', 'R.2'}


def test_new_messages_carry_the_stream_ids_so_dump_reuses_them() -> None:
    stream = AGUIEventStream(thread_id='t', run_id='R')
    body = b''.join(
        [
            stream.start(),
            *(stream.encode(e) for e in events_from_message(ModelResponse(parts=[TextPart(content='hi')]))),
            stream.encode(RetryFeedback(RetryFeedbackPart(content='again', cause='model_retry', timestamp=T0))),
            stream.close(),
        ]
    )
    streamed_ids = [e['messageId'] for e in sse_events(body) if e['type'] == 'TEXT_MESSAGE_START']
    assert [m.id for m in dump_messages(stream.new_messages)] == streamed_ids == ['R.1', 'R.2']


def test_timestamps_are_integer_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    events = sse_events(encode_events([PartStart(0, TextPart(content='x')), RunError('e')]))
    after = time.time_ns() // 1_000_000
    assert all(type(e['timestamp']) is int and before <= e['timestamp'] <= after for e in events)


# --------------------------------------------------------------------------------------------- hot path

_HOT = [
    ('TEXT_MESSAGE_CONTENT', 'messageId', lambda i, d: TextMessageContentEvent(message_id=i, delta=d, timestamp=1)),
    (
        'REASONING_MESSAGE_CONTENT',
        'messageId',
        lambda i, d: ReasoningMessageContentEvent(message_id=i, delta=d, timestamp=1),
    ),
    ('TOOL_CALL_ARGS', 'toolCallId', lambda i, d: ToolCallArgsEvent(tool_call_id=i, delta=d, timestamp=1)),
]

_unicode = st.text(st.characters(exclude_categories=('Cs',)), max_size=40)


@given(entity_id=_unicode, delta=_unicode)
def test_direct_delta_bytes_equal_the_sdk_encoder(entity_id: str, delta: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agui_stream, 'now_ms', lambda: 1)
        for event_type, id_key, build in _HOT:
            direct = agui_stream.delta_frame(event_type, id_key, entity_id, delta)
            assert direct == EventEncoder().encode(build(entity_id, delta)).encode()


# ----------------------------------------------------------------------------------------------- golden


@pytest.mark.parametrize(
    'name', ['server_tool_loop', 'tool_retry_and_feedback', 'approval_interrupt', 'error_mid_stream', 'every_new_event']
)
def test_golden_streams(name: str) -> None:
    scenario = next(s for s in scenarios() if s.name == name)
    body = encode_events(scenario.events, thread_id='thread', run_id='run', **scenario.kwargs)
    golden(f'stream_{name}.sse', stable_sse(body).decode())


# ------------------------------------------------------------------------------------------- structure


@settings(deadline=None)
@given(seed=st.integers(0, 2**32))
def test_random_runs_keep_every_pairing_rule(seed: int) -> None:
    """The verifyEvents rules (reference section d) on many more runs than the Node check replays:
    every START closed before RUN_FINISHED, nothing opened twice, CONTENT/ARGS only while open, parents
    announced, ids the client will see are the ids a dump of `new_messages` gives."""
    scenario = random_scenario(seed)
    stream = AGUIEventStream(thread_id='t', run_id='R')
    body = b''.join([stream.start(), *(stream.encode(e) for e in scenario.events), stream.close()])
    events = sse_events(body)
    open_: dict[str, set[str]] = {'text': set(), 'reasoning': set(), 'span': set(), 'call': set()}
    announced: list[str] = []
    kinds = {
        'TEXT_MESSAGE': ('text', 'messageId'),
        'REASONING_MESSAGE': ('reasoning', 'messageId'),
        'TOOL_CALL': ('call', 'toolCallId'),
    }
    for event in events[1:-1]:
        kind_name, _, phase = event['type'].rpartition('_')
        if event['type'] in ('REASONING_START', 'REASONING_END'):
            kind, key = 'span', 'messageId'
            phase = event['type'].split('_')[1]
        elif kind_name in kinds:
            kind, key = kinds[kind_name]
        else:
            continue
        entity = event[key]
        if phase == 'START':
            assert entity not in open_[kind]
            open_[kind].add(entity)
            if kind in ('text', 'reasoning'):
                announced.append(entity)
            if kind == 'call':
                assert event['parentMessageId'] in announced
        elif phase in ('CONTENT', 'ARGS'):
            assert entity in open_[kind] and event['delta'] != ''
        elif phase == 'END':
            open_[kind].remove(entity)
    assert all(not ids for ids in open_.values())
    assert events[-1]['type'] == 'RUN_FINISHED'
    result_ids = [e['messageId'] for e in events if e['type'] == 'TOOL_CALL_RESULT']
    assert [m.id for m in dump_messages(stream.new_messages)] == sorted(
        [*announced, *result_ids], key=lambda i: int(i.rsplit('.', 1)[1])
    )


# ------------------------------------------------------------------------------------------- signatures

KEYRING = Keyring('stream-signatures')


def _sig(event: dict[str, Any]) -> dict[str, Any]:
    return event['metadata']['uibridge']


def test_each_end_event_carries_the_whole_record_and_the_finished_parts_signature() -> None:
    events = [
        ResponseStart(model_name='m'),
        PartStart(0, ThinkingPart(content='Let me')),
        PartDelta(0, ' think.'),
        PartEnd(0, signature='provider-sig'),
        PartStart(1, TextPart(content='Hel', id='t1')),
        PartDelta(1, 'lo'),
        PartEnd(1),
    ]
    stream_events = sse_events(encode_events(events, keyring=KEYRING))
    starts = {e['type']: e for e in stream_events if e['type'] in ('REASONING_MESSAGE_START', 'TEXT_MESSAGE_START')}
    ends = {e['type']: e for e in stream_events if e['type'] in ('REASONING_MESSAGE_END', 'TEXT_MESSAGE_END')}
    # The reducer replaces `metadata.uibridge` whole: an END repeats what its START sent, and adds the signature.
    thinking = ThinkingPart(content='Let me think.', signature='provider-sig')
    assert _sig(ends['REASONING_MESSAGE_END']) == {
        'response': _sig(starts['REASONING_MESSAGE_START'])['response'],
        'part': {'sig': KEYRING.sign_part(thinking)},
    }
    signed_text = KEYRING.sign_part(TextPart(content='Hello', id='t1'))  # the id is the provider's: signed too
    assert _sig(ends['TEXT_MESSAGE_END']) == {'part': {'id': 't1', 'sig': signed_text}}
    assert _sig(starts['TEXT_MESSAGE_START']) == {'part': {'id': 't1'}}


def test_a_calls_end_waits_until_the_encoder_knows_who_answers_it() -> None:
    stream = AGUIEventStream(thread_id='t', run_id='r', keyring=KEYRING)
    stream.start()
    call = ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='c')
    assert types(stream.encode(PartStart(0, call)) + stream.encode(PartEnd(0))) == [
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_END',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
    ]
    result = ToolResult(ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='c'))
    [end, tool_result] = sse_events(stream.encode(result))
    assert end['type'] == 'TOOL_CALL_END' and tool_result['type'] == 'TOOL_CALL_RESULT'
    assert _sig(end) == {'sig': KEYRING.sign_part(call)}
    assert _sig(tool_result)['part']['sig'] == KEYRING.sign_part(result.part)


@pytest.mark.parametrize('mark_first', [True, False])
def test_a_client_tools_call_is_signed_with_the_client_mark(mark_first: bool) -> None:
    call = ToolCallPart(tool_name='get_location', tool_call_id='c')
    ready = ToolCallReady('c', 'client')
    events = [PartStart(0, call), ready, PartDelta(0, '{}'), PartEnd(0)]
    if not mark_first:
        events = [*events[:1], *events[2:], ready]
    [end] = [e for e in sse_events(encode_events(events, keyring=KEYRING)) if e['type'] == 'TOOL_CALL_END']
    final = call.model_copy(update={'args': {}})
    assert _sig(end) == {'sig': KEYRING.sign_part(final, client=True), 'client': True}
    assert not KEYRING.verify_part(final, _sig(end)['sig'])


def test_calls_nobody_marked_end_unmarked_when_the_run_ends() -> None:
    events = [
        PartStart(0, ToolCallPart(tool_name='a', args={}, tool_call_id='c1')),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name='b', args={}, tool_call_id='c2')),
        PartEnd(1),
        ToolCallReady('c2', 'approval'),
    ]
    stream_events = sse_events(encode_events(events, keyring=KEYRING))
    assert [(e['type'], e.get('toolCallId')) for e in stream_events if e['type'].startswith('TOOL_CALL_E')] == [
        ('TOOL_CALL_END', 'c2'),
        ('TOOL_CALL_END', 'c1'),
    ]
    assert stream_events[-1]['type'] == 'RUN_FINISHED'
    assert all('client' not in _sig(e) for e in stream_events if e['type'] == 'TOOL_CALL_END')


def test_retry_feedback_and_tool_retries_are_signed() -> None:
    feedback = RetryFeedbackPart(content='too long', cause='model_retry', timestamp=T0)
    retry = RetryPromptPart(tool_name='f', content='bad', tool_call_id='c', timestamp=T0)
    events = [PartStart(0, ToolCallPart(tool_name='f', tool_call_id='c')), PartEnd(0), ToolResult(retry)]
    stream_events = sse_events(encode_events([*events, RetryFeedback(feedback)], keyring=KEYRING))
    [result] = [e for e in stream_events if e['type'] == 'TOOL_CALL_RESULT']
    assert _sig(result)['part']['sig'] == KEYRING.sign_part(retry)
    [marker] = [e for e in stream_events if e['type'] == 'REASONING_ENCRYPTED_VALUE']
    assert json.loads(marker['encryptedValue'])['uibridge']['retry_feedback']['sig'] == KEYRING.sign_part(feedback)


def test_a_state_set_after_the_answer_rides_its_first_message_signed() -> None:
    """The state signs with the response's record, which the response's first message carries at its START: a
    state the agent sets after that goes into the message's `encryptedValue` (REASONING_ENCRYPTED_VALUE, which the
    client keeps on the message and sends back), so the next turn loads and verifies it."""
    stream = AGUIEventStream(thread_id='t', run_id='r')
    body = stream.start()
    for event in (PartStart(0, TextPart(content='Counted.')), PartEnd(0), StateSnapshot({'count': 2}), RunFinished()):
        body += stream.encode(event)
    events = sse_events(body)
    [marker] = [e for e in events if e['type'] == 'REASONING_ENCRYPTED_VALUE']
    [start] = [e for e in events if e['type'] == 'TEXT_MESSAGE_START']
    assert marker['entityId'] == start['messageId']
    assert [e['type'] for e in events].index('STATE_SNAPSHOT') < [e['type'] for e in events].index(
        'REASONING_ENCRYPTED_VALUE'
    )
    # The messages as the client holds them: the text message with its record and the marker.
    [end] = [e for e in events if e['type'] == 'TEXT_MESSAGE_END']
    held = {
        'id': start['messageId'], 'role': 'assistant', 'content': 'Counted.',
        'metadata': {**start.get('metadata', {}), **end['metadata']}, 'encryptedValue': marker['encryptedValue'],
    }  # fmt: skip
    prompt = {'id': 'u1', 'role': 'user', 'content': 'count'}
    claims = SignatureClaims()
    loaded = load_messages([prompt, held], claims=claims)
    verified = verify_history(loaded, claims, default_keyring())
    [response] = [m for m in verified.messages if isinstance(m, ModelResponse)]
    assert (response.metadata or {}).get(STATE_METADATA_KEY) == {'count': 2}
    # An edited state does not verify: the history keeps none.
    forged = {**held, 'encryptedValue': marker['encryptedValue'].replace('"count":2', '"count":99')}
    claims = SignatureClaims()
    loaded = load_messages([prompt, forged], claims=claims)
    verified = verify_history(loaded, claims, default_keyring())
    [response] = [m for m in verified.messages if isinstance(m, ModelResponse)]
    assert STATE_METADATA_KEY not in (response.metadata or {})
