"""`PydanticAIAgent` under what a demanding application does with pydantic-ai: parallel tool calls of every
kind in one response, repeated tool retries, structured output with a validator's retry, deps of both kinds
holding the shared state, usage over several requests, a history of every part kind going round, and a cancel
in the middle of a tool. Each run's collected messages are compared with pydantic-ai's `new_messages()`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai import messages as pai
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai_support import Played, normalised, play_run

from uibridge import ModelMessage, ModelRequest, ModelResponse, StateSnapshot, ToolCallReady, UserPromptPart
from uibridge.core.events import AgentEvent, ToolResult
from uibridge.core.run import ClientTool
from uibridge.core.usage import Usage, add_usage
from uibridge.integrations.pydantic_ai import PydanticAIAgent, from_pydantic_ai, to_pydantic_ai
from uibridge.server import AgentRun

pytestmark = pytest.mark.anyio


class Board(BaseModel):
    items: list[str] = []


@dataclass
class DataDeps:
    state: Board = field(default_factory=Board)


class ModelDeps(BaseModel):
    state: Board = Board()


class DictDeps(BaseModel):
    state: dict[str, Any] = {}


class City(BaseModel):
    name: str
    population: int


@dataclass
class Tally:
    flaky_calls: int = 0
    tool_started: anyio.Event = field(default_factory=anyio.Event)
    tool_stopped: bool = False
    second_done: anyio.Event = field(default_factory=anyio.Event)
    second_task: asyncio.Task[Any] | None = None


TALLY = Tally()


def _calls(*calls: tuple[str, dict[str, Any], str]) -> dict[int, DeltaToolCall]:
    return {i: DeltaToolCall(name=n, json_args=json.dumps(a), tool_call_id=c) for i, (n, a, c) in enumerate(calls)}


def _prompt(messages: list[pai.ModelMessage]) -> str:
    first = messages[0].parts[0]
    return first.content if isinstance(first, pai.UserPromptPart) and isinstance(first.content, str) else ''


async def _answer(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    prompt, last = _prompt(messages), messages[-1]
    returns = [p for p in last.parts if isinstance(p, pai.ToolReturnPart)]
    requests = sum(isinstance(m, pai.ModelRequest) for m in messages)
    if prompt == 'three requests':
        yield _calls(('add_item', {'item': str(requests)}, f'u{requests}')) if requests < 3 else 'Three.'
    elif returns and all(r.outcome != 'retried' for r in returns) and prompt != 'city':
        yield 'Done: ' + ', '.join(r.model_response_str() for r in returns)
    elif prompt == 'two servers':
        yield _calls(('add_item', {'item': 'a'}, 'c1'), ('add_item', {'item': 'b'}, 'c2'))
    elif prompt == 'out of order':
        yield _calls(('finish', {'second': False}, 'c1'), ('finish', {'second': True}, 'c2'))
    elif prompt == 'server and client':
        yield _calls(('add_item', {'item': 'a'}, 'c1'), ('get_local_time', {}, 'c2'))
    elif prompt == 'server and approval':
        yield _calls(('add_item', {'item': 'a'}, 'c1'), ('delete_all', {}, 'c2'))
    elif prompt == 'approval and server':
        yield _calls(('delete_all', {}, 'c1'), ('add_item', {'item': 'a'}, 'c2'))
    elif prompt == 'flaky':
        yield _calls(('flaky', {}, f'f{requests}'))
    elif prompt == 'city':
        output = info.output_tools[0].name
        population = 1 if requests == 1 else 2_100_000
        yield _calls((output, {'name': 'Paris', 'population': population}, f'o{requests}'))
    elif prompt == 'slow tool':
        yield _calls(('slow', {}, 's1'))
    else:
        yield 'Hello.'


def make_agent(output_type: Any = None) -> Agent[Any, Any]:
    model = FunctionModel(stream_function=_answer, model_name='scripted')
    agent: Agent[Any, Any] = Agent(model, output_type=output_type or [str, DeferredToolRequests], retries=3)

    @agent.tool
    def add_item(ctx: RunContext[Any], item: str) -> list[str]:
        state = ctx.deps.state
        if isinstance(state, dict):
            state.setdefault('items', []).append(item)  # in place, as an application may
            return list(state['items'])
        ctx.deps.state = Board(items=[*state.items, item])
        return ctx.deps.state.items

    @agent.tool_plain(requires_approval=True)
    def delete_all() -> str:
        return 'deleted'

    @agent.tool_plain
    def flaky() -> str:
        TALLY.flaky_calls += 1
        if TALLY.flaky_calls < 3:
            raise ModelRetry(f'try again ({TALLY.flaky_calls})')
        return 'worked'

    @agent.tool_plain
    async def finish(second: bool) -> str:
        """The first call finishes only after the second one has (its task done, not just its body)."""
        if second:
            TALLY.second_task = asyncio.current_task()
            TALLY.second_done.set()
        else:
            await TALLY.second_done.wait()
            assert TALLY.second_task is not None
            await asyncio.shield(TALLY.second_task)
            for _ in range(10):  # a few turns of the loop: pydantic-ai sees the second call's end on its own
                await asyncio.sleep(0)
        return 'second' if second else 'first'

    @agent.tool_plain
    async def slow() -> str:
        TALLY.tool_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            TALLY.tool_stopped = True
        return 'never'

    return agent


async def play(text: str, *, agent: Agent[Any, Any] | None = None, deps: Any = None, **fields: Any) -> Played:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=text)])]
    run = AgentRun(messages=history, thread_id='t', run_id='r', protocol='test', **fields)
    return await play_run(agent or make_agent(), lambda: deps or DataDeps(), run)


def assert_same_as_pydantic_ai(played: Played) -> None:
    assert played.result is not None
    assert normalised(to_pydantic_ai(played.messages)) == normalised(played.result.new_messages())


async def test_two_server_tools_in_one_response() -> None:
    played = await play('two servers')
    assert_same_as_pydantic_ai(played)
    results = [e.part.tool_call_id for e in played.events if isinstance(e, ToolResult)]
    assert sorted(results) == ['c1', 'c2']


async def test_parallel_results_are_collected_in_call_order_whatever_order_they_finish_in() -> None:
    TALLY.second_done = anyio.Event()
    played = await play('out of order')
    assert_same_as_pydantic_ai(played)
    assert [e.part.tool_call_id for e in played.events if isinstance(e, ToolResult)] == ['c1', 'c2']


async def test_a_server_tool_beside_a_client_tool() -> None:
    played = await play('server and client', client_tools=[ClientTool('get_local_time')])
    assert_same_as_pydantic_ai(played)
    assert ToolCallReady('c2', 'client') in played.events
    assert [e.part.tool_call_id for e in played.events if isinstance(e, ToolResult)] == ['c1']


@pytest.mark.parametrize(
    ('text', 'approval', 'server'), [('server and approval', 'c2', 'c1'), ('approval and server', 'c1', 'c2')]
)
async def test_a_server_tool_beside_an_approval(text: str, approval: str, server: str) -> None:
    played = await play(text)
    assert_same_as_pydantic_ai(played)
    assert ToolCallReady(approval, 'approval') in played.events
    assert [e.part.tool_call_id for e in played.events if isinstance(e, ToolResult)] == [server]


async def test_a_tool_that_retries_twice_then_works() -> None:
    TALLY.flaky_calls = 0
    played = await play('flaky')
    assert_same_as_pydantic_ai(played)
    kinds = [type(p).__name__ for m in played.messages for p in m.parts]
    assert kinds == ['ToolCallPart', 'RetryPromptPart'] * 2 + ['ToolCallPart', 'ToolReturnPart', 'TextPart']


async def test_structured_output_with_a_validator_retry() -> None:
    played = await play('city', agent=_city_agent())
    assert_same_as_pydantic_ai(played)
    assert played.result is not None and played.result.output == City(name='Paris', population=2_100_000)


@pytest.mark.parametrize('deps_type', [DataDeps, ModelDeps])
async def test_deps_for_gets_the_client_state_for_either_kind_of_deps(deps_type: type) -> None:
    deps = deps_type()
    played = await play('three requests', deps=deps, state={'items': ['x']})
    assert_same_as_pydantic_ai(played)
    snapshots = [e for e in played.events if isinstance(e, StateSnapshot)]
    assert snapshots == [StateSnapshot({'items': ['x', '1']}), StateSnapshot({'items': ['x', '1', '2']})]
    assert played.collector.state == {'items': ['x', '1', '2']}
    assert deps.state == Board()  # the application's own deps object is left as it was


async def test_a_state_changed_in_place_streams_snapshots_that_stay_as_sent() -> None:
    played = await play('three requests', deps=DictDeps(), state={'items': []})
    snapshots = [e.snapshot for e in played.events if isinstance(e, StateSnapshot)]
    assert snapshots == [{'items': ['1']}, {'items': ['1', '2']}]


async def test_usage_over_several_requests_is_pydantic_ais() -> None:
    played = await play('three requests')
    assert_same_as_pydantic_ai(played)
    assert played.result is not None
    total = Usage()
    for message in played.messages:
        if isinstance(message, ModelResponse) and message.usage is not None:
            total = add_usage(total, message.usage)
    own = played.result.usage
    assert (total.input_tokens, total.output_tokens) == (own.input_tokens, own.output_tokens)
    assert own.requests == 3


async def test_a_history_of_every_kind_goes_round() -> None:
    TALLY.flaky_calls = 0
    first = await play('flaky')
    city = await play('city', agent=_city_agent())
    assert first.result is not None and city.result is not None
    native = [*first.result.all_messages(), *city.result.all_messages(), *_every_part_kind()]
    dump = pai.ModelMessagesTypeAdapter.dump_python
    assert dump(to_pydantic_ai(from_pydantic_ai(native)), mode='json') == dump(native, mode='json')


def _every_part_kind() -> list[pai.ModelMessage]:
    """Thinking with its signature, a native tool's call and return, files both ways, usage and provider ids."""
    image = pai.BinaryContent(data=b'\x89PNG', media_type='image/png')
    return [
        pai.ModelRequest(parts=[pai.UserPromptPart(content=['look', image, pai.ImageUrl(url='https://x.test/y.png')])]),
        pai.ModelResponse(
            parts=[
                pai.ThinkingPart(content='hmm', signature='sig', provider_name='anthropic', id='t1'),
                pai.NativeToolCallPart('web_search', {'q': 'x'}, 'n1', provider_name='anthropic'),
                pai.NativeToolReturnPart('web_search', {'hits': 1}, 'n1', provider_name='anthropic'),
                pai.TextPart(content='see'),
                pai.FilePart(content=pai.BinaryContent(data=b'abc', media_type='image/png')),
            ],
            model_name='m',
            provider_name='anthropic',
            usage=pai.RequestUsage(input_tokens=3, output_tokens=4, cache_read_tokens=2),
            finish_reason='stop',
            provider_response_id='r1',
            provider_details={'x': 1},
        ),
    ]


def _city_agent() -> Agent[Any, Any]:
    agent = make_agent(output_type=City)

    @agent.output_validator
    def big_enough(output: City) -> City:
        if output.population < 1000:
            raise ModelRetry('too small for a city')
        return output

    return agent


async def test_cancelling_mid_tool_stops_the_tool() -> None:
    TALLY.tool_started, TALLY.tool_stopped = anyio.Event(), False
    collected: list[AgentEvent | ModelMessage] = []

    async def consume() -> None:
        bridge = PydanticAIAgent(make_agent(), deps=DataDeps())
        history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='slow tool')])]
        run = AgentRun(messages=history, thread_id='t', run_id='r', protocol='test')
        async for event in bridge(run):
            collected.append(event)

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        with anyio.fail_after(30):
            await TALLY.tool_started.wait()
        group.cancel_scope.cancel()
    assert TALLY.tool_stopped
    assert not any(isinstance(e, ToolResult) for e in collected)
