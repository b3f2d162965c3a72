"""Choosing a store by URL, as `python -m uibridge serve --store URL` does: one string in a config file or on
a command line is all a deployment needs to say where its chats live.

The Redis and PostgreSQL backends are imported only for their URLs, so `redis` and `psycopg` stay optional
extras.
"""

from __future__ import annotations

from typing import Unpack
from urllib.parse import urlsplit

from .base import ChatStore, Timings

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


def store_from_url(url: str, *, migrate: bool = False, **timings: Unpack[Timings]) -> ChatStore:
    """`memory:` (this process only), `sqlite:///relative/path.db` or `sqlite:////absolute/path.db` (the
    default kind: a file, the processes of one host), `redis://[:password@]host:port/N` / `rediss://…` or
    `postgresql://[user[:password]@]host[:port]/db[?param=value]` / `postgres://…` (any number of hosts).
    `migrate` (SQLite, PostgreSQL): bring an older schema up to date on first use instead of refusing it."""
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
