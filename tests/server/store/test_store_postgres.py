"""What only the PostgreSQL store has: its URL, its schema's version (created in an empty schema, a newer one
refused), its pool (released by `aclose`), `ping`, and a listener that wakes readers in another process at
once. The behaviour it shares with the other backends is the shared suite's (the `postgresql` backend)."""

from __future__ import annotations

import anyio
import psycopg
import pytest
from store_support import drain

from services_support import postgres_schema
from uibridge.server.store import SchemaError, SchemaStatus, store_from_url
from uibridge.server.store.postgres import SCHEMA_VERSION, PostgresStore

pytestmark = pytest.mark.anyio


async def connections_named(url: str) -> int:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'uibridge-test-pool'"
        )
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def test_a_store_from_a_url_creates_its_schema_and_releases_everything(postgres_url: str) -> None:
    url = postgres_schema(postgres_url) + '&application_name=uibridge-test-pool'
    for scheme in ('postgresql', 'postgres'):
        store = store_from_url(url.replace('postgresql', scheme, 1), lease=2.0)
        assert isinstance(store, PostgresStore) and store.lease == 2.0
        await store.aclose()
    store = store_from_url(url)
    assert isinstance(store, PostgresStore)
    assert await store.schema_status() == SchemaStatus(0, SCHEMA_VERSION)  # nothing yet, and nothing made by asking
    await store.ping()  # the first use creates the schema
    assert await store.schema_status() == SchemaStatus(SCHEMA_VERSION, SCHEMA_VERSION)
    claim = await store.claim('chat', 'alice', create=True)
    await store.append_stream(claim, [b'chunk'])
    reader = await store.read_stream('chat', 'alice')  # starts the listener: one more connection
    assert reader is not None and await anext(reader) == b'chunk'
    await store.commit(claim, [])
    assert await drain(reader) == []
    assert await connections_named(postgres_url) >= 2
    await store.aclose()
    with anyio.fail_after(10):
        while await connections_named(postgres_url):
            await anyio.sleep(0.02)


async def test_two_stores_creating_one_schema_at_once_both_succeed(postgres_url: str) -> None:
    url = postgres_schema(postgres_url)
    stores = [PostgresStore(url) for _ in range(3)]
    async with anyio.create_task_group() as group:
        for store in stores:
            group.start_soon(store.ping)
    assert await stores[0].migrate() == SchemaStatus(SCHEMA_VERSION, SCHEMA_VERSION)  # nothing left to do
    for store in stores:
        await store.aclose()


async def test_a_newer_schema_is_refused_even_when_told_to_migrate(postgres_url: str) -> None:
    url = postgres_schema(postgres_url)
    async with PostgresStore(url) as store:
        await store.open_chat('chat', 'alice')
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute('UPDATE uibridge_schema SET version = 99')
    async with PostgresStore(url, migrate=True) as store:
        with pytest.raises(SchemaError, match='version 99, made by a later uibridge'):
            await store.ping()
        with pytest.raises(SchemaError, match='version 99, made by a later uibridge'):
            await store.load_messages('chat', 'alice')


async def test_tables_not_made_by_uibridge_are_refused(postgres_url: str) -> None:
    url = postgres_schema(postgres_url)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute('CREATE TABLE uibridge_chats (id text)')
    async with PostgresStore(url, migrate=True) as store:
        with pytest.raises(SchemaError, match='has uibridge tables but no uibridge_schema'):
            await store.ping()


async def test_a_password_never_appears_in_a_message(postgres_url: str) -> None:
    url = postgres_schema(postgres_url)
    async with PostgresStore(url) as store:
        await store.ping()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute('UPDATE uibridge_schema SET version = 99')
    with_password = url.replace('uibridge@', 'uibridge:hunter2@', 1)  # trust authentication ignores it
    async with PostgresStore(with_password) as store:
        with pytest.raises(SchemaError) as refused:
            await store.ping()
    assert 'hunter2' not in str(refused.value) and 'uibridge:…@' in str(refused.value)


async def test_ping_does_not_answer_when_the_database_cannot_be_reached() -> None:
    async with PostgresStore('postgresql://uibridge@127.0.0.1:1/postgres?connect_timeout=1') as store:
        # The pool waits for a connection up to its timeout (30 s); readiness (`/readyz`) gives up sooner, so here.
        with pytest.raises(TimeoutError), anyio.fail_after(1):
            await store.ping()


async def test_a_reader_in_another_process_is_woken_by_the_append_not_the_poll(postgres_url: str) -> None:
    url = postgres_schema(postgres_url)
    async with PostgresStore(url) as producer, PostgresStore(url, poll_interval=60.0) as reader_store:
        claim = await producer.claim('chat', 'alice', create=True)
        reader = await reader_store.read_stream('chat', 'alice')
        assert reader is not None
        async with anyio.create_task_group() as group:
            got: list[bytes] = []

            async def read() -> None:
                async for chunk in reader:
                    got.append(chunk)

            group.start_soon(read)
            await anyio.sleep(0.05)  # the reader waits: a poll interval of a minute away from its next look
            with anyio.fail_after(10):  # a notification, not the poll, brings each chunk
                await producer.append_stream(claim, [b'one'])
                while got != [b'one']:
                    await anyio.sleep(0.01)
                await producer.commit(claim, [])
        assert got == [b'one']


async def test_closing_a_store_stops_its_listener_without_cancelling_it_and_no_other(postgres_url: str) -> None:
    # psycopg 3.2 answers a cancellation inside a wait by waiting again with no deadline, so a cancelled
    # listener could hang `aclose` (and a test session's teardown) for good: the close token stops it instead.
    url = postgres_schema(postgres_url)
    closing, staying = PostgresStore(url), PostgresStore(url, poll_interval=60.0)
    for store in (closing, staying):
        claim = await store.claim(f'chat-{id(store)}', 'alice', create=True)
        reader = await store.read_stream(f'chat-{id(store)}', 'alice')  # starts the store's listener
        await store.commit(claim, [])
        assert reader is not None and await drain(reader) == []
    listener = closing._listener  # pyright: ignore[reportPrivateUsage]
    assert listener is not None and not listener.done()
    with anyio.fail_after(10):
        await closing.aclose()
    assert listener.done() and not listener.cancelled() and listener.exception() is None
    # The other store's listener heard the token too, and still wakes its reader at once (not by its poll).
    async with staying, PostgresStore(url) as producer:
        claim = await producer.claim('shared', 'alice', create=True)
        reader = await staying.read_stream('shared', 'alice')
        assert reader is not None
        await anyio.sleep(0.05)
        with anyio.fail_after(10):
            await producer.append_stream(claim, [b'one'])
            assert await anext(reader) == b'one'
        await producer.commit(claim, [])
