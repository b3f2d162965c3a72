"""What differs between the backends: how each stores a history, what SQLite's process-local stream log
means, choosing a backend by URL, and the core package staying free of the `redis` dependency."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from store_support import Backend, drain, reply, user

import background
from pydantic_ai_json import PYDANTIC_AI_EVERY_KIND, field_for_field, pydantic_ai_reading, uibridge_written
from uibridge import ModelMessagesTypeAdapter
from uibridge.server.store import (
    ChatStore,
    MemoryStore,
    SchemaError,
    SchemaStatus,
    SplitStore,
    SqliteStore,
    store_from_url,
)
from uibridge.server.store.sqlite import SCHEMA_VERSION as SQLITE_SCHEMA

pytestmark = pytest.mark.anyio

HISTORY = [user('hi'), reply('hello')]


async def stored_items(store: ChatStore, chat_id: str) -> list[bytes]:
    if isinstance(store, SplitStore):
        return await stored_items(store.chats, chat_id)
    if isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as connection:
            rows = connection.execute(
                'SELECT body FROM uibridge_messages WHERE chat_id = ? ORDER BY position', (chat_id,)
            ).fetchall()
        return [bytes(row[0]) for row in rows]
    if isinstance(store, MemoryStore):
        return list(store.state.chats[chat_id].messages)
    from uibridge.server.store.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        import psycopg

        async with await psycopg.AsyncConnection.connect(store.url) as connection:
            cursor = connection.cursor(binary=True)
            await cursor.execute('SELECT body FROM uibridge_messages WHERE chat_id = %s ORDER BY position', (chat_id,))
            return [bytes(row[0]) for row in await cursor.fetchall()]
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


async def test_every_stored_row_is_a_message_pydantic_ai_reads_field_for_field(backend: Backend) -> None:
    # Each row, read back out of the backend's own storage (the SQLite file, PostgreSQL's table, Redis' list),
    # is a message pydantic-ai's `ModelMessagesTypeAdapter` loads: a history of every kind pydantic-ai stores
    # reads as pydantic-ai read it, and one of every kind uibridge writes reads field for field.
    from_pydantic_ai = ModelMessagesTypeAdapter.validate_json(PYDANTIC_AI_EVERY_KIND)
    history = [*from_pydantic_ai, *uibridge_written()]
    store = backend.store()
    claim = await store.claim('chat', 'alice', create=True)
    await store.commit(claim, history)
    items = await stored_items(store, 'chat')
    assert len(items) == len(history)
    read = [pydantic_ai_reading(b'[' + item + b']')[0] for item in items]
    assert read[: len(from_pydantic_ai)] == pydantic_ai_reading(PYDANTIC_AI_EVERY_KIND)
    for item, theirs in zip(items, read, strict=True):
        assert field_for_field(json.loads(item), theirs) == []


async def test_a_sqlite_stream_log_is_in_the_database_file(tmp_path: Path) -> None:
    path = tmp_path / 'chats.db'
    async with SqliteStore(path, poll_interval=0.02) as first, SqliteStore(path, poll_interval=0.02) as second:
        claim = await first.claim('chat', 'alice', create=True)
        await first.append_stream(claim, [b'one', b'two'])
        reader = await second.read_stream('chat', 'alice')  # another process: the log is the file's
        assert reader is not None
        assert [await anext(reader), await anext(reader)] == [b'one', b'two']
        await first.append_stream(claim, [b'three'])
        assert await anext(reader) == b'three'
        await first.commit(claim, [])
        assert await drain(reader) == []
        newer = await second.claim('chat', 'alice')
        # The first process still holds the earlier run's log in memory, but the chat has moved on to a newer run.
        await second.append_stream(newer, [b'newer'])
        await second.end_stream(newer)
        assert await drain(await first.read_stream('chat', 'alice')) == [b'newer']
        await second.commit(newer, [])
    with sqlite3.connect(path) as connection:
        rows = connection.execute('SELECT body FROM uibridge_stream_chunks').fetchall()
    assert sorted(bytes(row[0]) for row in rows) == [b'newer', b'one', b'three', b'two']


async def test_a_sqlite_log_is_written_behind_the_producer_a_transaction_per_lot(tmp_path: Path) -> None:
    """Batches appended faster than the disk takes them share a transaction; none is written one per chunk."""
    path = tmp_path / 'chats.db'
    async with SqliteStore(path) as producer, SqliteStore(path) as reader:
        claim = await producer.claim('chat', 'alice', create=True)
        for batch in range(300):
            await producer.append_stream(claim, [b'%d.a' % batch, b'%d.b' % batch])
        await producer.end_stream(claim)
        # The appends never waited for the writer, so it found many batches waiting at each turn.
        assert producer.log_transactions < 300  # the rest went with the end marker, in its transaction
        expected = [b'%d.%s' % (batch, half) for batch in range(300) for half in (b'a', b'b')]
        assert await drain(await reader.read_stream('chat', 'alice')) == expected
        await producer.commit(claim, [])


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
    ['', 'chats.db', 'mysql://localhost/db', 'sqlite://', 'sqlite:///', 'sqlite:///:memory:', 'memory:name'],
)
def test_store_from_url_refuses_anything_else(url: str) -> None:
    with pytest.raises(ValueError, match=r"unsupported store URL .*expected 'memory:'"):
        store_from_url(url)


@pytest.mark.parametrize('timing', ['lease', 'stream_ttl', 'poll_interval'])
def test_timings_must_be_positive(timing: str) -> None:
    with pytest.raises(ValueError, match=timing):
        MemoryStore(**{timing: 0.0})


# A fresh interpreter, a job of tests/background.py: started beside the tests before this one.
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


def _old_sqlite_database(path: Path, *, with_state: bool) -> None:
    """A database as uibridge wrote it before its schema had a version (1: no states; 2: states, approvals)."""
    with sqlite3.connect(path) as connection:
        state = ', state BLOB' if with_state else ''
        connection.executescript(
            f"""
            CREATE TABLE uibridge_chats (id TEXT PRIMARY KEY, owner TEXT NOT NULL, run_id TEXT, lease_until REAL,
                                         stop INTEGER NOT NULL DEFAULT 0, last_run TEXT{state});
            CREATE TABLE uibridge_messages (chat_id TEXT NOT NULL, position INTEGER NOT NULL, body BLOB NOT NULL,
                                            PRIMARY KEY (chat_id, position)) WITHOUT ROWID;
            """
        )
        connection.execute("INSERT INTO uibridge_chats (id, owner) VALUES ('chat', 'alice')")
        connection.executemany(
            'INSERT INTO uibridge_messages VALUES (?, ?, ?)',
            [('chat', i, ModelMessagesTypeAdapter.dump_json([message])[1:-1]) for i, message in enumerate(HISTORY)],
        )


async def test_an_older_sqlite_schema_is_refused_until_migrated(tmp_path: Path) -> None:
    path = tmp_path / 'old.db'
    _old_sqlite_database(path, with_state=False)
    async with SqliteStore(path) as store:
        for attempt in (store.ping, lambda: store.claim('chat', 'alice')):
            with pytest.raises(SchemaError, match=r'schema version 1; this uibridge uses version 3\. Run `python -m '
                               r'uibridge store migrate sqlite:///.*old\.db`'):  # fmt: skip
                await attempt()
        assert (await store.schema_status()) == SchemaStatus(1, SQLITE_SCHEMA)
        assert (await store.migrate()) == SchemaStatus(1, SQLITE_SCHEMA)  # what it found
        assert (await store.schema_status()) == SchemaStatus(SQLITE_SCHEMA, SQLITE_SCHEMA)
        # The same store object works from now on: the refusal was not remembered.
        claim = await store.claim('chat', 'alice')
        assert claim.messages == HISTORY and claim.state is None
        await store.commit(claim, [], state={'now': 'kept'})
        assert (await store.migrate()) == SchemaStatus(SQLITE_SCHEMA, SQLITE_SCHEMA)  # a second run changes nothing
    async with SqliteStore(path) as second:
        assert (await second.claim('chat', 'alice')).state == {'now': 'kept'}


async def test_a_store_told_to_migrate_does_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / 'old.db'
    _old_sqlite_database(path, with_state=True)
    async with SqliteStore(path, migrate=True) as store, SqliteStore(path) as second:
        assert await store.load_messages('chat', 'alice') == HISTORY
        assert 'migrated its uibridge schema from version 2 to 3' in caplog.text
        assert await second.use_approval('approval') is True
        assert await store.use_approval('approval') is False


async def test_a_newer_sqlite_schema_is_refused_even_when_told_to_migrate(tmp_path: Path) -> None:
    path = tmp_path / 'new.db'
    async with SqliteStore(path) as store:
        await store.open_chat('chat', 'alice')  # an empty file gets the current schema, no questions asked
    with sqlite3.connect(path) as connection:
        connection.execute('UPDATE uibridge_schema SET version = 99')
    async with SqliteStore(path, migrate=True) as store:
        with pytest.raises(SchemaError, match='version 99, made by a later uibridge'):
            await store.load_messages('chat', 'alice')
        with pytest.raises(SchemaError, match='made by a later uibridge'):
            await store.migrate()
