"""Client input to `InputError`s, one way for every adapter and the server: a pydantic `ValidationError`
translated, and a request body decoded as JSON.

**Which validation error.** pydantic reports every problem it found, and a union one per member it tried.
A client is told one: the *deepest* (the longest location; the first of those, in pydantic's order). In a
union, the member that got furthest into the input is the one the client meant, so its error is where the
input went wrong (`content` sent as a list with a bad item is a bad item, not "should be a string"); among
independent problems the deepest names the most precise place. Each adapter says which location items are
pydantic's own (union tags) and may reword messages; the choice is the same everywhere.

**JSON bodies.** `json_object` is the one decoder, and the strictest: UTF-8 only, `NaN` / `Infinity` and
numbers too large for a float (`1e999999`) refused, integers past Python's digit limit refused, nesting past
`MAX_JSON_DEPTH` refused before any recursive parser sees it, and the value must be an object. A refusal is a
`BodyError` whose `fault` lets each caller answer in its own words and status.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any, Literal, TypeAlias, cast

import pydantic
from pydantic_core import ErrorDetails

from .errors import InputError

Loc: TypeAlias = tuple[int | str, ...]


def _dotted(loc: Loc) -> str:
    return '.'.join(str(item) for item in loc)


def _pydantic_message(error: ErrorDetails) -> str:
    return error['msg']


def input_error(
    error: pydantic.ValidationError,
    *prefix: str | int,
    json_path: Callable[[Loc], str] = _dotted,
    message: Callable[[ErrorDetails], str] = _pydantic_message,
) -> InputError:
    """The deepest problem in `error` (see the module docstring), located under `prefix`.

    `json_path` turns pydantic's location into the client's JSON path (leaving out union tags); `message`
    words the problem (pydantic's own message by default). Neither input nor URLs are read: a message never
    repeats what the client sent.
    """
    deepest = max(error.errors(include_url=False, include_input=False), key=_depth)
    return InputError(message(deepest), json_path(deepest['loc'])).at(*prefix)


def _depth(error: ErrorDetails) -> int:
    return len(error['loc'])


# ----------------------------------------------------------------------------------------- JSON bodies

MAX_JSON_DEPTH = 100
"""Deeper JSON is refused: validators and encoders downstream recurse, and no chat history needs more."""

BodyFault: TypeAlias = Literal['encoding', 'syntax', 'depth', 'shape']
"""What is wrong with a body: not UTF-8, not JSON (or a value refused), nested too deep, not an object."""


class BodyError(InputError):
    """A body `json_object` refuses; `fault` says why (the server answers 400 for `encoding`, 422 otherwise)."""

    def __init__(self, fault: BodyFault, message: str) -> None:
        super().__init__(message)
        self.fault: BodyFault = fault


def json_object(body: bytes | str, *, nesting_checked: bool = True) -> dict[str, Any]:
    """`body` as the JSON object it holds, or a `BodyError` (see the module docstring for what is refused).

    `nesting_checked=False`: for a caller that bounds the nesting of what it reads of the value itself (the
    server's request limits walk, for a body of which it reads only part): no pass over the text beforehand,
    and nesting deep enough to stop the decoder is the same `depth` refusal."""
    if isinstance(body, str):
        text = body
    else:
        try:
            text = body.decode('utf-8')
        except UnicodeDecodeError:
            raise BodyError('encoding', 'the body is not valid UTF-8') from None
    if nesting_checked:
        check_depth(text)
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise BodyError('depth', f'JSON nested deeper than {MAX_JSON_DEPTH} levels') from None
    except ValueError as exc:
        # ValueError covers JSONDecodeError, NaN/Infinity and integers past Python's digit limit.
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else 'invalid JSON value'
        raise BodyError('syntax', f'invalid JSON: {detail}'[:200]) from None
    if not isinstance(value, dict):
        raise BodyError('shape', 'the body must be a JSON object')
    return cast('dict[str, Any]', value)


def request_object(body: bytes | str | Mapping[str, Any], subject: str) -> dict[str, Any]:
    """What an adapter's `parse_request` reads: a mapping as it is (a body decoded already), else `json_object`,
    whose refusal says only `<subject> is not valid JSON` or `<subject> must be a JSON object`."""
    if isinstance(body, Mapping):
        return dict(body)
    if not isinstance(body, bytes | str):  # pyright: ignore[reportUnnecessaryIsInstance]: a caller's list
        raise InputError(f'{subject} must be a JSON object')
    try:
        return json_object(body)
    except BodyError as error:
        shape = error.fault == 'shape'
        raise InputError(f'{subject} must be a JSON object' if shape else f'{subject} is not valid JSON') from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f'{name} is not JSON')


_INFINITY = float('inf')


def _finite_float(text: str) -> float:
    # `1e999999` is valid JSON that reads as infinity: refused like the `Infinity` literal, in every spelling.
    value = float(text)
    if value in (_INFINITY, -_INFINITY):
        raise ValueError('a number too large for a float')
    return value


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)

scan_value = cast('Callable[[str, int], tuple[Any, int]]', vars(_STRICT)['scan_once'])
"""One JSON value from an index of a text, as `json_object` reads it (`NaN`, `Infinity` and numbers too large
for a float refused), and where it ends: for a caller that decodes a body a value at a time. Raises
`StopIteration` where no value starts, `ValueError` for one refused, `RecursionError` for one too deep."""
scan_string = cast('Callable[[str, int, bool], tuple[str, int]]', vars(json.decoder)['scanstring'])
"""The JSON string whose text starts after the quote at an index (strict: no control characters), and where it
ends."""


def check_depth(text: str) -> None:
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
        raise BodyError('depth', f'JSON nested deeper than {MAX_JSON_DEPTH} levels')


# Possessive quantifiers: an unterminated string fails in linear time instead of backtracking.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = re.compile(r'[^\[\]{}]++')
_OPENS = bytes(1 if chr(i) in '[{' else 0 for i in range(256))
_CLOSES = bytes(1 if chr(i) in ']}' else 0 for i in range(256))
