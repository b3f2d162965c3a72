"""Choosing a store by URL, as `python -m uibridge serve --store URL` does: one string in a config file or on
a command line is all a deployment needs to say where its chats live.

`stream_log=` keeps the stream logs apart from the chats (`split.SplitStore`): `store_from_url('postgresql://…',
stream_log='redis://…')` keeps the chats in PostgreSQL and the live stream logs in Redis.

The Redis and PostgreSQL backends are imported only for their URLs, so `redis` and `psycopg` stay optional
extras.
"""

from __future__ import annotations

from typing import Unpack
from urllib.parse import urlsplit

from .base import ChatStore, Timings
from .split import StreamLog

SCHEMES = {
    'memory': 'one process',
    'sqlite': 'the processes of one host',
    'redis': 'any number of hosts',
    'rediss': 'any number of hosts',
    'postgresql': 'any number of hosts',
    'postgres': 'any number of hosts',
}
"""Each URL scheme, and which processes can share the chats of a store it makes."""

_EXPECTED = (
    "expected 'memory:', 'sqlite:///path.db' (sqlite:////abs/path.db), 'redis://host:port/N' or "
    "'postgresql://user@host:5432/db'"
)


def store_from_url(
    url: str, *, stream_log: str | None = None, migrate: bool = False, **timings: Unpack[Timings]
) -> ChatStore:
    """`memory:` (this process only), `sqlite:///relative/path.db` or `sqlite:////absolute/path.db` (the
    default kind: a file, the processes of one host), `redis://[:password@]host:port/N` / `rediss://…` or
    `postgresql://[user[:password]@]host[:port]/db[?param=value]` / `postgres://…` (any number of hosts).
    `stream_log`: a `redis://…` URL where the stream logs live instead (`stream_log_from_url`), the chats staying
    in the store `url` names. `migrate` (SQLite, PostgreSQL): bring an older schema up to date on first use
    instead of refusing it."""
    if stream_log is not None:
        from .split import SplitStore

        _check_stream_log_url(stream_log)  # before anything is made: neither object connects until first used
        return SplitStore(store_from_url(url, migrate=migrate, **timings), stream_log_from_url(stream_log))
    scheme = urlsplit(url).scheme.lower() if ':' in url else ''
    if scheme == 'memory' and url.partition(':')[2] in ('', '//'):
        from .memory import MemoryStore

        return MemoryStore(**timings)
    if scheme == 'sqlite':
        prefix = url[: len('sqlite:///')].lower()
        path = url[len('sqlite:///') :]
        if prefix != 'sqlite:///' or not path or path == ':memory:':
            raise ValueError(f'unsupported store URL {url!r}: a SQLite store needs a file path; {_EXPECTED}')
        from .sqlite import SqliteStore

        return SqliteStore(path, migrate=migrate, **timings)
    if scheme in ('redis', 'rediss'):
        from .redis import RedisStore

        return RedisStore(url, **timings)
    if scheme in ('postgresql', 'postgres'):
        from .postgres import PostgresStore

        return PostgresStore(url, migrate=migrate, **timings)
    raise ValueError(f'unsupported store URL {url!r}: {_EXPECTED}')


def stream_log_from_url(url: str) -> StreamLog:
    """A stream log kept apart from the chats (`split.StreamLog`): `redis://[:password@]host:port/N` or
    `rediss://…` (`redis.RedisStreamLog`, the `redis` extra)."""
    _check_stream_log_url(url)
    from .redis import RedisStreamLog

    return RedisStreamLog(url)


def _check_stream_log_url(url: object) -> None:
    if not isinstance(url, str):
        raise TypeError(f'stream_log must be a URL (redis://host:port/N), not {url!r}')
    if (urlsplit(url).scheme.lower() if ':' in url else '') not in ('redis', 'rediss'):
        raise ValueError(
            f"unsupported stream log URL {url!r}: expected 'redis://host:port/N' or 'rediss://host:port/N'"
        )
