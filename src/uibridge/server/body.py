"""Reading a request body safely: the content-type gate, the size limit, and strict JSON.

Everything here runs before any protocol code sees the request, and every refusal is a `Rejected` that the
endpoint answers with a short JSON body (`{"error": ..., "path": ...}`) and a 4xx status. Nothing a client
sends may turn into a 500: undecodable bytes, JSON nested deeper than the parsers can recurse, huge
integers, `NaN` and a body that does not fit all end here, without reading more than the limit. The JSON
itself is read by `core.client_input.json_object`, the decoder the adapters' `parse_request` use too.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, TypeVar

from ..core.client_input import BodyError, json_object
from .asgi import Receive

T = TypeVar('T')


class Rejected(Exception):
    """A request the endpoint refuses before running anything. `reason`, when the status alone does not say it
    (a 413: which limit), names it for telemetry (`uibridge.rejection.reason`): a limit's option name
    (`max_body_bytes`, `max_chat_bytes`, ...) or `quota`, a short fixed word, never client input."""

    def __init__(
        self,
        status: int,
        error: str,
        path: str = '',
        headers: dict[str, str] | None = None,
        *,
        reason: str | None = None,
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.path = path
        self.headers = headers or {}
        self.reason = reason


class Disconnected(Exception):
    """The client went away while the body was still arriving."""


def check_content_type(header: str | None, allowed: Collection[str]) -> None:
    """Refuse (415) a body whose media type is not in `allowed`, or whose charset is not UTF-8."""
    if header is None:
        raise Rejected(415, f'content-type must be one of: {", ".join(sorted(allowed))}')
    media_type, _, params = header.partition(';')
    if media_type.strip().lower() not in allowed:
        raise Rejected(415, f'content-type must be one of: {", ".join(sorted(allowed))}')
    for param in params.split(';'):
        name, _, value = param.partition('=')
        if name.strip().lower() == 'charset' and value.strip().strip('"').lower() not in ('utf-8', 'utf8'):
            raise Rejected(415, 'the body must be UTF-8')


async def read_body(receive: Receive, content_length: str | None, limit: int) -> bytes:
    """The whole body, or `Rejected(413)` as soon as it is known to exceed `limit` bytes.

    A declared `Content-Length` over the limit is refused before a byte is read; a body that arrives
    without one (or lies about it) is counted as it arrives and refused at the first chunk past the limit.
    """
    if content_length is not None:
        declared = content_length.strip()
        if not declared.isdigit() or len(declared) > 19:
            raise Rejected(400, 'invalid content-length')
        if int(declared) > limit:
            raise Rejected(413, f'the body exceeds {limit} bytes', reason='max_body_bytes')
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message['type'] == 'http.disconnect':
            raise Disconnected
        chunk: bytes = message.get('body', b'')
        size += len(chunk)
        if size > limit:
            raise Rejected(413, f'the body exceeds {limit} bytes', reason='max_body_bytes')
        chunks.append(chunk)
        if not message.get('more_body', False):
            return b''.join(chunks)


def parse_json_object(body: bytes, *, nesting_checked: bool = True) -> dict[str, Any]:
    """The body as a JSON object (`core.client_input.json_object`): 400 when it is not UTF-8, 422 for the rest."""
    return decoded(lambda: json_object(body, nesting_checked=nesting_checked))


def decoded(decode: Callable[[], T]) -> T:
    """`decode()`, a decoder of the body that refuses as `json_object` does, with the same answers as
    `parse_json_object`."""
    try:
        return decode()
    except BodyError as error:
        raise Rejected(400 if error.fault == 'encoding' else 422, error.message) from None
