"""Building and copying pydantic models from values the caller built itself, by pydantic's own means.

The encoders' message collection builds a response per model turn, a request per tool result and a copy of
each finished part, and the adapters' `dump_messages` / `load_messages` build a model per message and part:
each from pieces that are already validated models and plain values.

- `construct(cls, values)`: `cls.model_validate(values)`, the model `cls(**values)` builds, except that a list of
  models is assigned after validating the rest instead of being validated item by item;
- `replace(model, update)`: `model.model_copy(update=update)`, a shallow copy with `update` applied and added
  to `model_fields_set`; the original is left as it was.

Each checks one thing more than the pydantic call it makes: every key must be one of the model's field names.
Callers write field names, never wire aliases, so a misspelt name is a `TypeError` where it was written, where
pydantic would drop it (validation), write it into the copy as if it were a field (`model_copy`), or keep it as
extra data (a model that allows extra keys, as the AG-UI SDK's do).

Why validation, not `model_construct` (pydantic's API for trusted data): on values of the right type validation
is cheap (a model instance passes through as it is, since pydantic does not revalidate instances by default)
and still checks what the caller built, while `model_construct` resolves every default, factories included,
through the field's metadata on each call and measures slower than validating these models. Validation gives
the same instances back for a list of models too, but only after calling a tagged union's discriminator (a
Python function) for each of them: a message's parts list cost several times the rest of the message. So such
a list is validated as empty and then assigned (plain attribute assignment, which pydantic counts as setting
the field, as the values already did). The measurements: `bench/RESULTS.md`, "Building models by validation".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from pydantic import BaseModel

M = TypeVar('M', bound=BaseModel)

_field_names: dict[type[BaseModel], frozenset[str]] = {}


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values the caller built itself; a key that names no field is a `TypeError`."""
    _check_names(cls, values)
    model_lists: dict[str, Any] = {}
    for name, value in values.items():  # inline, no helper per value: this runs for every message and part
        if type(value) is list and value and isinstance(cast('list[object]', value)[0], BaseModel):
            model_lists[name] = value
    if not model_lists:
        return cls.model_validate(values)
    model = cls.model_validate({**values, **dict.fromkeys(model_lists, ())})
    for name, value in model_lists.items():
        setattr(model, name, value)
    return model


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)`; a key that names no field is a `TypeError`."""
    _check_names(type(model), update)
    return model.model_copy(update=update)


def _check_names(cls: type[BaseModel], values: Mapping[str, Any]) -> None:
    names = _field_names.get(cls)
    if names is None:
        names = _field_names[cls] = frozenset(cls.model_fields)
    if not names.issuperset(values):
        raise TypeError(f'{cls.__name__}: unknown fields {sorted(set(values) - names)}')
