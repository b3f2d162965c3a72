"""The JSON text and timestamps uibridge writes, one way everywhere.

Markers, derived ids and rendered feedback are compared and hashed as text, so every module that writes
JSON into them must write the same bytes for the same value: compact, UTF-8 (no `\\u` escapes), keys in
insertion order, timestamps in ISO 8601 with `Z` for UTC.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from json.encoder import encode_basestring  # pyright: ignore[reportUnknownVariableType]
from typing import Any, cast

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError, from_json, to_json, to_jsonable_python

json_values: TypeAdapter[Any] = TypeAdapter(Any)
"""Turns any value pydantic can serialize (models, datetimes, bytes, tuples) into JSON-compatible Python."""


def compact_json(value: Any) -> str:
    """`json.dumps(json_values.dump_python(value, mode='json'), separators=(',', ':'), ensure_ascii=False)`, the
    exact text: derived ids hash it and feedback markers are compared as text.

    For plain JSON values (what tool arguments and results, errors and our own markers nearly always are)
    pydantic-core writes the same bytes 3 to 5 times faster; anything `_spelled_alike` turns away, or that
    pydantic-core refuses (a lone surrogate), takes the `json` module.
    """
    return _pydantic_core_text(value, None) or _compact_json_reference(value)


def _compact_json_reference(value: Any) -> str:
    try:
        plain = json_values.dump_python(value, mode='json')
    except UnicodeEncodeError:
        plain = _with_surrogates(value)  # pydantic-core will not write a lone surrogate; the `json` module will
    return json.dumps(plain, separators=(',', ':'), ensure_ascii=False)


def _with_surrogates(value: Any) -> Any:
    """`json_values.dump_python(value, mode='json')` for a value holding a lone surrogate (half of a character a
    provider cut in two): plain JSON walked here, anything else as pydantic writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None  # as pydantic-core writes NaN and the infinities in JSON mode
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {_wire_key(key): _with_surrogates(item) for key, item in cast('dict[Any, Any]', value).items()}
    if isinstance(value, (list, tuple)):
        return [_with_surrogates(item) for item in cast('list[Any]', value)]
    return _with_surrogates(json_values.dump_python(value, mode='json'))  # a model, a date: no surrogate in it


def indented_json(value: Any) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)` for a JSON-compatible `value`, the exact text.

    `indent` sends the `json` module to its pure-Python encoder, which was most of what rendering a retry's
    errors cost in a history dump; pydantic-core's pretty printer writes the same text several times faster
    for what `_spelled_alike` lets through.
    """
    return _pydantic_core_text(value, 2) or json.dumps(value, indent=2, ensure_ascii=False)


def _pydantic_core_text(value: Any, indent: int | None) -> str | None:
    """The `json` module's text for `value`, written by pydantic-core, or `None` where the two would differ.
    (Never `''`, which is no JSON text: callers fall back with `or`.)"""
    try:
        if _spelled_alike(value):
            return to_json(value, indent=indent).decode()
    except (PydanticSerializationError, RecursionError):
        pass
    return None


_SMALLEST_SAFE_FLOAT = 1e-4
"""`json` spells floats below this in exponent form with two digits (`1e-05`), pydantic-core does not."""
_FIRST_EXPONENT_FLOAT = 1e16
"""`json` spells floats from this on in exponent form with a sign (`1e+16`), as pydantic-core does only from
2.42 on (earlier, `1e16`); below it both write the same digits."""
_INT_LIMIT = 10**4000
"""Well inside the 4,300 digits CPython prints by default (beyond them `json.dumps` raises)."""
_INT_FLOOR = -_INT_LIMIT


def _spelled_alike(value: Any) -> bool:
    """Whether `value` is JSON built of exact `dict` (string keys), `list`, `tuple`, `str`, `bool`, `None`,
    `int` and finite `float`s that the `json` module and pydantic-core write alike. They differ on four
    things only: floats below 1e-4 (`1e-05` against `1e-5`), floats from 1e16 on in pydantic-core before 2.42
    (`1e+16` against `1e16`), non-finite floats (`NaN` against `null`) and integers `json` refuses to print
    (over 4,300 digits)."""
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        # No `cast(dict[...], value)` here: subscribing a generic on every call costs more than the check.
        for key in value:
            if type(key) is not str:
                return False
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return _scalar_spelled_alike(value)
    # Strings and integers are looked at in place: most of a value is those, in small containers, and a
    # call per member would cost more than the rest of the walk.
    for item in items:
        member: object = type(item)  # pyright: ignore[reportUnknownVariableType]
        if member is str:
            continue
        if member is int:
            if _INT_FLOOR < item < _INT_LIMIT:
                continue
            return False
        if not _spelled_alike(item):
            return False
    return True


def _scalar_spelled_alike(value: Any) -> bool:
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return _INT_FLOOR < value < _INT_LIMIT
    if kind is float:
        return value == 0.0 or _SMALLEST_SAFE_FLOAT <= abs(value) < _FIRST_EXPONENT_FLOAT
    return False


def parse_json(text: str) -> Any:
    """`json.loads(text)`: pydantic-core's parser, several times faster, reads the same values from the same
    texts and refuses the same malformed ones; what it refuses (a lone surrogate, escaped or not) goes to
    `json.loads`, which reads it or raises its own `ValueError`."""
    try:
        return from_json(text)
    except (ValueError, TypeError):  # TypeError: text pydantic-core cannot take as UTF-8
        return json.loads(text)


def tool_args(text: str) -> str | dict[str, Any]:
    """A tool call's argument text as a stored history holds it: the dict, when the text is a JSON object written
    exactly as `compact_json` writes that dict; else the text as it is (a model's arguments need not be JSON nor
    compact, and the model must see exactly what it wrote: `args_as_json_str` gives either back as `text`)."""
    try:
        parsed: dict[str, Any] | None = parse_json(text)  # checked below: no `cast()` call per tool call
    except ValueError:
        return text
    if not isinstance(parsed, dict):
        return text
    try:
        return parsed if compact_json(parsed) == text else text
    except (ValueError, RecursionError):
        return text


json_string: Callable[[str], str] = encode_basestring
"""A string as a JSON string literal, non-ASCII as itself: the one escape per streamed delta (the `json`
module's C function, what `json.dumps(text, ensure_ascii=False)` ends in, without its per-call overhead)."""

# Built once: `json.dumps` with options builds a new encoder on every call.
_encode_plain = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False, allow_nan=False).encode


def _encode_wire(value: Any) -> str:
    # The slow path, for a value holding a lone surrogate somewhere: the json module keeps it as it is.
    return _encode_plain(wire_ready(value))


def wire_ready(value: Any) -> Any:
    """`value` as JSON-compatible Python the way pydantic-core reads it (NaN and infinities as `None`), walked
    here rather than by pydantic-core, which refuses a lone surrogate in a string or a key."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_wire_key(key): wire_ready(item) for key, item in cast('dict[Any, Any]', value).items()}
    if isinstance(value, (list, tuple)):
        return [wire_ready(item) for item in cast('list[Any]', value)]
    try:
        return wire_ready(to_jsonable_python(value, fallback=str, inf_nan_mode='null'))
    except (PydanticSerializationError, UnicodeError):
        return str(value)


def _wire_bytes(value: Any) -> bytes:
    # The wire's settings, in one place: unknown types as text, NaN and infinities as null.
    return to_json(value, fallback=str, inf_nan_mode='null')


def _wire_key(key: Any) -> Any:
    # The keys the json module writes as pydantic-core does (`1`, `true`, a finite float); any other key as its
    # text, as pydantic-core writes it (`None` too, which the json module alone would write as `null`). A NaN or
    # an infinity is `None` first, as everywhere else with NaN and infinities as null, so its text is `"None"`.
    if isinstance(key, (str, bool, int)) or (isinstance(key, float) and math.isfinite(key)):
        return key
    if isinstance(key, float):
        return 'None'
    return str(key)


def wire_json(value: Any) -> str:
    """`value` as compact JSON for a stream: keys in insertion order, non-ASCII as itself; anything pydantic can
    serialize (models, datetimes, bytes), anything else by `str`; NaN and infinities as `null`, since a `NaN`
    token is no JSON and `JSON.parse` would reject the whole chunk.

    pydantic-core's serializer: 5 to 10 times faster than the `json` module on chunk-sized dicts, which the
    streams write for every part and tool call. It refuses only a lone surrogate (a provider split a pair
    across deltas), which takes the `json` module instead (see `utf8_json`). Floats may be spelled other than
    `json.dumps` spells them (`1e-7`, not `1e-07`): the same number to every JSON parser, but other bytes, so
    this is for the wire only, never for text that is hashed or compared (that is `compact_json`).
    """
    try:
        return _wire_bytes(value).decode()
    except PydanticSerializationError:
        return _encode_wire(value)


def sse_data(value: Any) -> bytes:
    """One SSE event whose data is `value` as `wire_json`: `data: <json>\\n\\n`, UTF-8, built as bytes."""
    try:
        return b'data: ' + _wire_bytes(value) + b'\n\n'
    except PydanticSerializationError:
        return utf8_json(f'data: {_encode_wire(value)}\n\n')


LONE_SURROGATE = re.compile('[\ud800-\udfff]')
"""A UTF-16 surrogate code point, which UTF-8 cannot encode: in a Python string, half of a character beyond
the BMP that was cut in two (the halves side by side are still two code points)."""


def utf8_json(text: str) -> bytes:
    """JSON text (from `wire_json`, or `json` with `ensure_ascii=False`) as UTF-8 bytes.

    A lone surrogate has no UTF-8 form; in JSON text it can only sit inside a string, where its `\\u` escape is
    valid JSON and reaches the client as the same UTF-16 code unit.
    """
    try:
        return text.encode()
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub(lambda m: f'\\u{ord(m.group()):04x}', text).encode()


def iso_utc(moment: datetime) -> str:
    return moment.isoformat().replace('+00:00', 'Z')


def parse_iso(value: object) -> datetime | None:
    """A timestamp `iso_utc` wrote (or any ISO 8601 text), read back; `None` for anything else. Strict on
    purpose: it reads what a client echoes, so a number or a malformed string is no timestamp at all."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
