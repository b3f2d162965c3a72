"""Warnings about a client's input, collected per request where a server asks for them.

Decoders and `sanitize_messages` warn about what they skipped or removed (an unknown part type, a stripped
system prompt). Called directly, that is a `UserWarning` at the caller, as Python shows any other. A server
that parses requests in worker threads cannot collect them with `warnings.catch_warnings` (it swaps
process-wide state, so concurrent requests would mix or lose each other's warnings); `collect_warnings`
collects them in a context variable instead, which each request (and each thread it runs in) has its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

_collected: ContextVar[list[str] | None] = ContextVar('uibridge_collected_warnings', default=None)


def warn(message: str, *, stacklevel: int = 1) -> None:
    """Collect `message` if this context collects warnings, else warn (`stacklevel` counts from the caller)."""
    collected = _collected.get()
    if collected is not None:
        collected.append(message)
        return
    warnings.warn(message, UserWarning, stacklevel=stacklevel + 2)


@contextmanager
def collect_warnings() -> Generator[list[str]]:
    """Within the block, `warn` appends to the yielded list instead of warning."""
    collected: list[str] = []
    token = _collected.set(collected)
    try:
        yield collected
    finally:
        _collected.reset(token)
