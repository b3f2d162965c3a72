"""Round trips through the real clients, `ai@7`'s `Chat` (`DefaultChatTransport`) and `@ag-ui/client`'s
`HttpAgent`: what the server produced comes back intact.

Every scenario is played once through each client (the `driven` fixture's two params); a test checks what the
two protocols share, then what only one of them shows (`if protocol == ...`), since each client builds its
own shape of message.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import (
    LiveServer,
    all_parts,
    assert_round_trip,
    assert_steps_succeeded,
    check_feedback_comes_back_from_its_marker,
    check_thinking_comes_back_signed,
    check_tool_calls_come_back_answered,
    completed_by_run,
    drive_scenarios,
    model_view,
    scenarios_fixture,
)

from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.adapters import ag_ui, vercel_ai

ANSWER_OP = {'vercel': 'approve', 'agui': 'resume'}
"""How each driver answers an approval request."""
CLIENT_OUTPUT = {'vercel': {'output': {'time': 'noon'}}, 'agui': {'content': '{"time":"noon"}'}}
"""What the page's client tool answers, in each client's form (Vercel: a JSON value; AG-UI: a tool message's text)."""


def scenarios(protocol: str) -> dict[str, list[dict[str, Any]]]:
    answer = ANSWER_OP[protocol]
    return {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'think': [{'op': 'send', 'text': 'think about it'}, {'op': 'send', 'text': 'next'}],
        'tools': [{'op': 'send', 'text': 'retry the weather'}, {'op': 'send', 'text': 'next'}],
        'feedback': [{'op': 'send', 'text': 'think, then feedback'}, {'op': 'send', 'text': 'next'}],
        'client': [{'op': 'send', 'text': 'client'}, {'op': 'tool-output', **CLIENT_OUTPUT[protocol]}],
        'approve': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': True}],
        'deny': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': False, 'reason': 'keep it'}],
        'regenerate': [{'op': 'send', 'text': 'think hello'}, {'op': 'regenerate'}],
        'edit': [
            {'op': 'send', 'text': 'hello'},
            {'op': 'send', 'text': 'weather'},
            {'op': 'edit', 'index': 0, 'text': 'think edited'},
        ],
        'stored': [
            {'op': 'send', 'text': 'think, retry the weather'},
            {'op': 'send', 'text': 'feedback'},
            {'op': 'send', 'text': 'delete'},
            {'op': answer, 'approved': True},
        ],
    }


SCENARIO_NAMES = list(scenarios('vercel'))


def thread(protocol: str, name: str) -> str:
    return f'{protocol}-rt-{name}'


driven = scenarios_fixture({'vercel': lambda: scenarios('vercel'), 'agui': lambda: scenarios('agui')}, thread)
"""Every scenario, played through both real clients: `(protocol, the driver's result, the live server)`."""

Driven = tuple[str, dict[str, Any], LiveServer]


@pytest.mark.parametrize('name', SCENARIO_NAMES)
def test_every_step_succeeds_in_the_client(driven: Driven, name: str) -> None:
    protocol, results, _ = driven
    assert_steps_succeeded(protocol, name, results[name])


@pytest.mark.parametrize('name', ['text', 'think', 'tools', 'feedback', 'client', 'approve', 'deny', 'stored'])
def test_the_server_receives_exactly_what_it_produced(driven: Driven, name: str) -> None:
    protocol, _, server = driven
    assert_round_trip(server.recorder, thread(protocol, name))


def test_thinking_comes_back_with_its_signature(driven: Driven) -> None:
    protocol, _, server = driven
    check_thinking_comes_back_signed(server.recorder, thread(protocol, 'think'))


def test_tool_calls_come_back_with_their_results_and_retries(driven: Driven) -> None:
    protocol, _, server = driven
    check_tool_calls_come_back_answered(server.recorder, thread(protocol, 'tools'))


def test_retry_feedback_is_rebuilt_from_the_marker_and_verified(driven: Driven) -> None:
    protocol, results, server = driven
    check_feedback_comes_back_from_its_marker(server.recorder, thread(protocol, 'feedback'))
    messages = results['feedback']['steps'][0]['messages']
    if protocol == 'vercel':
        # The live stream carries the feedback as data parts of the assistant message, marker included.
        feedback_parts = [p for p in messages[1]['parts'] if p['type'] == 'data-retry-feedback']
        assert len(feedback_parts) == 3
    else:
        # The client shows it as a system-role message.
        system = [m for m in messages if m['role'] == 'system']
        assert len(system) == 3
        assert all('encryptedValue' in m for m in system)


def test_a_client_tool_result_reaches_the_agent(driven: Driven) -> None:
    protocol, results, server = driven
    _, second = server.recorder.runs_for(thread(protocol, 'client'))
    [result] = second.tool_results()
    assert result.tool_name == 'get_local_time'
    assert result.content == {'vercel': {'time': 'noon'}, 'agui': '{"time":"noon"}'}[protocol]
    answer = 'Your browser answered: get_local_time says {"time":"noon"}.'
    messages = results['client']['steps'][-1]['messages']
    if protocol == 'vercel':
        # The answer continues the assistant message that asked.
        assert [m['role'] for m in messages] == ['user', 'assistant']
        texts = [p['text'] for p in messages[-1]['parts'] if p['type'] == 'text']
        assert texts[-1] == answer
        assert results['client']['requests'][-1]['messageId'] == messages[-1]['id']
    else:
        assert messages[-1]['role'] == 'assistant'
        assert messages[-1]['content'] == answer


def test_an_approved_call_runs_once_verified(driven: Driven) -> None:
    protocol, results, server = driven
    first, second = server.recorder.runs_for(thread(protocol, 'approve'))
    [call] = [p for p in all_parts(completed_by_run(server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert approval.approved and approval.tool_call_id == call.tool_call_id
    assert second.pending_tool_calls() == [call]
    assert call.tool_call_id in [c.tool_call_id for c in server.demo.executed]
    produced = completed_by_run(server.recorder)[id(second)]
    result = all_parts(produced)[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'success'
    messages = results['approve']['steps'][-1]['messages']
    if protocol == 'vercel':
        [tool] = [p for p in messages[-1]['parts'] if p['type'] == 'tool-delete_file']
        assert tool['state'] == 'output-available'
        assert tool['output'] == {'deleted': 'notes.txt'}
        assert [p['text'] for p in messages[-1]['parts'] if p['type'] == 'text'][-1] == 'I deleted notes.txt.'
    else:
        assert isinstance(produced[0], ModelRequest)
        assert messages[-1]['content'] == 'I deleted notes.txt.'
        assert [m['role'] for m in messages[-3:]] == ['assistant', 'tool', 'assistant']
        assert results['approve']['steps'][0]['pendingInterrupts'][0]['toolCallId'] == call.tool_call_id


def test_a_denied_call_is_answered_as_denied(driven: Driven) -> None:
    protocol, results, server = driven
    first, second = server.recorder.runs_for(thread(protocol, 'deny'))
    [call] = [p for p in all_parts(completed_by_run(server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert not approval.approved and approval.reason == 'keep it'
    assert call.tool_call_id not in [c.tool_call_id for c in server.demo.executed]
    result = all_parts(completed_by_run(server.recorder)[id(second)])[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'denied'
    messages = results['deny']['steps'][-1]['messages']
    if protocol == 'vercel':
        [tool] = [p for p in messages[-1]['parts'] if p['type'] == 'tool-delete_file']
        assert tool['state'] == 'output-denied'
    else:
        assert messages[-1]['content'] == 'Understood, I left it alone.'


def test_regenerate_sends_the_history_without_the_answer(driven: Driven) -> None:
    protocol, results, server = driven
    first, second = server.recorder.runs_for(thread(protocol, 'regenerate'))
    assert first.input is not None and second.input is not None
    assert model_view(second.input.history) == model_view(first.input.history)
    messages = results['regenerate']['steps'][-1]['messages']
    if protocol == 'vercel':
        assert second.trigger == 'regenerate'
        assert [m['role'] for m in messages] == ['user', 'assistant']
    else:
        assert [m['role'] for m in messages] == ['user', 'reasoning', 'assistant']


def test_an_edit_sends_the_history_up_to_the_edited_message(driven: Driven) -> None:
    protocol, results, server = driven
    runs = server.recorder.runs_for(thread(protocol, 'edit'))
    assert runs[-1].input is not None
    edited = ModelRequest(parts=[UserPromptPart(content='think edited')])
    assert model_view(runs[-1].input.history) == model_view([edited])
    if protocol == 'vercel':
        messages = results['edit']['steps'][-1]['messages']
        assert [m['role'] for m in messages] == ['user', 'assistant']
    else:
        assert isinstance(runs[-1].messages[0], ModelRequest)


def test_a_reload_from_stored_history_continues_the_conversation(driven: Driven) -> None:
    protocol, _, server = driven
    last = server.recorder.runs_for(thread(protocol, 'stored'))[-1]
    assert last.input is not None
    stored = [*last.input.history, *completed_by_run(server.recorder)[id(last)]]
    steps = [
        {'op': 'set-messages', 'messages': dumped(protocol, stored)},
        {'op': 'send', 'text': 'think about the weather'},
    ]
    result = drive_scenarios(server, protocol, {'reload': steps}, lambda _: thread(protocol, 'reloaded'))['reload']
    if protocol == 'vercel':
        assert result['steps'][0]['valid'] is True, result['steps'][0]['valid']
    assert result['steps'][-1]['error'] is None
    [run] = server.recorder.runs_for(thread(protocol, 'reloaded'))
    assert run.input is not None
    assert model_view(run.input.history) == model_view(
        [*stored, ModelRequest(parts=[UserPromptPart(content='think about the weather')])]
    )
    produced = completed_by_run(server.recorder)[id(run)]
    assert isinstance(produced[-1], ModelResponse)
    assert produced[-1].parts == [TextPart(content='It is sunny in Paris, 21 °C.')]


def dumped(protocol: str, history: list[ModelMessage]) -> list[dict[str, Any]]:
    """`history` as the page would get it back from the server's store, as JSON."""
    if protocol == 'vercel':
        return [m.model_dump(mode='json') for m in vercel_ai.dump_messages(history)]
    return [m.model_dump(by_alias=True, mode='json') for m in ag_ui.dump_messages(history)]
