"""Reading what a client sent: forward compatibility and error paths, shared by `load` and `request`.

A newer client may send what this version does not know: a message with an unknown `role`, a content part
with an unknown `type`, a media part with an unknown `source.type`. Each is skipped with a `UserWarning`
instead of failing the whole request. Everything else invalid becomes an `InputError` whose path names the
place in the JSON as the client numbered it (skipped items included) and whose message never echoes input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pydantic

from ...core.client_input import Loc, input_error
from ...core.errors import InputError
from ._wire import warn

ROLES = frozenset({'developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning'})
_PART_TYPES = frozenset({'text', 'image', 'audio', 'video', 'document'})
_SOURCE_TYPES = frozenset({'data', 'url', 'file'})


def prefilter_message(raw: Any, path: str) -> tuple[Any, list[int] | None] | None:
    """`raw` with what a newer client may send and this version cannot read skipped (each with a warning).

    Returns `None` for a message to skip, else the message and, when content parts were skipped, the
    original index of each part kept (so an error can name the part as the client numbered it).
    Anything malformed in a way no version allows is left for validation to report.
    """
    if not isinstance(raw, Mapping):
        return raw, None
    message = cast('Mapping[str, Any]', raw)
    role = message.get('role')
    if _unknown(role, ROLES, path, 'a message with role', 'which this version of AG-UI does not know.'):
        return None
    content = message.get('content')
    if role in ('user', 'tool') and isinstance(content, list):
        kept: list[Any] = []
        kept_indexes: list[int] = []
        for position, item in enumerate(cast('list[Any]', content)):
            if _known_part(item, f'{path}.content.{position}'):
                kept.append(item)
                kept_indexes.append(position)
        if len(kept) != len(cast('list[Any]', content)):
            return {**message, 'content': kept}, kept_indexes
    return message, None


def known_role(raw: Any, path: str) -> bool:
    """Whether `raw` is not a message of a role this version does not know (that one is skipped, with a warning)."""
    role = cast('Mapping[str, Any]', raw).get('role') if isinstance(raw, Mapping) else None
    return not _unknown(role, ROLES, path, 'a message with role', 'which this version of AG-UI does not know.')


def client_part_numbered(error: InputError, part_indexes: list[int] | None) -> InputError:
    """`error`, located inside one message, at the client's index of its content part (`part_indexes`, from
    `prefilter_message`, lists the index of each part kept; `None` when none was skipped)."""
    head, below = error.split()
    if part_indexes is None or head != 'content':
        return error
    return below.renumbered(part_indexes).at('content')


def _known_part(item: Any, path: str) -> bool:
    if not isinstance(item, Mapping):
        return True
    part = cast('Mapping[str, Any]', item)
    if _unknown(part.get('type'), _PART_TYPES, path, 'a content part of type', 'which this version does not know.'):
        return False
    source = part.get('source')
    source_type = cast('Mapping[str, Any]', source).get('type') if isinstance(source, Mapping) else None
    return not _unknown(source_type, _SOURCE_TYPES, path, 'a content part with source type', 'unknown to this version.')


def _unknown(name: Any, known: frozenset[str], path: str, what: str, why: str) -> bool:
    """Whether `name` is one this version does not know (a newer client's); if so, says what was skipped."""
    if isinstance(name, str) and name not in known:
        warn(f'{path}: skipped {what} {name[:40]!r}, {why}')
        return True
    return False


_TYPE_NAMES = frozenset({'str', 'int', 'float', 'bool', 'dict', 'list', 'none', 'tuple'})


def error_path(loc: Loc) -> str:
    """A JSON path from a pydantic error location, leaving out the union-member tags pydantic adds
    (a message's role, a part's or source's type, `str` / `list[...]` for a `str | list` field)."""
    kept: list[str] = []
    previous: int | str | None = None
    for item in loc:
        tag = isinstance(item, str) and (
            not item.isidentifier()
            or item in _TYPE_NAMES
            or (item in ROLES and (previous is None or isinstance(previous, int)))
            or (item in _PART_TYPES and isinstance(previous, int))
            or (item in _SOURCE_TYPES and previous == 'source')
        )
        if not tag:
            kept.append(str(item))
        previous = item
    return '.'.join(kept)


def validation_error(error: pydantic.ValidationError) -> InputError:
    """The problem in `error` a client is told (`core.client_input.input_error`: the deepest), with pydantic's
    own message and the client's JSON path."""
    return input_error(error, json_path=error_path)
