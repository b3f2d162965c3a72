"""Every encoded stream, through the real `@ag-ui/client` 1.0 pipeline and through ag-ui-validate.

One Node process replays all scenarios (tests/clients/agui_replay.mjs): HTTP body in small chunks -> the
client's SSE parser -> CompatibilityBoundary -> enforceEvents -> transformChunks -> verifyEvents -> the
reducer. Each must pass with no error and no warning, build exactly the messages `dump_messages` gives for
the stream's `new_messages` (see `client_view` for the one field the live stream cannot carry), load
back into the same history, and verify whole: every signature the stream sent is where the client keeps it.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest
from agui_helpers import (
    LATE_RESPONSE_FIELDS,
    assert_no_nulls,
    client_view,
    comparable_history,
    replay,
    sse_events,
    validator_findings,
)
from agui_scenarios import KEYRING, Scenario, random_scenario, scenarios

from neutral_views import agent_view, as_verified
from uibridge import (
    ModelMessage,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.adapters.ag_ui import AGUIEventStream, dump_messages, load_messages
from uibridge.core.collector import MessageCollector
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import SignatureClaims, Verified, verify_history

ALL = scenarios() + [random_scenario(seed) for seed in range(40)]


def encode(scenario: Scenario) -> tuple[AGUIEventStream, bytes]:
    stream = AGUIEventStream(thread_id='thread', run_id=f'run-{scenario.name}', **scenario.kwargs)
    chunks = [stream.start(), *(stream.encode(e) for e in scenario.events), stream.close()]
    return stream, b''.join(chunks)


@pytest.fixture(scope='module')
def runs() -> dict[str, tuple[Scenario, AGUIEventStream, bytes, dict[str, Any]]]:
    encoded = {s.name: (s, *encode(s)) for s in ALL}
    cases = [
        {
            'name': name,
            'sse': body.decode(),
            'runId': f'run-{name}',
            'chunkSize': 7 + i % 50,
            'initialMessages': [m.model_dump(by_alias=True, mode='json') for m in dump_messages(scenario.history)],
        }
        for i, (name, (scenario, _, body)) in enumerate(encoded.items())
    ]
    results = replay(cases)
    return {r['name']: (*encoded[r['name']], r) for r in results}


def live_history(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A history without each response's `finish_reason`, `metadata` and late facts: the stream puts response
    facts only in the START event of the response's first message, before those are final (see `client_view`)."""
    late = dict.fromkeys(('finish_reason', 'metadata', *LATE_RESPONSE_FIELDS))
    return [m.model_copy(update=late) if isinstance(m, ModelResponse) else m for m in messages]


@pytest.mark.parametrize('name', [s.name for s in ALL])
def test_real_client_builds_what_dump_gives(runs: dict[str, Any], name: str) -> None:
    scenario, stream, _, result = runs[name]
    assert result['warnings'] == []
    assert result['ok'], result['error']
    if scenario.expect_error is not None:
        # RUN_ERROR ends the run without failing runAgent: the client reports it to onRunErrorEvent.
        assert result['runError']['message'] == scenario.expect_error
    else:
        assert result['runError'] is None
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # FileParts are left out of a dump with a warning
        expected = client_view(dump_messages(stream.new_messages, keyring=scenario.kwargs.get('keyring')))
    assert client_view(_cut_results_in_place(result['newMessages'])) == expected
    # The whole conversation the client now holds loads back as the history plus the run's messages.
    loaded = load_messages(result['messages'])
    full = [*scenario.history, *stream.new_messages]
    assert comparable_history(live_history(loaded)) == comparable_history(live_history(full))


def _cut_results_in_place(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The client's messages with the tool message a cut-off call's record carries (no `TOOL_CALL_RESULT` may come
    while that call is open) taken out of the record and put after its assistant message, where a dump writes it;
    and without the `state` marker a response's first message carries when the agent set the state after that
    message's record went out (a dump writes the state in the record; both load alike, checked below)."""
    out: list[dict[str, Any]] = []
    for message in copy.deepcopy(messages):
        encrypted = message.get('encryptedValue')
        if isinstance(encrypted, str) and encrypted.startswith('{"uibridge"'):
            inner = json.loads(encrypted)['uibridge']
            if inner.pop('state', None) is not None:
                if inner:
                    message['encryptedValue'] = json.dumps({'uibridge': inner}, separators=(',', ':'))
                else:
                    del message['encryptedValue']
        out.append(message)
        for call in message.get('toolCalls') or []:
            record = (call.get('metadata') or {}).get('uibridge') or {}
            if 'cut_result' in record:
                out.append(record.pop('cut_result'))
    return out


@pytest.mark.parametrize('name', [s.name for s in ALL])
def test_outcome(runs: dict[str, Any], name: str) -> None:
    scenario, stream, _, result = runs[name]
    if scenario.expect_error is not None:
        assert result['finished'] is None
        return
    finished = result['finished']
    assert finished['outcome'] == scenario.outcome
    if scenario.name == 'client_tool_pending':
        assert finished['pendingToolCallIds'] == ['call_c']
    if scenario.outcome == 'interrupt':
        [interrupt] = finished['interrupts']
        assert interrupt['reason'] == 'tool_approval' and interrupt['toolCallId'] == 'call_w'
        assert result['pendingInterrupts'] == finished['interrupts']
        call = next(
            p
            for m in stream.new_messages
            if isinstance(m, ModelResponse)
            for p in m.parts
            if isinstance(p, ToolCallPart) and p.tool_call_id == 'call_w'
        )
        assert KEYRING.verify_approval(interrupt['id'], 'thread', call)


@pytest.mark.parametrize('name', [s.name for s in ALL])
def test_wire_rules_and_ag_ui_validate(runs: dict[str, Any], name: str) -> None:
    scenario, _, body, _ = runs[name]
    events = sse_events(body)
    assert events[0]['type'] == 'RUN_STARTED' and events[0]['protocolVersion'] == '1.0'
    terminal = [i for i, e in enumerate(events) if e['type'] in ('RUN_FINISHED', 'RUN_ERROR')]
    assert terminal == [len(events) - 1]
    for event in events:
        assert type(event['timestamp']) is int
        assert_no_nulls(event)
    # A run cut short by an error may leave a streamed tool call's argument text unfinished: that call gets no
    # `TOOL_CALL_END` (which would claim complete arguments, AGUI204), so every rule stays on.
    overrides: dict[str, str] = {}
    # A run resumed after an approval answers a call the client holds from an earlier run; the 1.0 client
    # places the result after that call's message (verifyEvents rule 10 does no pairing); the validator only
    # knows calls from this stream (AGUI207).
    if scenario.history:
        overrides['AGUI207'] = 'off'
    assert validator_findings(events, overrides) == []


def _verified(scenario: Scenario, messages: list[dict[str, Any]]) -> tuple[list[ModelMessage], Verified, int]:
    claims = SignatureClaims()
    loaded = load_messages(messages, claims=claims)
    return loaded, verify_history(loaded, claims, scenario.kwargs.get('keyring') or default_keyring()), len(claims)


@pytest.mark.parametrize('name', [s.name for s in ALL])
def test_what_the_real_client_holds_verifies_whole(runs: dict[str, Any], name: str) -> None:
    """What the client sends back on its next turn (`HttpAgent` posts its messages as JSON): everything the
    server wrote in it, from the history it was given and from the live stream, carries its signature where
    the client keeps it and verifies; nothing is dropped."""
    scenario, _, _, result = runs[name]
    sent = json.loads(json.dumps(result['messages']))
    # The client answers the calls left to its own tools first (a tool message it writes, no record).
    pending: list[str] = (result['finished'] or {}).get('pendingToolCallIds') or []
    for call_id in pending:
        sent.append({'id': f'answer-{call_id}', 'role': 'tool', 'toolCallId': call_id, 'content': 'from the page'})
    loaded, verified, claimed = _verified(scenario, sent)
    assert verified.dropped == {}
    assert agent_view(verified.messages) == as_verified(loaded)
    server_written = [p for m in loaded for p in m.parts if not isinstance(p, UserPromptPart | SystemPromptPart)]
    assert claimed == len(server_written) - len(pending)


@pytest.mark.parametrize(
    ('name', 'client_calls', 'server_calls'),
    [
        ('client_tool_pending', ['call_c'], []),
        ('approval_interrupt', ['call_c2'], ['call_w']),
        ('client_call_after_server_result', ['call_l'], []),
        ('client_mark_before_part_end', ['call_b'], []),
    ],
)
def test_the_client_answers_its_own_tools_calls_and_no_other(
    runs: dict[str, Any], name: str, client_calls: list[str], server_calls: list[str]
) -> None:
    """A call the stream marked for a client tool carries the client-marked signature in the client's copy, so
    the answer the client writes itself is kept; an answer it writes for a server call is not."""
    scenario, _, _, result = runs[name]
    messages = json.loads(json.dumps(result['messages']))
    marks = {
        call['id']: call['metadata']['uibridge'].get('client', False)
        for message in messages
        for call in message.get('toolCalls') or []
    }
    for call_id in client_calls:
        assert marks[call_id] is True
    for call_id in [*client_calls, *server_calls]:
        messages.append({'id': f'answer-{call_id}', 'role': 'tool', 'toolCallId': call_id, 'content': 'from the page'})
    _, verified, _ = _verified(scenario, messages)
    answered = [p.tool_call_id for m in verified.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [c for c in answered if c in client_calls or c in server_calls] == client_calls
    # The answer for a server call is dropped (the call itself stays pending or goes unanswered: core's rule).
    assert verified.dropped.get('tool result', 0) == len(server_calls)
    assert set(verified.dropped) <= {'tool result', 'unanswered tool call'}


def test_every_new_event_through_the_real_client(runs: dict[str, Any]) -> None:
    """Every event kind beyond text and tool calls through `@ag-ui/client` (verifyEvents included), with no warning:
    the state its own JSON Patch reduces from STATE_SNAPSHOT and STATE_DELTA is the collector's; each CUSTOM, RAW
    and step event and the run's usage arrive as sent; native calls are neither pending nor answered by the client;
    what the client keeps loads back with the native parts in their response and the text's citations."""
    scenario, _, body, result = runs['every_new_event']
    assert result['ok'], result['error']
    assert result['warnings'] == []
    collector = MessageCollector()
    for event in scenario.events:
        collector.feed(event)
    assert result['state'] == collector.state == {'todo': ['answer'], 'phase': 'done', 'found': {'city': 'Paris'}}
    sent = sse_events(body)
    assert {
        'STATE_SNAPSHOT',
        'STATE_DELTA',
        'STEP_STARTED',
        'STEP_FINISHED',
        'ACTIVITY_SNAPSHOT',
        'ACTIVITY_DELTA',
        'RAW',
        'CUSTOM',
        'TOOL_CALL_RESULT',
    } <= set(result['eventTypes'])
    assert result['eventTypes'] == [e['type'] for e in sent]
    assert result['custom'] == [{'name': e['name'], 'value': e['value']} for e in sent if e['type'] == 'CUSTOM']
    assert [c['name'] for c in result['custom']] == [
        'uibridge.source',
        'uibridge.source',
        'uibridge.message_metadata',
        'uibridge.response_info',
    ]
    assert result['raw'] == [
        {'event': {'type': 'response.web_search_call.completed', 'id': 'ws_1'}, 'source': 'openai'}
    ]
    assert result['steps'] == ['started:search', 'finished:search', 'started:wrap-up', 'finished:wrap-up']
    finished = result['finished']
    assert finished['pendingToolCallIds'] == ['call_n']  # not the native ce_1, whose mark is ignored
    assert [(u['model'], u['inputTokens'], u['outputTokens']) for u in finished['usage']] == [
        ('gpt-x', 320, 35),
        ('small', 7, 3),
    ]
    [activity] = [m for m in result['messages'] if m['role'] == 'activity']
    assert activity == {
        'id': 'activity-1',
        'role': 'activity',
        'activityType': 'progress',
        'content': {'pct': 50, 'label': 'searching'},
    }
    loaded = load_messages(result['messages'])
    responses = [m for m in loaded if isinstance(m, ModelResponse)]
    kinds = [[p.part_kind for p in r.parts] for r in responses]
    assert kinds == [
        ['builtin-tool-call', 'builtin-tool-return', 'text'],
        ['text'],
        ['builtin-tool-call', 'builtin-tool-return', 'tool-call'],
    ]
    text = responses[0].parts[2]
    assert isinstance(text, TextPart) and text.citations is not None
    assert [s.kind for c in text.citations for s in c.sources] == ['web', 'document']
