"""Client JSON to models, with every failure an `InputError` that names where it is.

Pydantic's error locations include the tags of tagged unions (`parts.0.text.text`); the path a client needs
is the JSON path (`parts.0.text`), so tags are dropped. Messages are short and never repeat the input. Which
of several errors is reported is the rule of `core.client_input.input_error` (the deepest).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from pydantic_core import ErrorDetails

from ...core.client_input import Loc, input_error
from ...core.errors import InputError
from ._sdk_versions import upgrade_message
from .types import UIMessage

_TAGGED_LISTS = frozenset({'parts'})


def _json_path(loc: Loc) -> str:
    """The client's path for pydantic's location: the tag after `parts.<n>` is pydantic's, not the client's."""
    path: list[str | int] = []
    index = 0
    while index < len(loc):
        item = loc[index]
        path.append(item)
        if isinstance(item, int) and index > 0 and loc[index - 1] in _TAGGED_LISTS and index + 1 < len(loc):
            index += 1
        index += 1
    return '.'.join(str(p) for p in path)


def _message(error: ErrorDetails) -> str:
    kind = error['type']
    if kind == 'missing':
        return 'required field missing'
    if kind == 'invalid_part_type':
        return 'a part needs a string type'
    if kind == 'union_tag_invalid':
        return 'unknown type'
    return error['msg'].removeprefix('Value error, ')


def validate_ui_message(data: UIMessage | Mapping[str, Any] | Any, *prefix: str | int) -> UIMessage:
    if isinstance(data, UIMessage):
        return data
    if not isinstance(data, Mapping):
        raise InputError('a message must be an object').at(*prefix)
    try:
        message = UIMessage.model_validate(data)
    except pydantic.ValidationError as e:
        raise input_error(e, *prefix, json_path=_json_path, message=_message) from None
    return upgrade_message(message)  # an `ai` 5 client's approval answers, in the form 6 and 7 send
