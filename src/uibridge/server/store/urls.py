"""Choosing a store by URL, as `python -m uibridge serve --store URL` does: one string in a config file or on
a command line is all a deployment needs to say where its chats live.

The Redis backend is imported only for a `redis://` URL, so the `redis` package stays an optional extra.
"""

from __future__ import annotations

from typing import Unpack
from urllib.parse import urlsplit

from .base import ChatStore, Timings

__all__ = ['store_from_url']

_EXPECTED = "expected 'memory:', 'sqlite:///path.db' (sqlite:////abs/path.db) or 'redis://host:port/N'"


def store_from_url(url: str, **timings: Unpack[Timings]) -> ChatStore:
    """`memory:` (this process only), `sqlite:///relative/path.db` or `sqlite:////absolute/path.db` (the
    default kind: a file, several processes, streams resumable on the producing process only), or
    `redis://[:password@]host:port/N` / `rediss://…` (several processes, streams resumable on any)."""
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

        return SqliteStore(path, **timings)
    if scheme in ('redis', 'rediss'):
        from .redis import RedisStore

        return RedisStore(url, **timings)
    raise ValueError(f'unsupported store URL {url!r}: {_EXPECTED}')
