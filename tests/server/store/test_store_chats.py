"""The store's chat rules, the same on every backend: ownership, one run per chat, leases, atomic commits,
replacing history, and stops that cross processes (two store objects over one backend)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from store_support import Backend, eventually, reply, user

from uibridge.server.store import ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim

pytestmark = pytest.mark.anyio

HISTORY = [user('hi'), reply('hello'), user('and now?'), reply('now this')]


async def seeded(store: ChatStore, chat_id: str = 'chat', principal: str = 'alice') -> RunClaim:
    """A chat holding HISTORY, claimed again for a new run."""
    claim = await store.claim(chat_id, principal, create=True)
    await store.commit(claim, HISTORY)
    return await store.claim(chat_id, principal)


async def try_claim(store: ChatStore, chat_id: str = 'chat') -> RunClaim | None:
    try:
        return await store.claim(chat_id, 'alice')
    except ChatBusy:
        return None


async def test_open_creates_an_empty_chat_then_loads_it(backend: Backend) -> None:
    store, other = backend.store(), backend.store()
    assert await store.open_chat('chat', 'alice') == []
    claim = await store.claim('chat', 'alice')
    assert claim.messages == []
    await store.commit(claim, HISTORY[:2])
    assert await store.open_chat('chat', 'alice') == HISTORY[:2]
    assert await other.load_messages('chat', 'alice') == HISTORY[:2]
    with pytest.raises(ChatNotFound):
        await store.load_messages('never-opened', 'alice')
    with pytest.raises(ChatNotFound):
        await store.claim('never-opened', 'alice')


async def test_another_principals_chat_is_indistinguishable_from_a_missing_one(backend: Backend) -> None:
    store = backend.store()
    claim = await seeded(store)
    await store.append_stream(claim, [b'chunk'])
    bob = backend.store()
    calls: list[Callable[[str], Awaitable[Any]]] = [
        lambda chat_id: bob.load_messages(chat_id, 'bob'),
        lambda chat_id: bob.claim(chat_id, 'bob'),
        lambda chat_id: bob.read_stream(chat_id, 'bob'),
        lambda chat_id: bob.request_stop(chat_id, 'bob'),
    ]
    for call in calls:
        with pytest.raises(ChatNotFound) as foreign:
            await call('chat')
        with pytest.raises(ChatNotFound) as missing:
            await call('missing')
        assert str(foreign.value) == str(missing.value).replace('missing', 'chat')
    # The calls that create a missing chat refuse an existing one of someone else's, and take nothing over.
    with pytest.raises(ChatNotFound, match="chat 'chat' not found"):
        await bob.open_chat('chat', 'bob')
    with pytest.raises(ChatNotFound, match="chat 'chat' not found"):
        await bob.claim('chat', 'bob', create=True)
    assert not await store.stop_requested(claim)
    await store.commit(claim, [])
    assert await store.load_messages('chat', 'alice') == HISTORY


async def test_nothing_of_a_run_is_stored_before_its_commit(backend: Backend) -> None:
    store, other = backend.store(), backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    await store.append_stream(claim, [b'half a message'])
    await store.heartbeat(claim)
    assert await other.load_messages('chat', 'alice') == []
    await store.commit(claim, HISTORY[:2])
    assert await other.load_messages('chat', 'alice') == HISTORY[:2]
    again = await other.claim('chat', 'alice')  # the commit released the claim
    assert again.messages == HISTORY[:2]
    with pytest.raises(ClaimLost):
        await store.commit(claim, HISTORY[2:])  # one commit per claim
    await other.release(again)
    assert await store.load_messages('chat', 'alice') == HISTORY[:2]


async def test_of_concurrent_claims_exactly_one_wins(backend: Backend) -> None:
    views = [backend.store(), backend.store()]
    outcomes: list[object] = []

    async def attempt(store: ChatStore, principal: str) -> None:
        try:
            outcomes.append(await store.claim('fresh', principal, create=True))
        except (ChatBusy, ChatNotFound) as refusal:
            outcomes.append(type(refusal))

    async with anyio.create_task_group() as group:
        for index in range(20):
            group.start_soon(attempt, views[index % 2], ('alice', 'bob')[index // 2 % 2])
    claims = [outcome for outcome in outcomes if isinstance(outcome, RunClaim)]
    assert len(claims) == 1
    # The winner created the chat: its principal's other attempts are busy, the other principal's see nothing.
    assert outcomes.count(ChatBusy) == 9
    assert outcomes.count(ChatNotFound) == 10
    with pytest.raises(ChatBusy):
        await views[0].claim('fresh', claims[0].principal)
    await views[1].release(claims[0])
    await views[0].claim('fresh', claims[0].principal)  # released: free again, for its owner only


async def test_a_crashed_run_frees_the_chat_when_its_lease_lapses(backend: Backend) -> None:
    crashed, survivor = backend.store(lease=0.2), backend.store(lease=0.2)
    claim = await seeded(crashed)
    await crashed.append_stream(claim, [b'the start of an answer'])
    with pytest.raises(ChatBusy):
        await survivor.claim('chat', 'alice')
    # The crashed producer never heartbeats again: the chat comes free, with the history as committed.
    fresh = await eventually(lambda: try_claim(survivor))
    assert fresh.messages == HISTORY
    for late_write in (
        lambda: crashed.heartbeat(claim),
        lambda: crashed.append_stream(claim, [b'late']),
        lambda: crashed.end_stream(claim),
        lambda: crashed.commit(claim, [reply('too late')]),
    ):
        with pytest.raises(ClaimLost):
            await late_write()
    await survivor.commit(fresh, [user('next')])
    assert await crashed.load_messages('chat', 'alice') == [*HISTORY, user('next')]


async def test_a_lapsed_lease_refuses_the_commit_even_with_no_one_waiting(backend: Backend) -> None:
    store = backend.store(lease=0.2)
    claim = await seeded(store)
    # `request_stop` answers False once no live run holds the chat, and renews nothing: a probe of the lapse.
    await eventually(lambda: _none_running(store))
    with pytest.raises(ClaimLost):
        await store.commit(claim, [reply('after the lease')])
    assert await store.load_messages('chat', 'alice') == HISTORY


async def _none_running(store: ChatStore) -> bool | None:
    return True if not await store.request_stop('chat', 'alice') else None


async def test_heartbeats_hold_the_claim_past_its_lease(backend: Backend) -> None:
    # Short, to keep the suite quick; a beat every 0.3 s still holds the claim when one comes up to 0.6 s late (an
    # event loop stalled on a loaded machine).
    lease = 0.9
    producer, other = backend.store(lease=lease), backend.store(lease=lease)
    claim = await seeded(producer)
    async with anyio.create_task_group() as group:
        group.start_soon(producer.keep_claim, claim)  # a heartbeat every third of the lease
        await anyio.sleep(lease * 4 / 3)  # past the lease: only the renewals keep the claim alive
        with pytest.raises(ChatBusy):
            await other.claim('chat', 'alice')
        group.cancel_scope.cancel()
    await producer.commit(claim, [])


async def test_commit_can_replace_the_history_from_an_index(backend: Backend) -> None:
    store = backend.store()
    claim = await seeded(store)
    await store.commit(claim, [reply('regenerated')], replace_from=3)
    assert await store.load_messages('chat', 'alice') == [*HISTORY[:3], reply('regenerated')]

    claim = await store.claim('chat', 'alice')
    await store.commit(claim, [user('edited'), reply('answer to the edit')], replace_from=2)
    edited = [*HISTORY[:2], user('edited'), reply('answer to the edit')]
    assert await store.load_messages('chat', 'alice') == edited

    claim = await store.claim('chat', 'alice')
    await store.commit(claim, [reply('appended')], replace_from=4)  # at the end: an append
    assert await store.load_messages('chat', 'alice') == [*edited, reply('appended')]

    claim = await store.claim('chat', 'alice')
    for past_the_end in (6, -1):
        with pytest.raises(ValueError, match='replace_from'):
            await store.commit(claim, [reply('nowhere')], replace_from=past_the_end)
    with pytest.raises(ChatBusy):  # a refused commit keeps the claim and writes nothing
        await backend.store().claim('chat', 'alice')
    assert await store.load_messages('chat', 'alice') == [*edited, reply('appended')]
    await store.commit(claim, [user('from scratch')], replace_from=0)
    assert await store.load_messages('chat', 'alice') == [user('from scratch')]


async def test_a_stop_reaches_the_producer_from_another_process(backend: Backend) -> None:
    # Only SQLite needs the poll to see another process's stop; elsewhere a long poll proves the wake-up.
    poll = 0.05 if backend.name == 'sqlite' else 60.0
    producer, other = backend.store(poll_interval=poll), backend.store()
    claim = await producer.claim('chat', 'alice', create=True)
    assert not await producer.stop_requested(claim)
    stopped = anyio.Event()

    async def wait() -> None:
        await producer.wait_for_stop(claim)
        stopped.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.sleep(0.05)  # let the waiter start waiting (it must also see a stop raised earlier)
            with pytest.raises(ChatNotFound):
                await other.request_stop('chat', 'bob')
            assert not stopped.is_set()
            assert await other.request_stop('chat', 'alice') is True
            await stopped.wait()
    assert await producer.stop_requested(claim)
    await producer.commit(claim, [])
    assert await other.request_stop('chat', 'alice') is False  # no run holds the chat
    fresh = await producer.claim('chat', 'alice')
    assert not await producer.stop_requested(fresh)  # a stop does not carry over to the next run
    with anyio.fail_after(10):
        assert await producer.request_stop('chat', 'alice') is True
        await producer.wait_for_stop(fresh)  # raised before the wait: seen at once


async def test_a_stop_from_the_same_store_wakes_the_producer_at_once(backend: Backend) -> None:
    store = backend.store(poll_interval=60.0)
    claim = await store.claim('chat', 'alice', create=True)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(store.wait_for_stop, claim)
            await anyio.sleep(0.05)
            assert await store.request_stop('chat', 'alice')
    assert await store.stop_requested(claim)


async def test_the_state_is_committed_with_the_messages_and_claimed_with_them(backend: Backend) -> None:
    store, other = backend.store(), backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    assert claim.state is None and claim.sizes == ()
    await store.commit(claim, HISTORY[:2], state={'step': 1, 'todo': ['a']})
    claim = await other.claim('chat', 'alice')
    assert claim.state == {'step': 1, 'todo': ['a']}
    assert claim.messages == HISTORY[:2]
    await other.commit(claim, HISTORY[2:])  # no state given: the chat keeps its own
    claim = await store.claim('chat', 'alice')
    assert claim.state == {'step': 1, 'todo': ['a']}
    await store.commit(claim, [], state=None)  # a run may clear it
    claim = await store.claim('chat', 'alice')
    assert claim.state is None
    await store.commit(claim, [reply('regenerated')], replace_from=3, state=[1, 'two', {'three': 3.5}])
    claim = await other.claim('chat', 'alice')
    assert claim.state == [1, 'two', {'three': 3.5}]
    assert claim.messages == [*HISTORY[:3], reply('regenerated')]
    await other.release(claim)
    assert (await store.claim('chat', 'alice')).state == [1, 'two', {'three': 3.5}]


async def test_a_refused_commit_leaves_the_state_as_it_was(backend: Backend) -> None:
    store = backend.store(lease=0.2)
    claim = await store.claim('chat', 'alice', create=True)
    await store.commit(claim, HISTORY, state={'kept': True})
    claim = await store.claim('chat', 'alice')
    with pytest.raises(ValueError, match='replace_from'):
        await store.commit(claim, [], replace_from=9, state={'kept': False})
    await eventually(lambda: _none_running(store))  # the lease lapses: the late commit is refused too
    with pytest.raises(ClaimLost):
        await store.commit(claim, [], state={'kept': False})
    assert (await backend.store().claim('chat', 'alice')).state == {'kept': True}


async def test_a_claim_gives_each_stored_messages_size(backend: Backend) -> None:
    from uibridge import ModelMessagesTypeAdapter

    store = backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    await store.commit(claim, HISTORY)
    claim = await store.claim('chat', 'alice')
    assert len(claim.sizes) == len(HISTORY)
    # The sizes are the stored JSON's: with the brackets and commas, the whole history's JSON.
    assert sum(claim.sizes) + len(HISTORY) + 1 == len(ModelMessagesTypeAdapter.dump_json(HISTORY))
    await store.release(claim)


class DecodeCount:
    """How many stored items the backend decodes (`_history_rows.decode_messages`, which every backend's reads
    go through)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from uibridge.server.store import _history_rows

        self.items = 0
        decode = _history_rows.decode_messages

        def counted(items: Any) -> Any:
            self.items += len(items)
            return decode(items)

        monkeypatch.setattr(_history_rows, 'decode_messages', counted)


async def test_a_claim_after_this_process_committed_decodes_only_what_that_commit_wrote(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    assert claim.revision is None  # never claimed before
    await store.commit(claim, HISTORY)
    decoded = DecodeCount(monkeypatch)
    for turn in range(20):
        claim = await store.claim('chat', 'alice')
        assert claim.messages == HISTORY + [m for t in range(turn) for m in (user(f'q{t}'), reply(f'a{t}'))]
        assert decoded.items == 4 if turn == 0 else 2  # the items the last commit wrote, however long the chat
        decoded.items = 0
        await store.commit(claim, [user(f'q{turn}'), reply(f'a{turn}')])
    assert claim.sizes == tuple(len(item) for item in _encoded(claim.messages))


async def test_a_history_another_process_wrote_is_read_from_the_backend(backend: Backend) -> None:
    here, there = backend.store(), backend.store()
    claim = await here.claim('chat', 'alice', create=True)
    await here.commit(claim, HISTORY)
    claim = await there.claim('chat', 'alice')
    assert claim.revision is not None
    await there.commit(claim, [user('from there')])
    claim = await here.claim('chat', 'alice')  # this process's last commit is no longer the chat's
    assert claim.messages == [*HISTORY, user('from there')]
    await here.commit(claim, [reply('back here')], replace_from=2)
    claim = await here.claim('chat', 'alice')
    assert claim.messages == [*HISTORY[:2], reply('back here')]
    assert claim.sizes == tuple(len(item) for item in _encoded(claim.messages))
    await here.release(claim)  # a release commits nothing new: the history stays as it is
    assert (await there.claim('chat', 'alice')).messages == [*HISTORY[:2], reply('back here')]


def _encoded(messages: Any) -> list[bytes]:
    from uibridge.server.store._history_rows import encode_messages

    return encode_messages(messages)
