"""Request ids: every answer names the request it answers, so a user's report, a proxy's log line, a trace and
the run's log record can be matched.

The id is the client's (or its proxy's) `x-request-id` when it is a plausible id, so a load balancer's id
carries through; otherwise a fresh random one. Plausible: at most `MAX_REQUEST_ID_LENGTH` characters from a
short safe set (letters, digits, `-_.:;=+/@`), which covers UUIDs, hex ids and the `Root=1-...` or
`trace/span;o=1` shapes load balancers write, and keeps newlines, quotes and control characters (a log
injection, a header split) out of logs and headers.

Whatever the id, it is echoed in the answer's `x-request-id` header: streams, JSON errors and GET routes alike.
A `ResponseWatch` wraps the answer's `send` to add it, and notes on the way what telemetry wants of the answer
(its status, when its first body byte left). An endpoint makes one itself; `RequestIdMiddleware` makes one for
every request to a whole app (`create_app` uses it), and an endpoint under it uses that one (`SCOPE_KEY`), so
an answer's frames pass through one wrapper, not two.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeAlias

from .asgi import Message, Receive, Scope, Send

REQUEST_ID_HEADER = 'x-request-id'
MAX_REQUEST_ID_LENGTH = 128
SCOPE_KEY = 'uibridge.response_watch'
"""Where a request's `ResponseWatch` lives in its ASGI scope once an outer layer (the middleware) made it."""

App: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

_PLAUSIBLE = re.compile(rf'[A-Za-z0-9._:;=+/@-]{{1,{MAX_REQUEST_ID_LENGTH}}}')
_HEADER = REQUEST_ID_HEADER.encode('latin-1')


def request_id_for(headers: Mapping[str, str]) -> str:
    """The request's own id when it sent a plausible one, else a new one (32 hex digits)."""
    given = headers.get(REQUEST_ID_HEADER)
    if given is not None and _PLAUSIBLE.fullmatch(given):
        return given
    return uuid.uuid4().hex


def with_request_id(message: Message, request_id: str) -> Message:
    """An `http.response.start` message with the `x-request-id` header added (other messages as they are)."""
    if message['type'] != 'http.response.start':
        return message
    headers = [(key, value) for key, value in message.get('headers', ()) if key.lower() != _HEADER]
    headers.append((_HEADER, request_id.encode('latin-1')))
    return {**message, 'headers': headers}


class ResponseWatch:
    """One answer's `send`, wrapped (`send`): the request id added to its headers, its status and the time its
    first body byte left noted; `on_start` (when set) sees the `http.response.start` message."""

    __slots__ = ('_send', 'arrived', 'first_byte', 'on_start', 'request_id', 'status')

    def __init__(self, request_id: str, send: Send) -> None:
        self.request_id = request_id
        self.arrived = time.perf_counter()
        self.status: int | None = None
        self.first_byte: float | None = None
        self.on_start: Callable[[Message], None] | None = None
        self._send = send

    async def send(self, message: Message) -> None:
        if self.first_byte is None:  # past the first body byte, a frame only passes through
            kind = message['type']
            if kind == 'http.response.start':
                self.status = message['status']
                message = with_request_id(message, self.request_id)
                if self.on_start is not None:
                    self.on_start(message)
            elif kind == 'http.response.body' and message.get('body'):
                self.first_byte = time.perf_counter()
        await self._send(message)


class RequestIdMiddleware:
    """ASGI middleware: every HTTP answer of the app it wraps carries the request's id (see the module)."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        headers = {key.decode('latin-1').lower(): value.decode('latin-1') for key, value in scope.get('headers', ())}
        watch = ResponseWatch(request_id_for(headers), send)
        scope[SCOPE_KEY] = watch
        await self.app(scope, receive, watch.send)
