"""Round trips through the real `ai@7` `Chat` (`DefaultChatTransport`): what the server produced comes back intact."""

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
from uibridge.adapters import vercel_ai

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
    'think': [{'op': 'send', 'text': 'think about it'}, {'op': 'send', 'text': 'next'}],
    'tools': [{'op': 'send', 'text': 'retry the weather'}, {'op': 'send', 'text': 'next'}],
    'feedback': [{'op': 'send', 'text': 'think, then feedback'}, {'op': 'send', 'text': 'next'}],
    'client': [{'op': 'send', 'text': 'client'}, {'op': 'tool-output', 'output': {'time': 'noon'}}],
    'approve': [{'op': 'send', 'text': 'delete'}, {'op': 'approve', 'approved': True}],
    'deny': [{'op': 'send', 'text': 'delete'}, {'op': 'approve', 'approved': False, 'reason': 'keep it'}],
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
        {'op': 'approve', 'approved': True},
    ],
}


def chat(name: str) -> str:
    return f'vercel-rt-{name}'


@pytest.fixture(scope='module')
def driven(live_server: LiveServer) -> dict[str, Any]:
    spec = {
        'api': f'{live_server.base_url}/api/chat',
        'scenarios': [{'name': n, 'chatId': chat(n), 'steps': steps} for n, steps in SCENARIOS.items()],
    }
    return live_server.drive('e2e_vercel.mjs', spec)


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_every_step_succeeds_in_the_client(driven: dict[str, Any], name: str) -> None:
    for step in driven[name]['steps']:
        assert step['error'] is None, (name, step['op'], step['error'])
        assert step['status'] == 'ready'
        assert step['valid'] is True, step['valid']  # safeValidateUIMessages accepts what the client built


@pytest.mark.parametrize('name', ['text', 'think', 'tools', 'feedback', 'client', 'approve', 'deny', 'stored'])
def test_the_server_receives_exactly_what_it_produced(
    driven: dict[str, Any], live_server: LiveServer, name: str
) -> None:
    assert_round_trip(live_server.recorder, chat(name))


def test_thinking_comes_back_with_its_signature(driven: dict[str, Any], live_server: LiveServer) -> None:
    check_thinking_comes_back_signed(live_server.recorder, chat('think'))


def test_tool_calls_come_back_with_their_results_and_retries(driven: dict[str, Any], live_server: LiveServer) -> None:
    check_tool_calls_come_back_answered(live_server.recorder, chat('tools'))


def test_retry_feedback_is_rebuilt_from_the_marker_and_verified(
    driven: dict[str, Any], live_server: LiveServer
) -> None:
    check_feedback_comes_back_from_its_marker(live_server.recorder, chat('feedback'))
    # The live stream carries the feedback as data parts of the assistant message, marker included.
    assistant = driven['feedback']['steps'][0]['messages'][1]
    feedback_parts = [p for p in assistant['parts'] if p['type'] == 'data-retry-feedback']
    assert len(feedback_parts) == 3


def test_a_client_tool_result_reaches_the_agent(driven: dict[str, Any], live_server: LiveServer) -> None:
    _, second = live_server.recorder.runs_for(chat('client'))
    [result] = second.tool_results()
    assert result.tool_name == 'get_local_time'
    assert result.content == {'time': 'noon'}
    # The answer continues the assistant message that asked.
    messages = driven['client']['steps'][-1]['messages']
    assert [m['role'] for m in messages] == ['user', 'assistant']
    texts = [p['text'] for p in messages[-1]['parts'] if p['type'] == 'text']
    assert texts[-1] == 'Your browser answered: get_local_time says {"time":"noon"}.'
    assert driven['client']['requests'][-1]['messageId'] == messages[-1]['id']


def test_an_approved_call_runs_once_verified(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(chat('approve'))
    [call] = [p for p in all_parts(completed_by_run(live_server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert approval.approved and approval.tool_call_id == call.tool_call_id
    assert second.pending_tool_calls() == [call]
    assert call.tool_call_id in [c.tool_call_id for c in live_server.demo.executed]
    produced = completed_by_run(live_server.recorder)[id(second)]
    result = all_parts(produced)[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'success'
    messages = driven['approve']['steps'][-1]['messages']
    [tool] = [p for p in messages[-1]['parts'] if p['type'] == 'tool-delete_file']
    assert tool['state'] == 'output-available'
    assert tool['output'] == {'deleted': 'notes.txt'}
    assert [p['text'] for p in messages[-1]['parts'] if p['type'] == 'text'][-1] == 'I deleted notes.txt.'


def test_a_denied_call_is_answered_as_denied(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(chat('deny'))
    [call] = [p for p in all_parts(completed_by_run(live_server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [approval] = second.approvals
    assert not approval.approved and approval.reason == 'keep it'
    assert call.tool_call_id not in [c.tool_call_id for c in live_server.demo.executed]
    result = all_parts(completed_by_run(live_server.recorder)[id(second)])[0]
    assert isinstance(result, ToolReturnPart) and result.outcome == 'denied'
    messages = driven['deny']['steps'][-1]['messages']
    [tool] = [p for p in messages[-1]['parts'] if p['type'] == 'tool-delete_file']
    assert tool['state'] == 'output-denied'


def test_regenerate_sends_the_history_without_the_answer(driven: dict[str, Any], live_server: LiveServer) -> None:
    first, second = live_server.recorder.runs_for(chat('regenerate'))
    assert first.input is not None and second.input is not None
    assert model_view(second.input.history) == model_view(first.input.history)
    assert second.trigger == 'regenerate'
    messages = driven['regenerate']['steps'][-1]['messages']
    assert [m['role'] for m in messages] == ['user', 'assistant']


def test_an_edit_sends_the_history_up_to_the_edited_message(driven: dict[str, Any], live_server: LiveServer) -> None:
    runs = live_server.recorder.runs_for(chat('edit'))
    assert runs[-1].input is not None
    edited = ModelRequest(parts=[UserPromptPart(content='think edited')])
    assert model_view(runs[-1].input.history) == model_view([edited])
    messages = driven['edit']['steps'][-1]['messages']
    assert [m['role'] for m in messages] == ['user', 'assistant']


def test_a_reload_from_stored_history_continues_the_conversation(
    driven: dict[str, Any], live_server: LiveServer
) -> None:
    last = live_server.recorder.runs_for(chat('stored'))[-1]
    assert last.input is not None
    stored = [*last.input.history, *completed_by_run(live_server.recorder)[id(last)]]
    reloaded = [m.model_dump(mode='json') for m in vercel_ai.dump_messages(stored)]
    spec = {
        'api': f'{live_server.base_url}/api/chat',
        'scenarios': [
            {
                'name': 'reload',
                'chatId': chat('reloaded'),
                'steps': [
                    {'op': 'set-messages', 'messages': reloaded},
                    {'op': 'send', 'text': 'think about the weather'},
                ],
            }
        ],
    }
    result = live_server.drive('e2e_vercel.mjs', spec)['reload']
    assert result['steps'][0]['valid'] is True, result['steps'][0]['valid']
    assert result['steps'][-1]['error'] is None
    [run] = live_server.recorder.runs_for(chat('reloaded'))
    assert run.input is not None
    assert model_view(run.input.history) == model_view(
        [*stored, ModelRequest(parts=[UserPromptPart(content='think about the weather')])]
    )
    produced = completed_by_run(live_server.recorder)[id(run)]
    assert isinstance(produced[-1], ModelResponse)
    assert produced[-1].parts == [TextPart(content='It is sunny in Paris, 21 °C.')]
