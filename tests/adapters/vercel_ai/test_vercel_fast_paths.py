"""The shortcuts `dump_messages` / `load_messages` take, held to the slow paths they replace.

- `part_json` writes the bytes `model_dump_json` writes (derived message ids hash them);
- the parts and messages `dump_messages` builds without validation are the objects validation would build.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vercel_ai_cases import HISTORIES, RANDOM_SCENARIOS, T0, pydantic_ai_history
from vercel_fuzz_support import any_part, plausible_part

from uibridge import (
    BinaryContent,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.adapters.vercel_ai import dump_messages, load_messages
from uibridge.adapters.vercel_ai._provider_metadata import derived_message_id
from uibridge.adapters.vercel_ai.types import (
    DataUIPart,
    StepStartUIPart,
    TextUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessage,
    UIMessagePartAdapter,
    UIModel,
    part_json,
)
from uibridge.core import messages as uibridge_messages
from uibridge.core.collector import MessageCollector
from uibridge.core.events import AgentEvent


def _run_history(events: Sequence[AgentEvent], history: list[ModelMessage]) -> list[ModelMessage]:
    collector = MessageCollector()
    for event in events:
        collector.feed(event)
    return [*history, *collector.messages]


_HISTORIES: dict[str, list[ModelMessage]] = {
    **HISTORIES,
    'pydantic_ai_fixture': pydantic_ai_history(),
    **{name: _run_history(scenario.events, scenario.history) for name, scenario in RANDOM_SCENARIOS.items()},
}


def _reference_id(index: int, role: str, parts: Sequence[UIModel]) -> str:
    """The derived id as it was first written: each part through `model_dump_json`."""
    digest = hashlib.sha256(f'{index}\x00{role}'.encode())
    for part in parts:
        digest.update(b'\x00')
        digest.update(part.model_dump_json().encode())
    return f'msg_{digest.hexdigest()[:24]}'


def _valid_part(data: dict[str, Any]) -> UIModel | None:
    try:
        return UIMessagePartAdapter.validate_python(data)
    except pydantic.ValidationError:
        return None


# ------------------------------------------------------------------------------------------ part_json


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(any_part() | plausible_part(), min_size=1, max_size=4), st.integers(0, 3))
def test_part_json_writes_what_model_dump_json_writes(data: list[dict[str, Any]], index: int) -> None:
    parts = [part for part in map(_valid_part, data) if part is not None]
    for part in parts:
        assert part_json(part) == part.model_dump_json().encode()
    assert derived_message_id(index, 'assistant', parts) == _reference_id(index, 'assistant', parts)


class _Point(pydantic.BaseModel):
    x: int | None = None
    y: float = 1.5


class _Approval(ToolApprovalUI):
    extra_field: str = 'x'


@pytest.mark.parametrize(
    'part',
    [
        # Python values no client sends, serialized as `Any` fields serialize them.
        TextUIPart(text='t', provider_metadata={'p': {'inf': math.inf, 'nan': math.nan, 'at': T0, 'b': b'ok'}}),
        DataUIPart(type='data-x', data=None),
        DataUIPart(type='data-x', data={'model': _Point(), 'tuple': (1, 2), 'set': {3}}),
        ToolUIPart(type='tool-t', tool_call_id='c', state='output-available', input=None, output=None),
        ToolUIPart(type='tool-t', tool_call_id='c', state='input-streaming', input=None),
        ToolUIPart(type='tool-t', tool_call_id='c', state='output-error', input=_Point(), error_text='e'),
        ToolUIPart(
            type='tool-t', tool_call_id='c', state='approval-requested', input={}, approval=ToolApprovalUI(id='a')
        ),
        ToolUIPart(type='tool-t', tool_call_id='c', state='approval-requested', input={}, approval=_Approval(id='a')),
        StepStartUIPart(),
    ],
)
def test_part_json_on_python_values(part: UIModel) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the subclassed approval: pydantic warns the same either way
        assert part_json(part) == part.model_dump_json().encode()


def test_part_json_follows_changes_made_after_validation() -> None:
    part = ToolUIPart(type='tool-t', tool_call_id='c', state='output-available', input={}, output=1)
    part.state = 'output-error'  # the kept null keys follow the state
    part.output = None
    part.error_text = 'boom'
    assert part_json(part) == part.model_dump_json().encode()


# ------------------------------------------------------------------------------------------ dump


def _assert_as_validated(model: pydantic.BaseModel) -> None:
    """`model` is the object validating the fields it was given would have built."""
    given_fields = {name: getattr(model, name) for name in model.model_fields_set}
    rebuilt = type(model)(**given_fields)
    for name, info in type(model).model_fields.items():
        if name not in model.model_fields_set and info.default_factory is not None:
            rebuilt.__dict__[name] = model.__dict__[name]  # a fresh `now`, say: compared as the model has it
    assert rebuilt == model
    assert list(rebuilt.__dict__) == list(model.__dict__)
    assert rebuilt.model_fields_set == model.model_fields_set
    assert rebuilt.__pydantic_extra__ == model.__pydantic_extra__
    assert rebuilt.__pydantic_private__ == model.__pydantic_private__
    assert rebuilt.model_dump_json() == model.model_dump_json()
    assert rebuilt.model_dump(mode='python', by_alias=False) == model.model_dump(mode='python', by_alias=False)


@pytest.mark.parametrize('name', sorted(_HISTORIES))
def test_dumped_messages_are_what_validation_builds(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # orphan results and the like: not what is tested here
        dumped = dump_messages(_HISTORIES[name])
    for message in dumped:
        _assert_as_validated(message)
        for part in message.parts:
            _assert_as_validated(part)


def test_dumped_ids_are_the_reference_ids() -> None:
    for history in _HISTORIES.values():
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            dumped = dump_messages(history)
        for index, message in enumerate(dumped):
            if message.id.startswith('msg_') and len(message.id) == 28:
                assert message.id == _reference_id(index, message.role, message.parts)


@pytest.mark.parametrize('name', ['', '\nx'])
def test_a_tool_name_the_part_type_refuses_still_fails_validation(name: str) -> None:
    history: list[ModelMessage] = [
        ModelResponse(parts=[ToolCallPart(tool_name=name, args={}, tool_call_id='c')], timestamp=T0),
        ModelRequest(parts=[ToolReturnPart(tool_name=name, content=1, tool_call_id='c', timestamp=T0)]),
    ]
    with pytest.raises(pydantic.ValidationError):
        dump_messages(history)


_CALL = frozenset({'type', 'tool_call_id', 'input', 'state', 'approval', 'call_provider_metadata'})
_FIELDS_SET: dict[tuple[str, str], frozenset[str]] = {
    ('system', 'text'): frozenset({'text', 'provider_metadata'}),
    ('user', 'text'): frozenset({'text', 'provider_metadata'}),
    ('user', 'file'): frozenset({'media_type', 'url', 'provider_metadata'}),
    ('assistant', 'step-start'): frozenset(),
    ('assistant', 'text'): frozenset({'text', 'state', 'provider_metadata'}),
    ('assistant', 'reasoning'): frozenset({'text', 'id', 'state', 'provider_metadata'}),
    ('assistant', 'file'): frozenset({'media_type', 'url', 'provider_metadata'}),
    ('assistant', 'input-available'): _CALL,
    ('assistant', 'output-denied'): _CALL,
    ('assistant', 'output-available'): _CALL | {'output', 'result_provider_metadata'},
    ('assistant', 'output-error'): _CALL | {'error_text', 'result_provider_metadata'},
}


def _every_kind() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content='s', timestamp=T0),
                UserPromptPart(content='u', timestamp=T0),
                UserPromptPart(
                    content=['look', ImageUrl(url='https://e.com/a.png'), BinaryContent(data=b'x', media_type='a/b')],
                    timestamp=T0,
                ),
                RetryPromptPart(content='legacy', timestamp=T0),
                RetryFeedbackPart(content='again', cause='model_retry', timestamp=T0),
            ]
        ),
        ModelResponse(
            parts=[
                ThinkingPart(content='t', signature='sig'),
                TextPart(content='x'),
                FilePart(content=BinaryContent(data=b'x', media_type='image/png')),
                *(ToolCallPart(tool_name='t', args='{}', tool_call_id=f'c{i}') for i in range(5)),
            ],
            timestamp=T0,
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(tool_name='t', content=1, tool_call_id='c0', timestamp=T0),
                ToolReturnPart(tool_name='t', content='no', tool_call_id='c1', outcome='failed', timestamp=T0),
                ToolReturnPart(tool_name='t', content='no', tool_call_id='c2', outcome='denied', timestamp=T0),
                RetryPromptPart(content='bad', tool_name='t', tool_call_id='c3', timestamp=T0),
            ]
        ),
    ]


def test_dumped_parts_say_which_fields_were_given() -> None:
    """`model_fields_set` as validation left it when the dump passed these fields (`exclude_unset` reads it)."""
    seen: set[tuple[str, str]] = set()
    for message in dump_messages(_every_kind()):
        assert message.model_fields_set == {'id', 'role', 'parts', 'metadata'}
        for part in message.parts:
            kind = part.state if isinstance(part, ToolUIPart) else part.type
            assert part.model_fields_set == _FIELDS_SET[message.role, kind], (message.role, kind)
            seen.add((message.role, kind))
    assert seen == _FIELDS_SET.keys()


def test_a_dumped_message_is_a_plain_ui_message() -> None:
    (message,) = dump_messages([ModelResponse(parts=[], timestamp=datetime(2026, 1, 1, tzinfo=UTC))])
    assert type(message) is UIMessage
    assert UIMessage.model_validate(message.model_dump()) == message


# ------------------------------------------------------------------------------------------ load


@pytest.mark.parametrize('name', sorted(_HISTORIES))
def test_loaded_messages_are_what_validation_builds(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        dumped = dump_messages(_HISTORIES[name])
        for loaded in (load_messages(dumped), load_messages([m.model_dump(mode='json') for m in dumped])):
            for message in loaded:
                _assert_as_validated(message)
                for part in message.parts:
                    _assert_as_validated(part)
                    content = getattr(part, 'content', None)
                    for item in content if isinstance(content, list) else []:
                        if isinstance(item, pydantic.BaseModel):
                            _assert_as_validated(item)


def test_a_loaded_call_has_its_own_arguments() -> None:
    """Validation gives the call a copy of the part's input; so does the shortcut."""
    part = ToolUIPart(type='tool-t', tool_call_id='c', state='input-available', input={'a': {'b': 1}})
    (response,) = load_messages([UIMessage(id='m', role='assistant', parts=[part])])
    (call,) = response.parts
    assert isinstance(call, ToolCallPart) and call.args == {'a': {'b': 1}}
    assert call.args is not part.input


def test_arguments_validation_refuses_still_fail() -> None:
    part = ToolUIPart(type='tool-t', tool_call_id='c', state='input-available', input={1: 'x'})
    with pytest.raises(pydantic.ValidationError):
        load_messages([UIMessage(id='m', role='assistant', parts=[part])])


def test_loaded_parts_say_which_fields_were_given() -> None:
    """`model_fields_set` as validating, then assigning the fields read from the sidecar, left it."""
    call = {'args', 'tool_call_id', 'tool_name'}
    result = {'content', 'metadata', 'outcome', 'timestamp', 'tool_call_id', 'tool_name'}
    expected: list[tuple[str, set[str]]] = [
        ('ModelRequest', {'parts'}),
        ('SystemPromptPart', {'content', 'timestamp'}),
        ('UserPromptPart', {'content', 'timestamp'}),
        ('UserPromptPart', {'content', 'timestamp'}),
        ('ImageUrl', {'media_type', 'url'}),
        ('BinaryContent', {'data', 'media_type'}),
        ('RetryPromptPart', {'content', 'timestamp', 'tool_call_id'}),
        ('RetryFeedbackPart', {'cause', 'content', 'part_kind', 'timestamp'}),
        ('ModelResponse', {'parts', 'timestamp'}),
        ('ThinkingPart', {'content', 'id', 'provider_name', 'signature'}),
        ('TextPart', {'content', 'id'}),
        ('FilePart', {'content', 'id'}),
        *[('ToolCallPart', call)] * 5,
        ('ModelRequest', {'parts'}),
        *[('ToolReturnPart', result)] * 3,
        ('RetryPromptPart', {'content', 'timestamp', 'tool_call_id', 'tool_name'}),
    ]
    seen: list[tuple[str, set[str]]] = []
    for message in load_messages(dump_messages(_every_kind())):
        seen.append((type(message).__name__, set(message.model_fields_set)))
        for part in message.parts:
            seen.append((type(part).__name__, set(part.model_fields_set)))
            content = getattr(part, 'content', None)
            for item in content if isinstance(content, list) else []:
                if isinstance(item, pydantic.BaseModel):
                    seen.append((type(item).__name__, set(item.model_fields_set)))
    assert seen == expected


_SUBCLASSES: dict[type[UIModel], type[UIModel]] = {}


def _as_subclass(part: UIModel) -> UIModel:
    """`part` as an instance of a subclass of its class (what an application's own part classes would be)."""
    cls = type(part)
    sub = _SUBCLASSES.get(cls)
    if sub is None:
        sub = _SUBCLASSES[cls] = type(f'App{cls.__name__}', (cls,), {})
    return sub.model_construct(_fields_set=part.model_fields_set, **dict(part))


class _FrozenClock(datetime):
    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return T0


@pytest.mark.parametrize('name', sorted(_HISTORIES))
def test_load_sends_subclassed_parts_where_their_classes_go(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The loader tells a part's kind by its exact class first; a subclass must load as its class does.
    # A step without a response record is stamped with the time of loading: the clock is held still for both loads.
    monkeypatch.setattr(uibridge_messages, 'datetime', _FrozenClock)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        dumped = dump_messages(_HISTORIES[name])
        subclassed = [
            UIMessage.model_construct(
                _fields_set=message.model_fields_set,
                **{**dict(message), 'parts': [_as_subclass(part) for part in message.parts]},
            )
            for message in dumped
        ]
        loaded, loaded_from_subclasses = load_messages(dumped), load_messages(subclassed)
    assert loaded_from_subclasses == loaded
    assert [m.model_fields_set for m in loaded_from_subclasses] == [m.model_fields_set for m in loaded]


def test_a_loaded_step_has_its_response_record_fields_set() -> None:
    response = ModelResponse(
        parts=[TextPart(content='hi')], model_name='m', provider_name='p', finish_reason='stop', timestamp=T0
    )
    loaded = load_messages(dump_messages([ModelRequest(parts=[UserPromptPart(content='q', timestamp=T0)]), response]))
    assert loaded[1] == response
    assert {'timestamp', 'model_name', 'provider_name', 'finish_reason'} <= loaded[1].model_fields_set
