"""What the server keeps per chat (history, owner, state, the active run and its stream log), behind one small
async interface, `ChatStore`, with four backends chosen by URL (`store_from_url`):

- `memory:`: one process, nothing persisted (tests, one-process demos);
- `sqlite:///path.db`: the default, embedded; the processes of one host (a server's workers) share the file,
  streams resumable on any of them;
- `redis://host:port/N`: any number of processes on any hosts, streams resumable on any (the `redis` extra);
- `postgresql://user@host/db`: likewise, in PostgreSQL (the `postgres` extra).

Any of them can keep its stream logs apart, in Redis (`store_from_url(url, stream_log='redis://…')`, a
`SplitStore`): PostgreSQL holding the chats and Redis the live stream logs, say.

`RedisStore`, `RedisStreamLog` and `PostgresStore` are not imported here (they need optional packages):
`uibridge.server.store.redis`, `uibridge.server.store.postgres`.
"""

from . import base
from .base import *  # noqa: F403  the store interface, as `base.__all__` lists it
from .memory import MemoryState, MemoryStore
from .schema import SchemaError, SchemaStatus, VersionedStore
from .split import SplitStore, StreamLog
from .sqlite import SqliteStore
from .urls import store_from_url, stream_log_from_url

__all__ = [
    'MemoryState',
    'MemoryStore',
    'SchemaError',
    'SchemaStatus',
    'SplitStore',
    'SqliteStore',
    'StreamLog',
    'VersionedStore',
    'store_from_url',
    'stream_log_from_url',
]
__all__ += base.__all__
