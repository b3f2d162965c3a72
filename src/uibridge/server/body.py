"""Reading a request body safely: the content-type gate, the size limit, and strict JSON.

Everything here runs before any protocol code sees the request, and every refusal is a `Rejected` that the
endpoint answers with a short JSON body (`{"error": ..., "path": ...}`) and a 4xx status. Nothing a client
sends may turn into a 500: undecodable bytes, JSON nested deeper than the parsers below can recurse, huge
integers, `NaN` and a body that does not fit all end here, without reading more than the limit.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from itertools import accumulate
from typing import Any, TypeAlias

__all__ = ['MAX_JSON_DEPTH', 'Rejected', 'check_content_type', 'parse_json_object', 'read_body']

Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]

MAX_JSON_DEPTH = 100
"""Deeper JSON is refused: validators and encoders downstream recurse, and no chat history needs more."""


class Rejected(Exception):
    """A request the endpoint refuses before running anything."""

    def __init__(self, status: int, error: str, path: str = '', headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.path = path
        self.headers = headers or {}


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
            raise Rejected(413, f'the body exceeds {limit} bytes')
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message['type'] == 'http.disconnect':
            raise Disconnected
        chunk: bytes = message.get('body', b'')
        size += len(chunk)
        if size > limit:
            raise Rejected(413, f'the body exceeds {limit} bytes')
        chunks.append(chunk)
        if not message.get('more_body', False):
            return b''.join(chunks)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f'{name} is not JSON')


def _finite_float(text: str) -> float:
    # `1e999999` is valid JSON that reads as infinity: refused like the `Infinity` literal, in every spelling.
    value = float(text)
    if value in (_INFINITY, -_INFINITY):
        raise ValueError('a number too large for a float')
    return value


_INFINITY = float('inf')


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The body as a JSON object: UTF-8 only (400 otherwise), valid JSON (422), at most `MAX_JSON_DEPTH` deep."""
    try:
        text = body.decode('utf-8')
    except UnicodeDecodeError:
        raise Rejected(400, 'the body is not valid UTF-8') from None
    _check_depth(text)
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError, NaN/Infinity and integers past Python's digit limit.
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else 'invalid JSON value'
        raise Rejected(422, f'invalid JSON: {message}'[:200]) from None
    if not isinstance(value, dict):
        raise Rejected(422, 'the body must be a JSON object')
    return value  # pyright: ignore[reportUnknownVariableType]


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than `MAX_JSON_DEPTH` before any recursive parser sees it.

    Strings are cut out first (their brackets are text), then the brackets left are counted; both passes
    run in the regex engine, so a large body costs milliseconds, not a Python loop per character.
    """
    if text.count('[') + text.count('{') <= MAX_JSON_DEPTH:
        return
    brackets = _NOT_BRACKET.sub('', _STRING.sub('', text)).encode()
    # The depth after each bracket is opens-so-far minus closes-so-far; iterators keep the loop in C.
    opens = accumulate(brackets.translate(_OPENS))
    closes = accumulate(brackets.translate(_CLOSES))
    if max(map(operator.sub, opens, closes), default=0) > MAX_JSON_DEPTH:
        raise Rejected(422, f'JSON nested deeper than {MAX_JSON_DEPTH} levels')


# Possessive quantifiers: an unterminated string fails in linear time instead of backtracking.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = re.compile(r'[^\[\]{}]++')
_OPENS = bytes(1 if chr(i) in '[{' else 0 for i in range(256))
_CLOSES = bytes(1 if chr(i) in ']}' else 0 for i in range(256))
