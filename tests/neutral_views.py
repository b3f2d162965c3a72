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


def agent_view(messages: list[Any]) -> list[tuple[str, list[Any], Any, dict[str, Any]]]:
    """What `verify_history` leaves of each message of client history for the agent: its kind, parts and
    instructions, and of its metadata the keys a signature covers (a response's `client` marks, its state). Every
    other field of a client's copy is reset (`tests/core/test_default_deny.py`)."""
    view: list[tuple[str, list[Any], Any, dict[str, Any]]] = []
    for message in messages:
        metadata: dict[str, Any] = dict(message.metadata or {}) if message.kind == 'response' else {}
        covered: dict[str, Any] = {}
        marks = {k: v for k, v in (metadata.get('uibridge_answered_by') or {}).items() if v == 'client'}
        if marks:
            covered['uibridge_answered_by'] = marks
        if 'uibridge_state' in metadata:
            covered['uibridge_state'] = metadata['uibridge_state']
        view.append((message.kind, message.parts, getattr(message, 'instructions', None), covered))
    return view


def as_verified(messages: list[Any]) -> list[tuple[str, list[Any], Any, dict[str, Any]]]:
    """`agent_view` of `messages` as `verify_history` keeps them when every part verifies: those with parts."""
    return agent_view([m for m in messages if m.parts])
