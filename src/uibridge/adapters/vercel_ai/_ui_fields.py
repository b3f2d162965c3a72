"""The fields of a response's UI parts that only the UI reads, kept beside the part they came on.

A client's assistant message may hold, on a part uibridge turns into a neutral one, fields no model is shown
(`convertToModelMessages` drops them, or they only say how to draw the part): a text part's `citations` (`ai` 7),
a tool part's `title`, `toolMetadata`, `preliminary` (an output the tool streamed before its last) and
`dynamic: false` (a `dynamic-tool` whose static tool the app no longer registers, as `validateUIMessages` marks
it), a file part's `providerReference`, and a file's `filename` where the part itself had it. Loading keeps them
in the response's sidecar under `ui_fields`, by the position of the neutral part the UI part became (a call's,
for a tool part), by field name; `dump_messages` puts them back on the part it writes there.

They are the client's word about its own display and nothing else: they never reach the neutral part, so no
signature covers them, and a client's copy of them is reset by `verify_history` with the rest of the sidecar.
Each is checked for its type when put back, since a sidecar may come from anywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .types import DynamicToolUIPart, FileUIPart, TextUIPart, ToolUIPart, UIMessagePart

UI_FIELDS_KEY = 'ui_fields'


def _is_object(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(key, str) for key in cast('dict[Any, Any]', value))


def _is_string_map(value: Any) -> bool:
    return _is_object(value) and all(isinstance(item, str) for item in cast('dict[str, Any]', value).values())


def _is_citations(value: Any) -> bool:
    return isinstance(value, list) and all(_is_object(item) for item in cast('list[Any]', value))


_TOOL_CHECKS: dict[str, Callable[[Any], bool]] = {
    'title': lambda value: isinstance(value, str),
    'tool_metadata': _is_object,
    'preliminary': lambda value: value is True,
    'dynamic': lambda value: value is False,
}
_CHECKS: dict[type[Any], dict[str, Callable[[Any], bool]]] = {
    TextUIPart: {'citations': _is_citations},
    FileUIPart: {'filename': lambda value: isinstance(value, str), 'provider_reference': _is_string_map},
    ToolUIPart: _TOOL_CHECKS,
    DynamicToolUIPart: _TOOL_CHECKS,
}


def _checks(part: UIMessagePart) -> dict[str, Callable[[Any], bool]] | None:
    found = _CHECKS.get(type(part))
    if found is None:  # a subclass (a part built in Python): its base's
        found = next((checks for base, checks in _CHECKS.items() if isinstance(part, base)), None)
    return found


def ui_fields_of(part: TextUIPart | FileUIPart | ToolUIPart | DynamicToolUIPart) -> dict[str, Any]:
    """What of `part` only the UI reads (see the module docstring), by field name; `{}` for most parts."""
    values = part.__dict__
    found = {name: values[name] for name in _checks(part) or () if values.get(name) is not None}
    if 'preliminary' in found and getattr(part, 'state', None) != 'output-available':
        del found['preliminary']  # only an output can be preliminary (the client's validator says so)
    if found.get('dynamic') is not False:
        found.pop('dynamic', None)  # `dynamic-tool` says it is dynamic; only `false` is a field's news
    return found


def keep_ui_fields(side: dict[str, Any], position: int, fields: dict[str, Any]) -> None:
    """Record `fields` for the part at `position` of a response (`side`: its sidecar)."""
    kept = cast('dict[str, Any]', side.setdefault(UI_FIELDS_KEY, {}))
    kept[str(position)] = fields


def kept_ui_fields(side: dict[str, Any]) -> dict[str, Any]:
    kept = side.get(UI_FIELDS_KEY)
    return cast('dict[str, Any]', kept) if isinstance(kept, dict) else {}


def with_ui_fields(part: UIMessagePart, fields: Any) -> UIMessagePart:
    """`part` with the kept `fields` that fit it put back (a field of the wrong type, or one its kind or state has
    no place for, is left out: the part stays one the client's validator takes)."""
    checks = _checks(part)
    if checks is None or not isinstance(fields, dict):
        return part
    update = {
        name: value
        for name, value in cast('dict[str, Any]', fields).items()
        if name in checks and checks[name](value) and (name != 'dynamic' or isinstance(part, DynamicToolUIPart))
    }
    if 'preliminary' in update and getattr(part, 'state', None) != 'output-available':
        del update['preliminary']
    return part.model_copy(update=update) if update else part
