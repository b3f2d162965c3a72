"""The AG-UI history mapping's fast paths give exactly what the slower reference gives.

(`core.json_text.compact_json` and `parse_json`, which derived ids and markers rest on, are held to the json
module in `tests/core/test_json_text.py`.)

- `dump_messages` builds SDK messages without validating them (`core.trusted.construct`): each must be the object
  validating its own wire form builds, with `model_fields_set` the fields that hold a value (what validating
  the wire dict the dump used to build gave).
- `load_messages` builds requests and responses without validating them (`core.trusted.construct`): each
  must be what validating its set fields builds, with the fields set that the constructors used to set.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import AssistantMessage, ToolCall, UserMessage
from agui_history_support import histories, sample_history
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel

from uibridge import ModelMessage, ModelRequest, ModelResponse, TextPart
from uibridge.adapters.ag_ui import dump_messages, load_messages
from uibridge.adapters.ag_ui._wire import message_adapter
from uibridge.core.trusted import construct

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / 'bench'))
import history as bench_history

# ---------------------------------------------------------------------------------------- dump: SDK models


def _assert_same_model(built: Any, reference: Any, where: str = 'message') -> None:
    """`built` and `reference` are indistinguishable: type, fields in order, fields set, extra, private."""
    if isinstance(reference, BaseModel):
        assert type(built) is type(reference), where
        assert built.model_fields_set == reference.model_fields_set, where
        assert list(built.__dict__) == list(reference.__dict__), where
        assert built.__pydantic_extra__ == reference.__pydantic_extra__, where
        assert built.__pydantic_private__ == reference.__pydantic_private__, where
        for name, value in reference.__dict__.items():
            _assert_same_model(built.__dict__[name], value, f'{where}.{name}')
    elif isinstance(reference, list):
        assert isinstance(built, list) and len(built) == len(reference), where  # pyright: ignore[reportUnknownArgumentType]
        for position, (item, expected) in enumerate(zip(built, reference, strict=True)):  # pyright: ignore[reportUnknownArgumentType]
            _assert_same_model(item, expected, f'{where}.{position}')
    else:
        assert type(built) is type(reference) and built == reference, where


def _fields_with_values(model: BaseModel) -> None:
    """What the dump validated before: a wire dict holding exactly the fields that have a value."""
    assert model.model_fields_set == {k for k, v in model.__dict__.items() if v is not None}, type(model).__name__
    for value in model.__dict__.values():
        for item in value if isinstance(value, list) else [value]:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(item, BaseModel):
                _fields_with_values(item)


def _check_dump(history: list[ModelMessage]) -> None:
    for message in dump_messages(history):
        reference = message_adapter.validate_python(message.model_dump(by_alias=True, exclude_none=True))
        _assert_same_model(message, reference)
        _fields_with_values(message)
        assert message == reference
        assert message.model_dump_json(by_alias=True, exclude_none=True) == reference.model_dump_json(
            by_alias=True, exclude_none=True
        )


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_dumped_messages_are_what_validation_builds(history: list[ModelMessage]) -> None:
    _check_dump(history)


def test_dumped_messages_are_what_validation_builds_on_fixed_histories() -> None:
    _check_dump(sample_history())
    _check_dump(bench_history.ours(20))
    # A loaded history dumps with its stored ids, names and client metadata.
    client = [
        UserMessage(id='u1', content='hi', name='ann', metadata={'app': {'x': 1}}),
        AssistantMessage(
            id='a1',
            content='',
            name='bot',
            tool_calls=[ToolCall.model_validate({'id': 'c', 'function': {'name': 'f', 'arguments': '{}'}})],
        ),
    ]
    _check_dump(load_messages(client))


def test_construct_pins_what_validation_builds() -> None:
    # The slots `construct` fills: a pydantic upgrade that changes them fails here first.
    data = {'id': 'x', 'role': 'user', 'content': 'hi', 'metadata': {'k': [1]}}
    built = construct(UserMessage, data)
    _assert_same_model(built, message_adapter.validate_python(data))
    assert built.model_dump_json(by_alias=True) == UserMessage.model_validate(data).model_dump_json(by_alias=True)
    assert built.__pydantic_extra__ == {} and built.__pydantic_private__ is None


@pytest.mark.parametrize(
    'values',
    [
        {'parts': [TextPart(content='hi')], 'metadata': {'k': 1}, 'timestamp': datetime(2026, 1, 1, tzinfo=UTC)},
        {'parts': [], 'metadata': {}, 'model_name': 'm', 'finish_reason': 'stop'},
    ],
)
def test_construct_calls_default_factories_like_validation(values: dict[str, Any]) -> None:
    before = datetime.now(UTC)
    built = construct(ModelResponse, dict(values))
    reference = ModelResponse(**values)
    reference.__dict__['timestamp'] = built.timestamp  # a factory's time differs; fields set must not
    _assert_same_model(built, reference)
    assert built.model_fields_set == reference.model_fields_set == set(values)
    assert built.__pydantic_extra__ == {}  # extra='allow', none given: as validation leaves it
    if 'timestamp' not in values:
        assert before <= built.timestamp <= datetime.now(UTC)


# ---------------------------------------------------------------------------------- load: neutral models


def _check_validated_like(model: BaseModel) -> None:
    """`model` is what validating the fields it has set builds; a default factory's field left unset (a
    timestamp) is compared by kind."""
    fields_set = model.model_fields_set
    reference = type(model)(**{name: model.__dict__[name] for name in fields_set})
    assert model.model_fields_set == reference.model_fields_set
    assert list(model.__dict__) == list(reference.__dict__)
    assert model.__pydantic_extra__ == reference.__pydantic_extra__ == {}
    assert model.__pydantic_private__ == reference.__pydantic_private__
    for name, value in reference.__dict__.items():
        if name == 'timestamp' and name not in fields_set:
            assert isinstance(model.__dict__[name], datetime)
        else:
            assert model.__dict__[name] == value, name
            assert type(model.__dict__[name]) is type(value), name


_PART_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    # What the constructors set before, always and at the most.
    'text': ({'content', 'id'}, {'content', 'id'}),
    'tool-call': ({'tool_name', 'args', 'tool_call_id'}, {'tool_name', 'args', 'tool_call_id'}),
    'thinking': ({'content'}, {'content', 'signature', 'provider_name', 'id'}),
    'system-prompt': ({'content'}, {'content', 'timestamp', 'dynamic_ref'}),
    'user-prompt': ({'content'}, {'content', 'timestamp'}),
    'retry-prompt': ({'content', 'tool_name', 'tool_call_id'}, {'content', 'tool_name', 'tool_call_id', 'timestamp'}),
    'tool-return': (
        {'tool_name', 'content', 'tool_call_id', 'outcome', 'metadata'},
        {'tool_name', 'content', 'tool_call_id', 'outcome', 'metadata', 'timestamp'},
    ),
}


def _check_load_message(message: ModelMessage) -> None:
    _check_validated_like(message)
    fields_set = message.model_fields_set
    if isinstance(message, ModelRequest):
        assert fields_set == {'parts', 'instructions', 'metadata'}
    else:
        assert {'parts', 'metadata'} <= fields_set
        assert fields_set <= {'parts', 'metadata', 'timestamp', 'model_name', 'provider_name', 'finish_reason'}
        assert all(message.__dict__[name] is not None for name in fields_set)
    for part in message.parts:
        _check_validated_like(part)
        if part.part_kind in _PART_FIELDS:
            always, at_most = _PART_FIELDS[part.part_kind]
            assert always <= part.model_fields_set <= at_most, part.part_kind


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_loaded_messages_are_what_validation_builds(history: list[ModelMessage]) -> None:
    for message in load_messages(dump_messages(history)):
        _check_load_message(message)


def test_loaded_messages_are_what_validation_builds_on_client_input() -> None:
    messages: list[Any] = [
        {'id': 'u', 'role': 'user', 'content': 'hi', 'metadata': {'app': 1}},
        {
            'id': 'a',
            'role': 'assistant',
            'content': 'ok',
            'toolCalls': [{'id': 'c', 'function': {'name': 'f', 'arguments': '[1]'}}],
            'metadata': {'uibridge': {'response': {'timestamp': 'garbage', 'finish_reason': 'nope'}}},
        },
        {'id': 't', 'role': 'tool', 'toolCallId': 'c', 'content': 'done', 'name': 'extra name'},
        {'id': 'r', 'role': 'reasoning', 'content': 'hmm', 'encryptedValue': 'opaque'},
    ]
    history = load_messages(messages)
    for message in history:
        _check_load_message(message)
    request, response, tool_request = history[:3]
    assert isinstance(request, ModelRequest) and isinstance(response, ModelResponse)
    assert response.model_fields_set == {'parts', 'metadata'}
    # An unknown `name` on a tool message is kept with its id, as before.
    assert isinstance(tool_request, ModelRequest) and tool_request.metadata is not None
    assert tool_request.metadata['uibridge_ag_ui']['messages'][0] == {'id': 't', 'name': 'extra name'}
