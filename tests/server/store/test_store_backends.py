"""What differs between the backends: how each stores a history, what SQLite's process-local stream log
means, choosing a backend by URL, and the core package staying free of the `redis` dependency."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from store_support import Backend, reply, user

import background
from uibridge import ModelMessagesTypeAdapter
from uibridge.server.store import ChatStore, MemoryStore, SqliteStore, store_from_url

pytestmark = pytest.mark.anyio

HISTORY = [user('hi'), reply('hello')]


async def stored_items(store: ChatStore, chat_id: str) -> list[bytes]:
    if isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as connection:
            rows = connection.execute(
                'SELECT body FROM uibridge_messages WHERE chat_id = ? ORDER BY position', (chat_id,)
            ).fetchall()
        return [bytes(row[0]) for row in rows]
    if isinstance(store, MemoryStore):
        return list(store.state.chats[chat_id].messages)
    from uibridge.server.store.redis import RedisStore

    assert isinstance(store, RedisStore)
    return list(await store.redis.lrange(f'{store.prefix}:{{{chat_id}}}:msgs', 0, -1))


async def test_a_history_is_stored_as_the_pydantic_ai_compatible_json(backend: Backend) -> None:
    store = backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    await store.commit(claim, HISTORY)
    items = await stored_items(store, 'chat')
    assert len(items) == 2
    assert b'[' + b','.join(items) + b']' == ModelMessagesTypeAdapter.dump_json(HISTORY)


async def test_a_sqlite_stream_resumes_only_on_the_process_producing_it(tmp_path: Path) -> None:
    path = tmp_path / 'chats.db'
    async with SqliteStore(path) as first, SqliteStore(path) as second:
        claim = await first.claim('chat', 'alice', create=True)
        await first.append_stream(claim, [b'chunk'])
        assert await second.read_stream('chat', 'alice') is None  # another process: a 204, not a hang
        await first.commit(claim, [])
        newer = await second.claim('chat', 'alice')
        # The first process still holds the earlier run's log, but the chat has moved on to a newer run.
        assert await first.read_stream('chat', 'alice') is None
        await second.commit(newer, [])


async def test_store_from_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_url: str) -> None:
    monkeypatch.chdir(tmp_path)
    for url in ('memory:', 'memory://', 'MEMORY:'):
        assert isinstance(store_from_url(url), MemoryStore)
    relative = store_from_url('sqlite:///data/chats.db', lease=2.0)
    assert isinstance(relative, SqliteStore) and relative.path == 'data/chats.db' and relative.lease == 2.0
    absolute = store_from_url(f'sqlite:///{tmp_path}/chats.db')
    assert isinstance(absolute, SqliteStore) and absolute.path == f'{tmp_path}/chats.db'
    async with absolute:
        assert await absolute.open_chat('chat', 'alice') == []
    from uibridge.server.store.redis import RedisStore

    async with store_from_url(redis_url, stream_ttl=9.0) as remote:
        assert isinstance(remote, RedisStore) and remote.stream_ttl == 9.0
        assert await remote.open_chat('url-test', 'alice') == []


@pytest.mark.parametrize(
    'url',
    ['', 'chats.db', 'postgres://localhost/db', 'sqlite://', 'sqlite:///', 'sqlite:///:memory:', 'memory:name'],
)
def test_store_from_url_refuses_anything_else(url: str) -> None:
    with pytest.raises(ValueError, match=r"unsupported store URL .*expected 'memory:'"):
        store_from_url(url)


@pytest.mark.parametrize('timing', ['lease', 'stream_ttl', 'poll_interval'])
def test_timings_must_be_positive(timing: str) -> None:
    with pytest.raises(ValueError, match=timing):
        MemoryStore(**{timing: 0.0})


# A fresh interpreter, started in the background from import (tests/background.py).
REDIS_IMPORTED = background.run(
    [
        sys.executable,
        '-c',
        'import sys, uibridge, uibridge.server, uibridge.server.store; print("redis" in sys.modules)',
    ],
    check=True,
    timeout=120,
)


def test_the_core_package_does_not_import_redis() -> None:
    result = REDIS_IMPORTED.result()
    assert result.stdout.strip() == 'False'


async def test_a_sqlite_file_from_before_chat_states_opens_and_keeps_its_chats(tmp_path: Path) -> None:
    path = tmp_path / 'old.db'
    with sqlite3.connect(path) as connection:  # the schema as it was, with one chat in it
        connection.executescript(
            """
            CREATE TABLE uibridge_chats (id TEXT PRIMARY KEY, owner TEXT NOT NULL, run_id TEXT, lease_until REAL,
                                         stop INTEGER NOT NULL DEFAULT 0, last_run TEXT);
            CREATE TABLE uibridge_messages (chat_id TEXT NOT NULL, position INTEGER NOT NULL, body BLOB NOT NULL,
                                            PRIMARY KEY (chat_id, position)) WITHOUT ROWID;
            """
        )
        connection.execute("INSERT INTO uibridge_chats (id, owner) VALUES ('chat', 'alice')")
        connection.executemany(
            'INSERT INTO uibridge_messages VALUES (?, ?, ?)',
            [('chat', i, ModelMessagesTypeAdapter.dump_json([message])[1:-1]) for i, message in enumerate(HISTORY)],
        )
    async with SqliteStore(path) as store, SqliteStore(path) as second:
        claim = await store.claim('chat', 'alice')
        assert claim.messages == HISTORY and claim.state is None
        await store.commit(claim, [], state={'now': 'kept'})
        assert (await second.claim('chat', 'alice')).state == {'now': 'kept'}
        assert await second.use_approval('approval') is True
        assert await store.use_approval('approval') is False
