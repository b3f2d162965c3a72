"""Tagged unions whose tags are written once, on their members.

pydantic's callable `Discriminator` wants every member spelt `Annotated[Model, Tag('kind')]`, which repeats
what the model's own `Literal` default already says, and a discriminator that knows the tags keeps a second
copy of them in a set. `TaggedBy` reads each member's tag from the member itself, so a union is declared as a
plain union the type checker understands:

    ModelResponsePart = Annotated[TextPart | ThinkingPart | OpaquePart, TaggedBy('part_kind')]

A member's tag is the default of its tag field (`part_kind: Literal['text'] = 'text'`), or its `union_tag`
class variable when it stands for many wire values (`data-*`, an unknown kind). The schema pydantic builds is
the one the spelt-out form gives: same validation, same errors, same speed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Annotated, Any, Union, cast, get_args

from pydantic import BaseModel, Discriminator, GetCoreSchemaHandler, Tag
from pydantic_core import CoreSchema

OPAQUE = 'opaque'
"""The tag of the member that keeps, whole, what has no member of its own (`union_tag = OPAQUE`)."""


def member_tag(member: type[BaseModel], field: str) -> str:
    """A union member's tag: its `union_tag` class variable, else its tag field's default."""
    explicit = getattr(member, 'union_tag', None)
    if isinstance(explicit, str):
        return explicit
    default = member.model_fields[field].default
    if not isinstance(default, str):
        raise TypeError(f'{member.__name__}.{field} has no string default to tag it by; give it a union_tag')
    return default


_opaque_classes: dict[type[object], bool] = {}
"""Whether each class met as a part or content item is its union's opaque member."""


def known_or_opaque(value: Any, key: str, known: frozenset[str]) -> str | None:
    """The member a part (or content item) loads as: its own kind's, else the opaque one; `None` (a validation
    error) for what is no tagged object at all."""
    if isinstance(value, dict):
        kind: Any = cast('dict[str, Any]', value).get(key)
        opaque = False
    else:
        kind = getattr(value, key, None)
        # An opaque model stays opaque, whatever its kind says. Its class says so: an instance's extra keys
        # are attributes too, and a client could send one. Asked once per class: a class attribute a pydantic
        # model lacks is looked up through its metaclass's `__getattr__`, which raises, for every part.
        cls: type[object] = type(cast('object', value))
        opaque = _opaque_classes.get(cls)
        if opaque is None:
            opaque = _opaque_classes[cls] = getattr(cast('Any', cls), 'union_tag', None) == OPAQUE
    if not isinstance(kind, str):
        return None
    return kind if kind in known and not opaque else OPAQUE


class TaggedBy:
    """`Annotated` marker: validate a plain union of models as a tagged union over `field`.

    `discriminator` maps an input (a dict, or a model instance) to a member's tag, `None` for an error; without
    one, an input loads as the member its `field` names, else as the opaque member (see `known_or_opaque`).
    """

    def __init__(
        self,
        field: str,
        discriminator: Callable[[Any], Hashable] | None = None,
        *,
        custom_error_type: str | None = None,
        custom_error_message: str | None = None,
    ) -> None:
        self.field = field
        self._discriminator = discriminator
        self._custom_error_type = custom_error_type
        self._custom_error_message = custom_error_message

    def tags(self, union: Any) -> dict[str, type[BaseModel]]:
        return {member_tag(member, self.field): member for member in get_args(union)}

    def __get_pydantic_core_schema__(self, source_type: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        members = self.tags(source_type)
        discriminator = self._discriminator
        if discriminator is None:
            field, known = self.field, frozenset(members) - {OPAQUE}

            def known_else_opaque(value: Any) -> str | None:
                return known_or_opaque(value, field, known)

            discriminator = known_else_opaque

        tagged: Any = Union[tuple(Annotated[member, Tag(tag)] for tag, member in members.items())]  # noqa: UP007
        spelt_out = Discriminator(
            discriminator,
            custom_error_type=self._custom_error_type,
            custom_error_message=self._custom_error_message,
        )
        return spelt_out.__get_pydantic_core_schema__(tagged, handler)


def union_members(union: Any) -> dict[str, type[BaseModel]]:
    """Each member of an `Annotated[..., TaggedBy(...)]` union by its tag."""
    members, marker = get_args(union)[:2]
    if not isinstance(marker, TaggedBy):
        raise TypeError('not a union declared with TaggedBy')
    return marker.tags(members)
