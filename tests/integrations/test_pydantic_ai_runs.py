"""`PydanticAIAgent` in process, scenario by scenario: the events it yields, folded by uibridge's own collector,
are the messages pydantic-ai's `result.new_messages()` holds for the same run (compared through pydantic-ai's
JSON, less the per-run bookkeeping no event carries: `pydantic_ai_support.normalised`)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic_ai_support import GATE, SIGNATURE, Counter, Deps, Played, as_pydantic_ai, make_agent, normalised, play_run

from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    StateSnapshot,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.run import ClientTool, ToolApproval
from uibridge.integrations.pydantic_ai import PydanticAIAgent, from_pydantic_ai, to_pydantic_ai
from uibridge.server import AgentRun

pytestmark = pytest.mark.anyio


async def play(history: list[ModelMessage], **run_fields: Any) -> Played:
    run = AgentRun(messages=history, thread_id='t', run_id='r', protocol='test', **run_fields)
    return await play_run(make_agent(), Deps, run)


def prompt(text: str) -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart(content=text)])]


def assert_same_as_pydantic_ai(played: Played) -> None:
    assert played.result is not None
    assert normalised(as_pydantic_ai(played.messages)) == normalised(played.result.new_messages())


@pytest.mark.parametrize('text', ['hello', 'think', 'weather', 'feedback', 'search', 'count', 'delete', 'time', 'both'])
async def test_the_collected_messages_are_new_messages(text: str) -> None:
    played = await play(prompt(text), client_tools=[ClientTool('get_local_time')])
    assert_same_as_pydantic_ai(played)


async def test_thinking_keeps_its_signature() -> None:
    played = await play(prompt('think'))
    thinking = played.messages[0].parts[0]
    assert isinstance(thinking, ThinkingPart)
    assert (thinking.content, thinking.signature) == ('Let me think.', SIGNATURE)


async def test_a_tool_retry_answers_its_call_and_keeps_pydantic_ais_retry_record() -> None:
    played = await play(prompt('weather'))
    kinds = [type(p).__name__ for m in played.messages for p in m.parts]
    assert kinds == ['ToolCallPart', 'RetryPromptPart', 'ToolCallPart', 'ToolReturnPart', 'TextPart']
    retry = played.messages[1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert (retry.tool_name, retry.content, retry.tool_call_id) == ('get_weather', 'city must not be empty', 'call_w1')
    assert retry.retry == {'cause': 'model_retry', 'attempt': 1, 'max_retries': 1}


async def test_output_validation_feedback_is_retry_feedback() -> None:
    played = await play(prompt('feedback'))
    feedback = played.messages[1].parts[0]
    assert isinstance(feedback, RetryFeedbackPart)
    assert (feedback.cause, feedback.content) == ('model_retry', 'that answer was bad')


async def test_usage_and_model_name_reach_each_response() -> None:
    played = await play(prompt('weather'))
    responses = [m for m in played.messages if isinstance(m, ModelResponse)]
    assert played.result is not None
    own = [m for m in played.result.new_messages() if m.kind == 'response']
    assert [r.model_name for r in responses] == [r.model_name for r in own] == ['scripted'] * 3
    assert [r.usage and r.usage.output_tokens for r in responses] == [r.usage.output_tokens for r in own]
    assert all(r.usage is not None and r.usage.input_tokens > 0 for r in responses)


async def test_native_tool_parts_stream_as_native() -> None:
    played = await play(prompt('search'))
    call, result = played.messages[0].parts[:2]
    assert isinstance(call, NativeToolCallPart) and call.args == {'query': 'uibridge'}
    assert isinstance(result, NativeToolReturnPart) and result.content == {'hits': 3}


async def test_an_approval_request_then_approve_and_deny() -> None:
    first = await play(prompt('delete'))
    assert ToolCallReady('call_d1', 'approval') in first.events
    history = [*prompt('delete'), *first.messages]
    for approved, outcome, text in [(True, 'success', 'deleted notes.txt'), (False, 'denied', 'keep it')]:
        approval = ToolApproval('apr', approved, tool_call_id='call_d1', reason=None if approved else 'keep it')
        second = await play(history, approvals=[approval], resolved_tool_call_ids=frozenset({'call_d1'}))
        answer = second.messages[0].parts[0]
        assert isinstance(answer, ToolReturnPart)
        assert answer.outcome == outcome and text in str(answer.content)
        assert_same_as_pydantic_ai(second)


async def test_a_client_tool_call_waits_for_the_client_and_its_answer_comes_from_the_history() -> None:
    tools = [ClientTool('get_local_time', parameters={'type': 'object', 'properties': {}})]
    first = await play(prompt('time'), client_tools=tools)
    assert ToolCallReady('call_t1', 'client') in first.events
    answer = ModelRequest(parts=[ToolReturnPart(tool_name='get_local_time', content='noon', tool_call_id='call_t1')])
    second = await play([*prompt('time'), *first.messages, answer], client_tools=tools)
    assert_same_as_pydantic_ai(second)
    assert [type(p).__name__ for m in second.messages for p in m.parts] == ['TextPart']
    assert 'noon' in second.messages[0].parts[0].content  # type: ignore[union-attr]


async def test_shared_state_goes_into_deps_and_changes_stream_as_snapshots() -> None:
    played = await play(prompt('count'), state={'count': 41})
    assert [e for e in played.events if isinstance(e, StateSnapshot)] == [StateSnapshot({'count': 42})]
    assert played.collector.state == {'count': 42}
    unchanged = await play(prompt('hello'), state={'count': 7})
    assert not [e for e in unchanged.events if isinstance(e, StateSnapshot)]


async def test_a_dataclass_deps_is_copied_per_run_never_shared() -> None:
    shared = Deps(state=Counter(count=1))
    bridge = PydanticAIAgent(make_agent(), deps=shared)
    run = AgentRun(messages=prompt('count'), thread_id='t', run_id='r', protocol='test', state={'count': 5})
    events = [event async for event in bridge(run)]
    assert StateSnapshot({'count': 6}) in events
    assert shared.state == Counter(count=1)


async def test_closing_the_stream_stops_the_model_request() -> None:
    GATE.started, GATE.stopped = anyio.Event(), False
    bridge = PydanticAIAgent(make_agent(), deps=Deps())
    stream = bridge(AgentRun(messages=prompt('wait'), thread_id='t', run_id='r', protocol='test'))
    # No cancel scope around the iteration: the generator's own scopes must be exited by the close below.
    async for _ in stream:
        if GATE.started.is_set():
            break
    assert GATE.started.is_set()
    await stream.aclose()  # what the endpoint's cancel does to the agent's iterator
    assert GATE.stopped


async def test_cancelling_the_task_stops_the_model_request() -> None:
    GATE.started, GATE.stopped = anyio.Event(), False
    bridge = PydanticAIAgent(make_agent(), deps=Deps())

    async def consume() -> None:
        async for _ in bridge(AgentRun(messages=prompt('wait'), thread_id='t', run_id='r', protocol='test')):
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        with anyio.fail_after(30):
            await GATE.started.wait()
        group.cancel_scope.cancel()
    assert GATE.stopped


def test_histories_cross_both_ways_unchanged() -> None:
    async def run() -> list[Any]:
        played = await play(prompt('weather'))
        assert played.result is not None
        return played.result.all_messages()

    native = anyio.run(run)
    assert normalised(to_pydantic_ai(from_pydantic_ai(native))) == normalised(native)
    # Field for field, timestamps and bookkeeping included: nothing is lost on the way.
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    assert ModelMessagesTypeAdapter.dump_python(
        to_pydantic_ai(from_pydantic_ai(native)), mode='json'
    ) == ModelMessagesTypeAdapter.dump_python(native, mode='json')


def test_a_retry_prompt_uibridge_wrote_loads_as_a_retried_tool_return() -> None:
    # A uibridge-authored retry prompt (no pydantic-ai retry record) loads as pydantic-ai loads a legacy one.
    history = [
        ModelResponse(parts=[ToolCallPart(tool_name='f', args={}, tool_call_id='c')]),
        ModelRequest(parts=[RetryPromptPart(content='again', tool_name='f', tool_call_id='c')]),
    ]
    converted = to_pydantic_ai(history)
    part = converted[1].parts[0]
    assert part.part_kind == 'tool-return' and part.outcome == 'retried'
