"""Building and copying pydantic models from values already of their field types, without validating them.

The encoders' message collection builds a response per model turn, a request per tool result, and a copy of
each finished part, and the adapters' `dump_messages` / `load_messages` build a model per message and part:
thousands per run or history, each from pieces that are already validated models and plain values.
Validation costs about 0.9 µs for a text part and 1.7 µs for a tool result, `model_copy` about 1.6 µs (pydantic
2.14, the 2-core bench machine), while `model_construct` is no cheaper (it re-walks every field). These two
helpers do exactly what those calls leave behind in about 0.5 and 1.0 µs, and `replace` in about 40% of
`model_copy`'s time:

- `construct(cls, values)`: the model `cls(**values)` would be, unset fields at their defaults (default
  factories called), `model_fields_set` the keys given;
- `replace(model, update)`: `model.model_copy(update=update)`, a shallow copy with `update` applied and
  added to `model_fields_set`.

Only for values the caller knows are valid (typed pieces it built itself): only field names are checked
(an unknown or a missing required field is a `TypeError`), never values. They rely on
the four instance slots pydantic v2 gives every model, which `model_construct` sets (`__dict__`,
`__pydantic_fields_set__`, `__pydantic_extra__`, `__pydantic_private__`), and are refused for a model with
private attributes or a post-init hook; `tests/core/test_trusted.py` pins them to what validation and
`model_copy` give, so a pydantic upgrade that changes them fails there first. The slots are written into a
`_Blank` that then takes the model's class (see there): the writes cost a tenth of what they cost on the
model's own class.
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
    extra: dict[str, Any] | None
    """What validation leaves in `__pydantic_extra__` when no extra key is given: `{}` if the class allows
    extra keys (the ag-ui models do), else `None`."""
    blank: bool
    """Whether instances are built as a `_Blank` (see there)."""


_layouts: dict[type[BaseModel], _Layout] = {}


def _layout(cls: type[BaseModel]) -> _Layout:
    if cls.__private_attributes__ or cls.__pydantic_post_init__ is not None:
        # Their instances need what only validation sets up (private defaults, the post-init hook).
        raise TypeError(f'{cls.__name__} has private attributes or a post-init hook: validate it instead')
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        default, factory = info.default, info.default_factory
        template[name] = _REQUIRED if factory is None and default is PydanticUndefined else default
        if factory is not None:
            factories.append((name, cast('Callable[[], Any]', factory)))
        elif default is not PydanticUndefined and default.__hash__ is None:
            # pydantic gives each instance its own copy of an unhashable (mutable) default.
            factories.append((name, functools.partial(copy.deepcopy, default)))
    required = tuple(name for name, value in template.items() if value is _REQUIRED)
    allows_extra = cls.model_config.get('extra') == 'allow'
    layout = _Layout(
        template, len(template), tuple(factories), required, {} if allows_extra else None, _takes_blank(cls)
    )
    _layouts[cls] = layout
    return layout


class _Blank(BaseModel):
    """A model of no fields whose attribute writes are `object`'s own, each one a plain slot store.

    A pydantic model's class defines `__setattr__` (and `__delattr__`), so writing its four slots goes through
    a Python-level call each: about 1,100 instructions apiece, most of what building a small part costs. A
    `_Blank` is written with plain stores (about 140 each) and then given its real class by `__class__`
    assignment, which CPython allows between classes of one memory layout: every pydantic model whose own
    ancestry adds nothing to `BaseModel` but the weak-reference slot (ours and the ag-ui SDK's). `_layout`
    tries the assignment once per class and keeps the descriptor writes below for a class that refuses it.
    """

    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


_new = object.__new__


@functools.cache
def _takes_blank(cls: type[BaseModel]) -> bool:
    """Whether a `_Blank` can become a `cls` (`__class__` assignment: the two memory layouts are one); asked
    once per class, by `_layout` and by `replace` (which also copies models `_layout` refuses)."""
    probe = _new(_Blank)
    try:
        probe.__class__ = cls  # pyright: ignore[reportAttributeAccessIssue]
    except TypeError:
        return False
    return True


# The descriptors of the four instance slots pydantic v2 gives every model (what `model_construct` sets), for a
# class that cannot take a `_Blank`: about a third cheaper than `object.__setattr__` by name.
_slots = BaseModel.__dict__
_set_dict = _slots['__dict__'].__set__
_set_fields_set = _slots['__pydantic_fields_set__'].__set__
_set_extra = _slots['__pydantic_extra__'].__set__
_set_private = _slots['__pydantic_private__'].__set__


def construct(cls: type[M], values: Mapping[str, Any]) -> M:
    """`cls(**values)` for values already of the field types, without validating them (see the module)."""
    layout = _layouts.get(cls) or _layout(cls)
    data = layout.template.copy()
    data.update(values)  # keeps the declaration order: every key is already in the template
    if len(data) != layout.size:
        raise TypeError(f'{cls.__name__}: unknown fields {sorted(data.keys() - layout.template.keys())}')
    for name in layout.required:
        if name not in values:
            raise TypeError(f'{cls.__name__}: missing field {name!r}')
    for name, factory in layout.factories:
        if name not in values:
            data[name] = factory()
    if layout.blank:  # `_assemble`, inline: this runs for every part of every message built
        model: Any = _new(_Blank)
        model.__dict__ = data
        model.__pydantic_fields_set__ = set(values)
        model.__pydantic_extra__ = None if layout.extra is None else {}
        model.__pydantic_private__ = None
        model.__class__ = cls
        return model
    return _assemble(cls, False, data, set(values), None if layout.extra is None else {})


def replace(model: M, update: Mapping[str, Any]) -> M:
    """`model.model_copy(update=update)` for values already of the field types (see the module)."""
    cls = type(model)
    extra = model.__pydantic_extra__
    fields_set = model.__pydantic_fields_set__.union(update)
    data = {**model.__dict__, **update}
    return _assemble(cls, _takes_blank(cls), data, fields_set, None if extra is None else dict(extra))


def _assemble(cls: type[M], blank: bool, data: dict[str, Any], fields_set: set[str], extra: dict[str, Any] | None) -> M:
    """A `cls` whose four slots hold these: written into a `_Blank` that then becomes a `cls` when `blank`."""
    if blank:
        model: Any = _new(_Blank)
        model.__dict__ = data
        model.__pydantic_fields_set__ = fields_set
        model.__pydantic_extra__ = extra
        model.__pydantic_private__ = None
        model.__class__ = cls
        return model
    model = cls.__new__(cls)
    _set_dict(model, data)
    _set_fields_set(model, fields_set)
    _set_extra(model, extra)
    _set_private(model, None)
    return model
