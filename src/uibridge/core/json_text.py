"""The JSON text and timestamps uibridge writes, one way everywhere.

Markers, derived ids and rendered feedback are compared and hashed as text, so every module that writes
JSON into them must write the same bytes for the same value: compact, UTF-8 (no `\\u` escapes), keys in
insertion order, timestamps in ISO 8601 with `Z` for UTC.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

__all__ = ['compact_json', 'iso_utc', 'json_values', 'parse_iso']

json_values: TypeAdapter[Any] = TypeAdapter(Any)
"""Turns any value pydantic can serialize (models, datetimes, bytes, tuples) into JSON-compatible Python."""


def compact_json(value: Any) -> str:
    return json.dumps(json_values.dump_python(value, mode='json'), separators=(',', ':'), ensure_ascii=False)


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
