"""`AGUIStreamDecoder` on streams uibridge's encoder never writes: another producer's event shapes (chunk events,
pending calls, interrupts, outcomes), what it may leave out, and what no reader can go on from."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from uibridge import TextPart, ToolCallPart
from uibridge.adapters.ag_ui.decode import AGUIStreamDecoder
from uibridge.core import events as ev
from uibridge.core.sse import StreamError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stream_decoding import collected, read_whole

STARTED = {'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'}
FINISHED = {'type': 'RUN_FINISHED', 'threadId': 't', 'runId': 'r'}


def sse(*events: dict[str, Any]) -> bytes:
    return ''.join(f'data: {json.dumps(event)}\n\n' for event in events).encode()


def decode(body: bytes, decoder: AGUIStreamDecoder | None = None) -> list[ev.AgentEvent]:
    return read_whole(decoder or AGUIStreamDecoder(), body)


def call(call_id: str, name: str, args: str) -> list[dict[str, Any]]:
    return [
        {'type': 'TOOL_CALL_START', 'toolCallId': call_id, 'toolCallName': name},
        {'type': 'TOOL_CALL_ARGS', 'toolCallId': call_id, 'delta': args},
        {'type': 'TOOL_CALL_END', 'toolCallId': call_id},
    ]


def test_chunk_events_end_at_the_next_event_of_another_kind_and_unanswered_calls_are_the_clients() -> None:
    decoder = AGUIStreamDecoder()
    events = decode(
        sse(
            STARTED,
            {'type': 'TEXT_MESSAGE_CHUNK', 'messageId': 'm', 'delta': 'Hel'},
            {'type': 'TEXT_MESSAGE_CHUNK', 'delta': 'lo'},
            {'type': 'TOOL_CALL_CHUNK', 'toolCallId': 'c1', 'toolCallName': 'get_local_time', 'delta': '{"tz"'},
            {'type': 'TOOL_CALL_CHUNK', 'toolCallId': 'c1', 'delta': ': "UTC"}'},
            FINISHED,
        ),
        decoder,
    )
    [response] = collected(events)
    assert response.parts == [
        TextPart(content='Hello'),
        ToolCallPart(tool_name='get_local_time', args='{"tz": "UTC"}', tool_call_id='c1'),  # as the model wrote it
    ]
    assert [(e.tool_call_id, e.answered_by) for e in events if isinstance(e, ev.ToolCallReady)] == [('c1', 'client')]


def test_pending_calls_named_by_the_run_and_interrupts_asking_approvals() -> None:
    pending = {**FINISHED, 'outcome': {'type': 'success', 'pendingToolCallIds': ['c2']}}
    events = decode(sse(STARTED, *call('c1', 'a', '{}'), *call('c2', 'b', '{}'), pending))
    assert [(e.tool_call_id, e.answered_by) for e in events if isinstance(e, ev.ToolCallReady)] == [('c2', 'client')]
    interrupt = {'id': 'int-c1', 'reason': 'tool_call', 'toolCallId': 'c1'}
    interrupted = {**FINISHED, 'outcome': {'type': 'interrupt', 'interrupts': [interrupt]}}
    decoder = AGUIStreamDecoder()
    events = decode(sse(STARTED, *call('c1', 'delete_file', '{"path": "x"}'), interrupted), decoder)
    assert [(e.tool_call_id, e.answered_by) for e in events if isinstance(e, ev.ToolCallReady)] == [('c1', 'approval')]
    assert decoder.approval_ids == {'c1': 'int-c1'}
    assert decoder.interrupts == {'c1': interrupt}


def test_results_state_steps_and_usage() -> None:
    result = {'type': 'TOOL_CALL_RESULT', 'messageId': 'tm', 'toolCallId': 'c1', 'content': '{"t": 21}'}
    usage = [{'inputTokens': 3, 'outputTokens': 4}, {'inputTokens': 1, 'outputTokens': 1}]
    events = decode(
        sse(
            STARTED,
            {'type': 'STEP_STARTED', 'stepName': 'plan'},
            *call('c1', 'get_weather', '{"city": "Paris"}'),
            result,
            {'type': 'STATE_SNAPSHOT', 'snapshot': {'n': 1}},
            {'type': 'STATE_DELTA', 'delta': [{'op': 'replace', 'path': '/n', 'value': 2}]},
            {'type': 'STEP_FINISHED', 'stepName': 'plan'},
            {'type': 'CUSTOM', 'name': 'vendor.progress', 'value': 0.5},
            {'type': 'RAW', 'event': {'x': 1}, 'source': 'vendor'},
            {**FINISHED, 'usage': usage},
        )
    )
    assert [type(e).__name__ for e in events] == [
        'StepStarted', 'PartStart', 'PartDelta', 'PartEnd', 'ToolResult', 'StateSnapshot', 'StateDelta',
        'StepFinished', 'CustomData', 'RawEvent', 'ResponseInfo', 'RunFinished',
    ]  # fmt: skip
    [answer] = [e.part for e in events if isinstance(e, ev.ToolResult)]
    assert (answer.tool_name, answer.content) == ('get_weather', '{"t": 21}')  # another producer's text stays text
    [info] = [e for e in events if isinstance(e, ev.ResponseInfo)]
    assert info.usage is not None and (info.usage.input_tokens, info.usage.output_tokens) == (4, 5)


@pytest.mark.parametrize(
    ('tail', 'end'),
    [
        ([{'type': 'RUN_ERROR', 'message': 'boom', 'code': 'model'}], ev.RunError('boom', 'model')),
        ([{**FINISHED, 'outcome': {'type': 'cancelled'}}], ev.RunCancelled()),
        ([], ev.RunError('The stream ended before the answer was complete.', 'incomplete')),
    ],
)
def test_how_a_run_ends(tail: list[dict[str, Any]], end: ev.AgentEvent) -> None:
    text = [
        {'type': 'TEXT_MESSAGE_START', 'messageId': 'm'},
        {'type': 'TEXT_MESSAGE_CONTENT', 'messageId': 'm', 'delta': 'x'},
    ]
    events = decode(sse(STARTED, *text, *tail))
    assert events[-1] == end


def test_what_is_not_this_runs_answer_is_skipped() -> None:
    decoder = AGUIStreamDecoder()
    events = decode(
        sse(
            STARTED,
            {'type': 'MESSAGES_SNAPSHOT', 'messages': []},
            {'type': 'SOMETHING_NEW', 'x': 1},
            {'type': 'TEXT_MESSAGE_START', 'messageId': 'u', 'role': 'user'},
            {'type': 'TEXT_MESSAGE_CONTENT', 'messageId': 'u', 'delta': 'not the answer'},
            {'type': 'TEXT_MESSAGE_END', 'messageId': 'u'},
            {'type': 'TEXT_MESSAGE_START', 'messageId': 'a'},
            {'type': 'TEXT_MESSAGE_END', 'messageId': 'a'},  # an empty message: no part
            FINISHED,
        ),
        decoder,
    )
    assert events == [ev.RunFinished()]
    assert decoder.skipped == 2


@pytest.mark.parametrize(
    ('body', 'error'),
    [
        (b'data: {"type":\n\n', 'not JSON'),
        (b'data: "RUN_STARTED"\n\n', 'not a JSON object'),
        (sse({'type': 'TEXT_MESSAGE_CONTENT', 'messageId': 'never', 'delta': 'x'}), 'not streaming'),
        (sse({'type': 'TOOL_CALL_ARGS', 'toolCallId': 'never', 'delta': 'x'}), 'not streaming'),
        (sse({'type': 'TOOL_CALL_START', 'toolCallId': 'c'}), 'toolCallName'),
        (sse({'type': 'TEXT_MESSAGE_START'}), 'messageId'),
    ],
)
def test_what_no_reader_can_go_on_from_raises(body: bytes, error: str) -> None:
    with pytest.raises(StreamError, match=error):
        AGUIStreamDecoder().feed(body)
