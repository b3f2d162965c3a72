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
the field, as the values already did).

What is asked of each class is looked up once (`_Builder`): its validator, taken from its `TypeAdapter` (the
schema `model_validate` validates against, called without `model_validate`'s Python wrapper, which cost as much
as validating a small part), its field names, and the fields that can hold a list of models (only those are
looked at for one). The measurements: `bench/RESULTS.md`, "Models built by validation, not `__class__` assignment".
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter

M = TypeVar('M', bound=BaseModel)


@dataclass(frozen=True, slots=True)
class _Builder:
    """What `construct` asks of one class, asked once."""

    validate: Callable[[Any], Any]
    """The class's validator: what `model_validate` calls, with the same (default) options."""
    names: frozenset[str]
    model_lists: tuple[str, ...]
    """The fields whose annotation allows a list of models: a list of models in one is assigned, not validated."""


_builders: dict[type[BaseModel], _Builder] = {}
_model_classes: dict[type[object], bool] = {}
"""Whether each class met first in a list is a pydantic model's."""


def _builder(cls: type[BaseModel]) -> _Builder:
    fields = cls.model_fields
    lists = tuple(name for name, info in fields.items() if _allows_model_list(info.annotation))
    builder = _builders[cls] = _Builder(TypeAdapter(cls).validator.validate_python, frozenset(fields), lists)
    return builder


def _allows_model_list(annotation: Any) -> bool:
    """Whether a value of this type can be a list whose items are models (through unions and `Annotated`). A type
    not recognised here only costs speed: its value is validated with the rest."""
    origin = typing.get_origin(annotation)
    if origin is list:
        return any(_holds_models(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _allows_model_list(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_allows_model_list(arg) for arg in typing.get_args(annotation))
    return False


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, BaseModel)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _holds_models(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_holds_models(arg) for arg in typing.get_args(annotation))
    return False  # a string or an alias statement's type is not looked into: such a field is validated whole


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values the caller built itself; a key that names no field is a `TypeError`."""
    builder = _builders.get(cls) or _builder(cls)
    if not builder.names.issuperset(values):
        _unknown(cls, builder.names, values)
    model_lists: dict[str, Any] | None = None
    for name in builder.model_lists:  # inline, no helper (nor `cast()` call) per value: this runs for every part
        value: list[object] | None = values.get(name)
        if type(value) is list and value:
            # Not `isinstance(item, BaseModel)`: pydantic's metaclass is an ABC's, whose check is a Python call.
            kind = type(value[0])
            is_model = _model_classes.get(kind)
            if is_model is None:
                is_model = _model_classes[kind] = issubclass(kind, BaseModel)
            if not is_model:
                continue
            if model_lists is None:
                model_lists = {}
            model_lists[name] = value
    if model_lists is None:
        return builder.validate(values)
    model = builder.validate({**values, **dict.fromkeys(model_lists, ())})
    for name, value in model_lists.items():
        setattr(model, name, value)
    return model


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)`; a key that names no field is a `TypeError`."""
    cls = type(model)
    names = (_builders.get(cls) or _builder(cls)).names
    if not names.issuperset(update):
        _unknown(cls, names, update)
    return model.model_copy(update=update)


def _unknown(cls: type[BaseModel], names: frozenset[str], values: Mapping[str, Any]) -> typing.NoReturn:
    raise TypeError(f'{cls.__name__}: unknown fields {sorted(set(values) - names)}')
