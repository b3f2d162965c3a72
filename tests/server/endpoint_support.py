"""Driving an endpoint in-process with the stand-in protocol (`fake_protocol`): a recording agent, a POST that
signs its history as a real adapter would, and an agent that asks for an approval; for every endpoint test."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from fake_protocol import FakeBinding, sign_body

from uibridge import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart, ToolCallReady
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, ChatEndpoint
from uibridge.server.approvals import ProcessLedger


def history(*messages: ModelMessage) -> list[Any]:
    return ModelMessagesTypeAdapter.dump_python(list(messages), mode='json')


def user(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text)])


class Recorder:
    def __init__(self) -> None:
        self.runs: list[AgentRun] = []
        self.completed: list[tuple[list[ModelMessage], AgentRun]] = []

    async def agent(self, run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        self.runs.append(run)
        yield ResponseStart()
        yield PartStart(0, TextPart(content='Hello'))
        yield PartDelta(0, ' there')
        yield PartEnd(0)

    async def on_complete(self, messages: list[ModelMessage], run: AgentRun) -> None:
        self.completed.append((messages, run))


def make(agent: Any = None, **options: Any) -> tuple[ChatEndpoint[Any], Recorder, FakeBinding]:
    recorder = Recorder()
    binding = FakeBinding()
    if agent is not None:
        inner = agent

        def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
            recorder.runs.append(run)
            return inner(run)

    # A ledger of its own: the process's one would carry one test's approvals into the next.
    options.setdefault('approval_ledger', ProcessLedger())
    endpoint = ChatEndpoint(agent or recorder.agent, binding, on_complete=recorder.on_complete, **options)
    return endpoint, recorder, binding


async def post(endpoint: ChatEndpoint[Any], body: Any, *, signed: bool = True, **kwargs: Any) -> httpx.Response:
    """POST `body`; its history signed with the endpoint's key as a real adapter would carry it (`signed`)."""
    if signed and isinstance(body, dict) and isinstance(body.get('messages'), list) and 'signatures' not in body:
        with contextlib.suppress(Exception):  # a body these tests send to be refused stays as it is
            body = sign_body(body, endpoint.keyring)  # pyright: ignore[reportUnknownArgumentType]
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        kwargs.setdefault('headers', {'content-type': 'application/json'})
        if 'content' not in kwargs:
            kwargs['json'] = body
        with anyio.fail_after(5):
            return await client.post('/', **kwargs)


async def approval_request(endpoint: ChatEndpoint[Any], binding: FakeBinding) -> tuple[ToolCallPart, str]:
    """Run an agent that asks for approval; return the call and the approval id the stream carried."""
    call = ToolCallPart(tool_name='delete_file', args={'path': 'a.txt'}, tool_call_id='call_1')
    response = await post(endpoint, {'messages': history(user('delete'))})
    approval_ids = [
        json.loads(line[6:])['approval_id']
        for line in response.content.decode().split('\n')
        if line.startswith('data: ') and 'approval_id' in line
    ]
    return call, approval_ids[0]


def approving_agent() -> Any:
    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        if not run.messages or not isinstance(run.messages[-1], ModelResponse):
            yield PartStart(0, ToolCallPart(tool_name='delete_file', args={'path': 'a.txt'}, tool_call_id='call_1'))
            yield PartEnd(0)
            yield ToolCallReady('call_1', 'approval')

    return agent


# Agents that end a run badly: an exception, something that is no event, an event that cannot be encoded.


async def raises(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='partial'))
    raise RuntimeError('broken')


async def yields_junk(run: AgentRun) -> AsyncIterator[Any]:
    yield PartStart(0, TextPart(content='partial'))
    yield 'junk'


async def cannot_be_encoded(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartDelta(3, 'a delta for a part never started')
