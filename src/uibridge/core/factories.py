"""Default factories for the mutable fields of the dataclasses on hot paths.

`field(default_factory=list[X])` types the field for pyright, but calling a generic alias is several times
slower than calling `list`: it also tries to set `__orig_class__` on the new list, which fails with an
`AttributeError` built and thrown away each time. These return the plain empty containers, typed loosely
enough (`Any` items) to fill a field of any item type.
"""

from __future__ import annotations

from typing import Any


def new_list() -> list[Any]:
    return []


def new_dict() -> dict[Any, Any]:
    return {}
