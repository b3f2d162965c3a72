"""The backends the shared store suite runs on, and the helpers its tests share."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio

from uibridge import ModelRequest, ModelResponse, TextPart, UserPromptPart
from uibridge.server.store import ChatStore

T = TypeVar('T')

LEASE = 5.0
"""Long enough that no test's claim lapses by accident; the tests about lapsing pass a short one."""
POLL = 0.05


@dataclass
class Backend:
    """One backend for one test: `store()` makes another store object over the same data, as a second process
    sharing the database (or Redis) would have."""

    name: str
    make: Callable[..., ChatStore]
    made: list[ChatStore] = field(default_factory=list[ChatStore])

    def store(self, **timings: Any) -> ChatStore:
        timings = {'lease': LEASE, 'poll_interval': POLL} | timings
        made = self.make(**timings)
        self.made.append(made)
        return made

    def reader_for(self, producer: ChatStore, **timings: Any) -> ChatStore:
        """Where a resume reads the producer's stream in these tests: another process (every backend shares its
        stream logs between the processes sharing it)."""
        return self.store(**timings)


# Fixed timestamps, so two messages built from the same text compare equal.
WHEN = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def user(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text, timestamp=WHEN)])


def reply(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content=text)], timestamp=WHEN)


async def eventually(attempt: Callable[[], Awaitable[T | None]], *, limit: float = 10) -> T:
    """Retry until `attempt` gives something; `limit` only guards against a hang, it measures nothing."""
    with anyio.fail_after(limit):
        while (result := await attempt()) is None:
            await anyio.sleep(0.02)
    return result


async def drain(reader: AsyncGenerator[bytes, None] | None) -> list[bytes]:
    assert reader is not None
    with anyio.fail_after(10):
        return [chunk async for chunk in reader]
