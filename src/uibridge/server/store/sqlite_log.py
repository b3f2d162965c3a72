"""The SQLite store's stream log, kept in the database file, so a stream resumes on any process sharing it.

Two tables: `uibridge_streams`, one row per run's log (its chat, its end marker `outcome`: NULL while open,
then `ok`, `error` or `lost`, and `expires`, the wall-clock time it is gone at), and `uibridge_stream_chunks`,
the chunks keyed by run and sequence number (a chunk's index in the stream, so a reader's `start` is a key).

The producer never waits for the disk. Its batches go to a `LogWriter`: a thread of the store's own that takes
every batch waiting, of every run of the process, and writes them in one transaction, rests a moment
(`LogWriter.PAUSE`), then takes the next lot. So a log costs one transaction per batch at most, far fewer when
batches come quickly, and never one per token. The end of a log (`end_stream`, `commit`) first takes what the
writer still holds of that run, waiting for the write in progress, and writes it with the end marker, in one
transaction: a reader sees every chunk before the end.

Readers in another process poll: a read transaction gets the chunks past the reader's index, the end marker and
whether the run's claim still holds, all from one snapshot; when it brings nothing new the reader sleeps
`poll_interval`. Once the claim has lapsed with no end marker, the reader writes `lost` itself (if no one
has), so every reader of a dead producer ends, as the store's contract says. The process producing a stream
serves its own readers from memory (`LocalStreams`), without polling.

A log expires `stream_ttl` seconds after its end, and `lease + stream_ttl` seconds after its producer's last
heartbeat while open (so a log nobody ended goes too); expired logs are deleted when a chat is claimed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import StreamOutcome

logger = logging.getLogger('uibridge.server')

LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS uibridge_streams (
    run_id TEXT PRIMARY KEY,
    chat_id TEXT NOT NULL,
    outcome TEXT,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS uibridge_streams_expires ON uibridge_streams (expires);
CREATE TABLE IF NOT EXISTS uibridge_stream_chunks (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""

READ_LIMIT = 512
"""Chunks one poll reads at most: a reader far behind catches up in bounded pieces."""


def start_log(
    connection: sqlite3.Connection, chat_id: str, run_id: str, previous: str | None, lease: float, ttl: float
) -> None:
    """In the claim's transaction: drop the expired logs, end the chat's previous log as `lost` if it is still open
    (the new claim proves its producer's lease lapsed), and open the run's."""
    now = time.time()
    connection.execute(
        'DELETE FROM uibridge_stream_chunks WHERE run_id IN (SELECT run_id FROM uibridge_streams WHERE expires <= ?)',
        (now,),
    )
    connection.execute('DELETE FROM uibridge_streams WHERE expires <= ?', (now,))
    if previous is not None:
        connection.execute(
            "UPDATE uibridge_streams SET outcome = 'lost', expires = ? WHERE run_id = ? AND outcome IS NULL",
            (now + ttl, previous),
        )
    connection.execute(
        'INSERT INTO uibridge_streams (run_id, chat_id, expires) VALUES (?, ?, ?)', (run_id, chat_id, now + lease + ttl)
    )


def renew_log(connection: sqlite3.Connection, run_id: str, lease: float, ttl: float) -> None:
    """In the heartbeat's transaction: an open log lives `lease + ttl` past the producer's last sign of life."""
    connection.execute(
        'UPDATE uibridge_streams SET expires = ? WHERE run_id = ? AND outcome IS NULL',
        (time.time() + lease + ttl, run_id),
    )


def write_chunks(
    connection: sqlite3.Connection, run_id: str, first: int, chunks: Sequence[bytes]
) -> StreamOutcome | None:
    """Add chunks `first`, `first + 1`, ... to an open log; its end marker (and nothing written) when it has one.
    A chunk already there stays (the writer and the end of a log may both write one)."""
    row = connection.execute('SELECT outcome FROM uibridge_streams WHERE run_id = ?', (run_id,)).fetchone()
    if row is None:
        return 'lost'  # expired, so long without a heartbeat that its producer counts as gone
    if row[0] is not None:
        return row[0]
    connection.executemany(
        'INSERT OR IGNORE INTO uibridge_stream_chunks (run_id, seq, body) VALUES (?, ?, ?)',
        [(run_id, first + offset, chunk) for offset, chunk in enumerate(chunks)],
    )
    return None


def end_log(connection: sqlite3.Connection, run_id: str, outcome: StreamOutcome, ttl: float) -> StreamOutcome | None:
    """Write the end marker unless the log has one; the marker it had (None when this one is the first)."""
    row = connection.execute('SELECT outcome FROM uibridge_streams WHERE run_id = ?', (run_id,)).fetchone()
    if row is None:
        return 'lost'
    if row[0] is None:
        connection.execute(
            'UPDATE uibridge_streams SET outcome = ?, expires = ? WHERE run_id = ?',
            (outcome, time.time() + ttl, run_id),
        )
    return row[0]


@dataclass(frozen=True)
class LogRead:
    """What one poll of a log found, from one snapshot."""

    chunks: list[bytes]
    outcome: StreamOutcome | None
    """The end marker; `lost` also when the log is gone (expired while a reader still followed it)."""
    producer_alive: bool
    """Whether the run still holds its chat's claim."""


def read_log(connection: sqlite3.Connection, *, chat_id: str, run_id: str, start: int) -> LogRead:
    """One poll: the chunks from `start` on (`READ_LIMIT` at most), the end marker and the producer's claim."""
    connection.execute('BEGIN')
    try:
        row = connection.execute('SELECT outcome FROM uibridge_streams WHERE run_id = ?', (run_id,)).fetchone()
        rows = connection.execute(
            'SELECT body FROM uibridge_stream_chunks WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
            (run_id, start, READ_LIMIT),
        ).fetchall()
        claim = connection.execute(
            'SELECT 1 FROM uibridge_chats WHERE id = ? AND run_id = ? AND lease_until > ?',
            (chat_id, run_id, time.time()),
        ).fetchone()
    finally:
        connection.execute('COMMIT')
    outcome: StreamOutcome | None = 'lost' if row is None else row[0]
    return LogRead([bytes(body) for (body,) in rows], outcome, claim is not None)


def declare_lost(connection: sqlite3.Connection, chat_id: str, run_id: str, ttl: float) -> None:
    """In a write transaction: end the log `lost` if it is open and its run no longer holds the chat."""
    now = time.time()
    connection.execute(
        "UPDATE uibridge_streams SET outcome = 'lost', expires = ? WHERE run_id = ? AND outcome IS NULL AND NOT EXISTS "
        '(SELECT 1 FROM uibridge_chats WHERE id = ? AND run_id = ? AND lease_until > ?)',
        (now + ttl, run_id, chat_id, run_id, now),
    )


@dataclass
class _Pending:
    first: int
    """The sequence number of `chunks[0]`."""
    chunks: list[bytes] = field(default_factory=list[bytes])


class LogWriter:
    """Writes the producers' batches behind them, in a thread of its own with a connection of its own.

    `put` (on the event loop) never blocks on the disk: it adds the batch to what waits and wakes the thread.
    `take` (in a worker thread, before the transaction that ends a run's log) waits for the write in progress
    and takes what is left of that run, to be written with the end marker. `refused` says which runs' logs
    another process ended (`lost`): their producer learns it at its next `append_stream`.
    """

    RETRY_DELAY = 0.1
    PAUSE = 0.02
    """Seconds the thread rests after each write, so the batches of that while share the next transaction: a
    reader in another process polls every `poll_interval` (0.5 s) anyway, and each transaction is a turn of the
    interpreter's lock taken from the event loop."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], transaction: Callable[[sqlite3.Connection], Any]):
        self._connect = connect
        self._transaction = transaction
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._writing = threading.Lock()
        """Held for each write: `take` waits on it, so a run's log never ends before its chunks are in."""
        self._pending: dict[str, _Pending] = {}
        self._thread: threading.Thread | None = None
        self._closing = False
        self.transactions = 0
        """Transactions written so far (what a batch costs, counted)."""
        self._refused: set[str] = set()
        """Runs whose log another process ended as `lost`, until their producer is told (`refused`)."""

    def put(self, run_id: str, first: int, chunks: Sequence[bytes]) -> None:
        with self._lock:
            if self._closing:
                raise RuntimeError('the store is closed')
            pending = self._pending.get(run_id)
            if pending is None:
                pending = self._pending[run_id] = _Pending(first)
            pending.chunks.extend(chunks)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name='uibridge-sqlite-log', daemon=True)
                self._thread.start()
            self._wake.notify()

    def refused(self, run_id: str) -> bool:
        """Whether another process ended the run's log as `lost` (said once: the store remembers it after)."""
        with self._lock:
            if run_id not in self._refused:
                return False
            self._refused.discard(run_id)
            return True

    def take(self, run_id: str) -> _Pending | None:
        """What waits of `run_id`'s chunks, no longer the writer's to write (call from a worker thread)."""
        with self._writing, self._lock:
            return self._pending.pop(run_id, None)

    def restore(self, run_id: str, pending: _Pending | None) -> None:
        """Give back what `take` took, when the transaction it was for did not happen."""
        if pending is None:
            return
        with self._lock:
            later = self._pending.pop(run_id, None)
            if later is not None:
                pending.chunks.extend(later.chunks)
            self._pending[run_id] = pending
            self._wake.notify()

    def close(self) -> None:
        """Write what waits, then stop the thread (blocks: call from a worker thread)."""
        with self._lock:
            self._closing = True
            thread = self._thread
            self._wake.notify()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        connection = self._connect()
        try:
            while True:
                with self._lock:
                    while not self._pending and not self._closing:
                        self._wake.wait()
                    if not self._pending:
                        return
                with self._writing:
                    with self._lock:
                        batch, self._pending = self._pending, {}
                    try:
                        self._write(connection, batch)
                        failed = False
                    except sqlite3.Error as error:
                        logger.warning('the stream log could not be written (retrying): %s', error)
                        for run_id, pending in batch.items():
                            self.restore(run_id, pending)
                        failed = True
                time.sleep(self.RETRY_DELAY if failed else self.PAUSE)
        finally:
            connection.close()

    def _write(self, connection: sqlite3.Connection, batch: dict[str, _Pending]) -> None:
        self.transactions += 1
        with self._transaction(connection):
            for run_id, pending in batch.items():
                if write_chunks(connection, run_id, pending.first, pending.chunks) == 'lost':
                    with self._lock:
                        self._refused.add(run_id)
