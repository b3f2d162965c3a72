"""Round trips through the real `@ag-ui/client` `HttpAgent`: what the server produced comes back intact."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import (
    LiveServer,
    all_parts,
    assert_round_trip,
    check_feedback_comes_back_from_its_marker,
    check_thinking_comes_back_signed,
    check_tool_calls_come_back_answered,
    completed_by_run,
    model_view,
)

from uibridge import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.adapters import ag_ui

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
    'think': [{'op': 'send', 'text': 'think about it'}, {'op': 'send', 'text': 'next'}],
    'tools': [{'op': 'send', 'text': 'retry the weather'}, {'op': 'send', 'text': 'next'}],
    'feedback': [{'op': 'send', 'text': 'think, then feedback'}, {'op': 'send', 'text': 'next'}],
    'client': [{'op': 'send', 'text': 'client'}, {'op': 'tool-output', 'content': '{"time":"noon"}'}],
    'approve': [{'op': 'send', 'text': 'delete'}, {'op': 'resume', 'approved': True}],
    'deny': [{'op': 'send', 'text': 'delete'}, {'op': 'resume', 'approved': False, 'reason': 'keep it'}],
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
        {'op': 'resume', 'approved': True},
    ],
}


def thread(name: str) -> str:
    return f'agui-rt-{name}'


@pytest.fixture(scope='module')
def driven(live_server: LiveServer) -> dict[str, Any]:
    spec = {
        'url': f'{live_server.base_url}/ag-ui',
        'scenarios': [{'name': n, 'threadId': thread(n), 'steps': steps} for n, steps in SCENARIOS.items()],
    }
    return live_server.drive('e2e_agui.mjs', spec)


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_every_step_succeeds_in_the_client(driven: dict[str, Any], name: str) -> None:
    for step in driven[name]['steps']:
        assert step['error'] is None, (name, step['op'], step['error'])
        if step['op'] != 'set-messages':
            assert step['wireEvents'][0] == 'RUN_STARTED'
            assert step['wireEvents'][-1] == 'RUN_FINISHED'


@pytest.mark.parametrize('name', ['text', 'think', 'tools', 'feedback', 'client', 'approve', 'deny', 'stored'])
def test_the_server_receives_exactly_what_it_produced(
    driven: dict[str, Any], live_server: LiveServer, name: str
) -> None:
    assert_round_trip(live_server.recorder, thread(name))


def test_thinking_comes_back_with_its_signature(driven: dict[str, Any], live_server: LiveServer) -> None:
    check_thinking_comes_back_signed(live_server.recorder, thread('think'))


def test_tool_calls_come_back_with_their_results_and_retries(driven: dict[str, Any], live_server: LiveServer) -> None:
    check_tool_calls_come_back_answered(live_server.recorder, thread('tools'))


def test_retry_feedback_is_rebuilt_from_the_marker_and_verified(
    driven: dict[str, Any], live_server: LiveServer
) -> None:
    check_feedback_comes_back_from_its_marker(live_server.recorder, thread('feedback'))
    # The client shows it as a system-role message.
    system = [m for m in driven['feedback']['steps'][0]['messages'] if m['role'] == 'system']
    assert len(system) == 3
    assert all('encryptedValue' in m for m in system)


def test_a_client_tool_result_reaches_the_agent(driven: dict[str, Any], live_server: LiveServer) -> None:
    _, second = live_server.recorder.runs_for(thread('client'))
    [result] = second.tool_results()
    assert result.tool_name == 'get_local_time'
    assert result.content == '{"time":"noon"}'
    final = driven['client']['steps'][-1]['messages'][-1]
    assert final['role'] == 'assistant'
    assert final['content'] == 'Your browser answered: get_local_time says {"time":"noon"}.'


def test_an_approved_call_runs_once_verified(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(thread('approve'))
    [call] = [p for p in all_parts(completed_by_run(live_server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert approval.approved and approval.tool_call_id == call.tool_call_id
    assert second.pending_tool_calls() == [call]
    assert call.tool_call_id in [c.tool_call_id for c in live_server.demo.executed]
    produced = completed_by_run(live_server.recorder)[id(second)]
    assert isinstance(produced[0], ModelRequest)
    result = produced[0].parts[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'success'
    messages = driven['approve']['steps'][-1]['messages']
    assert messages[-1]['content'] == 'I deleted notes.txt.'
    assert [m['role'] for m in messages[-3:]] == ['assistant', 'tool', 'assistant']
    assert driven['approve']['steps'][0]['pendingInterrupts'][0]['toolCallId'] == call.tool_call_id


def test_a_denied_call_is_answered_as_denied(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(thread('deny'))
    [call] = [p for p in all_parts(completed_by_run(live_server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert not approval.approved and approval.reason == 'keep it'
    assert call.tool_call_id not in [c.tool_call_id for c in live_server.demo.executed]
    produced = completed_by_run(live_server.recorder)[id(second)]
    result = all_parts(produced)[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'denied'
    assert driven['deny']['steps'][-1]['messages'][-1]['content'] == 'Understood, I left it alone.'


def test_regenerate_sends_the_history_without_the_answer(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(thread('regenerate'))
    assert first.input is not None and second.input is not None
    assert model_view(second.input.history) == model_view(first.input.history)
    messages = driven['regenerate']['steps'][-1]['messages']
    assert [m['role'] for m in messages] == ['user', 'reasoning', 'assistant']


def test_an_edit_sends_the_history_up_to_the_edited_message(driven: dict[str, Any], live_server: LiveServer) -> None:
    runs = live_server.recorder.runs_for(thread('edit'))
    assert runs[-1].input is not None
    assert model_view(runs[-1].input.history) == model_view(
        [ModelRequest(parts=[UserPromptPart(content='think edited')])]
    )
    assert isinstance(runs[-1].messages[0], ModelRequest)


def test_a_reload_from_stored_history_continues_the_conversation(
    driven: dict[str, Any], live_server: LiveServer
) -> None:
    last = live_server.recorder.runs_for(thread('stored'))[-1]
    assert last.input is not None
    stored = [*last.input.history, *completed_by_run(live_server.recorder)[id(last)]]
    reloaded = ag_ui.dump_messages(stored)
    spec = {
        'url': f'{live_server.base_url}/ag-ui',
        'scenarios': [
            {
                'name': 'reload',
                'threadId': thread('reloaded'),
                'steps': [
                    {'op': 'set-messages', 'messages': [m.model_dump(by_alias=True, mode='json') for m in reloaded]},
                    {'op': 'send', 'text': 'think about the weather'},
                ],
            }
        ],
    }
    result = live_server.drive('e2e_agui.mjs', spec)['reload']
    assert result['steps'][-1]['error'] is None
    [run] = live_server.recorder.runs_for(thread('reloaded'))
    assert run.input is not None
    assert model_view(run.input.history) == model_view(
        [*stored, ModelRequest(parts=[UserPromptPart(content='think about the weather')])]
    )
    produced = completed_by_run(live_server.recorder)[id(run)]
    assert isinstance(produced[-1], ModelResponse)
    assert produced[-1].parts == [TextPart(content='It is sunny in Paris, 21 °C.')]
