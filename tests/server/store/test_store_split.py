"""What only a split store has (the chats in PostgreSQL, the stream logs in Redis): where each thing lives, its URL
and `create_app`'s option, and a claim given back when its log cannot be opened. The behaviour it shares with every
backend is the shared suite's (the `postgresql+redis` backend); resume across processes and workers is
test_resume_processes.py's and test_workers.py's."""

from __future__ import annotations

import socket
import uuid

import psycopg
import pytest
import redis.exceptions
from store_support import drain, reply

from services_support import postgres_schema
from uibridge.server import create_app
from uibridge.server.store import ChatBusy, MemoryStore, SplitStore, store_from_url
from uibridge.server.store.postgres import PostgresStore
from uibridge.server.store.redis import RedisStreamLog

pytestmark = pytest.mark.anyio


def log_database(redis_url: str) -> str:
    return redis_url.rsplit('/', 1)[0] + '/7'  # a database of its own: the shared suite's keys never meet these


async def count(url: str, query: str, *params: object) -> int:
    async with await psycopg.AsyncConnection.connect(url) as connection:
        cursor = await connection.execute(query, params)  # pyright: ignore[reportArgumentType]
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def test_the_chats_are_kept_in_postgresql_and_the_stream_log_in_redis(postgres_url: str, redis_url: str) -> None:
    url, chat = postgres_schema(postgres_url), f'split-{uuid.uuid4().hex[:8]}'
    async with store_from_url(url, stream_log=log_database(redis_url), lease=2.0) as store:
        assert isinstance(store, SplitStore)
        assert isinstance(store.chats, PostgresStore) and isinstance(store.log, RedisStreamLog)
        assert store.lease == store.chats.lease == 2.0  # the chat store's durations are the log's
        claim = await store.claim(chat, 'alice', create=True)
        await store.append_stream(claim, [b'one', b'two'])
        reader = await store.read_stream(chat, 'alice')
        assert reader is not None and [await anext(reader), await anext(reader)] == [b'one', b'two']
        await store.commit(claim, [reply('one two')])
        assert await drain(reader) == []
        # The history is PostgreSQL's; the chunks went to Redis only: one entry per batch, then the end.
        assert await count(url, 'SELECT count(*) FROM uibridge_messages WHERE chat_id = %s', chat) == 1
        assert await count(url, 'SELECT count(*) FROM uibridge_stream_chunks') == 0
        entries = await store.log.redis.xrange(f'uibridge:{{{chat}}}:log:stream:{claim.run_id}')
        assert [fields for _, fields in entries] == [{b'0': b'one', b'1': b'two'}, {b'end': b'ok'}]
        assert await drain(await store.read_stream(chat, 'alice')) == [b'one', b'two']  # replayed after the end


async def test_a_claim_is_given_back_when_its_log_cannot_be_opened(postgres_url: str, redis_url: str) -> None:
    url, chat = postgres_schema(postgres_url), f'split-{uuid.uuid4().hex[:8]}'
    with socket.socket() as closed:
        closed.bind(('127.0.0.1', 0))  # bound, never listening: a Redis that refuses every connection
        unreachable = f'redis://127.0.0.1:{closed.getsockname()[1]}/0'
        async with store_from_url(url, stream_log=unreachable) as broken:
            with pytest.raises(redis.exceptions.ConnectionError):
                await broken.claim(chat, 'alice', create=True)
            with pytest.raises(redis.exceptions.ConnectionError):
                await broken.ping()  # so `/readyz` answers 503 while the log is unreachable
    async with store_from_url(url, stream_log=log_database(redis_url)) as store:
        claim = await store.claim(chat, 'alice')  # the chat exists, and is free: not left claimed by the failure
        with pytest.raises(ChatBusy):
            await store.claim(chat, 'alice')
        await store.commit(claim, [])


async def test_create_app_makes_a_split_store_from_two_urls(postgres_url: str, redis_url: str) -> None:
    app = create_app(store=postgres_schema(postgres_url), stream_log=log_database(redis_url))
    store = app.state.store
    assert isinstance(store, SplitStore) and isinstance(store.log, RedisStreamLog)
    await store.aclose()


def test_a_stream_log_is_a_redis_url_beside_a_store_url() -> None:
    with pytest.raises(ValueError, match='stream_log= goes with store= given as a URL'):
        create_app(store=MemoryStore(), stream_log='redis://127.0.0.1:6379/0')
    for url in ('postgresql://127.0.0.1/db', 'sqlite:///logs.db', 'memory:', ''):
        with pytest.raises(ValueError, match=f"unsupported stream log URL {url!r}: expected 'redis://host:port/N'"):
            store_from_url('memory:', stream_log=url)
    with pytest.raises(TypeError, match='must be a ChatStore'):
        SplitStore('postgresql://127.0.0.1/db', RedisStreamLog('redis://127.0.0.1:6379/0'))  # type: ignore[arg-type]
