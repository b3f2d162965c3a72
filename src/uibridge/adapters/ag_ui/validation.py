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

from ...core.errors import InputError
from ._wire import warn

__all__ = ['ROLES', 'error_path', 'original_part_path', 'prefilter_message', 'validation_error']

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
    if isinstance(role, str) and role not in ROLES:
        warn(f'{path}: skipped a message with role {role[:40]!r}, which this version of AG-UI does not know.')
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


def original_part_path(rest: str, part_indexes: list[int] | None) -> str:
    """`rest` (a path inside one message) with a filtered content index turned back into the client's."""
    if part_indexes is None or not rest.startswith('content.'):
        return rest
    position, _, tail = rest[len('content.') :].partition('.')
    if not position.isdigit() or int(position) >= len(part_indexes):
        return rest
    return '.'.join(p for p in ('content', str(part_indexes[int(position)]), tail) if p)


def _known_part(item: Any, path: str) -> bool:
    if not isinstance(item, Mapping):
        return True
    part = cast('Mapping[str, Any]', item)
    part_type = part.get('type')
    if isinstance(part_type, str) and part_type not in _PART_TYPES:
        warn(f'{path}: skipped a content part of type {part_type[:40]!r}, which this version does not know.')
        return False
    source = part.get('source')
    if isinstance(source, Mapping):
        source_type = cast('Mapping[str, Any]', source).get('type')
        if isinstance(source_type, str) and source_type not in _SOURCE_TYPES:
            warn(f'{path}: skipped a content part with source type {source_type[:40]!r}, unknown to this version.')
            return False
    return True


_TYPE_NAMES = frozenset({'str', 'int', 'float', 'bool', 'dict', 'list', 'none', 'tuple'})


def error_path(loc: tuple[int | str, ...]) -> str:
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


def validation_error(error: pydantic.ValidationError, prefix: str) -> InputError:
    # The most specific error: a union reports one per member, the deepest one is where the input went wrong.
    first = max(error.errors(include_url=False, include_input=False), key=lambda e: len(e['loc']))
    path = error_path(first['loc'])
    return InputError(first['msg'], f'{prefix}.{path}' if prefix and path else prefix or path)
