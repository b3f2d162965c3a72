"""The SQLite store, the default: embedded, nothing to install, safe for several processes on one file (the
workers of one server on one host), streams resumable on any of them.

`sqlite3` blocks, so every statement runs in a worker thread (`anyio.to_thread`), at most `max_threads` at
once, each with a connection of its own from a small pool (one connection is never used by two threads at
a time). The database is in WAL mode, so readers do not wait for the writer; every write is one
`BEGIN IMMEDIATE` transaction, which is what makes claim and commit atomic across processes.

Leases are wall-clock (`time.time()`), as all processes on one machine share that clock, and so are the
expiries of the used approval ids (`uibridge_approvals`, one row each, the expired ones deleted as new ones
come). A chat's state is a column of its row, set in the commit's transaction.

The stream log is in the database file too (`sqlite_log`): the producer's batches are written behind it by a
thread of the store's own, one transaction for every batch waiting, and readers in other processes poll the
log every `poll_interval` seconds while it is idle; readers in the producing process follow it from memory. A
stop requested from another process reaches the producer through the database, polled likewise (a stop from
the same process wakes it at once).

The database's schema has a version (`schema`): an empty file gets the current schema, an older one is refused
until `python -m uibridge store migrate sqlite:///path.db` (or `migrate=True`) brings it up to date.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from pathlib import Path
from typing import Any, TypeVar, Unpack

import anyio
import anyio.to_thread

from ...core.messages import ModelMessage
from ._history_rows import HistoryCache, decode_state, encode_messages, encode_state, history_start, load_history
from .base import (
    KEEP_STATE,
    ChatBusy,
    ChatNotFound,
    ChatStore,
    ClaimLost,
    RunClaim,
    StreamAborted,
    StreamOutcome,
    Timings,
)
from .local import LocalStream, LocalStreams
from .schema import SchemaStatus, check_schema
from .sqlite_log import (
    LOG_SCHEMA,
    READ_LIMIT,
    LogWriter,
    declare_lost,
    end_log,
    read_log,
    renew_log,
    start_log,
    write_chunks,
)

logger = logging.getLogger('uibridge.server')

T = TypeVar('T')

SCHEMA_VERSION = 3
"""1: chats and messages; 2: a chat's state, the used approval ids; 3: the stream log, and this version table."""

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS uibridge_chats (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    run_id TEXT,
    lease_until REAL,
    stop INTEGER NOT NULL DEFAULT 0,
    last_run TEXT,
    state BLOB
);
CREATE TABLE IF NOT EXISTS uibridge_messages (
    chat_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (chat_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS uibridge_approvals (
    id TEXT PRIMARY KEY,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS uibridge_approvals_expires ON uibridge_approvals (expires);
CREATE TABLE IF NOT EXISTS uibridge_schema (version INTEGER NOT NULL);
"""
    + LOG_SCHEMA
)
_STATE_COLUMN = 'ALTER TABLE uibridge_chats ADD COLUMN state BLOB'
"""Version 1 to 2: the chat's state (its chats have none: `NULL`)."""


def _found_version(connection: sqlite3.Connection) -> int:
    """The database's schema version; 0 without uibridge tables. A database from before the version table tells
    its version by its tables."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if 'uibridge_schema' in tables:
        row = connection.execute('SELECT max(version) FROM uibridge_schema').fetchone()
        return int(row[0] or 0)
    if 'uibridge_chats' not in tables:
        return 0
    columns = {row[1] for row in connection.execute('PRAGMA table_info(uibridge_chats)')}
    return 2 if 'state' in columns else 1


def _migrate(connection: sqlite3.Connection, where: str, url: str) -> SchemaStatus:
    """Bring the schema to `SCHEMA_VERSION` in one transaction (creating it in an empty database); the status
    found before. Refuses a database from a later uibridge."""
    with _transaction(connection):
        status = SchemaStatus(_found_version(connection), SCHEMA_VERSION)
        if status.found > SCHEMA_VERSION:
            check_schema(status, where, url)
        if status.found == SCHEMA_VERSION:
            return status
        if status.found == 1:
            connection.execute(_STATE_COLUMN)
        for statement in _SCHEMA.split(';'):
            if statement.strip():
                connection.execute(statement)
        connection.execute('DELETE FROM uibridge_schema')
        connection.execute('INSERT INTO uibridge_schema (version) VALUES (?)', (SCHEMA_VERSION,))
    return status


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    # IMMEDIATE takes the write lock up front: two processes claiming at once serialize here instead of
    # both reading "free" and one failing at its write.
    connection.execute('BEGIN IMMEDIATE')
    try:
        yield connection
        connection.execute('COMMIT')
    except BaseException:
        # Also after a failed COMMIT: the connection goes back to the pool, never with a transaction open.
        if connection.in_transaction:
            connection.execute('ROLLBACK')
        raise


def _enable_wal(connection: sqlite3.Connection, *, patience: float = 30.0) -> None:
    """Switch the database to WAL (a no-op once it is). Changing the journal mode needs the database to itself,
    and SQLite answers `database is locked` at once, without its busy timeout, while another connection (another
    store, another process) holds it: so wait here, as the busy timeout would."""
    deadline = time.monotonic() + patience
    delay = 0.001
    while True:
        try:
            connection.execute('PRAGMA journal_mode=WAL')
            return
        except sqlite3.OperationalError as error:
            if 'locked' not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _owned(connection: sqlite3.Connection, chat_id: str, principal: str, *, create: bool = False) -> tuple[Any, ...]:
    """The chat's row (run_id, lease_until, stop, last_run), created when asked; ChatNotFound otherwise."""
    row = connection.execute(
        'SELECT owner, run_id, lease_until, stop, last_run FROM uibridge_chats WHERE id = ?', (chat_id,)
    ).fetchone()
    if row is None and create:
        connection.execute('INSERT INTO uibridge_chats (id, owner) VALUES (?, ?)', (chat_id, principal))
        return (None, None, 0, None)
    if row is None or row[0] != principal:
        raise ChatNotFound(chat_id)
    return tuple(row[1:])


def _live_run(row: tuple[Any, ...]) -> str | None:
    run_id, lease_until = row[0], row[1]
    return run_id if run_id is not None and lease_until > time.time() else None


def _state(connection: sqlite3.Connection, chat_id: str) -> bytes | None:
    row = connection.execute('SELECT state FROM uibridge_chats WHERE id = ?', (chat_id,)).fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


def _messages(connection: sqlite3.Connection, chat_id: str) -> list[bytes]:
    rows = connection.execute(
        'SELECT body FROM uibridge_messages WHERE chat_id = ? ORDER BY position', (chat_id,)
    ).fetchall()
    return [bytes(row[0]) for row in rows]


def _check_held(connection: sqlite3.Connection, claim: RunClaim) -> None:
    row = connection.execute('SELECT run_id, lease_until FROM uibridge_chats WHERE id = ?', (claim.chat_id,)).fetchone()
    if row is None or _live_run(tuple(row)) != claim.run_id:
        raise ClaimLost(claim.chat_id, claim.run_id)


class SqliteStore(ChatStore):
    def __init__(
        self,
        path: str | Path,
        *,
        max_threads: int = 4,
        migrate: bool = False,
        **timings: Unpack[Timings],
    ) -> None:
        """`path`: the database file (created when missing). `migrate`: bring a database of an older schema up
        to date when first opened (logged) instead of refusing it (`uibridge.server.store.schema`)."""
        super().__init__(**timings)
        self.path = str(path)
        self.migrate_on_open = migrate
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all: list[sqlite3.Connection] = []
        self._schema_lock = threading.Lock()
        self._schema_ready = False
        self._streams = LocalStreams()
        self._writer = LogWriter(self._open, _transaction)
        self._stops: dict[str, anyio.Event] = {}
        """Same-process wake-ups for `wait_for_stop`, by run id (other processes are seen by polling)."""
        self._histories = HistoryCache()

    @property
    def log_transactions(self) -> int:
        """How many transactions the stream log's writer has made (the end of a log adds its own)."""
        return self._writer.transactions

    @property
    def _url(self) -> str:
        return f'sqlite:///{self.path}'

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions, each write is the explicit BEGIN IMMEDIATE above;
        # the timeout is how long a write waits for another process's transaction before failing.
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        _enable_wal(connection)
        connection.execute('PRAGMA synchronous=NORMAL')
        return connection

    def _connection(self) -> sqlite3.Connection:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        connection = self._open()
        with self._schema_lock:
            try:
                if not self._schema_ready:
                    self._prepare_schema(connection)
                    self._schema_ready = True
            except BaseException:
                connection.close()
                raise
            self._all.append(connection)
        return connection

    def _prepare_schema(self, connection: sqlite3.Connection) -> None:
        where = f'the SQLite database {self.path}'
        status = SchemaStatus(_found_version(connection), SCHEMA_VERSION)
        if status.found == SCHEMA_VERSION:
            return
        if status.found and status.found < SCHEMA_VERSION and not self.migrate_on_open:
            check_schema(status, where, self._url)
        before = _migrate(connection, where, self._url)
        if 0 < before.found < SCHEMA_VERSION:
            logger.warning(
                '%s: migrated its uibridge schema from version %d to %d', where, before.found, SCHEMA_VERSION
            )

    def _call(self, function: Callable[[sqlite3.Connection], T]) -> T:
        connection = self._connection()
        try:
            return function(connection)
        finally:
            self._idle.put(connection)

    async def _run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._call, function, limiter=self._limiter)

    # -- schema --------------------------------------------------------------------------------------------

    async def schema_status(self) -> SchemaStatus:
        def work() -> SchemaStatus:
            with contextlib.closing(self._open()) as connection:
                return SchemaStatus(_found_version(connection), SCHEMA_VERSION)

        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    async def migrate(self) -> SchemaStatus:
        def work() -> SchemaStatus:
            with contextlib.closing(self._open()) as connection:
                return _migrate(connection, f'the SQLite database {self.path}', self._url)

        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    # -- chats ---------------------------------------------------------------------------------------------

    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        def work(connection: sqlite3.Connection) -> list[bytes]:
            with _transaction(connection):
                _owned(connection, chat_id, principal, create=True)
                return _messages(connection, chat_id)

        return await load_history(await self._run(work))

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        def work(connection: sqlite3.Connection) -> list[bytes]:
            # A read transaction: the owner and the messages come from one snapshot.
            with _read_snapshot(connection):
                _owned(connection, chat_id, principal)
                return _messages(connection, chat_id)

        return await load_history(await self._run(work))

    async def check_owner(self, chat_id: str, principal: str) -> None:
        await self._run(lambda connection: _owned(connection, chat_id, principal))

    # -- runs ----------------------------------------------------------------------------------------------

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        run_id = uuid.uuid4().hex
        known = self._histories.get(chat_id)

        def work(connection: sqlite3.Connection) -> tuple[list[bytes] | None, bytes | None, str | None]:
            with _transaction(connection):
                row = _owned(connection, chat_id, principal, create=create)
                if _live_run(row) is not None:
                    raise ChatBusy(chat_id)
                connection.execute(
                    'UPDATE uibridge_chats SET run_id = ?, lease_until = ?, stop = 0, last_run = ? WHERE id = ?',
                    (run_id, time.time() + self.lease, run_id, chat_id),
                )
                start_log(connection, chat_id, run_id, row[3], self.lease, self.stream_ttl)
                unread = known is not None and known.revision == row[3]  # this process committed it: kept
                return None if unread else _messages(connection, chat_id), _state(connection, chat_id), row[3]

        items, state, revision = await self._run(work)
        self._streams.start(chat_id, run_id, time.monotonic() + self.lease, self.stream_ttl)
        if items is None:
            assert known is not None
            messages, sizes = await known.load()
        else:
            messages, sizes = await load_history(items), tuple(map(len, items))
        return RunClaim(chat_id, principal, run_id, messages, decode_state(state), sizes, revision)

    def _local(self, claim: RunClaim) -> LocalStream | None:
        """The run's log as this process keeps it (None when another process claimed the chat for it); `ClaimLost`
        when its readers were told it died."""
        stream = self._streams.get(claim.chat_id, claim.run_id)
        if self._writer.refused(claim.run_id):
            if stream is not None:
                self._streams.finish(stream, 'lost', self.stream_ttl)
            raise ClaimLost(claim.chat_id, claim.run_id)
        if stream is not None and stream.outcome == 'lost':
            raise ClaimLost(claim.chat_id, claim.run_id)
        return stream

    def _producing(self, claim: RunClaim) -> LocalStream:
        """The run's log, for the process that claimed the chat for it (it alone knows where the log is)."""
        stream = self._local(claim)
        if stream is None:
            raise ClaimLost(claim.chat_id, claim.run_id)
        return stream

    async def heartbeat(self, claim: RunClaim) -> None:
        stream = self._local(claim)

        def work(connection: sqlite3.Connection) -> None:
            with _transaction(connection):
                _check_held(connection, claim)
                connection.execute(
                    'UPDATE uibridge_chats SET lease_until = ? WHERE id = ?', (time.time() + self.lease, claim.chat_id)
                )
                renew_log(connection, claim.run_id, self.lease, self.stream_ttl)

        renewed = time.monotonic() + self.lease
        await self._run(work)
        if stream is not None:
            stream.deadline = renewed

    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        # Its readers were told the run died: persisting it now would contradict what they showed.
        stream = self._local(claim)
        items = encode_messages(messages)
        stored_state = None if state is KEEP_STATE else encode_state(state)
        start = 0

        def write(connection: sqlite3.Connection) -> None:
            nonlocal start
            _check_held(connection, claim)
            # The claim still holds the chat, so its messages are those it was claimed with (only the holder of a
            # chat's claim writes them): no count of the rows, which would read all of the chat's.
            start = history_start(replace_from, len(claim.sizes))
            connection.execute(
                'DELETE FROM uibridge_messages WHERE chat_id = ? AND position >= ?', (claim.chat_id, start)
            )
            connection.executemany(
                'INSERT INTO uibridge_messages (chat_id, position, body) VALUES (?, ?, ?)',
                [(claim.chat_id, start + offset, item) for offset, item in enumerate(items)],
            )
            connection.execute(
                'UPDATE uibridge_chats SET run_id = NULL, lease_until = NULL, stop = 0 WHERE id = ?',
                (claim.chat_id,),
            )
            if stored_state is not None:
                connection.execute('UPDATE uibridge_chats SET state = ? WHERE id = ?', (stored_state, claim.chat_id))

        await self._run(lambda connection: self._end_log(connection, claim, 'ok', write))
        if stream is not None:
            self._streams.finish(stream, 'ok', self.stream_ttl)
        self._histories.committed(claim, start, items)

    def _end_log(
        self,
        connection: sqlite3.Connection,
        claim: RunClaim,
        outcome: StreamOutcome,
        write: Callable[[sqlite3.Connection], None],
    ) -> None:
        """One transaction: `write` (which checks the claim), the chunks the log writer has not written yet, and
        the end marker unless the log has one. Raises `ClaimLost` when the log ended `lost` meanwhile."""
        pending = self._writer.take(claim.run_id)  # before the transaction: the writer may be waiting for it
        try:
            with _transaction(connection):
                write(connection)
                if pending is not None:
                    write_chunks(connection, claim.run_id, pending.first, pending.chunks)
                if end_log(connection, claim.run_id, outcome, self.stream_ttl) == 'lost':
                    raise ClaimLost(claim.chat_id, claim.run_id)
        except BaseException:
            self._writer.restore(claim.run_id, pending)
            raise

    # -- stop ----------------------------------------------------------------------------------------------

    async def request_stop(self, chat_id: str, principal: str) -> bool:
        def work(connection: sqlite3.Connection) -> str | None:
            with _transaction(connection):
                run_id = _live_run(_owned(connection, chat_id, principal))
                if run_id is not None:
                    connection.execute('UPDATE uibridge_chats SET stop = 1 WHERE id = ?', (chat_id,))
                return run_id

        run_id = await self._run(work)
        if run_id is not None and (event := self._stops.get(run_id)) is not None:
            event.set()
        return run_id is not None

    async def stop_requested(self, claim: RunClaim) -> bool:
        def work(connection: sqlite3.Connection) -> bool:
            row = connection.execute(
                'SELECT stop FROM uibridge_chats WHERE id = ? AND run_id = ?', (claim.chat_id, claim.run_id)
            ).fetchone()
            return row is not None and bool(row[0])

        return await self._run(work)

    async def wait_for_stop(self, claim: RunClaim) -> None:
        event = self._stops.setdefault(claim.run_id, anyio.Event())
        try:
            while not await self.stop_requested(claim):
                with anyio.move_on_after(self.poll_interval):
                    await event.wait()
        finally:
            self._stops.pop(claim.run_id, None)

    # -- approvals -----------------------------------------------------------------------------------------

    async def use_approval(self, approval_id: str) -> bool:
        def work(connection: sqlite3.Connection) -> bool:
            now = time.time()
            with _transaction(connection):
                connection.execute('DELETE FROM uibridge_approvals WHERE expires <= ?', (now,))
                inserted = connection.execute(
                    'INSERT OR IGNORE INTO uibridge_approvals (id, expires) VALUES (?, ?)',
                    (approval_id, now + self.approval_ttl),
                )
                return inserted.rowcount == 1

        return await self._run(work)

    # -- stream log ----------------------------------------------------------------------------------------

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        stream = self._producing(claim)
        first = len(stream.chunks)
        self._streams.append(stream, chunks, self.stream_ttl)
        if chunks:
            self._writer.put(claim.run_id, first, chunks)

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        stream = self._local(claim)
        if stream is not None:
            self._streams.check_producer(stream, self.stream_ttl)
        outcome: StreamOutcome = 'ok' if ok else 'error'
        await self._run(lambda connection: self._end_log(connection, claim, outcome, lambda c: _check_held(c, claim)))
        if stream is not None:
            self._streams.end(stream, outcome, self.stream_ttl)

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        def work(connection: sqlite3.Connection) -> tuple[str | None, bool]:
            with _read_snapshot(connection):
                last_run = _owned(connection, chat_id, principal)[3]
                row = connection.execute(
                    'SELECT expires FROM uibridge_streams WHERE run_id = ?', (last_run,)
                ).fetchone()
            return last_run, row is not None and row[0] > time.time()

        last_run, readable = await self._run(work)
        if last_run is None:
            return None
        # Only the chat's latest run counts: a log this process kept from an earlier run is not resumed when
        # another process has started a newer one since.
        local = self._streams.get(chat_id, last_run)
        if local is not None:
            return self._streams.follow(local, start, self.stream_ttl)
        return self._follow_log(chat_id, last_run, max(start, 0)) if readable else None

    async def _follow_log(self, chat_id: str, run_id: str, index: int) -> AsyncGenerator[bytes, None]:
        """Another process's log, polled (see `sqlite_log`)."""
        while True:
            read = await self._run(functools.partial(read_log, chat_id=chat_id, run_id=run_id, start=index))
            for chunk in read.chunks:
                yield chunk
            index += len(read.chunks)
            if len(read.chunks) == READ_LIMIT:
                continue
            if read.outcome == 'ok':
                return
            if read.outcome is not None:
                raise StreamAborted(chat_id, 'error' if read.outcome == 'error' else 'lost')
            if read.producer_alive:
                await anyio.sleep(self.poll_interval)
            elif not read.chunks:

                def lost(connection: sqlite3.Connection) -> None:
                    with _transaction(connection):
                        declare_lost(connection, chat_id, run_id, self.stream_ttl)

                await self._run(lost)

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self._writer.close)
        with self._schema_lock:
            connections, self._all = self._all, []
        for connection in connections:
            connection.close()


@contextlib.contextmanager
def _read_snapshot(connection: sqlite3.Connection) -> Generator[None]:
    connection.execute('BEGIN')
    try:
        yield
    finally:
        connection.execute('COMMIT')
