"""Building and copying pydantic models from values already of their field types, without validating them.

The encoders' message collection builds a response per model turn, a request per tool result, and a copy of
each finished part: thousands per run, each from pieces that are already validated models and plain values.
Validation costs 3 to 6 µs a model there and `model_copy` about 5 µs (pydantic 2.14, development machine),
while `model_construct` is no cheaper (it re-walks every field). These two helpers do exactly what those
calls leave behind, for about a third of the cost:

- `construct(cls, values)`: the model `cls(**values)` would be, unset fields at their defaults (default
  factories called), `model_fields_set` the keys given;
- `replace(model, update)`: `model.model_copy(update=update)`, a shallow copy with `update` applied and
  added to `model_fields_set`.

Only for values the caller knows are valid (typed pieces it built itself): nothing is checked. They rely on
the three instance slots pydantic v2 documents for `model_construct` (`__dict__`, `__pydantic_fields_set__`,
`__pydantic_extra__`, `__pydantic_private__`); `tests/core/test_trusted.py` pins them to what validation and
`model_copy` give, so a pydantic upgrade that changes them fails there first.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ['construct', 'replace']

M = TypeVar('M', bound=BaseModel)

_Default = tuple[str, Any, Callable[[], Any] | None]

_defaults_by_class: dict[type[BaseModel], tuple[_Default, ...]] = {}


def _defaults(cls: type[BaseModel]) -> tuple[_Default, ...]:
    defaults = _defaults_by_class.get(cls)
    if defaults is None:
        items: list[_Default] = []
        for name, info in cls.model_fields.items():
            factory: Any = info.default_factory
            default = info.default
            if factory is None and default is PydanticUndefined:
                items.append((name, PydanticUndefined, None))  # required: the caller must give it
            elif factory is None and default.__hash__ is None:
                # pydantic gives each instance its own copy of an unhashable (mutable) default.
                items.append((name, default, functools.partial(copy.deepcopy, default)))
            else:
                items.append((name, default, factory))
        defaults = _defaults_by_class[cls] = tuple(items)
    return defaults


def _install(model: BaseModel, data: dict[str, Any], fields_set: set[str]) -> None:
    setattr_ = object.__setattr__
    setattr_(model, '__dict__', data)
    setattr_(model, '__pydantic_fields_set__', fields_set)
    setattr_(model, '__pydantic_extra__', None)
    setattr_(model, '__pydantic_private__', None)


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values already of the field types, without validating them (see the module)."""
    data: dict[str, Any] = {}
    for name, default, factory in _defaults(cls):
        if name in values:
            data[name] = values[name]
        elif factory is not None:
            data[name] = factory()
        elif default is PydanticUndefined:
            raise TypeError(f'{cls.__name__}: {name!r} is required')
        else:
            data[name] = default
    model = cls.__new__(cls)
    _install(model, data, set(values))
    return model


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)` for values already of the field types (see the module)."""
    copy = type(model).__new__(type(model))
    _install(copy, {**model.__dict__, **update}, model.__pydantic_fields_set__ | update.keys())
    return copy
