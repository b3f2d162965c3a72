"""The store suite's backends: memory, SQLite in a temporary directory, Redis against the session's real
`redis-server` and PostgreSQL against its throwaway cluster (the `redis_url` and `postgres_url` fixtures of
tests/conftest.py, `services_support`), and the two together (`SplitStore`: the chats in PostgreSQL, the stream logs
in Redis), never a mock."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite('store_support')

from store_support import Backend  # noqa: E402

from services_support import postgres_schema  # noqa: E402
from uibridge.server.store import MemoryState, MemoryStore, SqliteStore  # noqa: E402


@pytest.fixture(params=['memory', 'sqlite', 'redis', 'postgresql', 'postgresql+redis'])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    name: str = request.param
    if name == 'memory':
        state = MemoryState()

        def make(**timings: Any) -> Any:
            return MemoryStore(state=state, **timings)

    elif name == 'sqlite':
        path = tmp_path / 'chats.db'

        def make(**timings: Any) -> Any:
            return SqliteStore(path, **timings)

    elif name == 'redis':
        from uibridge.server.store.redis import RedisStore

        url: str = request.getfixturevalue('redis_url')
        prefix = f'test-{uuid.uuid4().hex}'  # one server for the session, a key space per test

        def make(**timings: Any) -> Any:
            return RedisStore(url, prefix=prefix, **timings)

    elif name == 'postgresql':
        from uibridge.server.store.postgres import PostgresStore

        schema_url = postgres_schema(request.getfixturevalue('postgres_url'))

        def make(**timings: Any) -> Any:
            return PostgresStore(schema_url, pool_size=4, **timings)

    else:  # the chats in PostgreSQL, the stream logs in Redis
        from uibridge.server.store import SplitStore
        from uibridge.server.store.postgres import PostgresStore
        from uibridge.server.store.redis import RedisStreamLog

        schema_url = postgres_schema(request.getfixturevalue('postgres_url'))
        log_url: str = request.getfixturevalue('redis_url')
        log_prefix = f'test-{uuid.uuid4().hex}'

        def make(**timings: Any) -> Any:
            return SplitStore(
                PostgresStore(schema_url, pool_size=4, **timings), RedisStreamLog(log_url, prefix=log_prefix)
            )

    backend = Backend(name, make)
    yield backend
    for store in backend.made:
        await store.aclose()
