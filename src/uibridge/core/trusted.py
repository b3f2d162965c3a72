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
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ['construct', 'replace']

M = TypeVar('M', bound=BaseModel)

_REQUIRED: Any = object()


@dataclass(frozen=True, slots=True)
class _Layout:
    template: dict[str, Any]
    """Every field in declaration order, at its plain default (`_REQUIRED` for required fields)."""
    size: int
    factories: tuple[tuple[str, Callable[[], Any]], ...]
    required: tuple[str, ...]


_layouts: dict[type[BaseModel], _Layout] = {}


def _layout(cls: type[BaseModel]) -> _Layout:
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        default, factory = info.default, info.default_factory
        template[name] = _REQUIRED if factory is None and default is PydanticUndefined else default
        if factory is not None:
            factories.append((name, cast(Callable[[], Any], factory)))
        elif default is not PydanticUndefined and default.__hash__ is None:
            # pydantic gives each instance its own copy of an unhashable (mutable) default.
            factories.append((name, functools.partial(copy.deepcopy, default)))
    required = tuple(name for name, value in template.items() if value is _REQUIRED)
    layout = _layouts[cls] = _Layout(template, len(template), tuple(factories), required)
    return layout


# Hot: called per model built, so the four slot writes are spelled out in each function below.
_set = object.__setattr__


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values already of the field types, without validating them (see the module)."""
    layout = _layouts.get(cls) or _layout(cls)
    data = layout.template.copy()
    data.update(values)  # keeps the declaration order: every key is already in the template
    if len(data) != layout.size or any(name not in values for name in layout.required):
        unknown = sorted(data.keys() - layout.template.keys())
        missing = [name for name in layout.required if name not in values]
        raise TypeError(f'{cls.__name__}: unknown fields {unknown}, missing fields {missing}')
    for name, factory in layout.factories:
        if name not in values:
            data[name] = factory()
    model = cls.__new__(cls)
    _set(model, '__dict__', data)
    _set(model, '__pydantic_fields_set__', set(values))
    _set(model, '__pydantic_extra__', None)
    _set(model, '__pydantic_private__', None)
    return model


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)` for values already of the field types (see the module)."""
    copied = type(model).__new__(type(model))
    _set(copied, '__dict__', {**model.__dict__, **update})
    _set(copied, '__pydantic_fields_set__', model.__pydantic_fields_set__.union(update))
    _set(copied, '__pydantic_extra__', None)
    _set(copied, '__pydantic_private__', None)
    return copied
