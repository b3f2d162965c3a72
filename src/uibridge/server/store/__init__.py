"""What the server keeps per chat (history, owner, the active run and its stream log), behind one small
async interface, `ChatStore`, with three backends chosen by URL (`store_from_url`):

- `memory:`: one process, nothing persisted (tests);
- `sqlite:///path.db`: the default, embedded; several processes may share the file, but a stream log lives
  in the memory of the process producing it, so resuming a stream on another process needs Redis;
- `redis://host:port/N`: several processes, streams resumable on any of them (the `redis` extra).

`RedisStore` is not imported here (it needs the optional `redis` package): `uibridge.server.store.redis`.
"""

from .base import (
    DEFAULT_LEASE,
    DEFAULT_POLL_INTERVAL,
    DEFAULT_STREAM_TTL,
    ChatBusy,
    ChatNotFound,
    ChatStore,
    ClaimLost,
    RunClaim,
    StoreError,
    StreamAborted,
    StreamOutcome,
    Timings,
)
from .memory import MemoryState, MemoryStore
from .sqlite import SqliteStore
from .urls import store_from_url

__all__ = [
    'DEFAULT_LEASE',
    'DEFAULT_POLL_INTERVAL',
    'DEFAULT_STREAM_TTL',
    'ChatBusy',
    'ChatNotFound',
    'ChatStore',
    'ClaimLost',
    'MemoryState',
    'MemoryStore',
    'RunClaim',
    'SqliteStore',
    'StoreError',
    'StreamAborted',
    'StreamOutcome',
    'Timings',
    'store_from_url',
]
