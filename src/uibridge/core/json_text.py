"""The JSON text and timestamps uibridge writes, one way everywhere.

Markers, derived ids and rendered feedback are compared and hashed as text, so every module that writes
JSON into them must write the same bytes for the same value: compact, UTF-8 (no `\\u` escapes), keys in
insertion order, timestamps in ISO 8601 with `Z` for UTC.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

__all__ = ['compact_json', 'iso_utc', 'json_values', 'parse_iso', 'sse_data', 'utf8_json', 'wire_json']

json_values: TypeAdapter[Any] = TypeAdapter(Any)
"""Turns any value pydantic can serialize (models, datetimes, bytes, tuples) into JSON-compatible Python."""


def compact_json(value: Any) -> str:
    return json.dumps(json_values.dump_python(value, mode='json'), separators=(',', ':'), ensure_ascii=False)


# Built once: `json.dumps` with options builds a new encoder on every call.
_encode_plain = json.JSONEncoder(separators=(',', ':'), ensure_ascii=False, allow_nan=False).encode


def _encode_wire(value: Any) -> str:
    # pydantic-core's own reading of `value` (NaN and infinities as null), then the json module, which keeps
    # a lone surrogate as it is.
    return _encode_plain(to_jsonable_python(value, fallback=str, inf_nan_mode='null'))


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
        return to_json(value, fallback=str, inf_nan_mode='null').decode()
    except PydanticSerializationError:
        return _encode_wire(value)


def sse_data(value: Any) -> bytes:
    """One SSE event whose data is `value` as `wire_json`: `data: <json>\\n\\n`, UTF-8, built as bytes."""
    try:
        return b'data: ' + to_json(value, fallback=str, inf_nan_mode='null') + b'\n\n'
    except PydanticSerializationError:
        return utf8_json(f'data: {_encode_wire(value)}\n\n')


_LONE_SURROGATE = re.compile('[\ud800-\udfff]')


def utf8_json(text: str) -> bytes:
    """JSON text (from `wire_json`, or `json` with `ensure_ascii=False`) as UTF-8 bytes.

    A lone surrogate has no UTF-8 form; in JSON text it can only sit inside a string, where its `\\u` escape is
    valid JSON and reaches the client as the same UTF-16 code unit.
    """
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda m: f'\\u{ord(m.group()):04x}', text).encode()


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
