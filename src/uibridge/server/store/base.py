"""The store interface: what the server keeps per chat, whichever backend keeps it.

A chat has an id (`CHAT_ID_RULE`), an owner (a principal string), a history (neutral `ModelMessage`s, kept as
the pydantic-ai compatible JSON `ModelMessagesTypeAdapter` writes, one message per stored item), a state (the
JSON value the agent shares with the UI, `None` until a run sets one), at most one run holding it, and the
stream log of its latest run. Beside the chats, a store keeps the approval ids the server acted on.

The rules every backend keeps, and the suite in tests/server/store pins for each:
- **Ownership looks like absence.** Another principal's chat raises the same `ChatNotFound` as a missing
  one, with the same message, so a caller that answers 404 for both leaks nothing.
- **One run at a time.** `claim` takes the chat for a run under a lease; a second claim while the lease
  holds raises `ChatBusy` (409). Only `heartbeat` renews the lease; a producer that stops renewing (a crash,
  a hung process) loses the chat after `lease` seconds, and every later write of that run raises `ClaimLost`.
- **Atomic commit.** `commit` appends the run's new messages (or replaces the history from an index on,
  for regenerate and edit), sets the chat's state when given one, ends the stream and releases the claim in
  one step: a crash before it leaves the history and the state as they were, never half a message. A claim
  hands the run the history, the state and each stored message's size, as of one moment.
- **Readers never hang, the producer never waits.** `append_stream` returns without waiting for readers;
  `read_stream` replays from the first chunk and follows live until the end marker. A producer whose lease
  lapses without ending its stream is declared lost by its readers: they raise `StreamAborted` at most
  `lease + poll_interval` seconds after the last heartbeat. An ended stream stays readable `stream_ttl`
  seconds, then is gone.
- **Stop from anywhere.** `request_stop` flags the chat's running run through the backend, so the
  producer sees it (`stop_requested`, `wait_for_stop`) whichever process asked.
- **Each approval once.** `use_approval` records an approval id as used and says whether it was new, in one
  atomic step seen by every process sharing the backend and surviving a restart of any of them (the memory
  backend: of the store objects sharing its state), for `approval_ttl` seconds.
- **History-sized work off the event loop.** Decoding a stored history runs in a worker thread once it is
  large (`uibridge.server.offload`), in bounded pieces, so reading the largest chat does not stall the
  process's other requests.
- **A turn costs its new messages.** Each claim carries the history's `revision`; a claim whose revision is
  the claim this process last committed to the chat takes the history that commit left, kept decoded
  (`HistoryCache`), without reading it from the backend again.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self, TypedDict, Unpack

import anyio

from ...core.messages import ModelMessage

__all__ = [
    'CHAT_ID_RULE',
    'DEFAULT_APPROVAL_TTL',
    'DEFAULT_LEASE',
    'DEFAULT_POLL_INTERVAL',
    'DEFAULT_STREAM_TTL',
    'KEEP_STATE',
    'ChatBusy',
    'ChatNotFound',
    'ChatStore',
    'ClaimLost',
    'RunClaim',
    'StoreError',
    'StreamAborted',
    'StreamOutcome',
    'Timings',
    'is_chat_id',
]

DEFAULT_LEASE = 10.0
"""Seconds a claim (and its producer's liveness) holds without a heartbeat."""
DEFAULT_STREAM_TTL = 300.0
"""Seconds an ended stream stays readable, for a client that reconnects just after the end."""
DEFAULT_POLL_INTERVAL = 0.5
"""Seconds between the checks that are polls by nature: a stream reader's look at an idle log (for new chunks on
SQLite, for its producer's liveness on Redis and PostgreSQL, and as a fallback for a lost notification there),
and a stop raised by another process (on SQLite; on PostgreSQL, as the fallback)."""
DEFAULT_APPROVAL_TTL = 30 * 24 * 3600.0
"""Seconds a store remembers an approval it acted on (30 days). With server-managed history a call that has its
result is not pending, so a replay of its approval finds nothing to run anyway; the ledger is what stops a
replay while the call is still pending (the run acting on it died before its commit, or failed first)."""

CHAT_ID_RULE = "1 to 128 characters from A-Z, a-z, 0-9, '-', '_', '.' and '~', and not '.' or '..'"
"""What a chat id may be: RFC 3986's unreserved characters, which a URL path segment carries as they are, so
`{api}/{chatId}` reaches the chat whether or not a client escapes the id (`/` never could: it would end the
segment). uuids, `nanoid`s and the ids `ai`'s `generateId`, CopilotKit and `@ag-ui/client` make all fit."""
_CHAT_ID = re.compile(r'[A-Za-z0-9._~-]{1,128}')


def is_chat_id(chat_id: object) -> bool:
    """Whether `chat_id` follows `CHAT_ID_RULE`. Every chat id a store is given does: the endpoints refuse
    another at `POST` (422) and answer it 404 elsewhere, before the store sees it."""
    return isinstance(chat_id, str) and _CHAT_ID.fullmatch(chat_id) is not None and chat_id not in ('.', '..')


StreamOutcome = Literal['ok', 'error', 'lost']
"""How a stream log ended: `ok` (the chunks are a whole protocol stream), `error` (the producer ended it
early: its chunks stop mid-stream) or `lost` (the producer's lease lapsed before it ended the stream)."""


class Timings(TypedDict, total=False):
    """The durations every backend takes as keywords (seconds; each defaults to its `DEFAULT_*`)."""

    lease: float
    stream_ttl: float
    poll_interval: float
    approval_ttl: float


class _KeepState:
    """The type of `KEEP_STATE`."""

    def __repr__(self) -> str:
        return 'KEEP_STATE'


KEEP_STATE: Any = _KeepState()
"""`commit(..., state=KEEP_STATE)`, the default: the run set no state, the chat keeps the one it had."""


class StoreError(Exception):
    """Base of the store's refusals."""


class ChatNotFound(StoreError):
    """No such chat for this principal: missing, or another principal's (deliberately indistinguishable)."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(f'chat {chat_id!r} not found')
        self.chat_id = chat_id


class ChatBusy(StoreError):
    """Another run holds the chat (its lease has not lapsed): the request that wanted it should get a 409."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(f'chat {chat_id!r} has a run in progress')
        self.chat_id = chat_id


class ClaimLost(StoreError):
    """The run's lease lapsed (or the run already committed): it may no longer write to the chat."""

    def __init__(self, chat_id: str, run_id: str) -> None:
        super().__init__(f'run {run_id!r} no longer holds chat {chat_id!r}')
        self.chat_id = chat_id
        self.run_id = run_id


class StreamAborted(StoreError):
    """Raised by a stream reader after the last chunk when the stream did not end `ok`: the chunks read are
    not a whole protocol stream, so the reader's caller should end its response with the protocol's error."""

    def __init__(self, chat_id: str, reason: Literal['error', 'lost']) -> None:
        what = 'ended with an error' if reason == 'error' else 'lost its producer'
        super().__init__(f'the stream of chat {chat_id!r} {what}')
        self.chat_id = chat_id
        self.reason: Literal['error', 'lost'] = reason


@dataclass(frozen=True)
class RunClaim:
    """A run's hold on a chat, from `claim` until `commit`: the proof every producer-side call takes."""

    chat_id: str
    principal: str
    run_id: str
    """Assigned by the store (unique per claim), never taken from a client."""
    messages: list[ModelMessage] = field(default_factory=list[ModelMessage], compare=False)
    """The history as it was when the claim was taken: the authority the run works from."""
    state: Any = field(default=None, compare=False)
    """The chat's state as the last commit that set one left it (`None` when none did)."""
    sizes: tuple[int, ...] = field(default=(), compare=False)
    """Each stored message's size in bytes (its stored JSON), in order: what the chat limits count."""
    revision: str | None = field(default=None, compare=False)
    """Which write left the history as this claim found it: the `run_id` of the chat's claim before this one
    (`None` for a chat never claimed). Only a claim may write, and each claim makes the next one's revision, so
    two claims with one revision found one history: a process that committed that claim knows the history
    without reading it again (`HistoryCache`), and so does an endpoint's view of it."""


class ChatStore(ABC):
    """What the server keeps per chat. Every method is safe to call concurrently from one event loop; the
    SQLite, Redis and PostgreSQL backends are also safe across processes sharing one database or one Redis."""

    def __init__(self, **timings: Unpack[Timings]) -> None:
        self.lease = timings.get('lease', DEFAULT_LEASE)
        self.stream_ttl = timings.get('stream_ttl', DEFAULT_STREAM_TTL)
        self.poll_interval = timings.get('poll_interval', DEFAULT_POLL_INTERVAL)
        self.approval_ttl = timings.get('approval_ttl', DEFAULT_APPROVAL_TTL)
        for name in ('lease', 'stream_ttl', 'poll_interval', 'approval_ttl'):
            if not getattr(self, name) > 0:
                raise ValueError(f'{name} must be a positive number of seconds, not {getattr(self, name)!r}')

    @property
    def heartbeat_interval(self) -> float:
        """How often a producer should call `heartbeat`: a third of the lease, so one late beat is no loss."""
        return self.lease / 3

    # -- chats ---------------------------------------------------------------------------------------------

    @abstractmethod
    async def open_chat(self, chat_id: str, principal: str) -> list[ModelMessage]:
        """The chat's history, creating the chat (empty, owned by `principal`) when there is none.
        Raises `ChatNotFound` when another principal owns it."""

    @abstractmethod
    async def load_messages(self, chat_id: str, principal: str) -> list[ModelMessage]:
        """The chat's history. Raises `ChatNotFound` when the chat is missing or another principal's."""

    async def check_owner(self, chat_id: str, principal: str) -> None:
        """Return when the chat exists and is `principal`'s; raise `ChatNotFound` otherwise. What a stream log
        kept apart from the chats (`split.SplitStore`) asks before it serves a stream. The default reads the
        history; each backend here overrides it with a lookup of the owner alone."""
        await self.load_messages(chat_id, principal)

    # -- runs ----------------------------------------------------------------------------------------------

    @abstractmethod
    async def claim(self, chat_id: str, principal: str, *, create: bool = False) -> RunClaim:
        """Take the chat for one run, with its history as of now, and start the run's (empty) stream log.
        Raises `ChatNotFound` (missing and not `create`, or another principal's) or `ChatBusy` (a run holds
        it). A stop requested for an earlier run does not carry over."""

    @abstractmethod
    async def heartbeat(self, claim: RunClaim) -> None:
        """Renew the claim's lease (and with it the producer's liveness for readers). Raises `ClaimLost`."""

    @abstractmethod
    async def commit(
        self,
        claim: RunClaim,
        messages: Sequence[ModelMessage],
        *,
        replace_from: int | None = None,
        state: Any = KEEP_STATE,
    ) -> None:
        """In one atomic step: append `messages` to the history (or, with `replace_from=k`, keep the first
        `k` messages and put `messages` after them), set the chat's state to `state` (a JSON value; left as
        it is by default, `KEEP_STATE`), end the stream `ok` unless it already ended, and release the claim.
        Raises `ClaimLost` (nothing written) or `ValueError` for `k` past the end (nothing written, the claim
        still held)."""

    async def release(self, claim: RunClaim) -> None:
        """Give the chat back without changing its history (ends the stream `ok` unless it already ended)."""
        await self.commit(claim, [])

    async def keep_claim(self, claim: RunClaim) -> None:
        """Heartbeat every `heartbeat_interval` until cancelled (run it beside the producer). Raises
        `ClaimLost` when the lease lapsed anyway (an event loop stalled longer than the lease)."""
        while True:
            await anyio.sleep(self.heartbeat_interval)
            await self.heartbeat(claim)

    # -- stop ----------------------------------------------------------------------------------------------

    @abstractmethod
    async def request_stop(self, chat_id: str, principal: str) -> bool:
        """Ask the chat's running run to stop, from any process. False when no run holds the chat. Raises
        `ChatNotFound`."""

    @abstractmethod
    async def stop_requested(self, claim: RunClaim) -> bool:
        """Whether a stop was requested for this run (a cheap poll)."""

    @abstractmethod
    async def wait_for_stop(self, claim: RunClaim) -> None:
        """Return once a stop was requested for this run (run it beside the producer, cancel it after)."""

    # -- approvals -----------------------------------------------------------------------------------------

    @abstractmethod
    async def use_approval(self, approval_id: str) -> bool:
        """Record `approval_id` as acted on; `True` when it was not already (within `approval_ttl` seconds of
        its first use), `False` when it was. Atomic across every process sharing the backend: of two
        concurrent uses of one id, exactly one gets `True`."""

    # -- stream log ----------------------------------------------------------------------------------------

    @abstractmethod
    async def append_stream(self, claim: RunClaim, chunks: Sequence[bytes]) -> None:
        """Add a batch of chunks to the run's stream log (one round trip per batch, whatever its size).
        Never waits for readers. Raises `ClaimLost` when the lease lapsed, `RuntimeError` after the end."""

    @abstractmethod
    async def end_stream(self, claim: RunClaim, *, ok: bool = True) -> None:
        """Write the end marker (`ok`, or `error` when the chunks stop mid-stream); the log expires
        `stream_ttl` seconds later. Ending twice keeps the first marker. Raises `ClaimLost`."""

    @abstractmethod
    async def read_stream(self, chat_id: str, principal: str, *, start: int = 0) -> AsyncGenerator[bytes, None] | None:
        """The chat's latest stream, from chunk `start` (0: replay from the first chunk), then live until
        its end marker; the generator raises `StreamAborted` after the last chunk unless the end was `ok`.
        None when there is no stream to read (no run yet, or it ended more than `stream_ttl` seconds ago).
        Raises `ChatNotFound`."""

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def ping(self) -> None:
        """Return when the backend answers a read; raise what it raises when it cannot (Redis down, a SQLite
        file that cannot be opened). `create_app`'s `GET /readyz` asks it. The default reads the history of a
        chat with an empty id (absent in practice, so one lookup of a missing key); whatever the read finds, the
        backend answered. A backend with a cheaper liveness check may override it."""
        with suppress(ChatNotFound):
            await self.load_messages('', '')

    async def aclose(self) -> None:  # noqa: B027 (a backend with nothing to release keeps this)
        """Release connections and threads. The store is unusable afterwards."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
