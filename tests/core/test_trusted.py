"""`core.trusted`: building and copying models without validation leaves exactly what validation leaves."""

from __future__ import annotations

import copy
import pickle
import weakref
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, PrivateAttr

from uibridge.core import trusted
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


@given(part=_parts, args=_args, content=_text)
def test_replace_is_model_copy(part: TextPart | ToolCallPart, args: Any, content: str) -> None:
    update = {'args': args} if isinstance(part, ToolCallPart) else {'content': content}
    copied = replace(part, update)
    expected = part.model_copy(update=update)
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set
    assert copied is not part and copied.__dict__ is not part.__dict__
    assert part.model_dump() != copied.model_dump() or update == {
        key: part.__dict__[key] for key in update
    }  # the original is untouched


def test_a_missing_or_unknown_field_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"ToolCallPart: unknown fields \['tool'\]"):
        construct(ToolCallPart, {'tool_name': 'x', 'tool': 'x'})
    with pytest.raises(TypeError, match=r"ToolCallPart: missing field 'tool_name'"):
        construct(ToolCallPart, {'args': None})


def test_models_that_need_validation_to_set_them_up_are_refused() -> None:
    class WithPrivate(BaseModel):
        _cache: dict[str, int] = PrivateAttr(default_factory=dict)

    class WithHook(BaseModel):
        x: int = 0

        def model_post_init(self, context: Any, /) -> None:
            pass

    for cls in (WithPrivate, WithHook):
        with pytest.raises(TypeError, match='private attributes or a post-init hook'):
            construct(cls, {})


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


def test_a_model_of_another_memory_layout_is_built_through_its_slot_descriptors() -> None:
    """`construct` writes a model's slots into a `_Blank` and hands it the model's class, which CPython allows
    only between classes of one memory layout; a model whose class adds a slot of its own has another, and is
    built the other way, with the same result."""

    class Slotted(BaseModel):
        __slots__ = ('cache',)
        x: int = 0
        y: str

    class Plain(BaseModel):
        x: int = 0
        y: str

    assert trusted._layout(Plain).blank and not trusted._layout(Slotted).blank  # pyright: ignore[reportPrivateUsage]
    for cls in (Plain, Slotted):
        built, validated = construct(cls, {'y': 'a'}), cls(y='a')
        _same(built, validated, ignore=set())
        assert built == validated
        copied = replace(built, {'x': 2})
        assert type(copied) is cls and copied == validated.model_copy(update={'x': 2})


def test_a_built_model_is_its_class_in_every_respect() -> None:
    """What pydantic does with a model by its class (validated assignment, copies, pickling, weak references)
    works on a built one as on a validated one: it is of that class, not a `_Blank` in disguise."""
    built = construct(ToolCallPart, {'tool_name': 'search', 'args': {'q': 'x'}, 'tool_call_id': 'c1'})
    validated = ToolCallPart(tool_name='search', args={'q': 'x'}, tool_call_id='c1')
    assert type(built) is ToolCallPart and isinstance(built, ToolCallPart)
    assert pickle.loads(pickle.dumps(built)) == validated
    assert copy.deepcopy(built) == validated and copy.copy(built) == validated
    assert weakref.ref(built)() is built
    built.tool_name = 'lookup'  # a pydantic model's own `__setattr__`: the field is set and marked set
    assert built.tool_name == 'lookup' and 'tool_name' in built.model_fields_set
    with pytest.raises(AttributeError):
        del built.not_a_field
    assert built.model_dump() == validated.model_copy(update={'tool_name': 'lookup'}).model_dump()
