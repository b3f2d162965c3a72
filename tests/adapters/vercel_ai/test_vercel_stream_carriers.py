"""Unit tests of what the Vercel stream sends beside the message parts (state, message metadata, late response
info, citations, native tools, activity; `MessageCarrier` in `stream`): where each chunk goes and what
`new_messages` keeps, in the cases the scenarios read by the real client do not reach."""

from __future__ import annotations

import json
from typing import Any

from vercel_ai_cases import T1

from uibridge import (
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    TextPart,
    ToolCallPart,
    Usage,
)
from uibridge.adapters.vercel_ai import VercelAIEventStream, dump_messages, load_messages
from uibridge.core.events import (
    MESSAGE_METADATA_KEY,
    STATE_METADATA_KEY,
    AgentEvent,
    MessageMetadata,
    NativeToolResult,
    PartDelta,
    PartEnd,
    PartStart,
    RawEvent,
    ResponseInfo,
    ResponseStart,
    RetryFeedback,
    RunError,
    RunFinished,
    StateSnapshot,
    StepFinished,
    StepStarted,
    ToolCallReady,
)
from uibridge.core.provenance import default_keyring


def run(events: list[AgentEvent]) -> tuple[list[dict[str, Any]], VercelAIEventStream]:
    stream = VercelAIEventStream(message_id='msg_unit')
    data = stream.start() + b''.join(stream.encode(event) for event in events) + stream.close()
    chunks = [json.loads(line[6:]) for line in data.decode().split('\n\n') if line.startswith('data: {')]
    return chunks, stream


def types(chunks: list[dict[str, Any]]) -> list[str]:
    return [chunk['type'] for chunk in chunks]


def test_state_before_any_step_waits_for_the_first_one() -> None:
    chunks, stream = run([StateSnapshot({'a': 1}), ResponseStart(), PartStart(0, TextPart(content='x')), PartEnd(0)])
    assert types(chunks)[:3] == ['start', 'start-step', 'data-state']
    (response,) = stream.new_messages
    assert (response.metadata or {})[STATE_METADATA_KEY] == {'a': 1}


def test_state_without_any_response_is_not_sent() -> None:
    # The collector keeps it for a response that never comes: a part of its own would be a step of nothing.
    chunks, stream = run([StateSnapshot({'a': 1}), RunFinished()])
    assert 'data-state' not in types(chunks)
    assert stream.new_messages == []


def test_state_after_feedback_closed_the_step_goes_out_at_the_end() -> None:
    feedback = RetryFeedback(RetryFeedbackPart(content='Try again.', cause='model_retry', timestamp=T1))
    events: list[AgentEvent] = [ResponseStart(), PartStart(0, TextPart(content='x')), PartEnd(0), feedback]
    chunks, _ = run([*events, StateSnapshot({'a': 2}), RunFinished()])
    # The state's signature follows it in the message metadata, once the state is final.
    assert types(chunks)[-4:] == ['data-retry-feedback', 'data-state', 'message-metadata', 'finish']
    chunks, _ = run([*events, StateSnapshot({'a': 2}), ResponseStart(), RunFinished()])
    assert types(chunks)[-5:] == ['start-step', 'data-state', 'finish-step', 'message-metadata', 'finish']


def test_named_steps_and_raw_events_send_nothing() -> None:
    plain: list[AgentEvent] = [ResponseStart(), PartStart(0, TextPart(content='x')), PartEnd(0)]
    noisy = [StepStarted('a'), *plain, RawEvent({'x': 1}), StepFinished('a')]
    assert types(run(noisy)[0]) == types(run(plain)[0])


def test_a_native_call_is_sent_at_its_end_never_held() -> None:
    call = NativeToolCallPart(tool_name='web_search', args='', tool_call_id='ws')
    chunks, _ = run([ResponseStart(), PartStart(0, call), PartDelta(0, '{"q": 1}'), PartEnd(0)])
    assert types(chunks)[2:5] == ['tool-input-start', 'tool-input-delta', 'tool-input-available']
    assert all(
        chunk['providerExecuted'] is True
        for chunk in chunks
        if chunk['type'] != 'tool-input-delta' and chunk['type'].startswith('tool-')
    )
    assert chunks[4]['input'] == {'q': 1}
    assert 'tool-approval-request' not in types(chunks)
    # A client tool's mark for the same id changes nothing: a provider runs it.
    chunks, _ = run([ResponseStart(), PartStart(0, call), PartEnd(0), ToolCallReady('ws', 'client')])
    assert types(chunks).count('tool-input-available') == 1


def test_a_native_call_cut_off_by_an_error_is_an_input_error() -> None:
    call = NativeToolCallPart(tool_name='web_search', args='{"q"', tool_call_id='ws')
    chunks, _ = run([ResponseStart(), PartStart(0, call), RunError('boom')])
    (failed,) = [chunk for chunk in chunks if chunk['type'] == 'tool-input-error']
    assert (failed['providerExecuted'], failed['errorText']) == (True, 'boom')


def test_a_native_return_sits_beside_its_call_in_the_new_messages() -> None:
    call = NativeToolCallPart(tool_name='code', args={'x': 1}, tool_call_id='ci')
    returned = NativeToolReturnPart(tool_name='code', content=2, tool_call_id='ci', timestamp=T1)
    chunks, stream = run([ResponseStart(), PartStart(0, call), PartEnd(0), NativeToolResult(returned)])
    (output,) = [chunk for chunk in chunks if chunk['type'] == 'tool-output-available']
    assert 'position' not in output['providerMetadata']['uibridge']  # right after its call
    (response,) = stream.new_messages
    assert [part.part_kind for part in response.parts] == ['builtin-tool-call', 'builtin-tool-return']


def test_response_info_with_nothing_a_step_entry_shows_sends_nothing() -> None:
    chunks, _ = run(
        [ResponseStart(), PartStart(0, TextPart(content='x')), PartEnd(0), ResponseInfo(finish_reason='stop')]
    )
    assert 'message-metadata' not in types(chunks)


def test_a_finish_reason_the_parts_do_not_show_goes_in_the_step_entry_signed() -> None:
    """Cut short by the token limit: the step's entry says so, signed over the step's parts, so the next turn's
    `verify_history` keeps it (tests/e2e/test_next_turn.py)."""
    chunks, stream = run(
        [ResponseStart(), PartStart(0, TextPart(content='x')), PartEnd(0), ResponseInfo(finish_reason='length')]
    )
    [entry] = [c['messageMetadata']['uibridge']['steps']['0'] for c in chunks if c['type'] == 'message-metadata']
    [response] = stream.new_messages
    assert isinstance(response, ModelResponse)
    assert entry == {'finish_reason': 'length', 'finish_sig': default_keyring().sign_finish(response)}


def test_message_metadata_lands_on_the_last_response_without_changing_the_collector_s() -> None:
    call = ToolCallPart(tool_name='t', args={}, tool_call_id='c')
    events: list[AgentEvent] = [
        ResponseStart(),
        MessageMetadata({'a': 1, 'b': 1}),
        PartStart(0, call),
        PartEnd(0),
        ResponseStart(),
        MessageMetadata({'b': 2}),
        PartStart(0, TextPart(content='x')),
        PartEnd(0),
    ]
    chunks, stream = run(events)
    assert [chunk['messageMetadata'] for chunk in chunks if chunk['type'] == 'message-metadata'] == [
        {'a': 1, 'b': 1},
        {'b': 2},
    ]
    for _ in range(2):  # read twice: amending is no change to what the collector holds
        first, last = stream.new_messages
        assert first.metadata is None or MESSAGE_METADATA_KEY not in first.metadata
        assert (last.metadata or {})[MESSAGE_METADATA_KEY] == {'a': 1, 'b': 2}


def test_a_dump_leaves_late_response_info_to_the_message_metadata() -> None:
    response = ModelResponse(
        parts=[TextPart(content='x')],
        timestamp=T1,
        model_name='m',
        finish_reason='stop',
        usage=Usage(input_tokens=1, output_tokens=2),
        provider_response_id='r1',
    )
    (dumped,) = dump_messages([response])
    record = dumped.parts[1].model_dump(mode='json')['providerMetadata']['uibridge']['response']
    assert record == {'timestamp': '2026-01-02T03:04:06.500000Z', 'model_name': 'm'}
    assert dumped.metadata['uibridge']['steps']['0']['usage'] == {'input_tokens': 1, 'output_tokens': 2}
    (loaded,) = load_messages([dumped.model_dump(mode='json')])
    assert isinstance(loaded, ModelResponse)
    assert (loaded.usage, loaded.provider_response_id, loaded.finish_reason) == (response.usage, 'r1', 'stop')
