"""The in-memory store: one process, nothing persisted. For tests, and for trying server-managed history
without a file.

Every operation runs on the event loop without awaiting in between, so each is atomic by construction.
Its state lives in a `MemoryState` that several `MemoryStore` objects may share: each then sees the others
as a second process sharing one backend would (claims, stops and stream logs all cross), which is how the
shared suite exercises the multi-process rules on this backend too.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Unpack

import anyio

from ...core.messages import ModelMessage
from ._history_rows import decode_messages, encode_messages, history_start
from .base import ChatBusy, ChatNotFound, ChatStore, ClaimLost, RunClaim, Timings
from .local import LocalStream, LocalStreams

__all__ = ['MemoryState', 'MemoryStore']


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
    run: _Run | None = None


class MemoryState:
    """The chats and stream logs one or more `MemoryStore`s share."""

    def __init__(self) -> None:
        self.chats: dict[str, _Chat] = {}
        self.streams = LocalStreams()


class MemoryStore(ChatStore):
    def __init__(
        self,
        *,
        state: MemoryState | None = None,
        **timings: Unpack[Timings],
    ) -> None:
        super().__init__(**timings)
        self.state = state if state is not None else MemoryState()

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
        return decode_messages(self._chat(chat_id, principal, create=True).messages)

    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        return decode_messages(self._chat(chat_id, principal).messages)

    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        chat = self._chat(chat_id, principal, create=create)
        if self._live_run(chat) is not None:
            raise ChatBusy(chat_id)
        run_id = uuid.uuid4().hex
        deadline = time.monotonic() + self.lease
        stream = self.state.streams.start(chat_id, run_id, deadline, self.stream_ttl)
        chat.run = _Run(run_id=run_id, lease_until=deadline, stream=stream)
        return RunClaim(chat_id, principal, run_id, decode_messages(chat.messages))

    async def heartbeat(self, claim: RunClaim) -> None:
        _, run = self._held(claim)
        run.lease_until = run.stream.deadline = time.monotonic() + self.lease

    async def commit(
        self, claim: RunClaim, messages: Sequence[ModelMessage], *, replace_from: int | None = None
    ) -> None:
        chat, run = self._held(claim)
        items = encode_messages(messages)
        del chat.messages[history_start(replace_from, len(chat.messages)) :]
        chat.messages.extend(items)
        self.state.streams.finish(run.stream, 'ok', self.stream_ttl)
        chat.run = None

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
