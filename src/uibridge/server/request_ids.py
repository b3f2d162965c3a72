"""Request ids: every answer names the request it answers, so a user's report, a proxy's log line, a trace and
the run's log record can be matched.

The id is the client's (or its proxy's) `x-request-id` when it is a plausible id, so a load balancer's id
carries through; otherwise a fresh random one. Plausible: at most `MAX_REQUEST_ID_LENGTH` characters from a
short safe set (letters, digits, `-_.:;=+/@`), which covers UUIDs, hex ids and the `Root=1-...` or
`trace/span;o=1` shapes load balancers write, and keeps newlines, quotes and control characters (a log
injection, a header split) out of logs and headers.

Whatever the id, it is echoed in the answer's `x-request-id` header: streams, JSON errors and GET routes alike.
An endpoint wraps each answer's `send` in a `ResponseWatch`, which adds it and notes on the way what telemetry
wants of the answer (its status, when its first body byte left); `create_app`'s own routes (the probes, the page)
and its router's refusals (an unknown path, a method a route does not take) add it themselves. The watch has
nothing left to do once the first body byte is out, and a stream's sender then sends around it (`settled`): a
stream of many sends pays for the watch once, not once a frame.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping

from .asgi import Message, Send

REQUEST_ID_HEADER = 'x-request-id'
MAX_REQUEST_ID_LENGTH = 128

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

    __slots__ = ('arrived', 'first_byte', 'on_start', 'request_id', 'status', 'wrapped')

    def __init__(self, request_id: str, send: Send) -> None:
        self.request_id = request_id
        self.arrived = time.perf_counter()
        self.status: int | None = None
        self.first_byte: float | None = None
        self.on_start: Callable[[Message], None] | None = None
        self.wrapped = send
        """The `send` this one wraps."""

    def send(self, message: Message) -> Awaitable[None]:
        # A plain function handing back the wrapped send's awaitable, not a coroutine of its own awaiting it: a
        # stream sends once a frame, and each of its frames then costs one function call here, not a coroutine.
        if self.first_byte is None:  # past the first body byte, a frame only passes through
            kind = message['type']
            if kind == 'http.response.start':
                self.status = message['status']
                message = with_request_id(message, self.request_id)
                if self.on_start is not None:
                    self.on_start(message)
            elif kind == 'http.response.body' and message.get('body'):
                self.first_byte = time.perf_counter()
        return self.wrapped(message)


def settled(send: Send) -> Send:
    """Where the rest of an answer can go once `send` has sent a body byte: a `ResponseWatch`'s `send` has noted
    all it watches for by then, so the frames after it go straight to the send it wraps (one call each, not
    two). Any other `send`, and a watch's before that byte, is its own."""
    watch = getattr(send, '__self__', None)  # the watch a bound `ResponseWatch.send` belongs to
    if isinstance(watch, ResponseWatch) and watch.first_byte is not None:
        return watch.wrapped
    return send
