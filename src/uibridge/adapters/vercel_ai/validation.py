"""Client JSON to models, with every failure an `InputError` that names where it is.

Pydantic's error locations include the tags of tagged unions (`parts.0.text.text`); the path a client needs
is the JSON path (`parts.0.text`), so tags are dropped. Messages are short and never repeat the input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic

from ...core.errors import InputError
from .types import UIMessage

__all__ = ['input_error', 'validate_ui_message']

_TAGGED_LISTS = frozenset({'parts'})


def input_error(error: pydantic.ValidationError, *prefix: str | int) -> InputError:
    """The first problem in `error`, located under `prefix`."""
    first = error.errors(include_url=False, include_input=False)[0]
    loc = list(first['loc'])
    path: list[str | int] = list(prefix)
    index = 0
    while index < len(loc):
        item = loc[index]
        path.append(item)
        # `parts.<n>.<tag>`: the tag is pydantic's, not the client's.
        if isinstance(item, int) and index > 0 and loc[index - 1] in _TAGGED_LISTS and index + 1 < len(loc):
            index += 1
        index += 1
    return InputError(_message(first), '.'.join(str(p) for p in path))


def _message(error: Any) -> str:
    kind = error.get('type', '')
    if kind == 'missing':
        return 'required field missing'
    if kind == 'invalid_part_type':
        return 'a part needs a string type'
    if kind == 'union_tag_invalid':
        return 'unknown type'
    msg = str(error.get('msg', 'invalid value'))
    return msg.removeprefix('Value error, ')


def validate_ui_message(data: UIMessage | Mapping[str, Any] | Any, *prefix: str | int) -> UIMessage:
    if isinstance(data, UIMessage):
        return data
    if not isinstance(data, Mapping):
        raise InputError('a message must be an object', '.'.join(str(p) for p in prefix))
    try:
        return UIMessage.model_validate(data)
    except pydantic.ValidationError as e:
        raise input_error(e, *prefix) from None
