"""Exact JSON: the text a signature covers, and whether a JavaScript client gives a value back as that text.

A model reads the JSON values of a conversation (a tool call's arguments, a result) as text, so a signature
covers that text exactly: `exact_text(value)`, compact JSON with the keys in their order (`compact_json`, the
text every provider input writes). What reaches the agent from a client's copy is then a value whose text is
exactly the signed one (`read_exact` turns the text back into it), or nothing: a copy that differs in any byte
(a duplicate key, `NaN`, keys in another order, another digit of a large integer) does not verify.

A JavaScript client holds a JSON object as a parsed value and writes it again with `JSON.stringify`. That keeps
strings, booleans, `null`, arrays, fractional numbers and most key orders exactly, and changes four things:

- an object's keys that read as array indexes (`"0"`, `"17"`) come first, in numeric order;
- a whole float comes back as an integer (`1.0` as `1`, `-0.0` as `0`, `1e16` as `10000000000000000`);
- an integer past 2**53 comes back as the nearest double (`12345678901234567891` as `12345678901234567000`);
- `NaN` and the infinities come back as `null`.

`survives_javascript(value)` says whether none of them applies (conservatively: any key made of digits counts,
and any value that is not plain JSON). Where one does, an adapter carries `exact_text(value)` as a string beside
the value, in the signed item's metadata (strings cross JavaScript unchanged), and reads the value back from it.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic_core import PydanticSerializationError

from .json_text import compact_json, json_string, json_values, parse_json

_SAFE_INTEGER = 2**53


def exact_text(value: Any) -> str:
    """The text of `value` a signature covers and a model reads: `compact_json(value)`; a value pydantic cannot
    write (an object of an application's own class) as the wire writes it, as its `str`."""
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str:
        return json_string(value)  # what `compact_json` writes for a string, without its walk (most results)
    if value is None:
        return 'null'
    try:
        return compact_json(value)
    except PydanticSerializationError:
        return compact_json(json_values.dump_python(value, mode='json', fallback=str))


def read_exact(text: str) -> tuple[bool, Any]:
    """`(True, value)` for the value whose `exact_text` is `text` exactly, else `(False, None)` (not JSON, or JSON
    that would be written otherwise: duplicate keys, spacing, another spelling of a number or a string)."""
    try:
        value = parse_json(text)
    except (ValueError, RecursionError):
        return False, None
    try:
        return exact_text(value) == text, value
    except (ValueError, TypeError, RecursionError):
        return False, None


def survives_javascript(value: Any) -> bool:
    """Whether `JSON.parse` then `JSON.stringify` in a browser, read back here, gives `value`'s `exact_text`
    unchanged (see the module docstring). Values that are not plain JSON are judged by their JSON form."""
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        for key in value:
            if type(key) is not str or (key.isdigit() and key.isascii()) or key == '__proto__':
                return False  # an index-like key moves; `__proto__` is special to some object copies
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return _scalar_survives(value)
    # Strings and integers are looked at in place, as `json_text._spelled_alike` does: most of a value is those,
    # and a call per member would cost more than the rest of the walk (this runs for every result dumped).
    for item in items:
        member: object = type(item)  # pyright: ignore[reportUnknownVariableType]
        if member is str or item is None or member is bool:
            continue
        if member is int:
            if -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                continue
            return False
        if not survives_javascript(item):
            return False
    return True


def _scalar_survives(value: Any) -> bool:
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE_INTEGER <= value <= _SAFE_INTEGER
    if kind is float:
        return math.isfinite(value) and not value.is_integer()
    try:
        plain = json_values.dump_python(value, mode='json')
    except (ValueError, TypeError):
        return False
    return type(plain) is not kind and survives_javascript(plain)  # pyright: ignore[reportUnknownArgumentType]


def carry_exact(fields: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`fields` (an item's metadata, which a client echoes back) with `<key>_json`, the exact text of `value`, when
    the JavaScript client would give `value` back as other text: what the signature covers, and what
    `carried_value` reads back instead of the client's copy."""
    if not survives_javascript(value):
        fields[f'{key}_json'] = exact_text(value)
    return fields


def carried_value(fields: dict[str, Any], key: str, value: Any) -> Any:
    """The value `carry_exact` carried for `key` in `fields`, else `value` (the client's copy as JavaScript gave
    it). A carried text that is not exactly some value's text stays that text, which verifies as nothing the
    server signed (the signature covers a value's text, and a string's is quoted)."""
    text = fields.get(f'{key}_json')
    if not isinstance(text, str):
        return value
    exact, read = read_exact(text)
    return read if exact else text
