"""A pydantic-ai agent on an offline `FunctionModel` whose every answer is chosen by the conversation, so each
scenario (text, thinking, tool retry, parallel calls, output feedback, approval, client tool, native tool, state,
a stream that waits, a slow answer, a model that fails) plays the same through `agent.run` and through
`PydanticAIAgent`; and the comparison of what each produced."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel
from pydantic_ai import Agent, AgentRunResult, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai import messages as pai
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.tools import ToolDefinition

from uibridge import ModelMessage, ModelRequest, ModelResponse
from uibridge.core.collector import MessageCollector
from uibridge.core.events import AgentEvent
from uibridge.integrations.pydantic_ai import PydanticAIAgent, to_pydantic_ai
from uibridge.server import AgentRun

SIGNATURE = 'sig-Zm9vYmFy'
CLIENT_TOOL = ToolDefinition(
    name='get_local_time',
    description="The browser's local time",
    parameters_json_schema={'type': 'object', 'properties': {'timezone': {'type': 'string'}}},
)


SLOW_PIECES = (*(f'{n}, ' for n in range(1, 10)), '10.')
"""The slow answer (`slow` in the prompt), one piece every `SLOW_PAUSE` seconds: long enough for a client to drop
the connection in the middle and resume."""
SLOW_PAUSE = 0.1


class Counter(BaseModel):
    count: int = 0


@dataclass
class Deps:
    state: Counter = field(default_factory=Counter)


@dataclass
class Gate:
    """Lets a test see the slow stream start, and whether its model request was stopped."""

    started: anyio.Event = field(default_factory=anyio.Event)
    stopped: bool = False


GATE = Gate()


def _last_prompt(messages: list[pai.ModelMessage]) -> str:
    for message in reversed(messages):
        for part in message.parts:
            if isinstance(part, pai.UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ''


async def _answer(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    last = messages[-1].parts
    returns = [p for p in last if isinstance(p, pai.ToolReturnPart)]
    prompt = _last_prompt(messages)
    # pydantic-ai shows the model its retry feedback as a fenced user prompt
    if any('that answer was bad' in str(getattr(p, 'content', '')) for p in last):
        yield 'A good answer.'
    elif returns and returns[-1].outcome == 'retried':
        yield {0: DeltaToolCall(name='get_weather', json_args='{"city": "Paris"}', tool_call_id='call_w2')}
    elif returns:
        yield f'Done: {returns[-1].outcome}, '
        yield f'{returns[-1].model_response_str()}'
    elif 'fail' in prompt:
        yield 'Half an ans'
        raise RuntimeError('the model failed')
    elif 'cut' in prompt:  # the model fails mid tool-call arguments
        yield {0: DeltaToolCall(name='get_weather', json_args='{"city": "Pa', tool_call_id=f'call_x{len(messages)}')}
        raise RuntimeError('the model failed')
    elif 'slow' in prompt:
        for piece in SLOW_PIECES:
            await anyio.sleep(SLOW_PAUSE)
            yield piece
    elif 'both' in prompt:  # a server tool and one needing approval, in one response
        yield {0: DeltaToolCall(name='get_weather', json_args='{"city": "Rome"}', tool_call_id='call_b1')}
        yield {1: DeltaToolCall(name='delete_file', json_args='{"path": "b.txt"}', tool_call_id='call_b2')}
    elif 'think' in prompt:
        yield {0: DeltaThinkingPart(content='Let me ')}
        yield {0: DeltaThinkingPart(content='think.')}
        yield {0: DeltaThinkingPart(signature=SIGNATURE)}
        yield 'Thought it through.'
    elif 'weather' in prompt:
        yield {0: DeltaToolCall(name='get_weather', json_args='{"city": ', tool_call_id='call_w1')}
        yield {0: DeltaToolCall(json_args='""}')}
    elif 'feedback' in prompt:
        yield 'bad'
    elif 'delete' in prompt:
        yield {0: DeltaToolCall(name='delete_file', json_args='{"path": "notes.txt"}', tool_call_id='call_d1')}
    elif 'time' in prompt:
        yield {0: DeltaToolCall(name='get_local_time', json_args='{"timezone": "UTC"}', tool_call_id='call_t1')}
    elif 'search' in prompt:
        args = {'query': 'uibridge'}
        yield {0: pai.NativeToolCallPart('web_search', args, 'call_n1', provider_name='function')}
        yield {1: pai.NativeToolReturnPart('web_search', {'hits': 3}, 'call_n1', provider_name='function')}
        yield 'Found 3.'
    elif 'count' in prompt:
        # An id per turn (the first is `call_c1`): a chat that counts twice must not reuse a call's id.
        yield {0: DeltaToolCall(name='increment', json_args='{}', tool_call_id=f'call_c{len(messages)}')}
    elif 'wait' in prompt:
        GATE.started.set()  # before the first chunk: the test sees it set with the first event
        try:
            yield 'Waiting'
            await anyio.sleep_forever()
        finally:
            GATE.stopped = True
    else:
        yield 'Hello '
        yield 'there.'


def make_agent() -> Agent[Deps, str | DeferredToolRequests]:
    model = FunctionModel(stream_function=_answer, model_name='scripted')
    agent = Agent(model, deps_type=Deps, output_type=[str, DeferredToolRequests])

    @agent.tool_plain
    def get_weather(city: str) -> dict[str, Any]:
        if not city:
            raise ModelRetry('city must not be empty')
        return {'city': city, 'forecast': 'sunny'}

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f'deleted {path}'

    @agent.tool
    def increment(ctx: RunContext[Deps]) -> int:
        ctx.deps.state = Counter(count=ctx.deps.state.count + 1)
        return ctx.deps.state.count

    @agent.output_validator
    def no_bad_answers(output: str | DeferredToolRequests) -> str | DeferredToolRequests:
        if output == 'bad':
            raise ModelRetry('that answer was bad')
        return output

    return agent


BOOKKEEPING = {
    'request': ('timestamp', 'run_id', 'conversation_id', 'state', 'instructions', 'metadata'),
    'response': ('timestamp', 'run_id', 'conversation_id', 'state', 'model_id', 'metadata'),
}
"""pydantic-ai's per-run bookkeeping on a message, which no neutral event carries: when, in which run and
conversation, the request's server-side instructions, the response's model id (its `model_name` is carried)
and `metadata` (where uibridge keeps its own records: who answers a call, the shared state)."""


def normalised(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages as pydantic-ai dumps them, less `BOOKKEEPING`, with a tool call's arguments parsed (pydantic-ai
    keeps the streamed JSON text, uibridge the object it denotes). Part timestamps are compared as they are."""
    dumped = pai.ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    for message in dumped:
        for key in BOOKKEEPING[message['kind']]:
            message.pop(key, None)
        for part in message['parts']:
            if part['part_kind'] in ('tool-call', 'builtin-tool-call') and isinstance(part.get('args'), str):
                part['args'] = json.loads(part['args'])
            if part['part_kind'] == 'thinking':
                # FunctionModel names the provider only in the delta that brings the signature; no neutral
                # event sets a part's field after its start but the signature (docs/pydantic-ai.md).
                part.pop('provider_name')
    return dumped


def as_pydantic_ai(messages: list[ModelMessage]) -> list[pai.ModelMessage]:
    return to_pydantic_ai(messages)


class Played:
    """One run through `PydanticAIAgent`: its events, the collected messages, pydantic-ai's own result."""

    def __init__(self) -> None:
        self.events: list[AgentEvent | ModelMessage] = []
        self.collector = MessageCollector()
        self.result: AgentRunResult[Any] | None = None

    @property
    def messages(self) -> list[ModelMessage]:
        return self.collector.messages


async def play_run(agent: Agent[Any, Any], deps: Callable[[], Any], run: AgentRun) -> Played:
    """`run` through `PydanticAIAgent(agent)` with fresh `deps()`, each event folded by uibridge's collector."""
    played = Played()

    async def keep(result: AgentRunResult[Any], run: AgentRun) -> None:
        played.result = result

    bridge = PydanticAIAgent(agent, deps_for=lambda run: deps(), on_result=keep)
    async for event in bridge(run):
        assert not isinstance(event, ModelRequest | ModelResponse)
        played.events.append(event)
        played.collector.feed(event)
    return played
