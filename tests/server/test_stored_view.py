"""A managed turn costs what its new messages cost: the stored history is the server's own, so no signature of it
is computed or checked, and the agent's view of it is settled once per commit (`uibridge.server.stored_view`).

Two things are pinned here: the view a turn builds from the settled part and its window is exactly the one checking
the whole history gives, on histories of every shape (a property); and, counted through a real endpoint, the
messages verified and decoded and the signatures computed per turn do not grow with the chat."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from uibridge import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.diagnostics import collect_warnings
from uibridge.core.messages import ImageUrl
from uibridge.core.metadata import ANSWERED_BY_METADATA_KEY
from uibridge.core.provenance import Keyring
from uibridge.core.sanitize import sanitize_verified
from uibridge.core.verification import SignatureClaims, verify_history
from uibridge.server import VercelAIEndpoint, create_app, managed_run, offload
from uibridge.server import endpoint as endpoint_module
from uibridge.server.demo import DemoAgent
from uibridge.server.managed import for_the_agent, stored_claims
from uibridge.server.store import MemoryStore, SqliteStore
from uibridge.server.store import _history_rows as history_rows
from uibridge.server.stored_view import window_start

WHEN = datetime(2025, 1, 2, tzinfo=UTC)

# ------------------------------------------------------------------------------------------- the equivalence


def _response(*parts: Any, answered_by: dict[str, str] | None = None) -> ModelResponse:
    metadata = {ANSWERED_BY_METADATA_KEY: answered_by} if answered_by else None
    return ModelResponse(parts=list(parts), timestamp=WHEN, metadata=metadata)


def _request(*parts: Any) -> ModelRequest:
    return ModelRequest(parts=list(parts))


Block = Callable[[Iterator[int]], list[ModelMessage]]


def _call(ids: Iterator[int], tool: str) -> ToolCallPart:
    return ToolCallPart(tool_name=tool, args={'n': 1}, tool_call_id=f'call_{next(ids)}')


def _answered(ids: Iterator[int]) -> list[ModelMessage]:
    call = _call(ids, 'get_weather')
    result = ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id=call.tool_call_id, timestamp=WHEN)
    return [_response(TextPart(content='checking'), call), _request(result)]


def _retried(ids: Iterator[int]) -> list[ModelMessage]:
    first, second = _call(ids, 'get_weather'), _call(ids, 'get_weather')
    retry = RetryPromptPart(
        content='bad city', tool_name='get_weather', tool_call_id=first.tool_call_id, timestamp=WHEN
    )
    result = ToolReturnPart(tool_name='get_weather', content='ok', tool_call_id=second.tool_call_id, timestamp=WHEN)
    return [_response(first), _request(retry), _response(second), _request(result), _response(TextPart(content='ok'))]


def _client_call(ids: Iterator[int]) -> list[ModelMessage]:
    call = _call(ids, 'get_local_time')
    return [_response(call, answered_by={call.tool_call_id: 'client'})]


def _client_answered(ids: Iterator[int]) -> list[ModelMessage]:
    [response] = _client_call(ids)
    call = response.parts[0]
    assert isinstance(call, ToolCallPart)
    result = ToolReturnPart(tool_name=call.tool_name, content='noon', tool_call_id=call.tool_call_id, timestamp=WHEN)
    return [response, _request(result), _response(TextPart(content='it is noon'))]


def _approval_call(ids: Iterator[int]) -> list[ModelMessage]:
    call = _call(ids, 'delete_file')
    return [_response(TextPart(content='may I?'), call, answered_by={call.tool_call_id: 'approval'})]


def _native(ids: Iterator[int]) -> list[ModelMessage]:
    call_id = f'native_{next(ids)}'
    call = NativeToolCallPart(tool_name='web_search', args={'q': 'x'}, tool_call_id=call_id, provider_name='p')
    result = NativeToolReturnPart(tool_name='web_search', content=[1], tool_call_id=call_id, provider_name='p')
    return [_response(call, result, TextPart(content='found'))]


BLOCKS: dict[str, Block] = {
    'prompt': lambda ids: [_request(UserPromptPart(content=f'prompt {next(ids)}', timestamp=WHEN))],
    'prompt with a file URL': lambda ids: [
        _request(UserPromptPart(content=['look', ImageUrl(url='s3://bucket/key.png')], timestamp=WHEN))
    ],
    'text': lambda ids: [_response(TextPart(content=f'answer {next(ids)}'))],
    'thinking': lambda ids: [_response(ThinkingPart(content='hmm', signature='sig'), TextPart(content='so'))],
    'server tool': _answered,
    'retried tool': _retried,
    'client call left behind': _client_call,
    'client call answered': _client_answered,
    'approval asked': _approval_call,
    'native tool': _native,
    'feedback': lambda ids: [_request(RetryFeedbackPart(content='try again', cause='model_retry', timestamp=WHEN))],
    'empty response': lambda ids: [_response()],
}


def _build(names: list[str]) -> list[ModelMessage]:
    ids = itertools.count()
    return [message for name in names for message in BLOCKS[name](ids)]


def _dumped(messages: list[ModelMessage]) -> Any:
    return ModelMessagesTypeAdapter.dump_python(messages, mode='json')


def _additions(history: list[ModelMessage], kind: str) -> tuple[list[ModelMessage], frozenset[str]]:
    """What a client adds (a prompt, or the answer to the last response's client call), and the calls the server
    resolved (the last response's call awaiting approval, approved)."""
    last = history[-1] if history else None
    calls = [p for p in last.parts if isinstance(p, ToolCallPart)] if isinstance(last, ModelResponse) else []
    if kind == 'answer' and calls and calls[0].tool_name == 'get_local_time':
        answer = ToolReturnPart(tool_name='get_local_time', content='9:00', tool_call_id=calls[0].tool_call_id)
        return [_request(answer)], frozenset()
    if kind == 'approve' and calls and calls[0].tool_name == 'delete_file':
        return [], frozenset({calls[0].tool_call_id})
    return [_request(UserPromptPart(content='new prompt', timestamp=WHEN))], frozenset()


@pytest.fixture(scope='module')
def endpoint() -> VercelAIEndpoint:
    return VercelAIEndpoint(DemoAgent(), store=MemoryStore(), secret='views')


@given(
    names=st.lists(st.sampled_from(sorted(BLOCKS)), max_size=14),
    kind=st.sampled_from(['prompt', 'answer', 'approve']),
)
def test_the_settled_part_and_the_window_are_the_whole_checked(
    endpoint: VercelAIEndpoint, names: list[str], kind: str
) -> None:
    history = _build(names)
    added, resolved = _additions(history, kind)
    options = {
        'strip_system_prompts': endpoint.strip_system_prompts,
        'allowed_file_url_schemes': endpoint.allowed_file_url_schemes,
        'resolved_tool_call_ids': resolved,
    }
    with collect_warnings():  # what sanitizing removes (a file URL) is not what this compares
        _compare(endpoint, history, added, options)


def _compare(
    endpoint: VercelAIEndpoint, history: list[ModelMessage], added: list[ModelMessage], options: dict[str, Any]
) -> None:
    # The whole, as a managed turn used to check it: every stored part trusted, the additions as the client's.
    claims = SignatureClaims()
    stored_claims(history, claims)
    whole = sanitize_verified(verify_history(history + added, claims, endpoint.keyring), **options)
    # The settled part before the last response, then the window from it with the additions.
    cut = window_start(history)
    settled = managed_run._settle(endpoint, history[:cut])  # pyright: ignore[reportPrivateUsage]
    claims = SignatureClaims()
    stored_claims(history[cut:], claims)
    window = sanitize_verified(verify_history(history[cut:] + added, claims, endpoint.keyring), **options)
    assert _dumped(settled + window) == _dumped(whole)
    # Settling in steps, as later turns do (each commit settles what it added), settles the same.
    responses = [i for i, m in enumerate(history[:cut]) if isinstance(m, ModelResponse)]
    for step in responses:
        stepped = managed_run._settle(endpoint, history[:step]) + managed_run._settle(endpoint, history[step:cut])  # pyright: ignore[reportPrivateUsage]
        assert _dumped(stepped) == _dumped(settled)


# ---------------------------------------------------------------------------------------------- the counting


class Work:
    """What one turn costs, counted: messages verified (`verify_history`), stored items decoded, signatures
    computed and checked (`Keyring.sign_part`, `Keyring.verify_part`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.counts: Counter[str] = Counter()

        def counted(name: str, function: Callable[..., Any], size: Callable[..., int]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                self.counts[name] += size(*args, **kwargs)
                return function(*args, **kwargs)

            return wrapper

        for module in (endpoint_module, managed_run):
            monkeypatch.setattr(module, 'verify_history', counted('verified', verify_history, lambda m, *_: len(m)))
        decode = history_rows.decode_messages
        monkeypatch.setattr(history_rows, 'decode_messages', counted('decoded', decode, lambda items: len(items)))
        for method in ('sign_part', 'verify_part'):
            original = getattr(Keyring, method)
            monkeypatch.setattr(Keyring, method, counted(method, original, lambda *_, **__: 1))

    def take(self) -> dict[str, int]:
        taken, self.counts = dict(self.counts), Counter()
        return taken


@pytest.mark.anyio
@pytest.mark.parametrize('kind', ['memory', 'sqlite'])
async def test_a_turn_costs_the_same_at_turn_5_and_at_turn_60(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore() if kind == 'memory' else SqliteStore(tmp_path / 'chats.db')
    app = create_app(DemoAgent(delay=0), store=store, secret='views')
    work = Work(monkeypatch)
    per_turn: list[dict[str, int]] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        for turn in range(60):
            # Turns of every kind the demo plays, so the window holds tool calls, results and approvals too.
            text = ['hello', 'weather', 'delete', 'think'][turn % 4]
            message = {'id': f'u{turn}', 'role': 'user', 'parts': [{'type': 'text', 'text': f'{text} {turn}'}]}
            answer = await client.post('/api/chat', json={'id': 'chat', 'messages': [message]})
            assert answer.status_code == 200 and '"type":"finish"' in answer.text
            per_turn.append(work.take())
        stored = (await client.get('/api/chat/chat')).json()
    await store.aclose()
    assert len(stored) >= 120
    # Past the first turns (the first settles nothing yet), the work of each kind of turn is the same at turn 60
    # as at turn 5: it follows the turn's new messages, not the chat's length.
    for offset in range(4):
        kinds = per_turn[4 + offset :: 4]
        assert all(counts == kinds[0] for counts in kinds), (offset, kinds[0], kinds[-1])
    assert all('verify_part' not in counts for counts in per_turn)  # no stored part is checked against a signature
    # Each turn signs only what it streams (its own parts), and decodes only what the last commit wrote.
    assert max(counts.get('decoded', 0) for counts in per_turn[4:]) <= 4


@pytest.mark.anyio
async def test_turns_alternating_between_processes_see_the_whole_history() -> None:
    """Two processes sharing one backend (two store objects over one `MemoryState`, two apps): each commit moves
    the chat's revision on, so a view or a decoded history kept by one is never used after the other wrote, even
    when the other rewrote the chat (an edit of its first message) and it grew past that view again."""
    from uibridge.server.store import MemoryState

    shared = MemoryState()
    seen: list[list[ModelMessage]] = []
    demo = DemoAgent(delay=0)

    def agent(run: Any) -> Any:
        seen.append(run.messages)
        return demo(run)

    apps = [create_app(agent, store=MemoryStore(state=shared), secret='views') for _ in range(2)]
    reader = MemoryStore(state=shared)
    endpoint = apps[0].state.vercel_ai
    # Six turns here, an edit of the first message and eight turns there, then two turns here again.
    plan = [(0, None)] * 6 + [(1, 'u0')] + [(1, None)] * 8 + [(0, None)] * 2
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[0]), base_url='http://test') as here,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=apps[1]), base_url='http://test') as there,
    ):
        for turn, (where, edited) in enumerate(plan):
            stored = await reader.load_messages('chat', 'anonymous') if turn else []
            text = ['hello', 'client', 'weather', 'delete'][turn % 4] + f' {turn}'  # calls left behind, too
            message = {'id': edited or f'u{turn}', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}
            body: dict[str, Any] = {'id': 'chat', 'messages': [message]}
            if edited:
                body['messageId'] = edited
                stored = []  # the history is cut before the edited message: the first one
            answer = await (here if where == 0 else there).post('/api/chat', json=body)
            assert answer.status_code == 200
            prompt = _request(UserPromptPart(content=text))
            with collect_warnings():
                claims = SignatureClaims()
                stored = for_the_agent(stored)  # the agent gets no client's bookkeeping
                stored_claims(stored, claims)
                whole = sanitize_verified(verify_history([*stored, prompt], claims, endpoint.keyring))
            assert _dumped(seen[-1][:-1]) == _dumped(whole[:-1]), turn  # the prompt's timestamp is the server's
            assert isinstance(seen[-1][-1], ModelRequest)
            assert seen[-1][-1].parts[0].content == text  # pyright: ignore[reportAttributeAccessIssue]


# ------------------------------------------------------------------------------------------------- AG-UI


@given(names=st.lists(st.sampled_from(sorted(BLOCKS)), max_size=14), steps=st.lists(st.integers(0, 40), max_size=4))
def test_the_stored_ids_kept_in_steps_are_the_whole_dumps(names: list[str], steps: list[int]) -> None:
    """What a managed AG-UI turn keeps of the stored history, moved on turn by turn (each dumping only what the
    last one added), is what dumping the whole history at once gives: the same ids, the same last id, the same
    messages from the last assistant one on."""
    from uibridge.adapters import ag_ui
    from uibridge.server.managed import AGUIStored

    history = _build(names)
    keyring = Keyring.of('views')
    with collect_warnings():
        whole = ag_ui.dump_messages(history, keyring=keyring)
        kept = AGUIStored()
        for step in sorted(steps):
            kept.cover(history[: min(step, len(history))], keyring)
        kept.cover(history, keyring)
    assert kept.cursor.used == {message.id for message in whole}
    assert kept.last_id == (whole[-1].id if whole else None)
    last = max((i for i, message in enumerate(whole) if message.role == 'assistant'), default=0)
    assert [m.model_dump() for m in kept.tail] == [m.model_dump() for m in whole[last:]]


def _agui_body(thread: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        'threadId': thread, 'runId': f'r{len(messages)}', 'messages': messages, 'tools': [], 'context': [],
        'state': None, 'forwardedProps': None,
    }  # fmt: skip


class AGUIWork(Work):
    """`Work`, and for AG-UI: the body's messages validated and loaded, the stored messages dumped (signing
    each server-authored part: `sign_part`), the body's messages walked for the request limits, and those taken
    one by one in Python to be counted or have their roles looked at."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__(monkeypatch)
        from uibridge.adapters import ag_ui
        from uibridge.adapters.ag_ui import request as request_module
        from uibridge.server import limits, managed

        adapter = request_module.message_adapter
        work = self

        class Counted:
            def validate_python(self, value: Any) -> Any:
                work.counts['validated'] += 1
                return adapter.validate_python(value)

        monkeypatch.setattr(request_module, 'message_adapter', Counted())
        load = ag_ui.load_messages
        monkeypatch.setattr(ag_ui, 'load_messages', self._counted('loaded', load, lambda m, **_: len(m)))
        dump_more = managed.dump_more
        monkeypatch.setattr(managed, 'dump_more', self._counted('dumped', dump_more, lambda m, *_, **__: len(m)))
        check = limits.check_message_limits
        monkeypatch.setattr(managed_run, 'check_message_limits', self._counted('walked', check, lambda m, **_: len(m)))
        # The body's messages taken one by one in Python (their roles looked at, their parts counted): only when
        # one of them is not the common case, or the request is past a limit.
        known_role = request_module.known_role
        monkeypatch.setattr(request_module, 'known_role', self._counted('one by one', known_role, lambda *_: 1))
        refuse_parts = limits._refuse_parts  # pyright: ignore[reportPrivateUsage]
        monkeypatch.setattr(limits, '_refuse_parts', self._counted('one by one', refuse_parts, lambda m, _: len(m)))
        # The body's messages looked at in the passes that run in C, for their ids and roles and for their parts:
        # only those the thread's last body did not have (`_body_memo` keeps what those passes found in the rest).
        plain = request_module.plain_ids_roles
        monkeypatch.setattr(request_module, 'plain_ids_roles', self._counted('ids read', plain, len))
        lengths = limits.part_lengths
        monkeypatch.setattr(limits, 'part_lengths', self._counted('parts counted', lengths, len))

    def _counted(self, name: str, function: Callable[..., Any], size: Callable[..., int]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.counts[name] += size(*args, **kwargs)
            return function(*args, **kwargs)

        return wrapper


@pytest.mark.anyio
@pytest.mark.parametrize('kind', ['memory', 'sqlite'])
async def test_an_agui_turn_costs_the_same_at_turn_5_and_at_turn_60(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`@ag-ui/client` sends the whole history with every run. Of the messages the server has already, only the
    ids and roles are read: the messages validated, loaded, walked for the limits and dumped, the signatures
    computed and the messages verified are the same for a turn at 60 as at 5."""
    store = MemoryStore() if kind == 'memory' else SqliteStore(tmp_path / 'chats.db')
    app = create_app(DemoAgent(delay=0), store=store, secret='views')
    work = AGUIWork(monkeypatch)
    per_turn: list[dict[str, int]] = []
    held: list[dict[str, Any]] = []
    new: list[int] = []  # messages each body has that the last one did not
    sent = 0
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        for turn in range(60):
            new.append(len(held) + 1 - sent)
            sent = len(held) + 1
            # A prompt of each kind the demo plays, then the answer to the client tool call it asked for.
            if turn % 4 == 3:
                call = held[-1]['toolCalls'][0]
                added = {'id': f't{turn}', 'role': 'tool', 'toolCallId': call['id'], 'content': '"noon"'}
            else:
                text = ['hello', 'weather', 'client'][turn % 4]
                added = {'id': f'u{turn}', 'role': 'user', 'content': f'{text} {turn}'}
            answer = await client.post('/ag-ui', json=_agui_body('chat', [*held, added]))
            assert answer.status_code == 200 and 'RUN_FINISHED' in answer.text, answer.text[-300:]
            assert 'MESSAGES_SNAPSHOT' not in answer.text  # the client holds every stored message
            per_turn.append(work.take())
            held = (await client.get('/ag-ui/chat')).json()  # what the client holds: the stored messages' ids
            work.take()
    await store.aclose()
    assert len(held) >= 120
    for offset in range(4):
        kinds = per_turn[4 + offset :: 4]
        assert all(counts == kinds[0] for counts in kinds), (offset, kinds[0], kinds[-1])
    assert all('verify_part' not in counts for counts in per_turn)
    assert all('one by one' not in counts for counts in per_turn), per_turn[-1]
    # One message read of the whole body each turn (the new prompt, or the tool result), and of the stored ones
    # only what the last turn added is dumped.
    assert all(counts['validated'] == counts['walked'] == 1 for counts in per_turn[4:]), per_turn[4:8]
    assert max(counts['dumped'] for counts in per_turn[4:]) <= 4
    # Of the body's messages, the passes over their ids and roles and over their parts look at the new ones only:
    # those the last body did not have (what the last run answered, and the client's new one), and the client's
    # message of the last body, which the client holds now as the server stored it (`GET`), not byte for byte.
    looked_at = [(counts['ids read'], counts['parts counted']) for counts in per_turn[1:]]
    assert looked_at == [(n + 1, n + 1) for n in new[1:]]


@pytest.mark.anyio
@pytest.mark.parametrize('holding', ['as stored', 'as sent'])
async def test_a_long_agui_chat_sends_no_turn_to_a_worker_but_a_large_new_message_still_goes(
    holding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a managed AG-UI turn's steps run in a worker thread follows what the turn reads of its body, not the
    body's size: a body past `INLINE_BYTES` that shares all but its new message with the thread's last body stays on
    the event loop, and one whose new message is past it goes to a worker as before. The client holds the chat as
    the server stored it (`GET`), or as `@ag-ui/client` does: its own messages as it sent them, and the answers as
    they were streamed."""
    inline = 3072
    monkeypatch.setattr(offload, 'INLINE_BYTES', inline)
    hops: list[str] = []
    in_worker = offload.in_worker

    async def counted(function: Callable[..., Any], *args: Any) -> Any:
        hops.append(getattr(function, '__name__', repr(function)))
        return await in_worker(function, *args)

    monkeypatch.setattr(offload, 'in_worker', counted)
    store = MemoryStore()
    app = create_app(DemoAgent(delay=0), store=store, secret='views')
    held: list[dict[str, Any]] = []
    per_turn: list[list[str]] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        for turn in range(40):
            added = {'id': f'u{turn}', 'role': 'user', 'content': f'hello {turn}'}
            answer = await client.post('/ag-ui', json=_agui_body('chat', [*held, added]))
            assert answer.status_code == 200 and 'RUN_FINISHED' in answer.text, answer.text[-300:]
            per_turn.append(hops[:])
            if holding == 'as stored':
                held = (await client.get('/ag-ui/chat')).json()
            else:
                events = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith('data: {')]
                text = ''.join(event['delta'] for event in events if event['type'] == 'TEXT_MESSAGE_CONTENT')
                start = next(event for event in events if event['type'] == 'TEXT_MESSAGE_START')
                held = [*held, added, {'id': start['messageId'], 'role': 'assistant', 'content': text}]
            hops.clear()
        large = {'id': 'large', 'role': 'user', 'content': 'x' * 3 * inline}
        answer = await client.post('/ag-ui', json=_agui_body('chat', [*held, large]))
        assert answer.status_code == 200 and 'RUN_FINISHED' in answer.text, answer.text[-300:]
    await store.aclose()
    assert len(json.dumps(_agui_body('chat', held))) > 2 * inline
    assert per_turn[-10:] == [[]] * 10
    assert '_prepare' in hops and any('parse' in hop for hop in hops), hops
