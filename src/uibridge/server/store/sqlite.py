"""The SQLite store, the default: embedded, nothing to install, safe for several processes on one file.

`sqlite3` blocks, so every statement runs in a worker thread (`anyio.to_thread`), at most `max_threads` at
once, each with a connection of its own from a small pool (one connection is never used by two threads at
a time). The database is in WAL mode, so readers do not wait for the writer; every write is one
`BEGIN IMMEDIATE` transaction, which is what makes claim and commit atomic across processes.

Leases are wall-clock (`time.time()`), as all processes on one machine share that clock, and so are the
expiries of the used approval ids (`uibridge_approvals`, one row each, the expired ones deleted as new ones
come). A chat's state is a column of its row, set in the commit's transaction; a database made before there
was one gains the column when a store first opens it.

The stream log is not in the database: it lives in this process's memory (`LocalStreams`), as writing
every batch of tokens to disk would buy nothing, since a reader in another process could only poll it.
So a stream resumes only on the process that produces it. **Resuming a stream on another process needs
the Redis store.** A stop requested from another process reaches the producer through the database,
polled every `poll_interval` seconds (a stop from the same process wakes it at once).
"""

from __future__ import annotations

import contextlib
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
from ._history_rows import decode_state, encode_messages, encode_state, history_start, load_history
from .base import KEEP_STATE, ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim, Timings
from .local import LocalStreams

__all__ = ['SqliteStore']

T = TypeVar('T')

_SCHEMA = """
CREATE TABLE IF NOT EXISTS uibridge_chats (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    run_id TEXT,
    lease_until REAL,
    stop INTEGER NOT NULL DEFAULT 0,
    last_run TEXT
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
"""
_STATE_COLUMN = 'ALTER TABLE uibridge_chats ADD COLUMN state BLOB'
"""The chat's state, added to a database made before there was one (its chats have none: `NULL`)."""


def _create_schema(connection: sqlite3.Connection) -> None:
    with _transaction(connection):
        for statement in _SCHEMA.split(';'):
            if statement.strip():
                connection.execute(statement)
        columns = {row[1] for row in connection.execute('PRAGMA table_info(uibridge_chats)')}
        if 'state' not in columns:
            connection.execute(_STATE_COLUMN)


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
        **timings: Unpack[Timings],
    ) -> None:
        super().__init__(**timings)
        self.path = str(path)
        self._limiter = anyio.CapacityLimiter(max_threads)
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all: list[sqlite3.Connection] = []
        self._schema_lock = threading.Lock()
        self._schema_ready = False
        self._streams = LocalStreams()
        self._stops: dict[str, anyio.Event] = {}
        """Same-process wake-ups for `wait_for_stop`, by run id (other processes are seen by polling)."""

    def _connection(self) -> sqlite3.Connection:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        # isolation_level=None: no implicit transactions, each write is the explicit BEGIN IMMEDIATE above;
        # the timeout is how long a write waits for another process's transaction before failing.
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        _enable_wal(connection)
        connection.execute('PRAGMA synchronous=NORMAL')
        with self._schema_lock:
            if not self._schema_ready:
                _create_schema(connection)
                self._schema_ready = True
            self._all.append(connection)
        return connection

    def _call(self, function: Callable[[sqlite3.Connection], T]) -> T:
        connection = self._connection()
        try:
            return function(connection)
        finally:
            self._idle.put(connection)

    async def _run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._call, function, limiter=self._limiter)

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

    # -- runs ----------------------------------------------------------------------------------------------

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        run_id = uuid.uuid4().hex

        def work(connection: sqlite3.Connection) -> tuple[list[bytes], bytes | None]:
            with _transaction(connection):
                if _live_run(_owned(connection, chat_id, principal, create=create)) is not None:
                    raise ChatBusy(chat_id)
                connection.execute(
                    'UPDATE uibridge_chats SET run_id = ?, lease_until = ?, stop = 0, last_run = ? WHERE id = ?',
                    (run_id, time.time() + self.lease, run_id, chat_id),
                )
                return _messages(connection, chat_id), _state(connection, chat_id)

        items, state = await self._run(work)
        self._streams.start(chat_id, run_id, time.monotonic() + self.lease, self.stream_ttl)
        messages = await load_history(items)
        return RunClaim(chat_id, principal, run_id, messages, decode_state(state), tuple(map(len, items)))

    async def heartbeat(self, claim: RunClaim) -> None:
        stream = self._streams.get(claim.chat_id, claim.run_id)
        if stream is not None and stream.outcome == 'lost':
            raise ClaimLost(claim.chat_id, claim.run_id)

        def work(connection: sqlite3.Connection) -> None:
            with _transaction(connection):
                _check_held(connection, claim)
                connection.execute(
                    'UPDATE uibridge_chats SET lease_until = ? WHERE id = ?', (time.time() + self.lease, claim.chat_id)
                )

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
        stream = self._streams.get(claim.chat_id, claim.run_id)
        if stream is not None and stream.outcome == 'lost':
            # Its readers were told the run died: persisting it now would contradict what they showed.
            raise ClaimLost(claim.chat_id, claim.run_id)
        items = encode_messages(messages)
        stored_state = None if state is KEEP_STATE else encode_state(state)

        def work(connection: sqlite3.Connection) -> None:
            with _transaction(connection):
                _check_held(connection, claim)
                (count,) = connection.execute(
                    'SELECT COUNT(*) FROM uibridge_messages WHERE chat_id = ?', (claim.chat_id,)
                ).fetchone()
                start = history_start(replace_from, count)
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
                    connection.execute(
                        'UPDATE uibridge_chats SET state = ? WHERE id = ?', (stored_state, claim.chat_id)
                    )

        await self._run(work)
        if stream is not None:
            self._streams.finish(stream, 'ok', self.stream_ttl)

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

    # -- stream log (this process's memory) ----------------------------------------------------------------

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        stream = self._streams.get(claim.chat_id, claim.run_id)
        if stream is None:
            raise ClaimLost(claim.chat_id, claim.run_id)
        self._streams.append(stream, chunks, self.stream_ttl)

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        stream = self._streams.get(claim.chat_id, claim.run_id)
        if stream is None:
            raise ClaimLost(claim.chat_id, claim.run_id)
        self._streams.end(stream, 'ok' if ok else 'error', self.stream_ttl)

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        def work(connection: sqlite3.Connection) -> str | None:
            return _owned(connection, chat_id, principal)[3]

        last_run = await self._run(work)
        # Only the chat's latest run counts: a log this process kept from an earlier run is not resumed
        # when another process has started a newer one since.
        stream = self._streams.get(chat_id, last_run) if last_run is not None else None
        return None if stream is None else self._streams.follow(stream, start, self.stream_ttl)

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def aclose(self) -> None:
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
