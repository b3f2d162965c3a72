"""The stream's chunk writers (`stream.chunk_writer`, a `core.encoder.frame_writer` of the chunk model) and its
hand-written delta chunks write the bytes the model serializes to.

For every chunk type in `UIMessageChunk`, values drawn from the model's own field annotations (text with
non-ASCII, escapes and lone surrogates; JSON values of every kind; absent optional fields) go to the writer and
to the model's constructor alike, and the writer's bytes must be `data: ` + `model_dump_json()` + a blank line.
Where the model holds a lone surrogate (which UTF-8 cannot hold, and pydantic-core refuses or, in a typed dict's
key, replaces), the stream writes the model's JSON with the `json` module instead (`core.json_text.sse_data`),
the surrogate as its `\\u` escape: the same UTF-16 code unit reaches the client.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vercel_ai_cases import RANDOM_SCENARIOS, SCENARIOS, scenario_stream

from uibridge.adapters.vercel_ai import UIMessageChunkAdapter, encode_events
from uibridge.adapters.vercel_ai.chunks import (
    _CHUNKS,  # pyright: ignore[reportPrivateUsage]
    DataChunk,
    MessageMetadataChunk,
    ReasoningDeltaChunk,
    StartChunk,
    TextDeltaChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolInputDeltaChunk,
    ToolOutputAvailableChunk,
)
from uibridge.adapters.vercel_ai.stream import (
    _delta_prefix,  # pyright: ignore[reportPrivateUsage]
    _tool_input_prefix,  # pyright: ignore[reportPrivateUsage]
    chunk_writer,
)
from uibridge.adapters.vercel_ai.types import UIModel
from uibridge.core.events import (
    CustomData,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseStart,
    RunCancelled,
    ToolResult,
)
from uibridge.core.json_text import json_string, utf8_json
from uibridge.core.messages import TextPart, ToolCallPart, ToolReturnPart

# Characters that JSON escapes or that UTF-8 cannot hold, besides anything at all.
_char = st.characters(exclude_categories=()) | st.sampled_from(['"', '\\', '\n', '\x00', '\x7f', '\u2028', '\ud83d'])
_text = st.text(_char, max_size=8)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


def _values(annotation: Any) -> st.SearchStrategy[Any]:
    """Values for a field, from its annotation: what a valid model can hold, JSON-ready."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _values(get_args(annotation)[0])
    if origin in (Union, UnionType):
        return st.one_of([_values(arg) for arg in get_args(annotation)])
    if origin is Literal:
        return st.sampled_from(get_args(annotation))
    if origin is dict:
        return st.dictionaries(_text, _values(get_args(annotation)[1]), max_size=3)
    if origin is list:
        return st.lists(_values(get_args(annotation)[0]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, UIModel):
        return _fields(annotation).map(lambda values: annotation(**values).model_dump())
    simple: dict[Any, st.SearchStrategy[Any]] = {
        str: _text,
        bool: st.booleans(),
        NoneType: st.none(),
        Any: _json_values,
    }
    return simple[annotation]


def _fields(model: type[UIModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Every required field, and any of the optional ones (the others left to the model's default)."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        values = _values(info.annotation)
        if model is DataChunk and name == 'type':
            # The model's pattern check refuses a lone surrogate in the type (pydantic's regex reads UTF-8).
            values = st.text(st.characters(codec='utf-8'), max_size=8).map(lambda name: f'data-{name}')
        (required if info.is_required() else optional)[name] = values
    return st.fixed_dictionaries(required, optional=optional)


_LONE_SURROGATE = re.compile('[\ud800-\udfff]')


def _finite(value: Any) -> Any:
    """`value` with NaN and the infinities as `None`, as the model's JSON writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_finite(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(key) or _has_lone_surrogate(item) for key, item in value.items())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)  # pyright: ignore[reportUnknownVariableType]
    return False


def model_sse(model: UIModel) -> bytes:
    """The SSE event of the model's own serialization, faithful to every code unit.

    A lone surrogate anywhere takes the `json` module: pydantic-core refuses one in a string, and in a key of a
    typed `dict[str, ...]` (`providerMetadata`, `toolMetadata`) it writes three U+FFFD instead, losing it."""
    if not _has_lone_surrogate(model.model_dump()):
        return b'data: ' + model.model_dump_json().encode() + b'\n\n'
    # What JSON writes as `null` made `None` first, so the serializer leaves it out where it leaves out `None`.
    finite = model.model_copy(update={name: _finite(getattr(model, name)) for name in type(model).model_fields})
    # (Again after the dump, for what nested models hold.)
    text = json.dumps(_finite(finite.model_dump()), ensure_ascii=False, separators=(',', ':'), allow_nan=False)
    text = _LONE_SURROGATE.sub(lambda match: f'\\u{ord(match.group()):04x}', text)
    return f'data: {text}\n\n'.encode()


_CLASSES = sorted(set(_CHUNKS.values()), key=lambda cls: cls.__name__)


def test_every_chunk_type_is_covered() -> None:
    # `_CHUNKS` is read from the `UIMessageChunk` union: one class per tag, `data-*` included.
    assert len(_CLASSES) == len(_CHUNKS) == 30
    assert DataChunk in _CLASSES


@pytest.mark.parametrize('model', _CLASSES, ids=[cls.__name__ for cls in _CLASSES])
def test_the_writer_writes_what_the_model_serializes_to(model: type[UIModel]) -> None:
    write = chunk_writer(model)

    @given(_fields(model))
    def check(values: dict[str, Any]) -> None:
        assert write(**values) == model_sse(model(**values))

    check()


_DELTAS: list[tuple[type[UIModel], str, str, Callable[[str], str]]] = [
    (TextDeltaChunk, 'id', 'delta', lambda chunk_id: _delta_prefix('text', chunk_id)),
    (ReasoningDeltaChunk, 'id', 'delta', lambda chunk_id: _delta_prefix('reasoning', chunk_id)),
    (ToolInputDeltaChunk, 'tool_call_id', 'input_text_delta', _tool_input_prefix),
]


@pytest.mark.parametrize(('model', 'id_field', 'streamed', 'prefix'), _DELTAS, ids=[d[0].__name__ for d in _DELTAS])
def test_a_delta_prefix_and_the_escaped_delta_are_the_whole_chunk(
    model: type[UIModel], id_field: str, streamed: str, prefix: Callable[[str], str]
) -> None:
    @given(_fields(model))
    def check(values: dict[str, Any]) -> None:
        # The stream sets nothing after the delta (the model's other fields stay absent).
        entity_id, delta = values[id_field], values[streamed]
        # The stream's hot path, as `stream.py` writes it.
        sent = utf8_json(f'{prefix(entity_id)}{json_string(delta)}}}\n\n')
        assert sent == model_sse(model(**{id_field: entity_id, streamed: delta}))

    check()


@pytest.mark.parametrize('number', [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_hold_is_left_out_where_none_is(number: float) -> None:
    # Written as `null`, which an optional field must never be: the model leaves it out; a kept key keeps it.
    assert chunk_writer(StartChunk)(message_metadata=number) == b'data: {"type":"start"}\n\n'
    assert chunk_writer(StartChunk)(message_metadata=number) == model_sse(StartChunk(message_metadata=number))
    with_surrogate = chunk_writer(StartChunk)(message_id='\ud83d', message_metadata=number)
    assert with_surrogate == b'data: {"type":"start","messageId":"\\ud83d"}\n\n'
    assert with_surrogate == model_sse(StartChunk(message_id='\ud83d', message_metadata=number))
    kept = b'data: {"type":"message-metadata","messageMetadata":null}\n\n'
    assert chunk_writer(MessageMetadataChunk)(message_metadata=number) == kept
    assert model_sse(MessageMetadataChunk(message_metadata=number)) == kept


def test_a_field_added_to_a_model_is_written_with_no_other_edit() -> None:
    class Later(ToolOutputAvailableChunk):
        note: str | None = None
        extra: Any = None
        _keep_null = frozenset({'output', 'extra'})

    values: dict[str, Any] = {'tool_call_id': 'c', 'output': 1, 'note': 'n'}
    assert chunk_writer(Later)(**values) == model_sse(Later(**values))
    assert (
        chunk_writer(Later)(**values)
        == b'data: {"type":"tool-output-available","toolCallId":"c","output":1,"note":"n","extra":null}\n\n'
    )


def test_a_misspelt_or_missing_field_is_an_error_not_a_silently_different_chunk() -> None:
    write: Any = chunk_writer(ToolInputAvailableChunk)
    with pytest.raises(TypeError, match=r"ToolInputAvailableChunk\(\) got an unexpected keyword argument 'args'"):
        write(tool_call_id='c', tool_name='t', args={})
    with pytest.raises(
        TypeError, match=r"ToolInputAvailableChunk\(\) missing 1 required keyword-only argument: 'input'"
    ):
        write(tool_call_id='c', tool_name='t')
    with pytest.raises(TypeError, match='is not a chunk model'):
        chunk_writer(dict)  # pyright: ignore[reportArgumentType]


def test_the_only_value_of_a_one_value_type_is_written() -> None:
    # A valid model holds nothing else; the writer does not spend a string escape on it.
    assert chunk_writer(TextStartChunk)(id='t', type='text-start') == b'data: {"type":"text-start","id":"t"}\n\n'


@pytest.mark.parametrize('name', [*SCENARIOS, *RANDOM_SCENARIOS])
def test_every_chunk_the_stream_sends_is_its_model_serialized(name: str) -> None:
    scenario = {**SCENARIOS, **RANDOM_SCENARIOS}[name]
    stream = scenario_stream(scenario)
    data = stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
    _assert_sent_as_models(data)


def test_a_lone_surrogate_is_sent_as_the_model_holds_it() -> None:
    # A provider split a pair across deltas: the same UTF-16 code unit reaches the client, in every chunk.
    half = '\ud83d'
    events = [
        ResponseStart(),
        PartStart(0, TextPart(content=f'é{half}')),
        PartDelta(0, half),
        PartEnd(0),
        PartStart(1, ToolCallPart(tool_name=f't{half}', args=f'{{"{half}": 1e-05}}', tool_call_id=f'c{half}')),
        PartEnd(1),
        ToolResult(ToolReturnPart(tool_name='t', content={half: [half, 1e17]}, tool_call_id=f'c{half}')),
        CustomData('n', {half: 1.5e-9}, id=half, transient=True),  # (a `data-*` type is checked by a UTF-8 regex)
        RunCancelled(reason=half),
    ]
    sent = _assert_sent_as_models(encode_events(events, message_id=half))
    assert len(sent) == 13
    carrying = [json.loads(event.removeprefix(b'data: '))['type'] for event in sent if b'\\ud83d' in event]
    assert carrying == [
        'start',
        'text-delta',
        'text-delta',
        'tool-input-start',
        'tool-input-delta',
        'tool-input-available',
        'tool-output-available',
        'data-n',
        'abort',
    ]


def _assert_sent_as_models(data: bytes) -> list[bytes]:
    events = data.split(b'\n\n')
    assert events[-2:] == [b'data: [DONE]', b'']
    for event in events[:-2]:
        chunk = UIMessageChunkAdapter.validate_python(json.loads(event.removeprefix(b'data: ')))
        assert event + b'\n\n' == model_sse(chunk)
    return events[:-2]
