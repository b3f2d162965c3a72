"""The stream log, the same on every backend: replay then live follow for any number of readers, batches,
end markers, expiry after the end, and a dead producer ending its readers with an error. Readers read from
another store object over the same backend, as another process would (and, where the test says, from the
producing one)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import anyio
import pytest
from store_support import Backend, drain, eventually, reply

from uibridge.server.store import ChatStore, ClaimLost, StreamAborted

pytestmark = pytest.mark.anyio


class Follower:
    """A reader consuming in the background, so a test can watch it catch up with the producer."""

    def __init__(self, reader: AsyncGenerator[bytes, None] | None) -> None:
        assert reader is not None
        self.reader = reader
        self.chunks: list[bytes] = []
        self.error: StreamAborted | None = None
        self.done = anyio.Event()

    async def run(self) -> None:
        try:
            async for chunk in self.reader:
                self.chunks.append(chunk)
        except StreamAborted as error:
            self.error = error
        self.done.set()

    async def has(self, count: int) -> bool | None:
        return True if len(self.chunks) >= count else None


async def test_readers_replay_from_the_first_chunk_then_follow_live(backend: Backend) -> None:
    producer = backend.store()
    readers = backend.reader_for(producer)
    claim = await producer.claim('chat', 'alice', create=True)
    early = Follower(await readers.read_stream('chat', 'alice'))  # before the first chunk
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(early.run)
            await producer.append_stream(claim, [b'a', b'b'])
            await eventually(lambda: early.has(2))
            # Mid-stream, in the producing process: replays a, b first.
            late = Follower(await producer.read_stream('chat', 'alice'))
            group.start_soon(late.run)
            await eventually(lambda: late.has(2))
            await producer.append_stream(claim, [b'c'])
            await eventually(lambda: early.has(3))
            await eventually(lambda: late.has(3))
            await producer.append_stream(claim, [b'd', b'e'])
            await producer.end_stream(claim)
    everything = [b'a', b'b', b'c', b'd', b'e']
    assert early.chunks == late.chunks == everything
    assert early.error is None and late.error is None
    # After the end, a reader replays it whole, from any chunk; the commit leaves it readable too.
    assert await drain(await readers.read_stream('chat', 'alice')) == everything
    assert await drain(await readers.read_stream('chat', 'alice', start=3)) == [b'd', b'e']
    await producer.commit(claim, [reply('abcde')])
    assert await drain(await readers.read_stream('chat', 'alice')) == everything


async def test_the_producer_never_waits_for_its_readers(backend: Backend) -> None:
    producer = backend.store()
    readers = backend.reader_for(producer)
    claim = await producer.claim('chat', 'alice', create=True)
    await producer.append_stream(claim, [b'first'])
    stalled = [await readers.read_stream('chat', 'alice') for _ in range(3)]
    for reader in stalled:  # each has started, then stops reading
        assert reader is not None
        assert await anext(reader) == b'first'
    batches = 0
    with anyio.fail_after(30):  # a hang guard: a producer that waited for a stalled reader would never finish
        for batch in range(200):
            await producer.append_stream(claim, [b'%d.%d' % (batch, index) for index in range(10)])
            batches += 1
        await producer.commit(claim, [])
    assert batches == 200
    for reader in stalled:
        rest = await drain(reader)
        assert len(rest) == 2000 and rest[0] == b'0.0' and rest[-1] == b'199.9'


async def test_a_batch_is_read_back_as_the_same_chunks_in_order(backend: Backend) -> None:
    producer = backend.store()
    readers = backend.reader_for(producer)
    claim = await producer.claim('chat', 'alice', create=True)
    chunks = [b'data: %d\n\n' % index for index in range(2500)] + [b'', b'\x00\xff binary', 'ünï'.encode()]
    await producer.append_stream(claim, chunks)  # one call: on Redis, one round trip
    await producer.append_stream(claim, [])
    await producer.append_stream(claim, [b'last'])
    await producer.end_stream(claim)
    assert await drain(await readers.read_stream('chat', 'alice')) == [*chunks, b'last']


async def test_end_markers(backend: Backend) -> None:
    producer = backend.store()
    readers = backend.reader_for(producer)
    claim = await producer.claim('chat', 'alice', create=True)
    await producer.append_stream(claim, [b'cut short'])
    await producer.end_stream(claim, ok=False)
    await producer.end_stream(claim, ok=True)  # the first marker stays
    with pytest.raises(RuntimeError, match='already ended'):
        await producer.append_stream(claim, [b'after the end'])
    await producer.commit(claim, [])  # nor does the commit overwrite it
    reader = await readers.read_stream('chat', 'alice')
    assert reader is not None
    assert await anext(reader) == b'cut short'
    with anyio.fail_after(10), pytest.raises(StreamAborted) as aborted:
        await anext(reader)
    assert aborted.value.reason == 'error'

    # A run committed (or released) without ending its stream ends it `ok`.
    for finish in ('commit', 'release'):
        claim = await producer.claim('chat', 'alice')
        follower = Follower(await readers.read_stream('chat', 'alice'))
        async with anyio.create_task_group() as group:
            group.start_soon(follower.run)
            await producer.append_stream(claim, [finish.encode()])
            await (producer.commit(claim, [reply(finish)]) if finish == 'commit' else producer.release(claim))
            with anyio.fail_after(10):
                await follower.done.wait()
        assert follower.chunks == [finish.encode()] and follower.error is None
    assert await producer.load_messages('chat', 'alice') == [reply('commit')]


async def test_no_stream_to_read(backend: Backend) -> None:
    store = backend.store()
    await store.open_chat('chat', 'alice')
    assert await store.read_stream('chat', 'alice') is None


async def test_a_stream_expires_after_its_end_and_not_before(backend: Backend) -> None:
    producer = backend.store(stream_ttl=0.1)
    readers = backend.reader_for(producer, stream_ttl=0.1)
    claim = await producer.claim('chat', 'alice', create=True)
    await producer.append_stream(claim, [b'still going'])
    await anyio.sleep(0.25)  # past the TTL: an open stream is not subject to it
    reader = await readers.read_stream('chat', 'alice')
    assert reader is not None
    assert await anext(reader) == b'still going'
    await reader.aclose()
    await producer.end_stream(claim)  # the TTL starts here, while the run still holds the chat
    await eventually(lambda: _gone(readers))
    await producer.commit(claim, [])
    assert await readers.read_stream('chat', 'alice') is None


async def _gone(store: ChatStore) -> bool | None:
    return True if await store.read_stream('chat', 'alice') is None else None


async def test_readers_of_a_dead_producer_end_with_an_error(backend: Backend) -> None:
    producer = backend.store(lease=0.3)
    readers = backend.reader_for(producer, lease=0.3)
    claim = await producer.claim('chat', 'alice', create=True)
    await producer.append_stream(claim, [b'a', b'b'])
    follower = Follower(await readers.read_stream('chat', 'alice'))
    # The producer dies here: no heartbeat, no end. The guard only turns a hang into a failure.
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(follower.run)
            await follower.done.wait()
    assert follower.chunks == [b'a', b'b']
    assert follower.error is not None and follower.error.reason == 'lost'
    # Later readers replay the chunks and end the same way; the dead run may write nothing more.
    late = Follower(await readers.read_stream('chat', 'alice'))
    with anyio.fail_after(10):
        await late.run()
    assert late.chunks == [b'a', b'b'] and late.error is not None and late.error.reason == 'lost'
    for late_write in (
        lambda: producer.append_stream(claim, [b'c']),
        lambda: producer.commit(claim, [reply('ab')]),
    ):
        with pytest.raises(ClaimLost):
            await late_write()
    assert await producer.load_messages('chat', 'alice') == []
