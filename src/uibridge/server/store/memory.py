"""The in-memory store: one process, nothing persisted. For tests, and for trying server-managed history
without a file.

Every operation runs on the event loop without awaiting in between, so each is atomic by construction.
Its state lives in a `MemoryState` that several `MemoryStore` objects may share: each then sees the others
as a second process sharing one backend would (claims, stops and stream logs all cross), which is how the
shared suite exercises the multi-process rules on this backend too.
"""

from __future__ import annotations

import heapq
import time
import uuid
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

import anyio

from ...core.messages import ModelMessage
from ._history_rows import HistoryCache, decode_state, encode_messages, encode_state, history_start, load_history
from .base import KEEP_STATE, ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim, Timings
from .local import LocalStream, LocalStreams


@dataclass
class _Run:
    run_id: str
    lease_until: float
    stream: LocalStream
    stop: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class _Chat:
    owner: str
    messages: list[bytes] = field(default_factory=list[bytes])
    """The history as stored JSON items, so what a caller gets back is always a fresh copy."""
    state: bytes | None = None
    """The state as stored JSON, `None` until a commit sets one."""
    run: _Run | None = None
    last_run: str | None = None
    """The latest claim's run id: the next claim's `revision`."""


class MemoryState:
    """The chats, stream logs and used approval ids one or more `MemoryStore`s share."""

    def __init__(self) -> None:
        self.chats: dict[str, _Chat] = {}
        self.streams = LocalStreams()
        self.approvals: dict[str, float] = {}
        """Used approval ids, each with the `time.monotonic()` it is forgotten at."""
        self.approval_expiries: list[tuple[float, str]] = []

    def use_approval(self, approval_id: str, ttl: float) -> bool:
        now = time.monotonic()
        while self.approval_expiries and self.approval_expiries[0][0] <= now:
            expiry, expired = heapq.heappop(self.approval_expiries)
            if self.approvals.get(expired) == expiry:
                del self.approvals[expired]
        if approval_id in self.approvals:
            return False
        expiry = self.approvals[approval_id] = now + ttl
        heapq.heappush(self.approval_expiries, (expiry, approval_id))
        return True


class MemoryStore(ChatStore):
    def __init__(
        self,
        *,
        state: MemoryState | None = None,
        **timings: Unpack[Timings],
    ) -> None:
        super().__init__(**timings)
        self.state = state if state is not None else MemoryState()
        self._histories = HistoryCache()

    def _chat(self, chat_id: str, principal: str, *, create: bool = False) -> _Chat:
        chat = self.state.chats.get(chat_id)
        if chat is None and create:
            chat = self.state.chats[chat_id] = _Chat(owner=principal)
        if chat is None or chat.owner != principal:
            raise ChatNotFound(chat_id)
        return chat

    def _live_run(self, chat: _Chat) -> _Run | None:
        run = chat.run
        if run is None or run.lease_until <= time.monotonic() or run.stream.outcome == 'lost':
            return None
        return run

    def _held(self, claim: RunClaim) -> tuple[_Chat, _Run]:
        chat = self.state.chats.get(claim.chat_id)
        run = self._live_run(chat) if chat is not None else None
        if chat is None or run is None or run.run_id != claim.run_id:
            raise ClaimLost(claim.chat_id, claim.run_id)
        return chat, run

    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await load_history(list(self._chat(chat_id, principal, create=True).messages))

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return await load_history(list(self._chat(chat_id, principal).messages))

    async def check_owner(self, chat_id: str, principal: str) -> None:
        self._chat(chat_id, principal)

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        chat = self._chat(chat_id, principal, create=create)
        if self._live_run(chat) is not None:
            raise ChatBusy(chat_id)
        run_id = uuid.uuid4().hex
        deadline = time.monotonic() + self.lease
        stream = self.state.streams.start(chat_id, run_id, deadline, self.stream_ttl)
        chat.run = _Run(run_id=run_id, lease_until=deadline, stream=stream)
        revision, chat.last_run = chat.last_run, run_id
        items, state = list(chat.messages), chat.state  # as of the claim: no await before this line
        known = self._histories.get(chat_id)
        if revision is not None and known is not None and known.revision == revision:
            messages, sizes = await known.load()
        else:
            messages, sizes = await load_history(items), tuple(map(len, items))
        return RunClaim(chat_id, principal, run_id, messages, decode_state(state), sizes, revision)

    async def heartbeat(self, claim: RunClaim) -> None:
        _, run = self._held(claim)
        run.lease_until = run.stream.deadline = time.monotonic() + self.lease

    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        chat, run = self._held(claim)
        items = encode_messages(messages)
        stored_state = chat.state if state is KEEP_STATE else encode_state(state)
        start = history_start(replace_from, len(chat.messages))
        del chat.messages[start:]
        chat.messages.extend(items)
        chat.state = stored_state
        self.state.streams.finish(run.stream, 'ok', self.stream_ttl)
        chat.run = None
        self._histories.committed(claim, start, items)

    async def use_approval(self, approval_id: str) -> bool:
        return self.state.use_approval(approval_id, self.approval_ttl)

    async def request_stop(self, chat_id: str, principal: str) -> bool:
        run = self._live_run(self._chat(chat_id, principal))
        if run is None:
            return False
        run.stop.set()
        return True

    async def stop_requested(self, claim: RunClaim) -> bool:
        chat = self.state.chats.get(claim.chat_id)
        run = chat.run if chat is not None else None
        return run is not None and run.run_id == claim.run_id and run.stop.is_set()

    async def wait_for_stop(self, claim: RunClaim) -> None:
        chat = self.state.chats.get(claim.chat_id)
        run = chat.run if chat is not None else None
        if run is None or run.run_id != claim.run_id:
            await anyio.sleep_forever()  # no longer this run's chat: no stop can come for it
            return
        await run.stop.wait()

    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        _, run = self._held(claim)
        self.state.streams.append(run.stream, chunks, self.stream_ttl)

    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        _, run = self._held(claim)
        self.state.streams.end(run.stream, 'ok' if ok else 'error', self.stream_ttl)

    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        self._chat(chat_id, principal)
        stream = self.state.streams.latest(chat_id)
        return None if stream is None else self.state.streams.follow(stream, start, self.stream_ttl)
