"""RFC 6902 JSON Patch applied to plain JSON values, as the clients apply the state deltas a server sends.

AG-UI clients apply `STATE_DELTA` with fast-json-patch; the collector applies the same operations to its copy
of the state so that what it keeps is what the client holds. The document is never mutated: each operation
copies the containers on its path (O(depth + width of each container on it)), so a snapshot handed out before
stays as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, cast

from .provenance import canonical_json


class JsonPatchError(ValueError):
    """An operation that is malformed or does not apply to the document (RFC 6902 §5: the patch fails whole)."""


def apply_patch(document: Any, operations: Sequence[Any]) -> Any:
    """`document` with `operations` applied in order; raises `JsonPatchError` and changes nothing if one fails."""
    for number, operation in enumerate(operations):
        try:
            document = _apply(document, operation)
        except JsonPatchError as e:
            raise JsonPatchError(f'operation {number}: {e}') from None
    return document


def _apply(document: Any, operation: Any) -> Any:
    if not isinstance(operation, dict):
        raise JsonPatchError('not an object')
    op = cast('dict[str, Any]', operation)
    kind, path = op.get('op'), _pointer(op.get('path'))
    match kind:
        case 'add':
            return _set(document, path, _value(op), insert=True)
        case 'replace':
            _get(document, path)
            return _set(document, path, _value(op), insert=False)
        case 'remove':
            return _remove(document, path)
        case 'move':
            source = _pointer(op.get('from'))
            if path == source:  # RFC 6902 §4.4 refuses only a proper prefix: to its own place is no change
                _get(document, source)
                return document
            if path[: len(source)] == source:
                raise JsonPatchError('cannot move a value into itself')
            value = _get(document, source)
            return _set(_remove(document, source), path, value, insert=True)
        case 'copy':
            # A value of its own: sharing it would make a later in-place change to one place show in the other.
            value = copy.deepcopy(_get(document, _pointer(op.get('from'))))
            return _set(document, path, value, insert=True)
        case 'test':
            if canonical_json(_get(document, path)) != canonical_json(_value(op)):  # 1 == 1.0, as in JS
                raise JsonPatchError(f'test failed at {op.get("path")!r}')
            return document
        case _:
            raise JsonPatchError(f'unknown op {kind!r}')


def _value(op: dict[str, Any]) -> Any:
    if 'value' not in op:
        raise JsonPatchError(f'{op.get("op")!r} needs a value')
    return op['value']


def _pointer(pointer: Any) -> list[str]:
    """RFC 6901: `''` is the whole document, `/a/0` its tokens; `~1` is `/` and `~0` is `~`."""
    if not isinstance(pointer, str):
        raise JsonPatchError('a path must be a string')
    if pointer == '':
        return []
    if not pointer.startswith('/'):
        raise JsonPatchError(f'a path starts with "/": {pointer!r}')
    return [token.replace('~1', '/').replace('~0', '~') for token in pointer[1:].split('/')]


def _index(container: list[Any], token: str, *, end_ok: bool) -> int:
    if token == '-' and end_ok:
        return len(container)
    # ASCII digits only (RFC 6901 §4): `str.isdigit` also takes '١' (which `int` reads as 1) and '²' (which it can't).
    if not (token.isascii() and token.isdigit()) or (token != '0' and token.startswith('0')):
        raise JsonPatchError(f'not an array index: {token!r}')
    index = int(token)
    if index > len(container) or (index == len(container) and not end_ok):
        raise JsonPatchError(f'array index {index} out of range')
    return index


def _get(document: Any, path: list[str]) -> Any:
    for token in path:
        if isinstance(document, dict):
            if token not in document:
                raise JsonPatchError(f'no member {token!r}')
            document = cast('dict[str, Any]', document)[token]
        elif isinstance(document, list):
            document = cast('list[Any]', document)[_index(cast('list[Any]', document), token, end_ok=False)]
        else:
            raise JsonPatchError(f'cannot index a {type(document).__name__} with {token!r}')
    return document


def _set(document: Any, path: list[str], value: Any, *, insert: bool) -> Any:
    if not path:
        return value
    token, rest = path[0], path[1:]
    if isinstance(document, dict):
        copied = dict(cast('dict[str, Any]', document))
        if rest:
            if token not in copied:
                raise JsonPatchError(f'no member {token!r}')
            copied[token] = _set(copied[token], rest, value, insert=insert)
        else:
            copied[token] = value
        return copied
    if isinstance(document, list):
        items = list(cast('list[Any]', document))
        index = _index(items, token, end_ok=insert and not rest)
        if rest:
            items[index] = _set(items[index], rest, value, insert=insert)
        elif insert:
            items.insert(index, value)
        else:
            items[index] = value
        return items
    raise JsonPatchError(f'cannot index a {type(document).__name__} with {token!r}')


def _remove(document: Any, path: list[str]) -> Any:
    if not path:
        raise JsonPatchError('cannot remove the whole document')
    token, rest = path[0], path[1:]
    if isinstance(document, dict):
        copied = dict(cast('dict[str, Any]', document))
        if token not in copied:
            raise JsonPatchError(f'no member {token!r}')
        if rest:
            copied[token] = _remove(copied[token], rest)
        else:
            del copied[token]
        return copied
    if isinstance(document, list):
        items = list(cast('list[Any]', document))
        index = _index(items, token, end_ok=False)
        if rest:
            items[index] = _remove(items[index], rest)
        else:
            del items[index]
        return items
    raise JsonPatchError(f'cannot index a {type(document).__name__} with {token!r}')
