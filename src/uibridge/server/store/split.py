"""A store whose chats live in one backend and whose stream logs live in another: `SplitStore(chats, log)`, as
`store_from_url('postgresql://…', stream_log='redis://…')` (and `--store … --stream-log …`) makes it.

Why split them: the chat store keeps what must last and be decided atomically (history, state, owner, the claim,
stops, approvals), PostgreSQL say, the database the application already runs and backs up. A stream log is the
opposite kind of data: many small appends while an answer streams, read live by whoever resumes, gone minutes
after the end. Kept in Redis (`redis.RedisStreamLog`), those appends never reach the database's write-ahead log,
and a reader blocked on Redis is woken by the append itself. Every process on every host that shares both
serves any chat and resumes any stream.

How the two stay one store (the shared suite in tests/server/store runs on it as on every backend):
- **The chat store decides.** Ownership, the one claim per chat and its lease, stops, approvals and the atomic
  commit are the chat store's. The log keeps a run's chunks, its end marker, and its producer's liveness: a
  lease of the same length, renewed by the same `heartbeat`, so a producer that dies lapses in both, and the
  log's readers end `lost` as the contract says.
- **Claim**: the chat store's claim, then the run's log opened as the chat's latest; when the log cannot be
  opened, the claim is given back, so nothing is left half made.
- **Read**: the chat store checks the owner (`ChatStore.check_owner`, a lookup of the owner alone), then the
  log is followed.
- **Commit**: the log's lease is renewed first, which fails once the log lapsed (its readers may have been told
  the producer died: what they were told died is not persisted); then the chat store's atomic commit; then the
  log is ended and released. A process that dies between the last two leaves the history committed and the
  log open: its readers end `lost` when the lease lapses, as they would for any producer that died.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Literal

import anyio

from ...core.messages import ModelMessage
from .base import KEEP_STATE, ChatStore, ClaimLost, RunClaim


class StreamLog(ABC):
    """Stream logs kept apart from the chats: per chat, the log of its latest run (`chat_id`, `run_id` as the
    chat store assigned it). The durations are the chat store's, passed with each call: `lease` (how long the
    producer counts as alive without a `renew`) and `ttl` (how long an ended log stays readable)."""

    @abstractmethod
    async def open(self, chat_id: str, run_id: str, *, lease: float, ttl: float) -> None:
        """Start the run's (empty) log as the chat's latest, its producer alive for `lease` seconds. A log of
        the chat still open is left to its readers, who end it `lost` (its producer's claim lapsed)."""

    @abstractmethod
    async def renew(self, chat_id: str, run_id: str, *, lease: float, ttl: float) -> bool:
        """Extend the producer's liveness by `lease` seconds; False when it had lapsed (or a newer run's log
        replaced it): the producer may write nothing more."""

    @abstractmethod
    async def append(self, chat_id: str, run_id: str, chunks: Sequence[bytes], *, lease: float, ttl: float) -> None:
        """Add a batch of chunks (one round trip). Raises `ClaimLost` when the producer's liveness lapsed,
        `RuntimeError` after the end."""

    @abstractmethod
    async def end(self, chat_id: str, run_id: str, *, outcome: Literal['ok', 'error'], ttl: float) -> bool:
        """Write the end marker unless there is one (the first stays); the log is gone `ttl` seconds later.
        False when the producer's liveness lapsed (nothing written)."""

    @abstractmethod
    async def close(self, chat_id: str, run_id: str, *, ttl: float) -> None:
        """After the run's commit: end the log `ok` unless it has an end marker (a log that lapsed meanwhile but
        that no reader ended yet included: the run did finish), and let the producer's liveness go."""

    @abstractmethod
    async def read(
        self, chat_id: str, *, start: int, poll_interval: float, ttl: float
    ) -> AsyncGenerator[bytes, None] | None:
        """The chat's latest log from chunk `start`, then live to its end (`ChatStore.read_stream`, ownership
        aside: the chat store checked it); None when there is none, or it expired."""

    async def ping(self) -> None:  # noqa: B027 (a log with nothing to ask keeps this)
        """Return when the log's backend answers; raise what it raises when it does not."""

    async def aclose(self) -> None:  # noqa: B027 (a log with nothing to release keeps this)
        """Release connections. The log is unusable afterwards."""


class SplitStore(ChatStore):
    """`chats` keeps the chats, `log` their stream logs (see the module's docstring). Its durations are
    `chats`'s. `aclose` closes both."""

    def __init__(self, chats: ChatStore, log: StreamLog) -> None:
        if not isinstance(chats, ChatStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'chats must be a ChatStore, not {chats!r}')
        if not isinstance(log, StreamLog):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'log must be a StreamLog (such as redis.RedisStreamLog), not {log!r}')
        super().__init__(
            lease=chats.lease,
            stream_ttl=chats.stream_ttl,
            poll_interval=chats.poll_interval,
            approval_ttl=chats.approval_ttl,
        )
        self.chats = chats
        self.log = log

    # -- chats ---------------------------------------------------------------------------------------------

    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await self.chats.open_chat(chat_id, principal)

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await self.chats.load_messages(chat_id, principal)

    async def check_owner(self, chat_id: str, principal: str) -> None:
        await self.chats.check_owner(chat_id, principal)

    # -- runs ----------------------------------------------------------------------------------------------

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        claim = await self.chats.claim(chat_id, principal, create=create)
        try:
            await self.log.open(chat_id, claim.run_id, lease=self.lease, ttl=self.stream_ttl)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.chats.release(claim)
            raise
        return claim

    async def heartbeat(self, claim: RunClaim) -> None:
        await self.chats.heartbeat(claim)
        if not await self.log.renew(claim.chat_id, claim.run_id, lease=self.lease, ttl=self.stream_ttl):
            raise ClaimLost(claim.chat_id, claim.run_id)

    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        if not await self.log.renew(claim.chat_id, claim.run_id, lease=self.lease, ttl=self.stream_ttl):
            raise ClaimLost(claim.chat_id, claim.run_id)
        await self.chats.commit(claim, messages, replace_from=replace_from, state=state)
        with anyio.CancelScope(shield=True):  # committed: the log's end must follow, even for a cancelled caller
            await self.log.close(claim.chat_id, claim.run_id, ttl=self.stream_ttl)

    # -- stop ----------------------------------------------------------------------------------------------

    async def request_stop(self, chat_id: str, principal: str) -> bool:
        return await self.chats.request_stop(chat_id, principal)

    async def stop_requested(self, claim: RunClaim) -> bool:
        return await self.chats.stop_requested(claim)

    async def wait_for_stop(self, claim: RunClaim) -> None:
        await self.chats.wait_for_stop(claim)

    # -- approvals -----------------------------------------------------------------------------------------

    async def use_approval(self, approval_id: str) -> bool:
        return await self.chats.use_approval(approval_id)

    # -- stream log ----------------------------------------------------------------------------------------

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        await self.log.append(claim.chat_id, claim.run_id, chunks, lease=self.lease, ttl=self.stream_ttl)

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        outcome: Literal['ok', 'error'] = 'ok' if ok else 'error'
        if not await self.log.end(claim.chat_id, claim.run_id, outcome=outcome, ttl=self.stream_ttl):
            raise ClaimLost(claim.chat_id, claim.run_id)

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        await self.chats.check_owner(chat_id, principal)
        return await self.log.read(chat_id, start=max(start, 0), poll_interval=self.poll_interval, ttl=self.stream_ttl)

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def ping(self) -> None:
        await self.chats.ping()
        await self.log.ping()

    async def aclose(self) -> None:
        try:
            await self.chats.aclose()
        finally:
            await self.log.aclose()
