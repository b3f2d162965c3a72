"""One UI message stream chunk as SSE bytes, `data: <json>\\n\\n`, written by a writer derived from its model.

The chunk models in `chunks.py` are the one declaration of the wire format. Building a model and dumping it
costs 6 to 11 µs a chunk, so the stream does not: it calls writers generated from the model classes (as
`ag_ui._frames.event_frame` is generated from the SDK's event models), which write the bytes `model_dump_json`
writes for the same fields, in about a tenth of the time. A field added to a model reaches the wire with no
other edit. Property tests hold every chunk type's writer to the model's own serialization, byte for byte.

Two forms:

- `chunk_writer(ChunkModel)`: `write(**fields) -> bytes`, for a chunk sent once (a part's start and end, a tool
  call, a result, the run's ends);
- `delta_prefix(ChunkModel, 'delta')`: `prefix(**fields) -> str`, the chunk's text up to its streamed field, kept
  by an open part so that each delta costs one string escape (`stream.py`'s hot path).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from keyword import iskeyword
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, ParamSpec, Union, get_args, get_origin

from ...core.json_text import json_string, sse_data, utf8_json
from .types import UIModel

__all__ = ['chunk_writer', 'delta_prefix']

_P = ParamSpec('_P')


def chunk_writer(chunk_class: Callable[_P, UIModel]) -> Callable[_P, bytes]:
    """A writer of one chunk type. `write(**fields)` takes the model's own parameters (snake_case, keyword-only,
    with the model's defaults: the type checker and Python both reject a misspelt or missing field) and returns
    `b'data: ' + chunk_class(**fields).model_dump_json().encode() + b'\\n\\n'` without building the model.
    A lone surrogate, which `model_dump_json` refuses (or, in a typed dict's key, replaces), is written as its
    `\\u` escape, the chunk as `core.json_text.sse_data` writes it. Values are not validated: give it JSON-ready
    ones, as the model would hold them."""
    model = _model_class(chunk_class)
    return _compile(model, _wire_fields(model), None)


def delta_prefix(chunk_class: type[UIModel], streamed: str) -> Callable[..., str]:
    """For a chunk sent once per delta: `prefix(**fields)` takes the fields written before `streamed` (a `str`
    field) and returns the chunk's SSE text up to that field's value, so that
    `utf8_json(prefix + json_string(value) + '}\\n\\n')` is what `chunk_writer(chunk_class)(**fields,
    streamed=value)` writes. What comes after `streamed` must be fields the model leaves out when `None`, and
    what comes before it text: the prefix is then exact whatever the values."""
    fields = _wire_fields(_model_class(chunk_class))
    at = next((index for index, field in enumerate(fields) if field.name == streamed), None)
    if at is None or not (fields[at].text and fields[at].always):
        raise TypeError(f'{chunk_class.__name__}.{streamed} is not a str field')
    if not all(field.text for field in fields[:at]) or any(field.always for field in fields[at + 1 :]):
        raise TypeError(f'{chunk_class.__name__} has no prefix before {streamed} that is the same for every value')
    return _compile(chunk_class, fields[:at], fields[at].key)


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    """The model's name for it: the writer's parameter."""
    key: str
    """Its name on the wire."""
    always: bool
    """Written whatever its value: a key the model keeps when `None`, or a field that cannot be `None`."""
    text: bool
    """A string when present (`str`, or a `Literal` of strings): written by `json_string`, no serializer call."""
    number: bool
    """May hold a float (any value, or a float type): NaN and the infinities are written `null`, so the model
    leaves them out where it leaves out `None`."""
    constant: str | None
    """The value of a one-value `Literal` (a chunk's `type`): the only one a valid model holds, so written as a
    constant, whatever the writer is given."""


def _model_class(chunk_class: Callable[..., UIModel]) -> type[UIModel]:
    if not (isinstance(chunk_class, type) and issubclass(chunk_class, UIModel)):
        raise TypeError(f'{chunk_class!r} is not a chunk model')
    return chunk_class


def _wire_fields(model: type[UIModel]) -> list[_Field]:
    """The model's fields in the order `UIModel`'s serializer writes them: `type` first, then the model's order."""
    keep = model._keep_null  # pyright: ignore[reportPrivateUsage]
    fields: list[_Field] = []
    for name, info in model.model_fields.items():
        if not name.isidentifier() or iskeyword(name):  # pragma: no cover - the models' fields are identifiers
            raise TypeError(f'{model.__name__}.{name} is not an identifier')
        key = info.serialization_alias or info.alias or name
        kinds = _kinds(info.annotation)
        always = key in keep or (bool(kinds) and NoneType not in kinds)
        text = bool(kinds) and kinds <= {str, NoneType}
        values = get_args(info.annotation) if get_origin(info.annotation) is Literal else ()
        constant = values[0] if text and always and len(values) == 1 else None
        fields.append(_Field(name, key, always, text, not kinds or float in kinds, constant))
    return sorted(fields, key=lambda field: field.name != 'type')


def _kinds(annotation: Any) -> set[Any]:
    """The Python types a value of `annotation` can have, as far as writing it goes; empty for "anything"."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kinds(get_args(annotation)[0])
    if origin in (Union, UnionType):
        kinds = [_kinds(arg) for arg in get_args(annotation)]
        return set[Any]().union(*kinds) if all(kinds) else set()
    if origin is Literal:
        return {type(value) for value in get_args(annotation)}
    if annotation is Any:
        return set()
    return {NoneType if annotation is None else origin or annotation}


def _compile(model: type[UIModel], fields: list[_Field], streamed_key: str | None) -> Callable[..., Any]:
    """The writer (`streamed_key` None) or delta prefix of `fields`, generated as `dataclasses` writes `__init__`:
    one statement per field costs half what a loop over the fields would, at several chunks a tool call. Its
    own names start with `_`, which no model field can.

    Two paths. While every field present is text, the JSON is put together from `json_string` escapes, several
    times cheaper than a serializer call for the short chunks a stream is mostly made of, and the same text:
    both escape a string alike. Otherwise the chunk is a dict written by `sse_data`."""
    namespace: dict[str, Any] = {'_json_string': json_string, '_sse_data': sse_data, '_utf8_json': utf8_json}
    namespace['_isfinite'] = math.isfinite
    names = {field.name for field in fields}
    params: list[str] = []
    for name, info in model.model_fields.items():
        if name in names and info.is_required():
            params.append(name)
        elif name in names:
            namespace[f'_default_{name}'] = info.get_default(call_default_factory=True)
            params.append(f'{name}=_default_{name}')
    lines = [f'def {model.__name__}(*, {", ".join(params)}):']
    # Fields that are not text but may be absent: the text path is taken when all of them are.
    absent = [field.name for field in fields if not field.text and not field.always]
    text_path = all(field.text for field in fields if field.always)
    if text_path and absent:
        lines.append(f'    if {" and ".join(f"{name} is None" for name in absent)}:')
        lines += ['    ' + line for line in _text_lines(fields, streamed_key)]
    elif text_path:
        lines += _text_lines(fields, streamed_key)
    if not text_path or absent:
        assert streamed_key is None, 'a delta prefix is text only'
        lines += _dict_lines(fields)
    exec('\n'.join(lines), namespace)  # names from the model only
    return namespace[model.__name__]


def _leading_run(fields: list[_Field]) -> int:
    """How many fields, from the first, are always written: they go into the first statement."""
    return next((index for index, field in enumerate(fields) if not field.always), len(fields))


def _value(field: _Field) -> str:
    """The Python expression of what is written for `field`: its parameter, or its constant."""
    return field.name if field.constant is None else repr(field.constant)


def _member(field: _Field, first: bool) -> str:
    """`,"key":<json>` for a text field, as an expression: one constant string for a constant."""
    key = ('' if first else ',') + json_string(field.key) + ':'
    if field.constant is not None:
        return repr(key + json_string(field.constant))
    return f'{key!r} + _json_string({field.name})'


def _text_lines(fields: list[_Field], streamed_key: str | None) -> list[str]:
    run = _leading_run(fields)
    members = ' + '.join(_member(field, index == 0) for index, field in enumerate(fields[:run]))
    lines = [f"    _text = 'data: {{' + {members}"]
    for field in fields[run:]:
        if field.always:
            lines.append(f'    _text += {_member(field, False)}')
        elif field.text:
            lines += [f'    if {field.name} is not None:', f'        _text += {_member(field, False)}']
    if streamed_key is None:
        # `utf8_json` inlined: a call less per chunk.
        lines += ['    try:', "        return (_text + '}\\n\\n').encode()", '    except UnicodeEncodeError:']
        lines.append("        return _utf8_json(_text + '}\\n\\n')")
    else:
        lines.append(f'    return _text + {"," + json_string(streamed_key) + ":"!r}')
    return lines


def _present(field: _Field) -> str:
    """The test that `field` is written: not what the model writes as `null` (`type` is a parameter here)."""
    if field.number:
        return f'{field.name} is not None and not ({field.name}.__class__ is float and not _isfinite({field.name}))'
    return f'{field.name} is not None'


def _dict_lines(fields: list[_Field]) -> list[str]:
    run = _leading_run(fields)
    lines = [f'    _body = {{{", ".join(f"{field.key!r}: {_value(field)}" for field in fields[:run])}}}']
    for field in fields[run:]:
        if field.always:
            lines.append(f'    _body[{field.key!r}] = {field.name}')
        else:
            lines += [f'    if {_present(field)}:', f'        _body[{field.key!r}] = {field.name}']
    lines.append('    return _sse_data(_body)')
    return lines
