"""Every way an agent can break its contract reaches the client the same way, in both protocols, with and
without a store: the protocol's error event carrying the reason with `expose_errors=True`, a generic message
without it (and then the log has the reason), and `on_complete` told the run failed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from endpoint_support import cannot_be_encoded, raises, yields_junk

from chat_requests import PATHS, error_texts, turn
from uibridge import TextPart
from uibridge.core.events import AgentEvent, PartEnd, PartStart, RunFinished
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, create_app

pytestmark = pytest.mark.anyio

GENERIC = 'An error occurred.'


async def cancels_itself(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield PartStart(0, TextPart(content='partial'))
    raise asyncio.CancelledError


async def fails_to_close(run: AgentRun) -> AsyncIterator[AgentEvent]:
    try:
        yield PartStart(0, TextPart(content='whole'))
        yield RunFinished()
    finally:
        raise RuntimeError('its cleanup failed')


async def ignores_being_closed(run: AgentRun) -> AsyncIterator[AgentEvent]:
    try:
        yield PartStart(0, TextPart(content='whole'))
        yield RunFinished()
    finally:
        yield PartEnd(0)


async def a_background_task_fails(run: AgentRun) -> AsyncIterator[AgentEvent]:
    async def tool() -> None:
        await anyio.lowlevel.checkpoint()
        raise RuntimeError('the tool crashed')

    async with anyio.create_task_group() as group:
        group.start_soon(tool)
        yield PartStart(0, TextPart(content='partial'))
        await anyio.sleep_forever()


def plain_generator(run: AgentRun) -> Iterator[AgentEvent]:
    yield PartStart(0, TextPart(content='never'))


async def coroutine(run: AgentRun) -> AgentEvent:
    return PartStart(0, TextPart(content='never'))


MISUSE: dict[str, tuple[Callable[..., Any], str]] = {
    'raises': (raises, 'broken'),
    'yields-junk': (yields_junk, 'the agent yielded a str, which is neither an agent event nor a message'),
    'does-not-add-up': (cannot_be_encoded, 'do not add up: a delta for part 3, which is not streaming'),
    'cancels-itself': (cancels_itself, 'the agent cancelled its own run'),
    'fails-to-close': (fails_to_close, 'its cleanup failed'),
    'ignores-being-closed': (ignores_being_closed, 'async generator ignored GeneratorExit'),
    'background-task-fails': (a_background_task_fails, 'the tool crashed'),
    # Construction refuses these functions themselves; wrapped in a lambda, only a call can tell.
    'plain-generator': (lambda run: plain_generator(run), 'the agent returned a plain generator'),
    'coroutine': (lambda run: coroutine(run), 'the agent returned a coroutine'),
    'a-list': (lambda run: [PartStart(0, TextPart(content='never'))], 'the agent returned a list'),
    'wrong-signature': (lambda: None, 'takes 0 positional arguments but 1 was given'),
}


@pytest.mark.parametrize('expose_errors', [True, False], ids=['exposed', 'generic'])
@pytest.mark.parametrize('store', [None, 'memory:'], ids=['no-store', 'memory-store'])
@pytest.mark.parametrize('protocol', list(PATHS))
@pytest.mark.parametrize('misuse', list(MISUSE))
async def test_misuse_reaches_the_client_by_one_policy(
    misuse: str, protocol: str, store: str | None, expose_errors: bool, caplog: pytest.LogCaptureFixture
) -> None:
    agent, reason = MISUSE[misuse]
    completed: list[AgentRun] = []

    async def on_complete(messages: list[ModelMessage], run: AgentRun) -> None:
        completed.append(run)

    app = create_app(agent, store=store, expose_errors=expose_errors, on_complete=on_complete, keep_alive=None)
    transport = httpx.ASGITransport(app=app)
    with caplog.at_level(logging.ERROR, logger='uibridge.server'), anyio.fail_after(10):
        async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
            response = await client.post(PATHS[protocol], json=turn(protocol, f'chat-{misuse}'))
    assert response.status_code == 200
    [text] = error_texts(response.text)
    if expose_errors:
        assert reason in text
    else:
        assert text == GENERIC
    assert reason in caplog.text  # the log has the reason either way
    [run] = completed
    assert run.status == 'failed'
