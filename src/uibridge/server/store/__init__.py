"""What the server keeps per chat (history, owner, the active run and its stream log), behind one small
async interface, `ChatStore`, with three backends chosen by URL (`store_from_url`):

- `memory:`: one process, nothing persisted (tests);
- `sqlite:///path.db`: the default, embedded; several processes may share the file, but a stream log lives
  in the memory of the process producing it, so resuming a stream on another process needs Redis;
- `redis://host:port/N`: several processes, streams resumable on any of them (the `redis` extra).

`RedisStore` is not imported here (it needs the optional `redis` package): `uibridge.server.store.redis`.
"""

from . import base
from .base import *  # noqa: F403  the store interface, as `base.__all__` lists it
from .memory import MemoryState, MemoryStore
from .schema import SchemaError, SchemaStatus, VersionedStore
from .sqlite import SqliteStore
from .urls import store_from_url

__all__ = [
    'MemoryState',
    'MemoryStore',
    'SchemaError',
    'SchemaStatus',
    'SqliteStore',
    'VersionedStore',
    'store_from_url',
]
__all__ += base.__all__
