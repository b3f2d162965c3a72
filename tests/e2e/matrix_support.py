"""The matrix of tests/e2e/test_matrix.py: every agent kind, with every store, through both protocols' real clients,
in every scenario; what it plays, what serves it, and what each cell must show.

- **Agents** (`AGENTS`): a hand-written generator (`GeneratorAgent`, holding a task group open across its yields),
  `PydanticAIAgent` over pydantic-ai's `FunctionModel` (tests/integrations/pydantic_ai_support.py), and the tool
  loops docs/integrations.md shows for the OpenAI Chat Completions and the Anthropic Messages SDKs (`VendorLoop`),
  each SDK talking to a loopback `ScriptedServer` (tests/integrations/vendor_replay.py) whose answer depends on
  what the SDK sent (`next_turn`). All four answer the same prompts alike: `hello`, `weather` (a server tool),
  `time` (a client tool), `delete` (a call that needs approval), `count` (shared state), `fail` (the model fails
  mid-answer), `cut` (the model fails mid tool-call arguments), `slow` (an answer long enough to drop and resume).
- **Stores** (`STORES`): none (the client holds the history), `memory:`, SQLite in a file, Redis and PostgreSQL
  (the session's real servers, `services_support`).
- **Protocols**: Vercel through `ai@7` (and a subset through `ai@5` and `ai@6`, `OLDER_SDKS`), AG-UI through
  `@ag-ui/client`, both driven by tests/clients/matrix.mjs, many cells at once in one Node process per protocol.
- **Scenarios** (`SCENARIOS`): the steps of each (`steps`) and what the cell must show (`check_cell`).

One uvicorn serves every app (`serve_matrix`): one `create_app` per agent, store and `ai` version, each mounted
under `/{agent}/{store}/{sdk}` and serving both protocols, so each cell is one chat and costs only its requests.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from e2e_support import Recorder, model_view, serve
from starlette.applications import Starlette
from starlette.routing import Mount

from uibridge import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core import events as ev
from uibridge.core.messages import ModelMessage, generate_tool_call_id
from uibridge.server import AgentRun
from uibridge.server.app import create_app
from uibridge.server.store import ChatStore, MemoryStore, SqliteStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'integrations'))
from pydantic_ai_support import CLIENT_TOOL, SLOW_PAUSE, SLOW_PIECES, Deps, make_agent
from vendor_replay import Answer, Received, ScriptedServer

Agent = Literal['custom', 'pydantic', 'openai', 'anthropic']
Store = Literal['none', 'memory', 'sqlite', 'redis', 'postgresql']
Protocol = Literal['vercel', 'agui']
Scenario = Literal['text', 'server-tool', 'client-tool', 'approve', 'deny', 'state', 'error', 'cut', 'resume']
Sdk = Literal['ai', 'ai5', 'ai6']

AGENTS: tuple[Agent, ...] = ('custom', 'pydantic', 'openai', 'anthropic')
STORES: tuple[Store, ...] = ('none', 'memory', 'sqlite', 'redis', 'postgresql')
PROTOCOLS: tuple[Protocol, ...] = ('vercel', 'agui')
SCENARIOS: tuple[Scenario, ...] = (
    'text', 'server-tool', 'client-tool', 'approve', 'deny', 'state', 'error', 'cut', 'resume',
)  # fmt: skip
OLDER_SDKS: tuple[Sdk, ...] = ('ai5', 'ai6')
OLDER_AGENTS: tuple[Agent, ...] = ('custom', 'pydantic')
OLDER_STORES: tuple[Store, ...] = ('none', 'sqlite')
OLDER_SCENARIOS: tuple[Scenario, ...] = ('text', 'server-tool', 'client-tool', 'approve', 'deny', 'error')
"""What `ai@5` and `ai@6` play: a generator and pydantic-ai, client-held and stored, every scenario whose chunks
differ between the versions (tools, approvals, errors). Not `cut`: tests/e2e/test_next_turn.py plays a call cut off
mid-arguments through `ai@5` and `ai@6` (client-held and stored), and nothing in it differs by agent or store."""

NO_STREAM_TO_RESUME = (
    'not applicable: without a store the client holds the history and a run lasts as long as its request, so there '
    'is no stream to resume after a reload (GET {api}/{chatId}/stream answers 204)'
)
CUT_STORES: tuple[Store, ...] = ('none', 'sqlite')
NO_NEW_CUT = (
    'not applicable: what a store keeps of a call a failure cut off is the neutral JSON of a call and its failed '
    'result, which every store already keeps in the other cells; SQLite stands for the stores (client-held history '
    'is the other cut cell: the call and its failure come back through the client)'
)
QUICK_TURNS = 8
"""Turns of the scripted chat that sends each next turn the moment the last answer ended (`quick_turn_cells`)."""
SLOW_TEXT = ''.join(SLOW_PIECES)
FAILURE = 'the model failed'
CUT_ARGS = '{"city": "Pa'
"""The argument text every agent's model has streamed when it fails in the `cut` scenario."""


@dataclass(frozen=True)
class Cell:
    agent: Agent
    store: Store
    protocol: Protocol
    scenario: Scenario
    sdk: Sdk = 'ai'

    @property
    def id(self) -> str:
        client = self.sdk if self.protocol == 'vercel' else 'agui'
        return f'{self.agent}-{self.store}-{client}-{self.scenario}'

    @property
    def not_applicable(self) -> str | None:
        """Why the cell cannot be played, or `None` when it must pass."""
        if self.scenario == 'resume' and self.store == 'none':
            return NO_STREAM_TO_RESUME
        if self.scenario == 'cut' and self.store not in CUT_STORES:
            return NO_NEW_CUT
        return None


def all_cells() -> list[Cell]:
    cells = [
        Cell(agent, store, protocol, scenario)
        for agent in AGENTS
        for store in STORES
        for protocol in PROTOCOLS
        for scenario in SCENARIOS
    ]
    cells += [
        Cell(agent, store, 'vercel', scenario, sdk)
        for sdk in OLDER_SDKS
        for agent in OLDER_AGENTS
        for store in OLDER_STORES
        for scenario in OLDER_SCENARIOS
    ]
    return cells


def quick_turn_cells() -> list[tuple[Store, str]]:
    """Per store, the chat that sends `QUICK_TURNS` turns each answered through a client tool, every next request
    leaving the moment the last answer was read (`ai`'s `sendAutomaticallyWhen`)."""
    return [(store, f'quick-{store}') for store in STORES if store != 'none']


# --------------------------------------------------------------------------------------------------- the agents


def last_prompt(messages: Sequence[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ''


def _count(state: Any) -> int:
    count = state.get('count', 0) if isinstance(state, dict) else 0  # pyright: ignore[reportUnknownMemberType]
    return count if isinstance(count, int) else 0


def _run_tool(call: ToolCallPart, run: AgentRun) -> ToolReturnPart | None:
    """The server's tools: the weather at once; `delete_file` only with a verified approval (`None` without an
    answer); `get_local_time` is the browser's."""
    if call.tool_name == 'get_weather':
        content = f'{call.args_as_dict().get("city")}: sunny'
        return ToolReturnPart(tool_name=call.tool_name, content=content, tool_call_id=call.tool_call_id)
    approval = run.approval_for(call.tool_call_id)
    if call.tool_name != 'delete_file' or approval is None:
        return None
    if approval.approved:
        content = f'deleted {call.args_as_dict().get("path")}'
        return ToolReturnPart(tool_name=call.tool_name, content=content, tool_call_id=call.tool_call_id)
    content = f'The user denied this call: {approval.reason}'
    return ToolReturnPart(tool_name=call.tool_name, content=content, tool_call_id=call.tool_call_id, outcome='denied')


WAITS_FOR: dict[str, Literal['client', 'approval']] = {'get_local_time': 'client', 'delete_file': 'approval'}


class GeneratorAgent:
    """A hand-written agent: an async generator that keeps a task group open across its yields (a task beside it,
    as a heartbeat or a prefetch would run), answering by keyword."""

    async def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep_forever)
            async for item in self._answer(run):
                yield item
            group.cancel_scope.cancel()

    async def _answer(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        if pending := run.pending_tool_calls():
            results = [result for call in pending if (result := _run_tool(call, run)) is not None]
            for result in results:
                yield ev.ToolResult(result)
            async for event in _text('Done: ' + '; '.join(str(r.content) for r in results)):
                yield event
            return
        if results := run.tool_results():
            async for event in _text('Done: ' + '; '.join(str(r.content) for r in results)):
                yield event
            return
        prompt = last_prompt(run.messages)
        if 'fail' in prompt:
            yield ev.PartStart(0, TextPart(content=''))
            yield ev.PartDelta(0, 'Half an ans')
            raise RuntimeError(FAILURE)
        if 'cut' in prompt:
            yield ev.PartStart(0, ToolCallPart(tool_name='get_weather', args='', tool_call_id=generate_tool_call_id()))
            yield ev.PartDelta(0, CUT_ARGS)
            raise RuntimeError(FAILURE)
        if 'slow' in prompt:
            yield ev.PartStart(0, TextPart(content=''))
            for piece in SLOW_PIECES:
                await anyio.sleep(SLOW_PAUSE)
                yield ev.PartDelta(0, piece)
            yield ev.PartEnd(0)
            return
        for keyword, tool, args in TOOL_PROMPTS:
            if keyword in prompt:
                call = ToolCallPart(tool_name=tool, args='', tool_call_id=generate_tool_call_id())
                yield ev.PartStart(0, call)
                yield ev.PartDelta(0, json.dumps(args))
                yield ev.PartEnd(0)
                if tool in WAITS_FOR:
                    yield ev.ToolCallReady(call.tool_call_id, WAITS_FOR[tool])
                    return
                result = _run_tool(call.model_copy(update={'args': args}), run)
                assert result is not None
                yield ev.ToolResult(result)
                async for event in _text(f'Done: {result.content}'):
                    yield event
                return
        if 'count' in prompt:
            # After the answer, where the vendor loops set it before: the state then changes once the response's
            # first message (whose record signs the state) went out, and must still come back on the next turn.
            async for event in _text('Counted.'):
                yield event
            yield ev.StateSnapshot({'count': _count(run.state) + 1})
            return
        async for event in _text('Hello there.'):
            yield event


TOOL_PROMPTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ('weather', 'get_weather', {'city': 'Paris'}),
    ('time', 'get_local_time', {'timezone': 'UTC'}),
    ('delete', 'delete_file', {'path': 'notes.txt'}),
)
"""Which prompt asks for which tool call, for every agent of the matrix."""


async def _text(text: str) -> AsyncIterator[ev.AgentEvent]:
    yield ev.PartStart(0, TextPart(content=''))
    for word in text.split(' '):
        yield ev.PartDelta(0, word if word == text.split(' ')[-1] else word + ' ')
    yield ev.PartEnd(0)


OPENAI_TOOLS: list[Any] = [
    {'type': 'function', 'function': {'name': name, 'parameters': {'type': 'object', 'properties': {}}}}
    for name in ('get_weather', 'get_local_time', 'delete_file')
]
ANTHROPIC_TOOLS: list[Any] = [
    {'name': name, 'input_schema': {'type': 'object', 'properties': {}}}
    for name in ('get_weather', 'get_local_time', 'delete_file')
]


class VendorLoop:
    """The tool loop of docs/integrations.md over a vendor SDK (`openai`: Chat Completions, `anthropic`: Messages),
    the SDK pointed at `base_url`: the model streams, server tools run, a call for the browser or one needing
    approval ends the run, and the next run answers the approvals the client gave before asking the model again.
    `count` sets the shared state before the model answers."""

    def __init__(self, vendor: Literal['openai', 'anthropic'], base_url: str) -> None:
        self.vendor = vendor
        if vendor == 'openai':
            from openai import AsyncOpenAI

            self.openai = AsyncOpenAI(api_key='test', base_url=base_url + '/v1', max_retries=0)
        else:
            from anthropic import AsyncAnthropic

            self.anthropic = AsyncAnthropic(api_key='test', base_url=base_url, max_retries=0)

    async def aclose(self) -> None:
        await (self.openai if self.vendor == 'openai' else self.anthropic).close()

    async def _response(self, history: list[ModelMessage]) -> Any:
        if self.vendor == 'openai':
            from uibridge.integrations.openai import events_from_chat_completions, to_chat_completions_messages

            stream = await self.openai.chat.completions.create(
                model='scripted',
                messages=to_chat_completions_messages(history),
                tools=OPENAI_TOOLS,
                stream=True,
                stream_options={'include_usage': True},
            )
            return events_from_chat_completions(stream)
        from uibridge.integrations.anthropic import events_from_messages_stream, to_messages_input

        stream = await self.anthropic.messages.create(
            model='scripted', max_tokens=1024, tools=ANTHROPIC_TOOLS, stream=True, **to_messages_input(history)
        )
        return events_from_messages_stream(stream)

    async def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        history = list(run.messages)
        if pending := run.pending_tool_calls():
            results = [result for call in pending if (result := _run_tool(call, run)) is not None]
            for result in results:
                yield ev.ToolResult(result)
            history.append(ModelRequest(parts=results))
        if not run.tool_results() and 'count' in last_prompt(run.messages):
            yield ev.StateSnapshot({'count': _count(run.state) + 1})
        for _ in range(4):  # a bound on tool rounds
            events = await self._response(history)
            async for event in events:
                yield event
            history.append(events.response)
            calls = [part for part in events.response.parts if isinstance(part, ToolCallPart)]
            if not calls:
                yield ev.RunFinished(events.finish_reason)
                return
            if waiting := [call for call in calls if call.tool_name in WAITS_FOR]:
                for call in waiting:
                    yield ev.ToolCallReady(call.tool_call_id, WAITS_FOR[call.tool_name])
                return
            results = [result for call in calls if (result := _run_tool(call, run)) is not None]
            for result in results:
                yield ev.ToolResult(result)
            history.append(ModelRequest(parts=results))


def pydantic_ai_agent() -> Any:
    from uibridge.integrations.pydantic_ai import PydanticAIAgent

    return PydanticAIAgent(make_agent(), deps_for=lambda run: Deps(), client_tools=[CLIENT_TOOL])


# ------------------------------------------------------------------------------------- the scripted vendor APIs


@dataclass(frozen=True)
class Turn:
    """What the scripted model answers next: text, one tool call, text then a failure, or the slow answer."""

    text: str = ''
    call: tuple[str, dict[str, Any]] | None = None
    fail: bool = False
    slow: bool = False
    cut: bool = False
    """The model fails after streaming `CUT_ARGS` of a `get_weather` call."""


def next_turn(prompt: str, tool_result: str | None) -> Turn:
    """The model's next answer, by the last prompt, or by the tool result it was just given."""
    if tool_result is not None:
        return Turn(text=f'Done: {tool_result}')
    if 'fail' in prompt:
        return Turn(text='Half an ans', fail=True)
    if 'cut' in prompt:
        return Turn(cut=True)
    if 'slow' in prompt:
        return Turn(slow=True)
    for keyword, tool, args in TOOL_PROMPTS:
        if keyword in prompt:
            return Turn(call=(tool, args))
    return Turn(text='Counted.' if 'count' in prompt else 'Hello there.')


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f'event: {event}\n' if event else ''
    return f'{head}data: {json.dumps(data)}\n\n'.encode()


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return ''.join(block.get('text', '') for block in content if isinstance(block, dict))  # pyright: ignore


def openai_script(request: Received) -> Answer:
    """A Chat Completions stream (the wire format of tests/integrations/fixtures/chat_*.sse)."""
    last = request.body['messages'][-1]
    turn = next_turn(_texts(last['content']), _texts(last['content']) if last['role'] == 'tool' else None)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}
        return _sse({'id': 'chatcmpl-m', 'object': 'chat.completion.chunk', 'created': 1730000000,
                     'model': 'scripted', 'choices': [choice]})  # fmt: skip

    answer: Answer = [(0, chunk({'role': 'assistant', 'content': ''}))]
    if turn.cut:
        call = {'index': 0, 'id': f'call_{uuid.uuid4().hex[:16]}', 'type': 'function',
                'function': {'name': 'get_weather', 'arguments': CUT_ARGS}}  # fmt: skip
        error = {'message': FAILURE, 'type': 'server_error', 'param': None, 'code': None}
        return [*answer, (0, chunk({'tool_calls': [call]})), (0, _sse({'error': error}))]
    if turn.call is not None:
        name, args = turn.call
        call = {'index': 0, 'id': f'call_{uuid.uuid4().hex[:16]}', 'type': 'function',
                'function': {'name': name, 'arguments': json.dumps(args)}}  # fmt: skip
        answer += [(0, chunk({'tool_calls': [call]})), (0, chunk({}, 'tool_calls'))]
    else:
        pieces = SLOW_PIECES if turn.slow else (turn.text,)
        answer += [(SLOW_PAUSE if turn.slow else 0, chunk({'content': piece})) for piece in pieces]
        if turn.fail:
            error = {'message': FAILURE, 'type': 'server_error', 'param': None, 'code': None}
            return [*answer, (0, _sse({'error': error}))]
        answer.append((0, chunk({}, 'stop')))
    return [*answer, (0, b'data: [DONE]\n\n')]


def anthropic_script(request: Received) -> Answer:
    """A Messages stream (the wire format of tests/integrations/fixtures/anthropic_*.sse)."""
    content = request.body['messages'][-1]['content']
    blocks: list[Any] = content if isinstance(content, list) else []  # pyright: ignore[reportUnknownVariableType]
    results = [block for block in blocks if isinstance(block, dict) and block.get('type') == 'tool_result']
    turn = next_turn(_texts(content), _texts(results[-1]['content']) if results else None)
    message = {'id': f'msg_{uuid.uuid4().hex[:12]}', 'type': 'message', 'role': 'assistant', 'model': 'scripted',
               'content': [], 'stop_reason': None, 'stop_sequence': None,
               'usage': {'input_tokens': 10, 'output_tokens': 1}}  # fmt: skip
    answer: Answer = [(0, _sse({'type': 'message_start', 'message': message}, 'message_start'))]
    if turn.cut:
        block = {'type': 'tool_use', 'id': f'toolu_{uuid.uuid4().hex[:16]}', 'name': 'get_weather', 'input': {}}
        delta = {'type': 'input_json_delta', 'partial_json': CUT_ARGS}
        error = {'type': 'error', 'error': {'type': 'overloaded_error', 'message': FAILURE}}
        return [
            *answer,
            (0, _sse({'type': 'content_block_start', 'index': 0, 'content_block': block}, 'content_block_start')),
            (0, _sse({'type': 'content_block_delta', 'index': 0, 'delta': delta}, 'content_block_delta')),
            (0, _sse(error, 'error')),
        ]
    if turn.call is not None:
        name, args = turn.call
        block = {'type': 'tool_use', 'id': f'toolu_{uuid.uuid4().hex[:16]}', 'name': name, 'input': {}}
        delta = {'type': 'input_json_delta', 'partial_json': json.dumps(args)}
        stop = 'tool_use'
    else:
        block = {'type': 'text', 'text': ''}
        delta = None
        stop = 'end_turn'
    answer.append((0, _sse({'type': 'content_block_start', 'index': 0, 'content_block': block}, 'content_block_start')))
    if delta is not None:
        answer.append((0, _sse({'type': 'content_block_delta', 'index': 0, 'delta': delta}, 'content_block_delta')))
    else:
        pieces = SLOW_PIECES if turn.slow else (turn.text,)
        for piece in pieces:
            text = {'type': 'text_delta', 'text': piece}
            event = _sse({'type': 'content_block_delta', 'index': 0, 'delta': text}, 'content_block_delta')
            answer.append((SLOW_PAUSE if turn.slow else 0, event))
        if turn.fail:
            error = {'type': 'error', 'error': {'type': 'overloaded_error', 'message': FAILURE}}
            return [*answer, (0, _sse(error, 'error'))]
    return [
        *answer,
        (0, _sse({'type': 'content_block_stop', 'index': 0}, 'content_block_stop')),
        (
            0,
            _sse(
                {'type': 'message_delta', 'delta': {'stop_reason': stop}, 'usage': {'output_tokens': 5}},
                'message_delta',
            ),
        ),
        (0, _sse({'type': 'message_stop'}, 'message_stop')),
    ]


@contextmanager
def scripted_vendor(script: Callable[[Received], Answer]) -> Iterator[str]:
    """A `ScriptedServer` on a loop of its own in a thread (the apps' SDKs call it from uvicorn's loop); its URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = ScriptedServer(script)
    asyncio.run_coroutine_threadsafe(server.__aenter__(), loop).result(20)
    try:
        yield server.base_url
    finally:
        asyncio.run_coroutine_threadsafe(server.__aexit__(), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(20)
        loop.close()


# ------------------------------------------------------------------------------------------------- the servers


@dataclass
class App:
    """One `create_app` of the matrix: its agent kind, store and `ai` version, mounted at `path`."""

    agent: Agent
    store: Store
    sdk: Sdk
    recorder: Recorder = field(default_factory=Recorder)
    chat_store: ChatStore | None = None

    @property
    def path(self) -> str:
        return f'/{self.agent}/{self.store}/{self.sdk}'


@dataclass
class Matrix:
    base_url: str
    apps: dict[tuple[Agent, Store, Sdk], App]
    postgres_skipped: str | None
    """Why the PostgreSQL cells cannot run here (no PostgreSQL binaries on a developer's machine), or `None`."""
    results: dict[str, Any] = field(default_factory=dict[str, Any])

    def app(self, cell: Cell) -> App:
        return self.apps[cell.agent, cell.store, cell.sdk]

    def url(self, cell: Cell) -> str:
        return f'{self.base_url}{self.app(cell).path}{"/api/chat" if cell.protocol == "vercel" else "/ag-ui"}'


def _store(kind: Store, agent: Agent, sdk: Sdk, services: Mapping[str, str]) -> ChatStore | None:
    if kind == 'none':
        return None
    if kind == 'memory':
        return MemoryStore()
    if kind == 'sqlite':
        return SqliteStore(Path(services['sqlite']) / f'{agent}-{sdk}.db')
    if kind == 'redis':
        from uibridge.server.store.redis import RedisStore

        return RedisStore(services['redis'], prefix=f'matrix-{agent}-{sdk}')
    from services_support import postgres_schema
    from uibridge.server.store.postgres import PostgresStore

    return PostgresStore(postgres_schema(services['postgresql']), pool_size=4)


@contextmanager
def serve_matrix(services: Mapping[str, str], postgres_skipped: str | None) -> Iterator[Matrix]:
    """Every app of the matrix under one uvicorn; the vendor loops' SDKs each against a scripted server.
    `services`: `sqlite` (a directory), `redis` and `postgresql` (URLs; no PostgreSQL apps when skipped)."""
    with ExitStack() as stack:
        vendors = {
            'openai': stack.enter_context(scripted_vendor(openai_script)),
            'anthropic': stack.enter_context(scripted_vendor(anthropic_script)),
        }
        combinations = {(cell.agent, cell.store, cell.sdk) for cell in all_cells()}
        combinations |= {('custom', store, 'ai') for store, _ in quick_turn_cells()}
        if postgres_skipped is not None:
            combinations = {c for c in combinations if c[1] != 'postgresql'}
        apps: dict[tuple[Agent, Store, Sdk], App] = {}
        closing: list[Callable[[], Any]] = []
        routes: list[Mount] = []
        for agent, store, sdk in sorted(combinations):
            app = apps[agent, store, sdk] = App(agent, store, sdk, chat_store=_store(store, agent, sdk, services))
            served: Any
            if agent == 'custom':
                served = GeneratorAgent()
            elif agent == 'pydantic':
                served = pydantic_ai_agent()
            else:
                served = VendorLoop(agent, vendors[agent])
                closing.append(served.aclose)
            if app.chat_store is not None:
                closing.append(app.chat_store.aclose)
            mounted = create_app(
                _recorded(served, app.recorder),
                store=app.chat_store,
                expose_errors=True,
                on_complete=app.recorder.on_complete,
                vercel_sdk_version=7 if sdk == 'ai' else 5 if sdk == 'ai5' else 6,
            )
            routes.append(Mount(app.path, app=mounted))

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            try:
                yield
            finally:
                for close in closing:
                    await close()

        base_url = stack.enter_context(serve(Starlette(routes=routes, lifespan=lifespan), lifespan=True))
        yield Matrix(base_url, apps, postgres_skipped)


def _recorded(agent: Any, recorder: Recorder) -> Any:
    def recorded(run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        recorder.runs.append(run)
        return agent(run)

    return recorded


# ------------------------------------------------------------------------------------------------- the plan


def steps(cell: Cell) -> list[dict[str, Any]]:
    """What the client does in the cell's chat."""
    vercel = cell.protocol == 'vercel'
    played: list[dict[str, Any]] = {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'server-tool': [{'op': 'send', 'text': 'weather'}],
        'client-tool': [{'op': 'send', 'text': 'time'}, {'op': 'tool-output', 'output': 'noon'}],
        'approve': [{'op': 'send', 'text': 'delete'}, {'op': 'answer', 'approved': True}],
        'deny': [{'op': 'send', 'text': 'delete'}, {'op': 'answer', 'approved': False, 'reason': 'keep it'}],
        'state': [{'op': 'send', 'text': 'count'}, {'op': 'send', 'text': 'count again'}],
        'error': [{'op': 'send', 'text': 'fail'}, {'op': 'send', 'text': 'hello'}],
        'cut': [{'op': 'send', 'text': 'cut', 'events': True}, {'op': 'send', 'text': 'hello'}],
        'resume': [
            {'op': 'send-and-drop', 'text': 'slow', 'dropAfter': 2}
            if vercel
            else {'op': 'send-and-abort', 'text': 'slow'},
            {'op': 'resume'} if vercel else {'op': 'reload'},
            {'op': 'send', 'text': 'hello'},
        ],
    }[cell.scenario]
    if cell.store != 'none':
        played = [*played, {'op': 'stored'}]
    return played


def plans(matrix: Matrix, cells: Sequence[Cell]) -> dict[str, dict[str, Any]]:
    """The Node plans, one per protocol: every playable cell, and (Vercel) the quick-turn chats."""
    by_protocol: dict[str, list[dict[str, Any]]] = {'vercel': [], 'agui': []}
    for cell in cells:
        if cell.not_applicable or (cell.agent, cell.store, cell.sdk) not in matrix.apps:
            continue  # not applicable, or PostgreSQL is not installed here
        by_protocol[cell.protocol].append({
            'id': cell.id, 'protocol': cell.protocol, 'url': matrix.url(cell), 'chatId': cell.id,
            'steps': steps(cell), 'sdk': cell.sdk, 'lastOnly': cell.store != 'none',
        })  # fmt: skip
    for store, chat in quick_turn_cells():
        if ('custom', store, 'ai') not in matrix.apps:
            continue
        url = f'{matrix.base_url}{matrix.apps["custom", store, "ai"].path}/api/chat'
        turns = [{'op': 'send', 'text': f'time {n}'} for n in range(QUICK_TURNS)]
        by_protocol['vercel'].append({
            'id': chat, 'protocol': 'vercel', 'url': url, 'chatId': chat, 'steps': turns, 'auto': True,
            'lastOnly': True,
        })  # fmt: skip
    return {protocol: {'concurrency': 8, 'cells': planned} for protocol, planned in by_protocol.items()}


# ----------------------------------------------------------------------------------------------- the checks


def _vercel_text(message: Mapping[str, Any]) -> str:
    return ''.join(part.get('text', '') for part in message['parts'] if part['type'] == 'text')


def _tool_parts(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [part for message in messages for part in message['parts'] if part['type'].startswith('tool-')]


def _agui_answer(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the assistant messages after the last user or tool message."""
    texts: list[str] = []
    for message in reversed(messages):
        if message['role'] in ('user', 'tool'):
            break
        if message['role'] == 'assistant':
            texts.insert(0, message.get('content') or '')
    return ''.join(texts)


def answer_text(protocol: Protocol, step: Mapping[str, Any]) -> str:
    messages = step['messages']
    if protocol == 'vercel':
        return _vercel_text(messages[-1]) if messages and messages[-1]['role'] == 'assistant' else ''
    return _agui_answer(messages)


EXPECTED_ANSWER: dict[str, str] = {
    'text': 'Hello there.',
    'server-tool': 'sunny',
    'client-tool': 'noon',
    'approve': 'deleted notes.txt',
    'deny': 'keep it',
}
"""A piece of the last answer each scenario must show (every agent kind words the rest its own way)."""


def check_cell(cell: Cell, result: Mapping[str, Any], app: App) -> None:
    """Everything the cell must show, in the client and on the server."""
    assert 'crashed' not in result, result.get('crashed')
    played = steps(cell)
    assert [step['op'] for step in result['steps']] == [step['op'] for step in played]
    assert set(result['statuses']) == {200}, result['statuses']  # no 409, no 4xx or 5xx, nothing to resume missing
    runs = app.recorder.runs_for(cell.id)
    for index, step in enumerate(result['steps']):
        _check_step(cell, index, step)
    final = [step for step in result['steps'] if step['op'] != 'stored'][-1]
    scenario = cell.scenario
    if scenario in EXPECTED_ANSWER:
        assert EXPECTED_ANSWER[scenario] in answer_text(cell.protocol, final), answer_text(cell.protocol, final)
    if scenario == 'text':
        _check_second_turn(runs)
    elif scenario == 'client-tool':
        assert _asked_for(cell, result['steps'][0]) == 'client'
    elif scenario in ('approve', 'deny'):
        assert _asked_for(cell, result['steps'][0]) == 'approval'
        _check_answered(runs, approved=scenario == 'approve')
        if scenario == 'deny':
            assert 'deleted' not in answer_text(cell.protocol, final)  # the call never ran
    elif scenario == 'state':
        assert [run.state for run in runs][1:] == [{'count': 1}]
        assert _client_state(cell, final) == {'count': 2}
    elif scenario == 'error':
        failed = result['steps'][0]
        said = failed['error'] if cell.protocol == 'vercel' else failed['runError']
        assert said is not None and FAILURE in said, said
        assert [run.status for run in runs] == ['failed', 'finished']
        assert answer_text(cell.protocol, final) == 'Hello there.'
    elif scenario == 'cut':
        _check_cut(cell, result['steps'], runs)
    elif scenario == 'resume':
        _check_resumed(cell, result['steps'])
    if cell.store != 'none':
        _check_stored(cell, result['steps'][-1])


def _check_step(cell: Cell, index: int, step: Mapping[str, Any]) -> None:
    failing = cell.scenario in ('error', 'cut') and index == 0
    interrupted = cell.scenario == 'resume' and index == 0
    if step['op'] == 'stored':
        return
    if cell.protocol == 'vercel':
        assert step['valid'] is True, (step['op'], step['valid'])
        if failing:
            assert step['status'] == 'error'
        elif not interrupted:
            assert step['errors'] == [] and step['status'] == 'ready', (step['op'], step['errors'])
        return
    events = step['wireEvents']
    if interrupted:
        assert events[0] == 'RUN_STARTED' and 'RUN_FINISHED' not in events
        return
    assert step['error'] is None or failing, (step['op'], step['error'])
    assert events[0] == 'RUN_STARTED' and events[-1] == ('RUN_ERROR' if failing else 'RUN_FINISHED'), events
    # The client holds every stored message it was sent: the server never needs to snapshot it (after a reload
    # the client takes the stored history first). But a call a failure cut off: no `TOOL_CALL_RESULT` may come
    # while it is open, so the client holds its failed result only in the call's record, not as the tool message
    # the store has; the next turn's snapshot gives it the server's messages (`_check_cut`).
    snapshot_due = cell.scenario == 'cut' and index == 1 and cell.store != 'none'
    assert ('MESSAGES_SNAPSHOT' in events) is snapshot_due, events


def _asked_for(cell: Cell, step: Mapping[str, Any]) -> str:
    """What the first answer asked the client for: to run a tool (`client`) or to approve a call (`approval`)."""
    if cell.protocol == 'vercel':
        [part] = _tool_parts(step['messages'])
        if part['state'] == 'approval-requested' or part.get('callProviderMetadata', {}).get('uibridge', {}).get(
            'approval'
        ):
            return 'approval'
        assert part['state'] == 'input-available'
        return 'client'
    if step['pendingInterrupts']:
        return 'approval'
    calls = [call for message in step['messages'] for call in message.get('toolCalls') or ()]
    answered = {message.get('toolCallId') for message in step['messages'] if message['role'] == 'tool'}
    assert [call['function']['name'] for call in calls if call['id'] not in answered] == ['get_local_time']
    return 'client'


def _check_second_turn(runs: list[AgentRun]) -> None:
    """The second run got the first exchange back from the client or the store, as the model saw it."""
    first, second = runs
    assert first.input is not None
    kinds = [message.kind for message in second.messages]
    assert kinds == ['request', 'response', 'request'], kinds
    response = second.messages[1]
    assert isinstance(response, ModelResponse)
    assert ''.join(p.content for p in response.parts if isinstance(p, TextPart)) == 'Hello there.'


def _check_answered(runs: list[AgentRun], *, approved: bool) -> None:
    asked, answered = runs
    assert not asked.approvals
    [approval] = answered.approvals
    assert approval.approved is approved
    assert approval.reason == (None if approved else 'keep it')


def _client_state(cell: Cell, step: Mapping[str, Any]) -> Any:
    if cell.protocol == 'agui':
        return step['state']
    [part] = [part for part in step['messages'][-1]['parts'] if part['type'] == 'data-state']
    return part['data']


def _check_cut(cell: Cell, played: Sequence[Mapping[str, Any]], runs: list[AgentRun]) -> None:
    """The run failed mid tool-call arguments: the client said so, and the next turn's history (from the client,
    or the store) holds the call as streamed, answered as failed right after it; on AG-UI the failed run's events
    are `ag-ui-validate` clean (no `TOOL_CALL_END` after arguments that never parsed)."""
    failed = played[0]
    said = failed['error'] if cell.protocol == 'vercel' else failed['runError']
    assert said is not None and FAILURE in said, said
    assert [run.status for run in runs] == ['failed', 'finished']
    history = runs[1].messages
    [call] = [p for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.args_as_json_str()) == ('get_weather', CUT_ARGS)
    [index] = [i for i, m in enumerate(history) if call in m.parts]
    answered = history[index + 1]
    assert isinstance(answered, ModelRequest)
    [result] = [p for p in answered.parts if isinstance(p, ToolReturnPart)]
    assert (result.tool_call_id, result.outcome) == (call.tool_call_id, 'failed')
    assert answer_text(cell.protocol, played[1])  # each agent words its answer to the failure its own way
    if cell.protocol == 'agui':
        from ag_ui_validate.pytest_plugin import validate_agui

        assert 'TOOL_CALL_END' not in failed['wireEvents']
        assert [d.rule for d in validate_agui(failed['events']).diagnostics] == []
        if cell.store != 'none':  # after the snapshot the client holds the failed result where the store has it
            roles = [(m['role'], m.get('toolCallId')) for m in played[1]['messages']]
            assert roles[:4] == [('user', None), ('assistant', None), ('tool', call.tool_call_id), ('user', None)]


def _check_resumed(cell: Cell, played: Sequence[Mapping[str, Any]]) -> None:
    interrupted, resumed = played[0], played[1]
    if cell.protocol == 'vercel':
        assert interrupted['dropped'] is True
        assert _vercel_text(interrupted['messages'][-1]) != SLOW_TEXT  # cut mid-answer ...
        assert resumed['resumeStatus'] == 200 and resumed['status'] == 'ready'
        assert _vercel_text(resumed['messages'][-1]) == SLOW_TEXT  # ... and resumed whole from the log
        return
    assert resumed['wireEvents'][0] == 'RUN_STARTED' and resumed['wireEvents'][-1] == 'RUN_FINISHED'
    assert resumed['text'] == SLOW_TEXT


def _check_stored(cell: Cell, step: Mapping[str, Any]) -> None:
    """The chat the store keeps is, as the model sees it, what the client holds."""
    stored, held = step['stored'], step['messages']
    adapter = vercel_ai if cell.protocol == 'vercel' else ag_ui
    stored_view, held_view = model_view(adapter.load_messages(stored)), model_view(adapter.load_messages(held))
    if cell.scenario == 'cut':
        # The failed result of the cut call ends the failed run's messages in the store, and the next prompt starts
        # the next run's: two requests, where the client's copy has one request holding both (nothing marks a new
        # request on a prompt the client wrote). A model is sent the same either way.
        stored_view, held_view = _requests_merged(stored_view), _requests_merged(held_view)
    assert stored_view == held_view


def _requests_merged(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for message in view:
        if merged and message['kind'] == merged[-1]['kind'] == 'request':
            merged[-1] = {**merged[-1], 'parts': [*merged[-1]['parts'], *message['parts']]}
        else:
            merged.append(message)
    return merged


def check_quick_turns(result: Mapping[str, Any]) -> None:
    """Every turn of the chat answered, each next request sent the moment the last answer ended: no 409."""
    assert 'crashed' not in result, result.get('crashed')
    assert result['statuses'] == [200] * (2 * QUICK_TURNS), result['statuses']
    for step in result['steps']:
        assert step['errors'] == [] and step['status'] == 'ready', step['errors']
    messages = result['steps'][-1]['messages']
    assert [m['role'] for m in messages] == ['user', 'assistant'] * QUICK_TURNS
    assert all('noon' in _vercel_text(m) for m in messages if m['role'] == 'assistant')
