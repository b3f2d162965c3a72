"""What this adapter writes into AG-UI's open channels, shared by dump, load and the stream encoder.

AG-UI has two places where a server may keep what a message does not otherwise say, and the client
echoes both back unchanged: a message's `metadata` object and its `encryptedValue` string.

- `metadata["uibridge"]` (`WIRE_KEY`) holds uibridge's records for an AG-UI message:
  - `response`: on the first AG-UI message of a `ModelResponse`: `timestamp`, and when set `model_name`,
    `provider_name`, `finish_reason`, `metadata` (the response's own metadata). It also marks where a
    response starts, so two responses in a row stay two on load.
  - `request`: on the first AG-UI message of a `ModelRequest` that has `instructions` or `metadata`, or
    that directly follows another request (the same start marker).
  - `part`: what the AG-UI message cannot say about the part it carries: `timestamp`, a system prompt's
    `dynamic_ref`, a text part's `id`, a tool result's `kind` (`retry-prompt`), `outcome` (when not
    success), `json` (the content was JSON, dumped compact) and `metadata`.
- `encryptedValue` holds a JSON string namespaced the same way, `{"uibridge": {<kind>: <payload>}}`:
  `retry_feedback` (seed 003; the payload is `retry_feedback_payload(part)`) and `thinking` (a thinking
  part's `signature`, `provider_name` and `id`).

On the neutral side, `ModelRequest.metadata` / `ModelResponse.metadata` keep under `METADATA_KEY`
(`uibridge_ag_ui`) one entry per AG-UI message the `ModelMessage` was loaded from or streamed as
(`{"id", "name"?, "metadata"?}`), so the same ids, names and client metadata come back on dump.

Everything read back from a client is checked field by field: a record that does not validate is
ignored, never an error, because it is the client's copy of our own annotation.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

import pydantic
import pydantic_core
from ag_ui.core import Message

from ...core import json_text
from ...core.json_text import iso_utc as iso
from ...core.json_text import parse_iso

__all__ = [
    'METADATA_KEY',
    'WIRE_KEY',
    'compact_json',
    'construct',
    'iso',
    'marker',
    'message_adapter',
    'parse_iso',
    'parse_json',
    'read_marker',
    'records',
    'warn',
]

METADATA_KEY = 'uibridge_ag_ui'
WIRE_KEY = 'uibridge'

message_adapter: pydantic.TypeAdapter[Message] = pydantic.TypeAdapter(Message)


def compact_json(value: Any) -> str:
    """`json_text.compact_json(value)`, byte for byte: derived ids hash it and markers are compared as text.

    For plain JSON values (what tool arguments and results, and our own markers, nearly always are)
    pydantic-core writes the same bytes 3 to 5 times faster than `dump_python` + `json.dumps`. The two agree
    on everything plain but three things, which `_plain` turns away to the reference: floats below 1e-4
    (`1e-05` against `0.00001`), non-finite floats (`null` against `Infinity`) and integers `json` refuses
    to print (over 4,300 digits); a lone surrogate, which pydantic-core refuses, takes the reference too.
    """
    try:
        if _plain(value):
            return pydantic_core.to_json(value).decode()
    except (pydantic_core.PydanticSerializationError, RecursionError):
        pass
    return json_text.compact_json(value)


_SMALLEST_SAFE_FLOAT = 1e-4
"""`json` spells floats below this in exponent form with two digits (`1e-05`), pydantic-core does not."""
_LARGEST_FLOAT = 1.7976931348623157e308
_INT_LIMIT = 10**4000
"""Well inside the 4,300 digits CPython prints by default (beyond them `json.dumps` raises)."""
_INT_FLOOR = -_INT_LIMIT


def _plain(value: Any) -> bool:
    """Whether `value` is JSON built of exact `dict` (string keys), `list`, `tuple`, `str`, `bool`, `None`,
    `int` and finite `float`s that both writers spell alike (see `compact_json`)."""
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
        return _plain_scalar(value)
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
        if not _plain(item):
            return False
    return True


def _plain_scalar(value: Any) -> bool:
    kind: object = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return _INT_FLOOR < value < _INT_LIMIT
    if kind is float:
        return value == 0.0 or _SMALLEST_SAFE_FLOAT <= abs(value) <= _LARGEST_FLOAT
    return False


M = TypeVar('M', bound=pydantic.BaseModel)

_Layout = tuple[dict[str, Any], bool, tuple[tuple[str, Callable[[], Any]], ...]]
_layouts: dict[type[pydantic.BaseModel], _Layout] = {}

# The four instance slots pydantic v2 gives every model (what `model_construct` sets), set through their
# descriptors: a third cheaper than `object.__setattr__` by name, which looks each one up again.
_slots = pydantic.BaseModel.__dict__
_set_dict = _slots['__dict__'].__set__
_set_fields_set = _slots['__pydantic_fields_set__'].__set__
_set_extra = _slots['__pydantic_extra__'].__set__
_set_private = _slots['__pydantic_private__'].__set__


def _layout(cls: type[pydantic.BaseModel]) -> _Layout:
    """Every field in declaration order at its default (required ones too, for the caller to fill), whether
    unknown keys are kept (`{}` then, as validation leaves it), and the default factories."""
    assert cls.__pydantic_post_init__ is None and not cls.__private_attributes__, cls
    fields: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        default = info.default
        if info.default_factory is not None:
            factories.append((name, cast(Callable[[], Any], info.default_factory)))
        else:
            # An immutable default can be shared by every instance, as validation shares it.
            assert default is None or default is pydantic_core.PydanticUndefined or isinstance(default, str), name
        fields[name] = default
    layout = _layouts[cls] = (fields, cls.model_config.get('extra') == 'allow', tuple(factories))
    return layout


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """`cls(**values)` for values already of their fields' types (by field name, every required field given):
    the instance validation builds from the same input, `model_fields_set` the keys of `values`, a default
    factory called for each of its fields left out.

    `model_construct` walks every field and its aliases in Python on each call, which makes it slower than
    validating; this copies a per-class template instead (the classes it is used for have no post-init hook
    or private attributes, checked once per class). `core.trusted.construct` does the same for the collector
    with more checks per call, which cost a tenth of `load_messages` here. Tests pin the result to what
    validation builds, for the SDK's models and the neutral ones.
    """
    template, allow_extra, factories = _layouts.get(cls) or _layout(cls)
    fields = template.copy()
    fields.update(values)
    for name, factory in factories:
        if name not in values:
            fields[name] = factory()
    model = cls.__new__(cls)
    _set_dict(model, fields)
    _set_fields_set(model, set(values))
    _set_extra(model, {} if allow_extra else None)
    _set_private(model, None)
    return model


def parse_json(text: str) -> Any:
    """`json.loads(text)`: pydantic-core's parser, several times faster, reads the same values from the same
    texts and refuses the same malformed ones; what it refuses (a lone surrogate, escaped or not) goes to
    `json.loads`, which reads it or raises its own `ValueError`."""
    try:
        return pydantic_core.from_json(text)
    except (ValueError, TypeError):  # TypeError: text pydantic-core cannot take as UTF-8
        return json.loads(text)


def marker(kind: str, payload: Any) -> str:
    return compact_json({WIRE_KEY: {kind: payload}})


def read_marker(encrypted_value: str | None, kind: str) -> Any:
    """The payload of a `{"uibridge": {kind: ...}}` marker, or `None` if `encrypted_value` is not one."""
    if not encrypted_value or not encrypted_value.startswith('{'):
        return None
    try:
        data = parse_json(encrypted_value)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    inner = cast('dict[str, Any]', data).get(WIRE_KEY)
    if not isinstance(inner, dict):
        return None
    return cast('dict[str, Any]', inner).get(kind)


# Casts here and in `dump` / `load` name their types as strings: `cast(dict[str, Any], x)` builds the generic
# alias anew on every call, which on these per-message paths cost more than the check it annotates.
def records(metadata: Any) -> dict[str, Any]:
    """uibridge's records in an AG-UI message's `metadata`, `{}` when absent or malformed."""
    if not isinstance(metadata, dict):
        return {}
    inner = cast('dict[str, Any]', metadata).get(WIRE_KEY)
    return cast('dict[str, Any]', inner) if isinstance(inner, dict) else {}


def warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)
