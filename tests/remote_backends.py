"""The real backends the bridge is tested against, each started on a free loopback port by the tests, and the
factories that turn one into a remote agent (for these suites, and for the matrix suite's agent kinds).

- `pydantic_ai_backend()`: pydantic-ai's own AG-UI app (`AGUIAdapter.dispatch_request`) under uvicorn, serving an
  `Agent` on an offline `FunctionModel` that answers by the conversation: text, a server tool (`get_weather`),
  the frontend's client tool (`get_local_time`), a tool that needs approval (`delete_file`), shared state
  (`increment`, whose result carries a `STATE_SNAPSHOT`), thinking, an error, and a slow answer that records
  being cancelled.
- `vercel_sdk_backend()`: tests/clients/vercel_backend.mjs under Node 20, an `ai@7` route with the SDK's mock
  language model (the same keywords; `GET /log` says what each request asked and whether it was aborted).
- `remote_ag_ui_agent()` / `remote_vercel_agent()`: a backend started and a `RemoteAGUIAgent` /
  `RemoteVercelAgent` in front of it, the shape the matrix suite takes an agent kind in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from ag_ui.core import EventType, StateSnapshotEvent
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, RunContext, ToolReturn
from pydantic_ai import messages as pai
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from uibridge.bridge import RemoteAGUIAgent, RemoteVercelAgent
from uibridge.core.run import ClientTool

sys.path.insert(0, str(Path(__file__).resolve().parent / 'e2e'))
from e2e_support import CLIENTS, serve

__all__ = [
    'CLIENT_TOOL',
    'PydanticBackend',
    'VercelBackend',
    'pydantic_ai_backend',
    'remote_ag_ui_agent',
    'remote_vercel_agent',
    'vercel_sdk_backend',
]

CLIENT_TOOL = ClientTool(
    name='get_local_time',
    description="The browser's local time",
    parameters={'type': 'object', 'properties': {'timezone': {'type': 'string'}}},
)
"""The frontend's own tool (the Node drivers declare the same one): `useChat` requests name no tools, so the
remote AG-UI agent declares it to the backend."""


class Counter(BaseModel):
    count: int = 0


@dataclass
class Cancellations:
    """What the pydantic-ai backend's slow answer saw: it started, and it was stopped (its task cancelled)."""

    started: int = 0
    stopped: int = 0


@dataclass
class PydanticBackend:
    url: str
    cancellations: Cancellations
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """The `RunAgentInput` bodies it received, as sent."""


def _last_prompt(messages: list[pai.ModelMessage]) -> str:
    for message in reversed(messages):
        for part in message.parts:
            if isinstance(part, pai.UserPromptPart) and isinstance(part.content, str):
                return part.content.lower()
    return ''


def _pydantic_agent(cancellations: Cancellations) -> Agent[StateDeps[Counter], str | DeferredToolRequests]:
    async def answer(messages: list[pai.ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = [p for p in messages[-1].parts if isinstance(p, pai.ToolReturnPart)]
        prompt = _last_prompt(messages)
        turn = len(messages)  # a call id unique in the conversation
        if returns:
            yield f'Done: {returns[-1].model_response_str()}'
        elif 'weather' in prompt:
            yield {0: DeltaToolCall(name='get_weather', json_args='{"city": ', tool_call_id=f'call_weather_{turn}')}
            yield {0: DeltaToolCall(json_args='"Paris"}')}
        elif 'time' in prompt:
            yield {
                0: DeltaToolCall(
                    name='get_local_time', json_args='{"timezone": "UTC"}', tool_call_id=f'call_time_{turn}'
                )
            }
        elif 'delete' in prompt:
            yield {
                0: DeltaToolCall(
                    name='delete_file', json_args='{"path": "notes.txt"}', tool_call_id=f'call_delete_{turn}'
                )
            }
        elif 'state' in prompt:
            yield {0: DeltaToolCall(name='increment', json_args='{}', tool_call_id=f'call_increment_{turn}')}
        elif 'think' in prompt:
            yield {0: DeltaThinkingPart(content='Let me think.')}
            yield 'Thought it through.'
        elif 'error' in prompt:
            yield 'Let me start'
            raise RuntimeError('the model broke')
        elif 'slow' in prompt:
            cancellations.started += 1
            try:
                for tick in range(10_000):
                    yield f'tick {tick} '
                    await anyio.sleep(0.02)
            finally:
                cancellations.stopped += 1
        else:
            yield 'Hello '
            yield 'from pydantic-ai.'

    agent: Agent[StateDeps[Counter], str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=answer, model_name='scripted'),
        deps_type=StateDeps[Counter],
        output_type=[str, DeferredToolRequests],
    )

    @agent.tool_plain
    def get_weather(city: str) -> dict[str, Any]:
        return {'city': city, 'forecast': 'sunny', 'tempC': 21}

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f'deleted {path}'

    @agent.tool
    def increment(ctx: RunContext[StateDeps[Counter]]) -> ToolReturn:
        ctx.deps.state = Counter(count=ctx.deps.state.count + 1)
        snapshot = StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot=ctx.deps.state.model_dump())
        return ToolReturn(return_value=ctx.deps.state.count, metadata=[snapshot])

    return agent


@contextmanager
def pydantic_ai_backend() -> Iterator[PydanticBackend]:
    """pydantic-ai's AG-UI app at `{url}` (POST), under uvicorn on a free loopback port."""
    cancellations = Cancellations()
    agent = _pydantic_agent(cancellations)
    requests: list[dict[str, Any]] = []

    async def run(request: Request) -> Response:
        requests.append(json.loads(await request.body()))
        return await AGUIAdapter.dispatch_request(request, agent=agent, deps=StateDeps(Counter()))

    app = Starlette(routes=[Route('/agent', run, methods=['POST'])])
    with serve(app) as base_url:
        yield PydanticBackend(f'{base_url}/agent', cancellations, requests)


@dataclass
class VercelBackend:
    url: str

    def log(self) -> list[dict[str, Any]]:
        """What each request asked (`id`, `text`) and how its stream ended (`ended`, `aborted`, `cancelled`)."""
        return httpx.get(self.url.replace('/api/chat', '/log'), timeout=10).json()

    def wait_for(self, predicate: Any, timeout: float = 10) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            entries = self.log()
            if predicate(entries) or time.monotonic() > deadline:
                return entries
            time.sleep(0.02)


@contextmanager
def vercel_sdk_backend() -> Iterator[VercelBackend]:
    """The `ai@7` route (tests/clients/vercel_backend.mjs) under Node, at `{url}` (`/api/chat`)."""
    node = shutil.which('node')
    assert node is not None, 'Node 20 is required for the bridge suites (see README)'
    process = subprocess.Popen(
        [node, 'vercel_backend.mjs'], cwd=CLIENTS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, f'vercel_backend.mjs did not start: {process.stderr.read() if process.stderr else ""}'
        port = json.loads(line)['port']
        yield VercelBackend(f'http://127.0.0.1:{port}/api/chat')
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def remote_ag_ui_agent(**options: Any) -> Iterator[RemoteAGUIAgent]:
    """pydantic-ai's AG-UI backend started, and a `RemoteAGUIAgent` in front of it (declaring the frontend's
    client tool), for a suite that serves an agent kind through `create_app`."""
    with pydantic_ai_backend() as backend:
        yield RemoteAGUIAgent(backend.url, tools=[CLIENT_TOOL], **options)


@contextmanager
def remote_vercel_agent(**options: Any) -> Iterator[RemoteVercelAgent]:
    """The `ai@7` route started, and a `RemoteVercelAgent` in front of it."""
    with vercel_sdk_backend() as backend:
        yield RemoteVercelAgent(backend.url, **options)
