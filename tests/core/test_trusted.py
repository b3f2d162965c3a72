"""`core.trusted`: `construct` builds what validation builds, `replace` copies as `model_copy` does and leaves the
original as it was, and both refuse a name that is no field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, PrivateAttr, ValidationError

from uibridge.core.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from uibridge.core.trusted import construct, replace

_text = st.text(max_size=12)
_args = st.none() | _text | st.dictionaries(_text, st.integers() | _text, max_size=3)
_moment = st.datetimes(timezones=st.just(UTC))


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, `None`, or left out (so defaults and `model_fields_set` are exercised too)."""
    return st.one_of(st.just(...), st.none(), strategy)


def _defaulted(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, or left out for the field's default factory."""
    return st.one_of(st.just(...), strategy)


_parts = st.builds(TextPart, content=_text) | st.builds(ToolCallPart, tool_name=_text, args=_args, tool_call_id=_text)

_CASES: list[tuple[type[BaseModel], dict[str, st.SearchStrategy[Any]]]] = [
    (TextPart, {'content': _text, 'id': _optional(_text)}),
    (ThinkingPart, {'content': _text, 'signature': _optional(_text), 'provider_name': _optional(_text)}),
    (ToolCallPart, {'tool_name': _text, 'args': _optional(_args), 'tool_call_id': _defaulted(_text)}),
    (
        ModelResponse,
        {
            'parts': st.lists(_parts, max_size=3),
            'model_name': _optional(_text),
            'provider_name': _optional(_text),
            'timestamp': _defaulted(_moment),
        },
    ),
    (
        ModelRequest,
        {
            'parts': st.lists(
                st.builds(ToolReturnPart, tool_name=_text, content=_text, tool_call_id=_text), max_size=3
            ),
            'instructions': _optional(_text),
        },
    ),
]


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not ...}


def _same(built: BaseModel, validated: BaseModel, *, ignore: set[str]) -> None:
    assert type(built) is type(validated)
    assert built.model_fields_set == validated.model_fields_set
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.model_dump(exclude=ignore) == validated.model_dump(exclude=ignore)
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__


@pytest.mark.parametrize('cls, fields', _CASES, ids=[case[0].__name__ for case in _CASES])
def test_construct_is_what_validation_builds(cls: type[BaseModel], fields: dict[str, Any]) -> None:
    @given(st.fixed_dictionaries(fields))
    def check(values: dict[str, Any]) -> None:
        given_values = _given(values)
        before = datetime.now(UTC)
        built = construct(cls, given_values)
        validated = cls(**given_values)
        # Default factories run for each: a generated id or the time differs, so compare those by kind.
        generated = {name for name in ('tool_call_id', 'timestamp') if name in cls.model_fields} - set(given_values)
        _same(built, validated, ignore=generated)
        if 'timestamp' in generated:
            assert before <= built.__dict__['timestamp'] <= datetime.now(UTC)
        if 'tool_call_id' in generated:
            assert built.__dict__['tool_call_id'].startswith('call_')
        if not generated:
            assert built == validated
            assert built.model_dump_json() == validated.model_dump_json()

    check()


# Parts that leave fields unset, so that a copy's update adds to `model_fields_set`.
_sparse_parts = (
    _parts | st.builds(TextPart, content=_text, id=_text) | st.builds(ToolCallPart, tool_name=_text, tool_call_id=_text)
)


@given(part=_sparse_parts, args=_args, content=_text)
def test_replace_is_model_copy(part: TextPart | ToolCallPart, args: Any, content: str) -> None:
    update = {'args': args} if isinstance(part, ToolCallPart) else {'content': content, 'id': content}
    fields_before, set_before, dump_before = dict(part.__dict__), set(part.model_fields_set), part.model_dump()
    copied = replace(part, update)
    expected = part.model_copy(update=update)
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set
    assert copied is not part and copied.__dict__ is not part.__dict__
    # The original is untouched: its fields (each the very object it held), the fields it counts as set, and
    # what it dumps are what they were before the copy.
    assert part.__dict__ == fields_before
    assert all(part.__dict__[name] is value for name, value in fields_before.items())
    assert part.model_fields_set == set_before
    assert part.model_dump() == dump_before


def test_a_misspelt_field_is_an_error_and_a_missing_one_fails_validation() -> None:
    with pytest.raises(TypeError, match=r"ToolCallPart: unknown fields \['tool'\]"):
        construct(ToolCallPart, {'tool_name': 'x', 'tool': 'x'})
    with pytest.raises(TypeError, match=r"TextPart: unknown fields \['text'\]"):
        replace(TextPart(content='a'), {'text': 'b'})
    with pytest.raises(ValidationError, match='tool_name'):
        construct(ToolCallPart, {'args': None})


def test_what_the_caller_built_is_still_validated() -> None:
    """A value of the wrong type is refused, not stored: `construct` is validation, not a shortcut past it."""
    with pytest.raises(ValidationError, match='content'):
        construct(TextPart, {'content': 1})
    part = TextPart(content='a')
    built = construct(ModelResponse, {'parts': [part]})
    assert built.parts[0] is part  # a model instance of the right class passes through, not copied


def test_a_list_of_models_is_kept_as_given_and_counted_as_set() -> None:
    """Such a list is assigned after validating the rest (each model in it would come back as it is anyway)."""
    parts = [TextPart(content='a'), ToolCallPart(tool_name='t', args=None, tool_call_id='c')]
    built = construct(ModelResponse, {'parts': parts, 'model_name': 'm'})
    assert built.parts is parts
    assert built.model_fields_set == {'parts', 'model_name'}
    assert built == ModelResponse(parts=parts, model_name='m', timestamp=built.timestamp)
    assert list(built.__dict__) == list(ModelResponse.model_fields)
    assert construct(ModelResponse, {'parts': []}).parts == []  # an empty list is validated as any value is


def test_models_that_need_validation_to_set_them_up_are_set_up() -> None:
    class WithPrivate(BaseModel):
        _cache: dict[str, int] = PrivateAttr(default_factory=dict)

    class WithHook(BaseModel):
        x: int = 0
        hooked: bool = False

        def model_post_init(self, context: Any, /) -> None:
            self.hooked = True

    private = construct(WithPrivate, {})
    assert private._cache == {}  # pyright: ignore[reportPrivateUsage]
    assert construct(WithHook, {'x': 1}).hooked


def test_a_model_that_allows_extra_keys_gets_the_empty_extra_validation_gives_it() -> None:
    class Open(BaseModel, extra='allow'):
        x: int = 0

    built, validated = construct(Open, {'x': 1}), Open(x=1)
    assert built.__pydantic_extra__ == validated.__pydantic_extra__ == {}
    assert built == validated
    copied = replace(built, {'x': 2})
    assert copied == validated.model_copy(update={'x': 2})
    assert copied.__pydantic_extra__ is not built.__pydantic_extra__


def test_mutable_defaults_are_not_shared() -> None:
    class WithList(BaseModel):
        items: list[int] = []

    first = construct(WithList, {})
    first.items.append(1)
    assert construct(WithList, {}).items == [] == WithList().items
