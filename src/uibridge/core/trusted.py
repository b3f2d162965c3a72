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
    factories: tuple[tuple[str, Callable[[], Any]], ...]
    required: frozenset[str]


_layouts: dict[type[BaseModel], _Layout] = {}


def _layout(cls: type[BaseModel]) -> _Layout:
    layout = _layouts.get(cls)
    if layout is None:
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
        required = frozenset(name for name, value in template.items() if value is _REQUIRED)
        layout = _layouts[cls] = _Layout(template, tuple(factories), required)
    return layout


def _install(model: BaseModel, data: dict[str, Any], fields_set: set[str]) -> None:
    setattr_ = object.__setattr__
    setattr_(model, '__dict__', data)
    setattr_(model, '__pydantic_fields_set__', fields_set)
    setattr_(model, '__pydantic_extra__', None)
    setattr_(model, '__pydantic_private__', None)


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values already of the field types, without validating them (see the module)."""
    layout = _layout(cls)
    data = layout.template.copy()
    data.update(values)  # keeps the declaration order: every key is already in the template
    if len(data) != len(layout.template) or not layout.required.issubset(values):
        unknown, missing = sorted(data.keys() - layout.template.keys()), sorted(layout.required - values.keys())
        raise TypeError(f'{cls.__name__}: unknown fields {unknown}, missing fields {missing}')
    for name, factory in layout.factories:
        if name not in values:
            data[name] = factory()
    model = cls.__new__(cls)
    _install(model, data, set(values))
    return model


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)` for values already of the field types (see the module)."""
    copy = type(model).__new__(type(model))
    _install(copy, {**model.__dict__, **update}, model.__pydantic_fields_set__.union(update))
    return copy
