"""History-sized work runs off the event loop: decoding a stored chat, preparing a run on it (settling the
agent's view of it, the first time), and dumping it for `GET {api}/{chatId}`, once the chat is large; and each is
cut into pieces, so no single call holds the GIL for the whole history.

No clock here: each of those steps is wrapped so that it refuses to run on the event loop's thread, and then
waits until a ticker task on the loop has turned several more times, which it can only do while the loop is
free. A step run on the loop fails; a step that kept the loop from turning would hang (bounded by a guard)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest

from uibridge import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart
from uibridge.core.events import AgentEvent, PartEnd, PartStart
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun, create_app, managed_run
from uibridge.server.offload import INLINE_BYTES
from uibridge.server.store import MemoryStore, _history_rows

pytestmark = pytest.mark.anyio
TURNS = 3
"""Loop turns a wrapped step waits for: proof that the loop kept running beside it."""


class LoopWitness:
    def __init__(self) -> None:
        self.loop_thread = threading.get_ident()
        self.turns = 0
        self.ran: list[str] = []
        self.on_loop: list[str] = []

    async def tick(self) -> None:
        while True:
            self.turns += 1
            await anyio.sleep(0)

    def off_loop_only(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == self.loop_thread:
                self.on_loop.append(name)
                raise AssertionError(f'{name} ran on the event loop')
            start = self.turns
            deadline = time.monotonic() + 10  # a hang guard, not a measurement
            while self.turns < start + TURNS:
                assert time.monotonic() < deadline, f'the event loop stood still while {name} ran'
                time.sleep(0.001)
            self.ran.append(name)
            return function(*args, **kwargs)

        return wrapped

    def recorded(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == self.loop_thread:
                self.on_loop.append(name)
            return function(*args, **kwargs)

        return wrapped


async def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
    yield PartStart(0, TextPart(content=f'{len(run.messages)} messages'))
    yield PartEnd(0)


def big_history(turns: int = 6, size: int = 30_000) -> list[ModelMessage]:
    history: list[ModelMessage] = []
    for turn in range(turns):
        history.append(ModelRequest(parts=[UserPromptPart(content=f'{turn} ' + 'é words "quoted" ' * (size // 17))]))
        history.append(ModelResponse(parts=[TextPart(content='noted ' * (size // 6))]))
    return history


async def seeded(store: MemoryStore, chat_id: str, history: list[ModelMessage]) -> None:
    claim = await store.claim(chat_id, 'anonymous', create=True)
    await store.commit(claim, history)


async def test_a_large_chat_is_read_decoded_prepared_and_dumped_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    store, witness = MemoryStore(), LoopWitness()
    history = big_history()
    assert len(ModelMessagesTypeAdapter.dump_json(history)) > 4 * INLINE_BYTES
    await seeded(store, 'big', history)
    app = create_app(agent, store=store)
    monkeypatch.setattr(
        _history_rows, 'decode_messages', witness.off_loop_only('decode', _history_rows.decode_messages)
    )
    monkeypatch.setattr(managed_run, '_prepare', witness.off_loop_only('prepare', managed_run._prepare))  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(managed_run, '_finish', witness.off_loop_only('finish', managed_run._finish))  # pyright: ignore[reportPrivateUsage]
    for binding in (app.state.vercel_ai.binding, app.state.ag_ui.binding):
        monkeypatch.setattr(binding, 'dump_json', witness.off_loop_only('dump', binding.dump_json))
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(witness.tick)
        assert len((await client.get('/api/chat/big')).json()) == len(history)
        assert len((await client.get('/ag-ui/big')).json()) == len(history)
        body = {'id': 'big', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}
        response = await client.post('/api/chat', json=body)
        assert f'{len(history) + 1} messages' in response.text
        group.cancel_scope.cancel()
    assert witness.on_loop == []
    assert witness.ran == ['decode', 'dump', 'decode', 'dump', 'decode', 'prepare', 'finish']


async def test_a_large_client_held_history_is_checked_and_prepared_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    witness = LoopWitness()
    app = create_app(agent)
    endpoint = app.state.vercel_ai
    for name in ('parse_body', 'check', 'finish'):
        monkeypatch.setattr(endpoint, name, witness.off_loop_only(name, getattr(endpoint, name)))
    from uibridge.adapters import vercel_ai

    ui = vercel_ai.dump_messages([*big_history(), ModelRequest(parts=[UserPromptPart(content='hi')])])
    body = {'id': 'c', 'messages': [m.model_dump(mode='json', exclude_none=True) for m in ui]}
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client,
        anyio.create_task_group() as group,
    ):
        group.start_soon(witness.tick)
        response = await client.post('/api/chat', json=body)
        group.cancel_scope.cancel()
    assert response.status_code == 200
    assert witness.on_loop == [] and witness.ran == ['parse_body', 'check', 'finish']


async def test_a_small_chat_stays_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    store, witness = MemoryStore(), LoopWitness()
    await seeded(store, 'small', big_history(turns=1, size=100))
    monkeypatch.setattr(_history_rows, 'decode_messages', witness.recorded('decode', _history_rows.decode_messages))
    monkeypatch.setattr(managed_run, '_prepare', witness.recorded('prepare', managed_run._prepare))  # pyright: ignore[reportPrivateUsage]
    app = create_app(agent, store=store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        body = {'id': 'small', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}
        assert (await client.post('/api/chat', json=body)).status_code == 200
    assert witness.on_loop == ['decode', 'prepare']  # cheaper there than the hop to a thread


def test_a_history_is_decoded_in_batches_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    class Counting:
        def validate_json(self, data: bytes) -> list[ModelMessage]:
            calls.append(len(data))
            return ModelMessagesTypeAdapter.validate_json(data)

    monkeypatch.setattr(_history_rows, 'ModelMessagesTypeAdapter', Counting())
    large = big_history(turns=2, size=600_000)
    items = _history_rows.encode_messages(large)
    assert _history_rows.decode_messages(items) == large
    assert len(calls) == len(items)  # each over half the batch size: one call each
    calls.clear()
    small = big_history(turns=500, size=100)
    assert _history_rows.decode_messages(_history_rows.encode_messages(small)) == small
    assert len(calls) == 1
    assert _history_rows.decode_messages([]) == [] and len(calls) == 1


@pytest.mark.parametrize('protocol', ['vercel_ai', 'ag_ui'])
def test_a_dump_written_a_message_at_a_time_is_the_whole_lists_json(protocol: str) -> None:
    app = create_app(agent)
    binding = getattr(app.state, protocol).binding
    history = big_history(turns=3, size=50)
    from uibridge.adapters import ag_ui, vercel_ai

    if protocol == 'vercel_ai':
        whole = [m.model_dump(mode='json', exclude_none=True) for m in vercel_ai.dump_messages(history)]
    else:
        whole = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ag_ui.dump_messages(history)]
    assert binding.dump_json(history, None) == json.dumps(whole, ensure_ascii=False).encode()
