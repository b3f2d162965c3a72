"""Who is asking: the `authorize` hook an endpoint calls before anything else, and what it is shown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ['ANONYMOUS', 'Authorize', 'RequestInfo']

ANONYMOUS = 'anonymous'
"""The principal of every request to an endpoint with a store and no `authorize` hook."""


@dataclass(frozen=True)
class RequestInfo:
    """The request as `authorize` sees it, before its body is read."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Names in lower case."""
    scope: Mapping[str, Any]
    """The ASGI scope (client address, a framework's session or user, ...)."""


Authorize: TypeAlias = Callable[[RequestInfo], Awaitable[str | None]]
"""`async def authorize(request) -> principal | None`: the principal (a user id) the request acts for, or
`None` to refuse it (401). A chat belongs to the principal that created it; for any other, its id is a 404."""
