"""The PostgreSQL store: chats, runs, approvals and stream logs in the database most teams already run, so
every process on every host that reaches it serves any chat, and resumes any stream.

Needs the `postgres` extra (`pip install 'uibridge[postgres]'`: psycopg 3 and its pool), and asyncio (psycopg's
async connections run on asyncio only).

Tables (in the connection's `search_path`, so one database can hold several deployments, one schema each:
`postgresql://…/db?options=-csearch_path%3Dmyapp`): `uibridge_chats` (owner, state, the claim: run id, lease,
stop flag, last run), `uibridge_messages` (one pydantic-ai compatible JSON item per message, `bytea`),
`uibridge_approvals` (the used approval ids and their expiry), `uibridge_streams` and `uibridge_stream_chunks`
(each run's stream log, as in the SQLite store), and `uibridge_schema` (the schema's version, `schema`).

Every time is the database's (`now()`): leases hold across hosts whose clocks differ. Every step that reads
before it writes locks the row it decides on (`FOR UPDATE`), so claims, commits, stops and the end of a log
are atomic across processes. An append is one statement, one round trip: it checks the claim and that the
log is open, adds the batch's chunks and notifies the readers (`pg_notify`). Each store keeps one extra
connection that `LISTEN`s, and wakes its readers and stop waiters when a notification names their run; they
also poll every `poll_interval` seconds (a notification can be lost to a reconnect), and a reader that finds
its producer's claim lapsed with no end marker ends the log `lost`. So resume works across machines with
PostgreSQL alone.

Connections come from a pool (`pool_size`, 10 by default): no call holds one while it waits (readers and stop
waiters wait on the listener), so a pool this size serves hundreds of streams per process. `aclose` closes
the pool and the listener; `ping` asks the database a `SELECT 1` (after checking the schema's version).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing, suppress
from typing import Any, LiteralString, Unpack
from urllib.parse import urlsplit, urlunsplit

import anyio

try:
    import psycopg
    from psycopg_pool import AsyncConnectionPool
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError("the PostgreSQL store needs psycopg: pip install 'uibridge[postgres]'") from error

from ...core.messages import ModelMessage
from ._history_rows import HistoryCache, decode_state, encode_messages, encode_state, history_start, load_history
from .base import KEEP_STATE, ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim, StreamAborted, Timings
from .schema import SchemaError, SchemaStatus, check_schema

__all__ = ['DEFAULT_POOL_SIZE', 'SCHEMA_VERSION', 'PostgresStore']

logger = logging.getLogger('uibridge.server')

SCHEMA_VERSION = 1
DEFAULT_POOL_SIZE = 10

_SCHEMA: list[LiteralString] = [
    'CREATE TABLE IF NOT EXISTS uibridge_schema (version integer NOT NULL)',
    """CREATE TABLE IF NOT EXISTS uibridge_chats (
        id text PRIMARY KEY,
        owner text NOT NULL,
        state bytea,
        run_id text,
        lease_until timestamptz,
        stop boolean NOT NULL DEFAULT false,
        last_run text
    )""",
    """CREATE TABLE IF NOT EXISTS uibridge_messages (
        chat_id text NOT NULL REFERENCES uibridge_chats (id) ON DELETE CASCADE,
        position integer NOT NULL,
        body bytea NOT NULL,
        PRIMARY KEY (chat_id, position)
    )""",
    'CREATE TABLE IF NOT EXISTS uibridge_approvals (id text PRIMARY KEY, expires timestamptz NOT NULL)',
    'CREATE INDEX IF NOT EXISTS uibridge_approvals_expires ON uibridge_approvals (expires)',
    """CREATE TABLE IF NOT EXISTS uibridge_streams (
        run_id text PRIMARY KEY,
        chat_id text NOT NULL,
        outcome text,
        expires timestamptz NOT NULL
    )""",
    'CREATE INDEX IF NOT EXISTS uibridge_streams_expires ON uibridge_streams (expires)',
    """CREATE TABLE IF NOT EXISTS uibridge_stream_chunks (
        run_id text NOT NULL REFERENCES uibridge_streams (run_id) ON DELETE CASCADE,
        seq integer NOT NULL,
        body bytea NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
]
_SCHEMA_LOCK = 0x75696272  # any constant: the advisory lock that makes two processes create the schema one at a time

_STREAM_CHANNEL = 'uibridge_stream'
_STOP_CHANNEL = 'uibridge_stop'
_LISTEN_SLICE = 1.0
"""Seconds the listener waits for notifications before it checks whether the store was closed."""
_READ_LIMIT = 512

_HELD = 'run_id = %(run)s AND lease_until > now()'
_CREATE_CHAT = 'INSERT INTO uibridge_chats (id, owner) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING'

# The log's row locked, its end marker, and whether its run holds the chat: what an append or an end decides on.
_LOG_STATE = """
log AS (
    SELECT s.outcome, coalesce(c.run_id = s.run_id AND c.lease_until > now(), false) AS held
    FROM uibridge_streams s LEFT JOIN uibridge_chats c ON c.id = s.chat_id
    WHERE s.run_id = %(run)s FOR UPDATE OF s
)"""

_APPEND: LiteralString = f"""
WITH {_LOG_STATE},
added AS (
    INSERT INTO uibridge_stream_chunks (run_id, seq, body)
    SELECT %(run)s, %(first)s + ord - 1, body FROM unnest(%(chunks)s::bytea[]) WITH ORDINALITY AS t (body, ord)
    WHERE (SELECT held AND outcome IS NULL FROM log)
),
woken AS (SELECT pg_notify('{_STREAM_CHANNEL}', %(run)s) WHERE (SELECT held AND outcome IS NULL FROM log))
SELECT held, outcome, (SELECT count(*) FROM woken) FROM log
"""

_END: LiteralString = f"""
WITH {_LOG_STATE},
ended AS (
    UPDATE uibridge_streams SET outcome = %(outcome)s, expires = now() + make_interval(secs => %(ttl)s)
    WHERE run_id = %(run)s AND (SELECT held AND outcome IS NULL FROM log)
    RETURNING 1
),
woken AS (SELECT pg_notify('{_STREAM_CHANNEL}', %(run)s) FROM ended)
SELECT held, outcome, (SELECT count(*) FROM woken) FROM log
"""

_READ: LiteralString = """
SELECT s.outcome,
       coalesce((SELECT c.run_id = s.run_id AND c.lease_until > now()
                 FROM uibridge_chats c WHERE c.id = s.chat_id), false),
       ARRAY(SELECT body FROM uibridge_stream_chunks WHERE run_id = s.run_id AND seq >= %(start)s
             ORDER BY seq LIMIT %(limit)s)
FROM uibridge_streams s WHERE s.run_id = %(run)s
"""

_DECLARE_LOST: LiteralString = f"""
WITH lost AS (
    UPDATE uibridge_streams SET outcome = 'lost', expires = now() + make_interval(secs => %(ttl)s)
    WHERE run_id = %(run)s AND outcome IS NULL
      AND NOT EXISTS (SELECT 1 FROM uibridge_chats WHERE id = %(chat)s AND {_HELD})
    RETURNING 1
)
SELECT pg_notify('{_STREAM_CHANNEL}', %(run)s) FROM lost
"""

_HEARTBEAT: LiteralString = f"""
WITH renewed AS (
    UPDATE uibridge_chats SET lease_until = now() + make_interval(secs => %(lease)s)
    WHERE id = %(chat)s AND {_HELD} RETURNING 1
),
log AS (
    UPDATE uibridge_streams SET expires = now() + make_interval(secs => %(lease)s + %(ttl)s)
    WHERE run_id = %(run)s AND outcome IS NULL AND EXISTS (SELECT 1 FROM renewed)
)
SELECT count(*) FROM renewed
"""

_USE_APPROVAL: LiteralString = """
WITH swept AS (DELETE FROM uibridge_approvals WHERE expires <= now() AND id <> %(id)s)
INSERT INTO uibridge_approvals (id, expires) VALUES (%(id)s, now() + make_interval(secs => %(ttl)s))
ON CONFLICT (id) DO UPDATE SET expires = excluded.expires WHERE uibridge_approvals.expires <= now()
RETURNING 1
"""


def _redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f':{parts.password}@', ':…@', 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _lost(claim: RunClaim) -> ClaimLost:
    return ClaimLost(claim.chat_id, claim.run_id)


class PostgresStore(ChatStore):
    def __init__(
        self,
        url: str,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        migrate: bool = False,
        **timings: Unpack[Timings],
    ) -> None:
        """`url`: a libpq connection URI (`postgresql://user:password@host:5432/db`, any libpq parameter as a
        query, `?sslmode=require`) or `key=value` string. `pool_size`: the most connections the store opens
        for its calls (its listener is one more). `migrate`: bring an older schema up to date when first used
        (logged) instead of refusing it (`uibridge.server.store.schema`)."""
        super().__init__(**timings)
        self._histories = HistoryCache()
        if pool_size < 1:
            raise ValueError(f'pool_size must be at least 1, not {pool_size!r}')
        self.url = url
        self.migrate_on_open = migrate
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            url, min_size=1, max_size=pool_size, open=False, kwargs={'autocommit': True}, name='uibridge'
        )
        self._ready_lock = anyio.Lock()
        self._ready = False
        self._sequences: dict[str, int] = {}
        """The next chunk's sequence number, per run this store produces."""
        self._waiters: dict[tuple[str, str], set[anyio.Event]] = {}
        """Readers and stop waiters of this process, by channel and run id, woken by the listener."""
        self._listener: asyncio.Task[None] | None = None
        self._listening = anyio.Event()
        self._closing = anyio.Event()
        """Set by `aclose`: the store is closed."""
        self._close_token = f'close {uuid.uuid4().hex}'
        """The payload that tells this store's listener, and no other process's, to stop."""

    @property
    def _where(self) -> str:
        return f'the PostgreSQL database at {_redacted(self.url)}'

    # -- connections and schema ----------------------------------------------------------------------------

    async def _connect(self) -> AsyncConnectionPool[psycopg.AsyncConnection[Any]]:
        """The pool, opened and the schema checked on first use."""
        if not self._ready:
            async with self._ready_lock:
                if self._closing.is_set():
                    raise RuntimeError('the store is closed')
                if not self._ready:
                    await self._pool.open()  # the pool connects in the background; a call waits for a connection
                    await self._prepare_schema()
                    self._ready = True
        return self._pool

    async def _found_version(self, connection: psycopg.AsyncConnection[Any]) -> int:
        cursor = await connection.execute(
            "SELECT to_regclass('uibridge_schema') IS NOT NULL, to_regclass('uibridge_chats') IS NOT NULL"
        )
        versioned, chats = await cursor.fetchone() or (False, False)
        if not versioned:
            if chats:
                raise SchemaError(f'{self._where} has uibridge tables but no uibridge_schema: not made by uibridge')
            return 0
        cursor = await connection.execute('SELECT max(version) FROM uibridge_schema')
        row = await cursor.fetchone()
        return int(row[0] or 0) if row else 0

    async def _prepare_schema(self) -> None:
        async with self._pool.connection() as connection:
            status = SchemaStatus(await self._found_version(connection), SCHEMA_VERSION)
        if status.found == SCHEMA_VERSION:
            return
        if status.found and not (status.outdated and self.migrate_on_open):
            check_schema(status, self._where, _redacted(self.url))
        before = await self._migrate()
        if before.outdated:
            logger.warning(
                '%s: migrated its uibridge schema from version %d to %d', self._where, before.found, SCHEMA_VERSION
            )

    async def _migrate(self) -> SchemaStatus:
        async with self._pool.connection() as connection:
            # A session lock, taken before the transaction: the transaction's snapshot then sees what the process
            # that held the lock before committed (its tables included).
            await connection.execute('SELECT pg_advisory_lock(%s)', (_SCHEMA_LOCK,))
            try:
                async with connection.transaction():
                    status = SchemaStatus(await self._found_version(connection), SCHEMA_VERSION)
                    if status.found > SCHEMA_VERSION:
                        check_schema(status, self._where, _redacted(self.url))
                    if status.found == SCHEMA_VERSION:
                        return status
                    for statement in _SCHEMA:  # version 1 from nothing; a later version adds its steps after these
                        await connection.execute(statement)
                    await connection.execute('DELETE FROM uibridge_schema')
                    await connection.execute('INSERT INTO uibridge_schema (version) VALUES (%s)', (SCHEMA_VERSION,))
            finally:
                await connection.execute('SELECT pg_advisory_unlock(%s)', (_SCHEMA_LOCK,))
        return status

    async def schema_status(self) -> SchemaStatus:
        await self._pool.open()
        async with self._pool.connection() as connection:
            return SchemaStatus(await self._found_version(connection), SCHEMA_VERSION)

    async def migrate(self) -> SchemaStatus:
        await self._pool.open()
        return await self._migrate()

    async def ping(self) -> None:
        pool = await self._connect()
        async with pool.connection() as connection:
            await connection.execute('SELECT 1')

    async def _one(self, query: LiteralString, params: Any) -> tuple[Any, ...] | None:
        """The first row of one statement, on a connection of the pool (binary: `bytea` comes back as bytes)."""
        async with (await self._connect()).connection() as connection:
            cursor = connection.cursor(binary=True)
            await cursor.execute(query, params)
            return await cursor.fetchone()

    # -- chats ---------------------------------------------------------------------------------------------

    async def _history(self, connection: psycopg.AsyncConnection[Any], chat_id: str, principal: str) -> list[bytes]:
        """The chat's stored items, owner and messages read in one statement; `ChatNotFound` unless `principal`'s."""
        cursor = connection.cursor(binary=True)
        await cursor.execute(
            'SELECT c.owner, m.body FROM uibridge_chats c LEFT JOIN uibridge_messages m ON m.chat_id = c.id '
            'WHERE c.id = %s ORDER BY m.position',
            (chat_id,),
        )
        rows = await cursor.fetchall()
        if not rows or rows[0][0] != principal:
            raise ChatNotFound(chat_id)
        return [row[1] for row in rows if row[1] is not None]

    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        async with (await self._connect()).connection() as connection:
            await connection.execute(_CREATE_CHAT, (chat_id, principal))
            items = await self._history(connection, chat_id, principal)
        return await load_history(items)

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        async with (await self._connect()).connection() as connection:
            items = await self._history(connection, chat_id, principal)
        return await load_history(items)

    async def check_owner(self, chat_id: str, principal: str) -> None:
        row = await self._one('SELECT owner FROM uibridge_chats WHERE id = %s', (chat_id,))
        if row is None or row[0] != principal:
            raise ChatNotFound(chat_id)

    # -- runs ----------------------------------------------------------------------------------------------

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        run_id = uuid.uuid4().hex
        params = {'chat': chat_id, 'run': run_id, 'lease': self.lease, 'ttl': self.stream_ttl}
        known = self._histories.get(chat_id)
        items: list[bytes] | None = None
        async with (await self._connect()).connection() as connection, connection.transaction():
            if create:
                await connection.execute(_CREATE_CHAT, (chat_id, principal))
            cursor = connection.cursor(binary=True)
            await cursor.execute(
                'SELECT owner, run_id IS NOT NULL AND lease_until > now(), last_run, state '
                'FROM uibridge_chats WHERE id = %s FOR UPDATE',
                (chat_id,),
            )
            row = await cursor.fetchone()
            if row is None or row[0] != principal:
                raise ChatNotFound(chat_id)
            if row[1]:
                raise ChatBusy(chat_id)
            previous, state = row[2], row[3]
            await connection.execute(
                'UPDATE uibridge_chats SET run_id = %(run)s, lease_until = now() + make_interval(secs => %(lease)s), '
                'stop = false, last_run = %(run)s WHERE id = %(chat)s',
                params,
            )
            # Expired logs go (skipping those another claim is deleting), the previous log ends if it is still
            # open (this claim proves its producer's lease lapsed), and the run's own log opens.
            await connection.execute(
                'DELETE FROM uibridge_streams WHERE run_id IN '
                '(SELECT run_id FROM uibridge_streams WHERE expires <= now() FOR UPDATE SKIP LOCKED)'
            )
            if previous is not None:
                await connection.execute(
                    "UPDATE uibridge_streams SET outcome = 'lost', expires = now() + make_interval(secs => %(ttl)s) "
                    'WHERE run_id = %(previous)s AND outcome IS NULL',
                    params | {'previous': previous},
                )
            await connection.execute(
                'INSERT INTO uibridge_streams (run_id, chat_id, expires) '
                'VALUES (%(run)s, %(chat)s, now() + make_interval(secs => %(lease)s + %(ttl)s))',
                params,
            )
            if known is None or known.revision != previous:  # else this process committed it: kept
                await cursor.execute(
                    'SELECT body FROM uibridge_messages WHERE chat_id = %s ORDER BY position', (chat_id,)
                )
                items = [body for (body,) in await cursor.fetchall()]
        self._sequences[run_id] = 0
        if items is None:
            assert known is not None
            messages, sizes = await known.load()
        else:
            messages, sizes = await load_history(items), tuple(map(len, items))
        return RunClaim(chat_id, principal, run_id, messages, decode_state(state), sizes, previous)

    async def heartbeat(self, claim: RunClaim) -> None:
        params = {'chat': claim.chat_id, 'run': claim.run_id, 'lease': self.lease, 'ttl': self.stream_ttl}
        row = await self._one(_HEARTBEAT, params)
        if not row or not row[0]:
            raise _lost(claim)

    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        items = encode_messages(messages)
        params = {'chat': claim.chat_id, 'run': claim.run_id, 'ttl': self.stream_ttl}
        async with (await self._connect()).connection() as connection, connection.transaction():
            cursor = await connection.execute(
                f'SELECT {_HELD} FROM uibridge_chats WHERE id = %(chat)s FOR UPDATE', params
            )
            held = await cursor.fetchone()
            cursor = await connection.execute(
                'SELECT outcome FROM uibridge_streams WHERE run_id = %(run)s FOR UPDATE', params
            )
            log = await cursor.fetchone()
            # A log ended `lost`: its readers were told the run died, so persisting it would contradict them.
            if not held or not held[0] or (log is not None and log[0] == 'lost'):
                raise _lost(claim)
            cursor = await connection.execute('SELECT count(*) FROM uibridge_messages WHERE chat_id = %(chat)s', params)
            count = await cursor.fetchone()
            start = history_start(replace_from, count[0] if count else 0)
            await connection.execute(
                'DELETE FROM uibridge_messages WHERE chat_id = %s AND position >= %s', (claim.chat_id, start)
            )
            if items:
                await connection.execute(
                    'INSERT INTO uibridge_messages (chat_id, position, body) SELECT %s, %s + ord - 1, body '
                    'FROM unnest(%s::bytea[]) WITH ORDINALITY AS t (body, ord)',
                    (claim.chat_id, start, items),
                )
            release = 'UPDATE uibridge_chats SET run_id = NULL, lease_until = NULL, stop = false'
            if state is KEEP_STATE:
                await connection.execute(release + ' WHERE id = %(chat)s', params)
            else:
                await connection.execute(
                    release + ', state = %(state)s WHERE id = %(chat)s', params | {'state': encode_state(state)}
                )
            await connection.execute(
                "UPDATE uibridge_streams SET outcome = 'ok', expires = now() + make_interval(secs => %(ttl)s) "
                'WHERE run_id = %(run)s AND outcome IS NULL',
                params,
            )
            await connection.execute(f"SELECT pg_notify('{_STREAM_CHANNEL}', %(run)s)", params)
        self._sequences.pop(claim.run_id, None)
        self._histories.committed(claim, start, items)

    # -- stop ----------------------------------------------------------------------------------------------

    async def request_stop(self, chat_id: str, principal: str) -> bool:
        async with (await self._connect()).connection() as connection, connection.transaction():
            cursor = await connection.execute(
                'SELECT owner, CASE WHEN lease_until > now() THEN run_id END '
                'FROM uibridge_chats WHERE id = %s FOR UPDATE',
                (chat_id,),
            )
            row = await cursor.fetchone()
            if row is None or row[0] != principal:
                raise ChatNotFound(chat_id)
            run_id: str | None = row[1]
            if run_id is None:
                return False
            await connection.execute('UPDATE uibridge_chats SET stop = true WHERE id = %s', (chat_id,))
            await connection.execute(f"SELECT pg_notify('{_STOP_CHANNEL}', %s)", (run_id,))
        self._wake(_STOP_CHANNEL, run_id)  # this process's waiter, without the round trip through the listener
        return True

    async def stop_requested(self, claim: RunClaim) -> bool:
        row = await self._one(
            'SELECT stop FROM uibridge_chats WHERE id = %s AND run_id = %s', (claim.chat_id, claim.run_id)
        )
        return bool(row and row[0])

    async def wait_for_stop(self, claim: RunClaim) -> None:
        await self._listen()
        while True:
            event = self._waiter(_STOP_CHANNEL, claim.run_id)
            try:
                # Registered before the check: a stop raised after it wakes the event; one raised before, the check.
                if await self.stop_requested(claim):
                    return
                with anyio.move_on_after(self.poll_interval):
                    await event.wait()
            finally:
                self._forget(_STOP_CHANNEL, claim.run_id, event)

    # -- approvals -----------------------------------------------------------------------------------------

    async def use_approval(self, approval_id: str) -> bool:
        return await self._one(_USE_APPROVAL, {'id': approval_id, 'ttl': self.approval_ttl}) is not None

    # -- stream log ----------------------------------------------------------------------------------------

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        first = self._sequences.get(claim.run_id)
        if first is None:
            raise _lost(claim)  # not claimed here: only the claiming process knows where its log is
        row = await self._one(_APPEND, {'run': claim.run_id, 'first': first, 'chunks': list(chunks)})
        self._check_log(claim, row)
        self._sequences[claim.run_id] = first + len(chunks)

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        row = await self._one(_END, {'run': claim.run_id, 'outcome': 'ok' if ok else 'error', 'ttl': self.stream_ttl})
        with suppress(RuntimeError):  # ending twice keeps the first marker
            self._check_log(claim, row)

    def _check_log(self, claim: RunClaim, row: tuple[Any, ...] | None) -> None:
        """`ClaimLost` or `RuntimeError` (already ended), from what `_LOG_STATE` found."""
        if row is None or not row[0] or row[1] == 'lost':
            self._sequences.pop(claim.run_id, None)
            raise _lost(claim)
        if row[1] is not None:
            raise RuntimeError(f'the stream of run {claim.run_id!r} already ended')

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        row = await self._one(
            'SELECT c.owner, c.last_run, s.expires > now() FROM uibridge_chats c '
            'LEFT JOIN uibridge_streams s ON s.run_id = c.last_run WHERE c.id = %s',
            (chat_id,),
        )
        if row is None or row[0] != principal:
            raise ChatNotFound(chat_id)
        if row[1] is None or not row[2]:
            return None  # no run yet, or its log expired
        await self._listen()
        return self._follow(chat_id, row[1], max(start, 0))

    async def _follow(self, chat_id: str, run_id: str, index: int) -> AsyncGenerator[bytes, None]:
        while True:
            event = self._waiter(_STREAM_CHANNEL, run_id)
            try:
                row = await self._one(_READ, {'run': run_id, 'start': index, 'limit': _READ_LIMIT})
                if row is None:
                    raise StreamAborted(chat_id, 'lost')  # expired while followed: long past its producer
                outcome, alive, chunks = row
                for chunk in chunks:
                    yield chunk
                index += len(chunks)
                if len(chunks) == _READ_LIMIT:
                    continue
                if outcome == 'ok':
                    return
                if outcome is not None:
                    raise StreamAborted(chat_id, 'error' if outcome == 'error' else 'lost')
                if chunks:
                    continue
                if not alive:
                    await self._one(_DECLARE_LOST, {'chat': chat_id, 'run': run_id, 'ttl': self.stream_ttl})
                    continue
                with anyio.move_on_after(self.poll_interval):
                    await event.wait()
            finally:
                self._forget(_STREAM_CHANNEL, run_id, event)

    # -- notifications -------------------------------------------------------------------------------------

    def _waiter(self, channel: str, run_id: str) -> anyio.Event:
        event = anyio.Event()
        self._waiters.setdefault((channel, run_id), set()).add(event)
        return event

    def _forget(self, channel: str, run_id: str, event: anyio.Event) -> None:
        waiting = self._waiters.get((channel, run_id))
        if waiting is not None:
            waiting.discard(event)
            if not waiting:
                del self._waiters[channel, run_id]

    def _wake(self, channel: str, run_id: str) -> None:
        for event in self._waiters.pop((channel, run_id), ()):
            event.set()

    async def _listen(self) -> None:
        """Start the listener if it is not running, and wait (a poll interval at most) until it listens."""
        if self._listener is None or self._listener.done():
            self._listening = anyio.Event()
            self._listener = asyncio.get_running_loop().create_task(self._run_listener())
        with anyio.move_on_after(self.poll_interval):
            await self._listening.wait()

    async def _run_listener(self) -> None:
        # The listener is stopped by `aclose`, never cancelled: psycopg (3.2 at least) answers a cancellation
        # inside a wait by cancelling the query on the server and then waiting again with no deadline, and a
        # `LISTEN` connection has no query to end, so the cancelled task, and whoever awaits it, would hang.
        # `aclose` notifies this store's close token instead; the notifications are also read in slices, so a
        # lost token still ends the loop.
        delay = 0.1
        while not self._closing.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as connection:
                    await connection.execute(f'LISTEN {_STREAM_CHANNEL}')
                    await connection.execute(f'LISTEN {_STOP_CHANNEL}')
                    self._listening.set()
                    delay = 0.1
                    # Whatever happened while not listening: every waiter checks again.
                    for channel, run_id in list(self._waiters):
                        self._wake(channel, run_id)
                    while not self._closing.is_set():
                        async with aclosing(connection.notifies(timeout=_LISTEN_SLICE)) as notifications:
                            async for notification in notifications:
                                if notification.payload == self._close_token:
                                    return
                                self._wake(notification.channel, notification.payload)
            except psycopg.Error as error:
                if self._closing.is_set():
                    return
                logger.warning('%s: the listener lost its connection (readers poll meanwhile): %s', self._where, error)
                self._listening = anyio.Event()
                with anyio.move_on_after(delay):
                    await self._closing.wait()
                delay = min(delay * 2, 5.0)

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        self._closing.set()
        listener, self._listener = self._listener, None
        with anyio.CancelScope(shield=True):
            if listener is not None and not listener.done():
                if self._ready:
                    with anyio.move_on_after(_LISTEN_SLICE), suppress(psycopg.Error):
                        async with self._pool.connection() as connection:
                            await connection.execute(f"SELECT pg_notify('{_STOP_CHANNEL}', %s)", (self._close_token,))
                # Stopped by the token at once, or at the end of its slice; a listener stuck connecting to a
                # database that does not answer is left to its connect timeout, not waited for here.
                with anyio.move_on_after(2 * _LISTEN_SLICE):
                    await asyncio.wait({listener})
            await self._pool.close()
