"""What the comparisons of a UI round trip leave out of a neutral history: the fields only uibridge's JSON keeps.

A history loaded from pydantic-ai's stored JSON keeps every key pydantic-ai wrote (`extra='allow'`), and
uibridge's own JSON gives them all back (`tests/core/test_pydantic_ai_compat.py`). The UI protocols carry what
a model or a UI reads, not pydantic-ai's bookkeeping (`run_id`, `model_id`, a part's `provider_details`, ...):
so a UI round trip is compared on the model's declared fields.
"""

from __future__ import annotations

from typing import Any

import pydantic


def without_extras(value: Any) -> Any:
    """`value` with every model's extra keys left out, recursively (models, lists, dicts)."""
    if isinstance(value, pydantic.BaseModel):
        fields = type(value).model_fields
        copied = value.model_copy(update={name: without_extras(getattr(value, name)) for name in fields})
        if copied.__pydantic_extra__ is not None:
            copied.__pydantic_extra__ = {}
        return copied
    if isinstance(value, list):
        return [without_extras(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def as_verified(messages: list[Any]) -> list[Any]:
    """`messages` as `verify_history` keeps them when every part verifies: the messages with parts, each
    response without the fields no signature covers and a provider may act on."""
    unvouched = {'provider_response_id': None, 'provider_details': None}
    return [
        m.model_copy(update=unvouched) if getattr(m, 'kind', None) == 'response' else m for m in messages if m.parts
    ]
