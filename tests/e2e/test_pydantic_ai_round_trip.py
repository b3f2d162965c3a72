"""`PydanticAIAgent` behind `create_app`, under uvicorn, driven by both real clients (`ai@7`'s `Chat` and
`@ag-ui/client`'s `HttpAgent`, the Node drivers in tests/clients), scenario by scenario: every step succeeds in
the client, the server receives back exactly what it produced, and what each run collected (`on_complete`) is
pydantic-ai's own `new_messages()` for that run (`pydantic_ai_support.normalised`)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    LiveServer,
    Recorder,
    all_parts,
    assert_round_trip,
    assert_steps_succeeded,
    drive_protocols,
    serve,
)
from pydantic_ai import AgentRunResult

from uibridge import (
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    ThinkingPart,
    ToolReturnPart,
)
from uibridge.core.events import STATE_METADATA_KEY, AgentEvent
from uibridge.integrations.pydantic_ai import PydanticAIAgent
from uibridge.server import AgentRun
from uibridge.server.app import create_app
from uibridge.server.demo import DemoAgent

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'integrations'))
from pydantic_ai_support import CLIENT_TOOL, SIGNATURE, Deps, as_pydantic_ai, make_agent, normalised

ANSWER = {'vercel': 'approve', 'agui': 'resume'}
CLIENT_OUTPUT = {'vercel': {'output': 'noon'}, 'agui': {'content': 'noon'}}


def scenarios(protocol: str) -> dict[str, list[dict[str, Any]]]:
    answer = ANSWER[protocol]
    return {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'think': [{'op': 'send', 'text': 'think'}, {'op': 'send', 'text': 'next'}],
        'tools': [{'op': 'send', 'text': 'weather'}, {'op': 'send', 'text': 'next'}],
        'feedback': [{'op': 'send', 'text': 'feedback'}, {'op': 'send', 'text': 'next'}],
        'approve': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': True}],
        'deny': [{'op': 'send', 'text': 'delete'}, {'op': answer, 'approved': False, 'reason': 'keep it'}],
        'parallel': [{'op': 'send', 'text': 'both'}, {'op': answer, 'approved': True}],
        'client': [{'op': 'send', 'text': 'time'}, {'op': 'tool-output', **CLIENT_OUTPUT[protocol]}],
        'state': [{'op': 'send', 'text': 'count'}],
        'native': [{'op': 'send', 'text': 'search'}, {'op': 'send', 'text': 'next'}],
    }


NAMES = list(scenarios('vercel'))


class Served:
    def __init__(self, server: LiveServer, results: dict[int, AgentRunResult[Any]]) -> None:
        self.server = server
        self.results = results

    def runs(self, thread: str) -> list[tuple[AgentRun, list[ModelMessage]]]:
        return [(run, messages) for messages, run in self.server.recorder.completed if run.thread_id == thread]


@pytest.fixture(scope='module')
def served() -> Iterator[Served]:
    recorder = Recorder()
    results: dict[int, AgentRunResult[Any]] = {}

    async def keep(result: AgentRunResult[Any], run: AgentRun) -> None:
        results[id(run)] = result

    bridge = PydanticAIAgent(make_agent(), deps_for=lambda run: Deps(), client_tools=[CLIENT_TOOL], on_result=keep)

    def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        recorder.runs.append(run)
        return bridge(run)

    with serve(create_app(agent, on_complete=recorder.on_complete)) as base_url:
        yield Served(LiveServer(base_url, recorder, DemoAgent(delay=0)), results)


Driven = tuple[str, dict[str, Any], Served]


@pytest.fixture(scope='module')
def played(served: Served) -> dict[str, dict[str, Any]]:
    """Both protocols' scenarios, their drivers side by side: protocol -> the driver's result."""
    return drive_protocols(
        served.server, {p: scenarios(p) for p in ('vercel', 'agui')}, lambda protocol, name: f'{protocol}-pyd-{name}'
    )


@pytest.fixture(scope='module', params=['vercel', 'agui'])
def driven(request: pytest.FixtureRequest, served: Served, played: dict[str, dict[str, Any]]) -> Driven:
    protocol: str = request.param
    return protocol, played[protocol], served


@pytest.mark.parametrize('name', NAMES)
def test_every_step_succeeds_in_the_client(driven: Driven, name: str) -> None:
    protocol, results, _ = driven
    assert_steps_succeeded(protocol, name, results[name])


@pytest.mark.parametrize('name', [n for n in NAMES if n != 'state'])
def test_the_server_receives_exactly_what_it_produced(driven: Driven, name: str) -> None:
    protocol, _, served = driven
    assert_round_trip(served.server.recorder, f'{protocol}-pyd-{name}')


@pytest.mark.parametrize('name', NAMES)
def test_each_run_collected_pydantic_ais_new_messages(driven: Driven, name: str) -> None:
    protocol, _, served = driven
    runs = served.runs(f'{protocol}-pyd-{name}')
    assert runs
    for run, collected in runs:
        result = served.results[id(run)]
        assert normalised(as_pydantic_ai(collected)) == normalised(result.new_messages())


def parts_received(served: Served, thread: str) -> list[Any]:
    last = served.server.recorder.runs_for(thread)[-1]
    assert last.input is not None
    return all_parts(last.messages)


def test_thinking_and_its_signature_come_back(driven: Driven) -> None:
    protocol, _, served = driven
    thinking = [p for p in parts_received(served, f'{protocol}-pyd-think') if isinstance(p, ThinkingPart)]
    assert [(p.content, p.signature) for p in thinking] == [('Let me think.', SIGNATURE)]


def test_the_tool_retry_and_the_feedback_come_back(driven: Driven) -> None:
    protocol, _, served = driven
    tools = parts_received(served, f'{protocol}-pyd-tools')
    assert [p.content for p in tools if isinstance(p, RetryPromptPart)] == ['city must not be empty']
    feedback = [p for p in parts_received(served, f'{protocol}-pyd-feedback') if isinstance(p, RetryFeedbackPart)]
    assert [(p.cause, p.content) for p in feedback] == [('model_retry', 'that answer was bad')]


@pytest.mark.parametrize(('name', 'outcome'), [('approve', 'success'), ('deny', 'denied')])
def test_the_approval_answer_reaches_the_tool(driven: Driven, name: str, outcome: str) -> None:
    protocol, _, served = driven
    _, (second, collected) = served.runs(f'{protocol}-pyd-{name}')
    assert second.approvals and second.approvals[0].approved is (outcome == 'success')
    answer = collected[0].parts[0]
    assert isinstance(answer, ToolReturnPart) and answer.outcome == outcome
    if outcome == 'denied':
        assert 'keep it' in answer.content


def test_the_client_tools_answer_reaches_the_model(driven: Driven) -> None:
    protocol, _, served = driven
    (_, _), (_, collected) = served.runs(f'{protocol}-pyd-client')
    response = collected[-1]
    assert isinstance(response, ModelResponse)
    assert 'noon' in response.parts[0].content  # type: ignore[union-attr]


def test_the_state_the_tool_changed_is_collected(driven: Driven) -> None:
    protocol, _, served = driven
    ((_, collected),) = served.runs(f'{protocol}-pyd-state')
    # Kept on the response current when the tool step ended (the one that called the tool).
    states = [m.metadata[STATE_METADATA_KEY] for m in collected if m.metadata and STATE_METADATA_KEY in m.metadata]
    assert states == [{'count': 1}]


def test_the_provider_run_tool_crosses_the_client_and_comes_back_signed(driven: Driven) -> None:
    protocol, _, served = driven
    received = parts_received(served, f'{protocol}-pyd-native')  # the next turn's history, verified
    calls = [p for p in received if isinstance(p, NativeToolCallPart)]
    returns = [p for p in received if isinstance(p, NativeToolReturnPart)]
    assert [(p.tool_name, p.args_as_dict()) for p in calls] == [('web_search', {'query': 'uibridge'})]
    assert [(p.tool_call_id, p.content) for p in returns] == [('call_n1', {'hits': 3})]
