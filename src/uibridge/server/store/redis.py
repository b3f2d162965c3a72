"""The Redis store: several server processes sharing one Redis, so a stream resumes on any of them.

Needs the `redis` extra (`pip install 'uibridge[redis]'`, the `redis` asyncio client, 5.0.1 or later).

Keys per chat, all under one hash tag (`{chat_id}`) so a Redis Cluster keeps a chat on one slot:
- `P:{c}:chat` a hash: `owner`, `last_run` (the run whose stream `read_stream` finds) and `state` (the chat's
  state as JSON, once a commit set one);
- `P:{c}:msgs` a list: one pydantic-ai compatible JSON item per message;
- `P:{c}:run` a hash, the claim: `id`, `stop`, `ended`, expiring `lease` seconds after the last heartbeat,
  so a crashed producer frees the chat by itself;
- `P:{c}:stream:<run>` a Redis Stream: one entry per appended batch (its chunks as fields `0`, `1`, ...)
  and an end entry (field `end`: `ok`, `error` or `lost`). It expires `stream_ttl` seconds after the end
  (and `lease + stream_ttl` after its producer's last sign of life, so a log nobody ended goes too).

- `P:approval:<id>` one key per approval id acted on, set only if absent (`SET NX`), expiring `approval_ttl`
  seconds later.

Every step that reads before it writes (claim, commit, append, end, stop, declaring a producer lost) is one
Lua script, atomic in Redis. Readers `XREAD BLOCK` for `poll_interval` at a time; when the log stays idle
they check the claim, and once it is gone without an end entry they write `end: lost` themselves, so every
reader of a dead producer ends within `lease + poll_interval` seconds of its last heartbeat. A stop is the
claim's `stop` field plus a pub/sub message that wakes the producer's `wait_for_stop` at once.

`RedisStreamLog` is the same stream log without the chats, for a `split.SplitStore` whose chats another backend
keeps (`store_from_url('postgresql://…', stream_log='redis://…')`). Its keys, under the chat's hash tag too:
`P:{c}:log:run` (a hash, the producer's liveness: `id`, `ended`, expiring `lease` seconds after the last
renewal), `P:{c}:log:latest` (the id of the chat's latest run) and `P:{c}:log:stream:<run>` (the Redis Stream,
entries as above). Appends, ends, the readers' follow and their declaring a producer lost are the store's own
scripts over these keys.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Literal, Unpack

import anyio

try:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError("the Redis store needs the redis client: pip install 'uibridge[redis]'") from error

from ...core.messages import ModelMessage
from ._history_rows import HistoryCache, decode_state, encode_messages, encode_state, load_history, outside_history
from .base import KEEP_STATE, ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim, StreamAborted, Timings
from .split import StreamLog

__all__ = ['RedisStore', 'RedisStreamLog']

_OWNED = """
local function owned(chat, principal, create)
  local owner = redis.call('HGET', chat, 'owner')
  if not owner then
    if create ~= '1' then return false end
    redis.call('HSET', chat, 'owner', principal)
    return true
  end
  return owner == principal
end
"""

# KEYS: chat, msgs. ARGV: principal, create. -> {0} not found | {1, items}
_OPEN = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2]) then return {0} end
return {1, redis.call('LRANGE', KEYS[2], 0, -1)}
"""
)

# KEYS: chat, msgs, run. ARGV: principal, create, run id, lease ms, the revision this process keeps ('' for none).
# -> {0} not found | {1} busy | {2, items (0 when the kept revision is the chat's), state ('' for none), revision}
_CLAIM = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2]) then return {0} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {1} end
redis.call('HSET', KEYS[3], 'id', ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
local revision = redis.call('HGET', KEYS[1], 'last_run') or ''
redis.call('HSET', KEYS[1], 'last_run', ARGV[3])
local items = 0
if revision == '' or revision ~= ARGV[5] then items = redis.call('LRANGE', KEYS[2], 0, -1) end
return {2, items, redis.call('HGET', KEYS[1], 'state') or '', revision}
"""
)

# KEYS: run, stream. ARGV: run id, lease ms, stream expiry ms. -> 0 lost | 1
_HEARTBEAT = """
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if not redis.call('HGET', KEYS[1], 'ended') then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
"""

# KEYS: run, stream. ARGV: run id, stream expiry ms, chunks... -> 0 lost | 1 | 2 already ended
# Lua's unpack is bounded by its C stack, so a large batch is written as entries of 1000 chunks.
_APPEND = """
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'ended') then return 2 end
local i = 3
while i <= #ARGV do
  local last = math.min(#ARGV, i + 999)
  local entry = {}
  for j = i, last do
    entry[#entry + 1] = tostring(j - i)
    entry[#entry + 1] = ARGV[j]
  end
  redis.call('XADD', KEYS[2], '*', unpack(entry))
  i = last + 1
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""

# KEYS: run, stream. ARGV: run id, outcome, ttl ms. -> 0 lost | 1
_END = """
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
if not redis.call('HGET', KEYS[1], 'ended') then
  redis.call('HSET', KEYS[1], 'ended', ARGV[2])
  redis.call('XADD', KEYS[2], '*', 'end', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
"""

# KEYS: run, msgs, stream, chat. ARGV: run id, replace_from (-1: append), ttl ms, '1' and the state JSON or '0'
# and '', items... -> {0} lost | {1, count} replace_from past the end | {2}. Every check comes before the
# first write.
_COMMIT = """
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return {0} end
local count = redis.call('LLEN', KEYS[2])
local start = tonumber(ARGV[2])
if start > count then return {1, count} end
if start == 0 then
  redis.call('DEL', KEYS[2])
elseif start > 0 and start < count then
  redis.call('LTRIM', KEYS[2], 0, start - 1)
end
for i = 6, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(#ARGV, i + 999)))
end
if ARGV[4] == '1' then redis.call('HSET', KEYS[4], 'state', ARGV[5]) end
if not redis.call('HGET', KEYS[1], 'ended') then
  redis.call('XADD', KEYS[3], '*', 'end', 'ok')
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
redis.call('DEL', KEYS[1])
return {2}
"""

# KEYS: chat, run. ARGV: principal, stop channel prefix. -> -1 not found | 0 no run | 1
_STOP = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], '0') then return -1 end
local id = redis.call('HGET', KEYS[2], 'id')
if not id then return 0 end
redis.call('HSET', KEYS[2], 'stop', '1')
redis.call('PUBLISH', ARGV[2] .. id, '1')
return 1
"""
)

# KEYS: chat, run. ARGV: principal. -> {0} not found | {1} no run yet | {2, last run, 1 if its stream is open}
_LATEST = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], '0') then return {0} end
local last = redis.call('HGET', KEYS[1], 'last_run')
if not last then return {1} end
local run = redis.call('HMGET', KEYS[2], 'id', 'ended')
if run[1] == last and not run[2] then return {2, last, 1} end
return {2, last, 0}
"""
)

# KEYS: run, stream. ARGV: run id, ttl ms. -> 0 producer alive | 1 already ended | 2 ended as lost now
_DECLARE_LOST = """
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then return 0 end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] == 'end' then return 1 end
redis.call('XADD', KEYS[2], '*', 'end', 'lost')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 2
"""


# The stream log alone (`RedisStreamLog`): its own liveness hash and latest-run key in place of the claim and
# the chat hash; appends, ends and declaring a producer lost are the scripts above.

# KEYS: run, latest. ARGV: run id, lease ms, latest expiry ms.
_LOG_OPEN = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'id', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
return 1
"""

# KEYS: run, stream, latest. ARGV: run id, lease ms, stream expiry ms. -> 0 lapsed | 1
_LOG_RENEW = """
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if not redis.call('HGET', KEYS[1], 'ended') then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
return 1
"""

# KEYS: run, stream. ARGV: run id, ttl ms. -> 1. After the commit: the end `ok` unless the log has an end, and
# the liveness hash gone. A log that lapsed meanwhile ends `ok` too unless a reader ended it first.
_LOG_CLOSE = """
local run = redis.call('HMGET', KEYS[1], 'id', 'ended')
if run[1] == ARGV[1] then
  if not run[2] then
    redis.call('XADD', KEYS[2], '*', 'end', 'ok')
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
  end
  redis.call('DEL', KEYS[1])
  return 1
end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] ~= 'end' then
  redis.call('XADD', KEYS[2], '*', 'end', 'ok')
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
"""

# KEYS: latest, run. -> {1} no run yet | {2, latest run, 1 if its log is open}
_LOG_LATEST = """
local last = redis.call('GET', KEYS[1])
if not last then return {1} end
local run = redis.call('HMGET', KEYS[2], 'id', 'ended')
if run[1] == last and not run[2] then return {2, last, 1} end
return {2, last, 0}
"""


def _entries(reply: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The entries of a one-stream XREAD reply: `[[key, entries]]` in RESP2, `{key: [entries]}` in RESP3."""
    if isinstance(reply, dict):
        for value in reply.values():  # pyright: ignore[reportUnknownVariableType]
            return value[0] if value and isinstance(value[0], list) else value  # pyright: ignore[reportUnknownVariableType]
        return []
    return reply[0][1] if reply else []


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


MAX_CONNECTIONS = 10_000
"""The connection pool's bound for a store made from a URL (Redis's own default `maxclients`)."""


def _client(client: Redis | str) -> Redis:
    # Each running run holds a connection (its stop subscription) and each live reader one (XREAD BLOCK):
    # redis-py's default pool (100) would refuse the 101st stream of a process outright.
    if isinstance(client, str):
        return Redis.from_url(client, max_connections=MAX_CONNECTIONS)  # pyright: ignore[reportUnknownMemberType]
    return client


async def _follow(
    redis: Redis,
    declare_lost: AsyncScript,
    chat_id: str,
    run_id: str,
    keys: tuple[str, str],
    skip: int,
    *,
    poll_interval: float,
    ttl: float,
) -> AsyncGenerator[bytes, None]:
    """A run's log (`keys`: its liveness hash, its stream) from chunk `skip`, then live to its end marker. Idle
    for a poll interval, it checks the producer: gone with no end entry, the log ends `lost` (`_DECLARE_LOST`)."""
    run_key, stream_key = keys
    last_id: bytes | str = '0-0'
    block = _ms(poll_interval)
    while True:
        entries = _entries(await redis.xread({stream_key: last_id}, count=256, block=block))
        if not entries:
            await declare_lost(keys=[run_key, stream_key], args=[run_id, _ms(ttl)])
            continue
        for entry_id, fields in entries:
            last_id = entry_id
            end: bytes | None = fields.get(b'end')
            if end == b'ok':
                return
            if end is not None:
                raise StreamAborted(chat_id, 'error' if end == b'error' else 'lost')
            for chunk in fields.values():
                if skip:
                    skip -= 1
                else:
                    yield chunk


class RedisStore(ChatStore):
    def __init__(
        self,
        client: Redis | str,
        *,
        prefix: str = 'uibridge',
        **timings: Unpack[Timings],
    ) -> None:
        """`client`: a `redis.asyncio.Redis` made with `decode_responses=False` (left open by `aclose`), or a
        `redis://` URL (the store makes the client and closes it). `prefix` starts every key."""
        super().__init__(**timings)
        self._histories = HistoryCache()
        self._owns_client = isinstance(client, str)
        self.redis: Redis = _client(client)
        self.prefix = prefix
        register = self.redis.register_script
        self._open, self._claim, self._heartbeat = register(_OPEN), register(_CLAIM), register(_HEARTBEAT)
        self._append, self._end, self._commit = register(_APPEND), register(_END), register(_COMMIT)
        self._stop, self._latest, self._declare_lost = register(_STOP), register(_LATEST), register(_DECLARE_LOST)

    def _key(self, chat_id: str, name: str) -> str:
        return f'{self.prefix}:{{{chat_id}}}:{name}'

    def _stream_key(self, chat_id: str, run_id: str) -> str:
        return self._key(chat_id, f'stream:{run_id}')

    def _stop_channel(self, chat_id: str) -> str:
        return self._key(chat_id, 'stop:')

    async def _read_chat(self, chat_id: str, principal: str, *, create: bool) -> list[ModelMessage]:
        reply: list[Any] = await self._open(
            keys=[self._key(chat_id, 'chat'), self._key(chat_id, 'msgs')], args=[principal, '1' if create else '0']
        )
        if reply[0] == 0:
            raise ChatNotFound(chat_id)
        return await load_history(reply[1])

    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await self._read_chat(chat_id, principal, create=True)

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await self._read_chat(chat_id, principal, create=False)

    async def check_owner(self, chat_id: str, principal: str) -> None:
        if await self.redis.hget(self._key(chat_id, 'chat'), 'owner') != principal.encode():  # pyright: ignore[reportGeneralTypeIssues, reportUnknownMemberType]
            raise ChatNotFound(chat_id)

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        run_id = uuid.uuid4().hex
        keys = [self._key(chat_id, 'chat'), self._key(chat_id, 'msgs'), self._key(chat_id, 'run')]
        known = self._histories.get(chat_id)
        args = [principal, '1' if create else '0', run_id, _ms(self.lease), known.revision if known else '']
        reply: list[Any] = await self._claim(keys=keys, args=args)
        if reply[0] == 0:
            raise ChatNotFound(chat_id)
        if reply[0] == 1:
            raise ChatBusy(chat_id)
        state = decode_state(bytes(reply[2]) or None)
        revision = bytes(reply[3]).decode() or None
        if reply[1] == 0:  # the history this process's last commit left: kept
            assert known is not None
            messages, sizes = await known.load()
        else:
            items: list[bytes] = reply[1]
            messages, sizes = await load_history(items), tuple(map(len, items))
        return RunClaim(chat_id, principal, run_id, messages, state, sizes, revision)

    def _run_keys(self, claim: RunClaim) -> list[str]:
        return [self._key(claim.chat_id, 'run'), self._stream_key(claim.chat_id, claim.run_id)]

    async def heartbeat(self, claim: RunClaim) -> None:
        args = [claim.run_id, _ms(self.lease), _ms(self.lease + self.stream_ttl)]
        if await self._heartbeat(keys=self._run_keys(claim), args=args) == 0:
            raise ClaimLost(claim.chat_id, claim.run_id)

    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        if replace_from is not None and replace_from < 0:
            raise outside_history(replace_from)
        keys = [
            self._key(claim.chat_id, 'run'),
            self._key(claim.chat_id, 'msgs'),
            self._stream_key(claim.chat_id, claim.run_id),
            self._key(claim.chat_id, 'chat'),
        ]
        start = -1 if replace_from is None else replace_from
        new_state: list[Any] = ['0', ''] if state is KEEP_STATE else ['1', encode_state(state)]
        items = encode_messages(messages)
        args = [claim.run_id, start, _ms(self.stream_ttl), *new_state, *items]
        reply: list[Any] = await self._commit(keys=keys, args=args)
        if reply[0] == 0:
            raise ClaimLost(claim.chat_id, claim.run_id)
        if reply[0] == 1:
            raise outside_history(replace_from, reply[1])
        self._histories.committed(claim, len(claim.messages) if replace_from is None else replace_from, items)

    async def request_stop(self, chat_id: str, principal: str) -> bool:
        keys = [self._key(chat_id, 'chat'), self._key(chat_id, 'run')]
        reply = await self._stop(keys=keys, args=[principal, self._stop_channel(chat_id)])
        if reply == -1:
            raise ChatNotFound(chat_id)
        return reply == 1

    async def stop_requested(self, claim: RunClaim) -> bool:
        run_id, stop = await self.redis.hmget(self._key(claim.chat_id, 'run'), ['id', 'stop'])
        return run_id == claim.run_id.encode() and stop == b'1'

    async def wait_for_stop(self, claim: RunClaim) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)  # pyright: ignore[reportUnknownMemberType]
        try:
            # The first `get_message` returns as soon as the subscription is confirmed, and the flag is checked
            # again after it: a stop raised before that check is seen by it, one raised after is published to
            # us. The check every `poll_interval` covers a message lost to a reconnect.
            await pubsub.subscribe(self._stop_channel(claim.chat_id) + claim.run_id)
            while not await self.stop_requested(claim):
                await pubsub.get_message(timeout=self.poll_interval)
        finally:
            with anyio.CancelScope(shield=True):
                await pubsub.aclose()

    async def use_approval(self, approval_id: str) -> bool:
        key = f'{self.prefix}:approval:{approval_id}'
        return bool(await self.redis.set(key, b'1', nx=True, px=_ms(self.approval_ttl)))

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        args = [claim.run_id, _ms(self.lease + self.stream_ttl), *chunks]
        reply = await self._append(keys=self._run_keys(claim), args=args)
        if reply == 0:
            raise ClaimLost(claim.chat_id, claim.run_id)
        if reply == 2:
            raise RuntimeError(f'the stream of run {claim.run_id!r} already ended')

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        args = [claim.run_id, 'ok' if ok else 'error', _ms(self.stream_ttl)]
        if await self._end(keys=self._run_keys(claim), args=args) == 0:
            raise ClaimLost(claim.chat_id, claim.run_id)

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        reply: list[Any] = await self._latest(
            keys=[self._key(chat_id, 'chat'), self._key(chat_id, 'run')], args=[principal]
        )
        if reply[0] == 0:
            raise ChatNotFound(chat_id)
        if reply[0] == 1:
            return None
        run_id = bytes(reply[1]).decode()
        stream_key = self._stream_key(chat_id, run_id)
        # An open stream is read even before its first chunk; an ended (or abandoned) one only until it expires.
        if reply[2] == 0 and not await self.redis.exists(stream_key):
            return None
        keys = (self._key(chat_id, 'run'), stream_key)
        return _follow(
            self.redis,
            self._declare_lost,
            chat_id,
            run_id,
            keys,
            max(start, 0),
            poll_interval=self.poll_interval,
            ttl=self.stream_ttl,
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self.redis.aclose()


class RedisStreamLog(StreamLog):
    """Stream logs in Redis for a `split.SplitStore` whose chats another backend keeps (see the module's
    docstring for its keys)."""

    def __init__(self, client: Redis | str, *, prefix: str = 'uibridge') -> None:
        """`client`: a `redis.asyncio.Redis` made with `decode_responses=False` (left open by `aclose`), or a
        `redis://` URL (the log makes the client and closes it). `prefix` starts every key."""
        self._owns_client = isinstance(client, str)
        self.redis: Redis = _client(client)
        self.prefix = prefix
        register = self.redis.register_script
        self._open, self._renew, self._close = register(_LOG_OPEN), register(_LOG_RENEW), register(_LOG_CLOSE)
        self._latest, self._append, self._end = register(_LOG_LATEST), register(_APPEND), register(_END)
        self._declare_lost = register(_DECLARE_LOST)

    def _key(self, chat_id: str, name: str) -> str:
        return f'{self.prefix}:{{{chat_id}}}:log:{name}'

    def _keys(self, chat_id: str, run_id: str) -> tuple[str, str]:
        """The run's liveness hash and its stream."""
        return self._key(chat_id, 'run'), self._key(chat_id, f'stream:{run_id}')

    async def open(self, chat_id: str, run_id: str, *, lease: float, ttl: float) -> None:
        keys = [self._key(chat_id, 'run'), self._key(chat_id, 'latest')]
        await self._open(keys=keys, args=[run_id, _ms(lease), _ms(lease + ttl)])

    async def renew(self, chat_id: str, run_id: str, *, lease: float, ttl: float) -> bool:
        keys = [*self._keys(chat_id, run_id), self._key(chat_id, 'latest')]
        return await self._renew(keys=keys, args=[run_id, _ms(lease), _ms(lease + ttl)]) == 1

    async def append(self, chat_id: str, run_id: str, chunks: Sequence[bytes], *, lease: float, ttl: float) -> None:
        reply = await self._append(keys=list(self._keys(chat_id, run_id)), args=[run_id, _ms(lease + ttl), *chunks])
        if reply == 0:
            raise ClaimLost(chat_id, run_id)
        if reply == 2:
            raise RuntimeError(f'the stream of run {run_id!r} already ended')

    async def end(self, chat_id: str, run_id: str, *, outcome: Literal['ok', 'error'], ttl: float) -> bool:
        return await self._end(keys=list(self._keys(chat_id, run_id)), args=[run_id, outcome, _ms(ttl)]) == 1

    async def close(self, chat_id: str, run_id: str, *, ttl: float) -> None:
        await self._close(keys=list(self._keys(chat_id, run_id)), args=[run_id, _ms(ttl)])

    async def read(
        self, chat_id: str, *, start: int, poll_interval: float, ttl: float
    ) -> AsyncGenerator[bytes, None] | None:
        reply: list[Any] = await self._latest(keys=[self._key(chat_id, 'latest'), self._key(chat_id, 'run')])
        if reply[0] == 1:
            return None
        run_id = bytes(reply[1]).decode()
        keys = self._keys(chat_id, run_id)
        # An open log is read even before its first chunk; an ended (or abandoned) one only until it expires.
        if reply[2] == 0 and not await self.redis.exists(keys[1]):
            return None
        return _follow(
            self.redis, self._declare_lost, chat_id, run_id, keys, start, poll_interval=poll_interval, ttl=ttl
        )

    async def ping(self) -> None:
        await self.redis.ping()  # pyright: ignore[reportUnknownMemberType]

    async def aclose(self) -> None:
        if self._owns_client:
            await self.redis.aclose()
