"""`TaggedBy`: a union's tags are read from its members, and an input loads as its own kind's member or the
opaque one, never as a member an extra key of its asks for."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from uibridge.adapters.vercel_ai.chunks import UIMessageChunk
from uibridge.adapters.vercel_ai.types import DataUIPart, TextUIPart, ToolUIPart, UIMessagePart, UnknownUIPart
from uibridge.core.messages import (
    ModelResponse,
    ModelResponsePart,
    OpaquePart,
    TextPart,
    ToolCallPart,
)
from uibridge.core.tagged_unions import OPAQUE, TaggedBy, member_tag, union_members

_parts: TypeAdapter[ModelResponsePart] = TypeAdapter(ModelResponsePart)


def test_each_member_is_tagged_by_its_field_default_or_its_union_tag() -> None:
    members = union_members(ModelResponsePart)
    assert members['text'] is TextPart
    assert members['tool-call'] is ToolCallPart
    assert members[OPAQUE] is OpaquePart
    assert set(members) == {'text', 'thinking', 'tool-call', 'file', 'builtin-tool-call', 'builtin-tool-return', OPAQUE}

    ui = union_members(UIMessagePart)
    assert (ui['tool'], ui['data'], ui['unknown'], ui['text']) == (ToolUIPart, DataUIPart, UnknownUIPart, TextUIPart)
    assert len(union_members(UIMessageChunk)) == 30


def test_a_known_kind_loads_as_its_member_and_an_unknown_one_as_the_opaque_member() -> None:
    assert isinstance(_parts.validate_python({'part_kind': 'text', 'content': 'hi'}), TextPart)
    opaque = _parts.validate_python({'part_kind': 'from-the-future', 'x': 1})
    assert isinstance(opaque, OpaquePart)
    assert opaque.model_dump() == {'part_kind': 'from-the-future', 'x': 1}


@pytest.mark.parametrize('value', [None, 'text', 7, {'content': 'no kind'}, {'part_kind': 3}])
def test_what_is_no_tagged_object_is_a_validation_error(value: Any) -> None:
    with pytest.raises(ValidationError):
        _parts.validate_python(value)


def test_an_extra_key_cannot_turn_a_known_part_opaque_or_an_opaque_part_known() -> None:
    # Extra keys are kept (pydantic-ai stores more), and they read as attributes: the opaque mark must come
    # from the class, or a client's `union_tag` key would hide its part from every check that skips opaque ones.
    sneaky = _parts.validate_python({'part_kind': 'text', 'content': 'hi', 'union_tag': OPAQUE, 'opaque': True})
    assert isinstance(sneaky, TextPart)
    revalidated = ModelResponse.model_validate({'parts': [sneaky]})
    assert isinstance(revalidated.parts[0], TextPart)

    kept = OpaquePart.model_validate({'part_kind': 'text', 'content': 'written by a newer pydantic-ai'})
    assert isinstance(ModelResponse.model_validate({'parts': [kept]}).parts[0], OpaquePart)


def test_a_member_with_no_tag_to_read_is_refused_when_the_union_is_built() -> None:
    class Tagged(BaseModel):
        kind: Literal['a'] = 'a'

    class Untagged(BaseModel):
        kind: str

    class Opaque(BaseModel):
        kind: str
        union_tag: ClassVar[str] = OPAQUE

    assert member_tag(Tagged, 'kind') == 'a'
    assert member_tag(Opaque, 'kind') == OPAQUE
    with pytest.raises(TypeError, match=r'Untagged\.kind has no string default'):
        TypeAdapter(Annotated[Tagged | Untagged, TaggedBy('kind')])


def test_union_members_refuses_a_union_not_declared_with_tagged_by() -> None:
    with pytest.raises(TypeError, match='TaggedBy'):
        union_members(Annotated[TextPart | ToolCallPart, 'not a marker'])
