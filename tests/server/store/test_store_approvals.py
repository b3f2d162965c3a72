"""The store's ledger of approvals acted on, the same on every backend: each approval id is used once across
store objects sharing a backend (two processes), after a restart (a new store object over the same data),
under concurrent use, and again only once it expired."""

from __future__ import annotations

import anyio
import pytest
from store_support import Backend, eventually

pytestmark = pytest.mark.anyio


async def test_an_approval_is_used_once_across_processes(backend: Backend) -> None:
    first, second = backend.store(), backend.store()
    assert await first.use_approval('approval-1') is True
    assert await first.use_approval('approval-1') is False
    assert await second.use_approval('approval-1') is False
    assert await second.use_approval('approval-2') is True
    assert await first.use_approval('approval-2') is False


async def test_a_restart_remembers_the_approvals_used(backend: Backend) -> None:
    before = backend.store()
    assert await before.use_approval('approval') is True
    await before.aclose()
    after = backend.store()  # the same database, Redis or memory state: a restarted process
    assert await after.use_approval('approval') is False


async def test_of_concurrent_uses_of_one_id_exactly_one_wins(backend: Backend) -> None:
    views = [backend.store(), backend.store()]
    outcomes: list[bool] = []

    async def use(index: int) -> None:
        outcomes.append(await views[index % 2].use_approval('contended'))

    async with anyio.create_task_group() as group:
        for index in range(20):
            group.start_soon(use, index)
    assert sorted(outcomes) == [False] * 19 + [True]


async def test_a_used_approval_is_forgotten_after_approval_ttl(backend: Backend) -> None:
    store = backend.store(approval_ttl=0.2)
    assert await store.use_approval('short-lived') is True
    assert await store.use_approval('short-lived') is False

    async def new_again() -> bool | None:
        return True if await store.use_approval('short-lived') else None

    await eventually(new_again)
    assert await store.use_approval('short-lived') is False  # used again: remembered again
