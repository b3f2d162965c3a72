"""The UI message as the Vercel AI SDK (`ai` 5, 6 and 7) stores and sends it: `UIMessage` and its parts.

No Python package publishes these shapes, so they are declared here from `ai`'s own `ui/ui-messages.ts`
and `ui/validate-ui-messages.ts` (7.0.173). The wire form is camelCase; Python names are snake_case and
either spelling validates. Two rules of the client's validator decide how a model serializes:

- an optional field must be absent, never `null` (the client rejects `null`), so `None` is left out;
- a few keys must be present even when their value is `null`: `data` on a `data-*` part, `input` on a tool
  part past `input-streaming`, `output` on an `output-available` tool part.

Unknown keys are ignored, as the client's validator strips them. A part whose `type` this version does not
know validates as `UnknownUIPart`, so a newer client's extra part does not fail the whole request; loading
skips it with a warning.
"""

from __future__ import annotations

from types import NoneType
from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ...core.json_text import json_values
from ...core.tagged_unions import TaggedBy, union_members

__all__ = [
    'CustomUIPart',
    'DataUIPart',
    'DynamicToolUIPart',
    'FileUIPart',
    'ProviderMetadata',
    'ReasoningFileUIPart',
    'ReasoningUIPart',
    'SourceDocumentUIPart',
    'SourceUrlUIPart',
    'SteeringMessageUIPart',
    'StepStartUIPart',
    'TextUIPart',
    'ToolApprovalUI',
    'ToolState',
    'ToolUIPart',
    'UIMessage',
    'UIMessagePart',
    'UIMessagePartAdapter',
    'UnknownUIPart',
    'part_json',
]

ProviderMetadata: TypeAlias = dict[str, dict[str, Any]]
"""Two levels deep on the wire: `{provider: {key: json value}}`."""

ToolState: TypeAlias = Literal[
    'input-streaming',
    'input-available',
    'approval-requested',
    'approval-responded',
    'output-available',
    'output-error',
    'output-denied',
]


class UIModel(BaseModel):
    """Base of every UI and chunk model: camelCase on the wire, `None` left out (see the module docstring)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra='ignore',
    )
    _keep_null: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode='wrap')
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        keep = self._null_keys()
        # `type` first, as the client writes it, whatever order the fields were declared in.
        result: dict[str, Any] = {'type': data['type']} if 'type' in data else {}
        for key, value in data.items():
            if value is not None or key in keep:
                result[key] = value
        return result

    def _null_keys(self) -> frozenset[str]:
        return self._keep_null


class TextUIPart(UIModel):
    type: Literal['text'] = 'text'
    text: str
    state: Literal['streaming', 'done'] | None = None
    provider_metadata: ProviderMetadata | None = None
    citations: list[dict[str, Any]] | None = None


class ReasoningUIPart(UIModel):
    type: Literal['reasoning'] = 'reasoning'
    text: str
    id: str | None = None
    state: Literal['streaming', 'done'] | None = None
    provider_metadata: ProviderMetadata | None = None


class CustomUIPart(UIModel):
    type: Literal['custom'] = 'custom'
    kind: str
    provider_metadata: ProviderMetadata | None = None


class SourceUrlUIPart(UIModel):
    type: Literal['source-url'] = 'source-url'
    source_id: str
    url: str
    title: str | None = None
    provider_metadata: ProviderMetadata | None = None


class SourceDocumentUIPart(UIModel):
    type: Literal['source-document'] = 'source-document'
    source_id: str
    media_type: str
    title: str
    filename: str | None = None
    provider_metadata: ProviderMetadata | None = None


class FileUIPart(UIModel):
    type: Literal['file'] = 'file'
    media_type: str
    url: str
    filename: str | None = None
    provider_reference: dict[str, str] | None = None
    provider_metadata: ProviderMetadata | None = None


class ReasoningFileUIPart(UIModel):
    type: Literal['reasoning-file'] = 'reasoning-file'
    media_type: str
    url: str
    provider_metadata: ProviderMetadata | None = None


class SteeringMessageUIPart(UIModel):
    """Experimental (7.0.163): a user message added to a running response."""

    type: Literal['steering-message'] = 'steering-message'
    id: str
    parts: list[Annotated[TextUIPart | FileUIPart, Discriminator('type')]]


class StepStartUIPart(UIModel):
    type: Literal['step-start'] = 'step-start'


class DataUIPart(UIModel):
    """`data-{name}`: application data shown by the UI, never seen by the model."""

    type: Annotated[str, Field(pattern=r'^data-')]
    union_tag: ClassVar[str] = 'data'
    data: Any
    id: str | None = None
    _keep_null = frozenset({'data'})

    @property
    def name(self) -> str:
        return self.type[len('data-') :]


class ToolApprovalUI(UIModel):
    id: str
    approved: bool | None = None
    reason: str | None = None
    descriptor: Any = None
    request_reason: str | None = None
    is_automatic: bool | None = None
    signature: str | None = None
    input_schema_input: Any = None


# Built once: `_null_keys` runs for every tool part each time one is serialized.
_KEEP_INPUT_OUTPUT = frozenset({'input', 'output'})
_KEEP_INPUT = frozenset({'input'})
_KEEP_NOTHING = frozenset[str]()


class _ToolFields(UIModel):
    tool_call_id: str
    state: ToolState
    input: Any = None
    output: Any = None
    error_text: str | None = None
    raw_input: Any = None
    input_encoding: Literal['json', 'text'] | None = None
    provider_executed: bool | None = None
    call_provider_metadata: ProviderMetadata | None = None
    result_provider_metadata: ProviderMetadata | None = None
    preliminary: bool | None = None
    approval: ToolApprovalUI | None = None
    title: str | None = None
    tool_metadata: dict[str, Any] | None = None

    def _null_keys(self) -> frozenset[str]:
        if self.state == 'output-available':
            return _KEEP_INPUT_OUTPUT
        if self.state in ('input-streaming', 'output-error'):
            return _KEEP_NOTHING
        return _KEEP_INPUT

    @model_validator(mode='after')
    def _state_fields(self) -> _ToolFields:
        # The client's validator ties these fields to the state; a part that breaks them cannot be loaded.
        state = self.state
        if state == 'output-error' and self.error_text is None:
            raise ValueError("an 'output-error' tool part needs errorText")
        if state in ('approval-requested', 'approval-responded', 'output-denied') and self.approval is None:
            raise ValueError(f'a {state!r} tool part needs an approval')
        if state in ('approval-responded', 'output-denied') and (
            self.approval is None or self.approval.approved is None
        ):
            raise ValueError(f'a {state!r} tool part needs approval.approved')
        if state == 'output-denied' and self.approval is not None and self.approval.approved:
            raise ValueError("an 'output-denied' tool part needs approval.approved false")
        return self


class ToolUIPart(_ToolFields):
    """`tool-{name}`: a tool call, its state, and its result once there is one."""

    type: Annotated[str, Field(pattern=r'^tool-.')]
    union_tag: ClassVar[str] = 'tool'

    @property
    def tool_name(self) -> str:
        return self.type[len('tool-') :]


class DynamicToolUIPart(_ToolFields):
    """A tool the client does not know statically; the name is a field, not part of the type."""

    type: Literal['dynamic-tool'] = 'dynamic-tool'
    tool_name: str
    dynamic: Literal[False] | None = None


class UnknownUIPart(UIModel):
    """A part type this version does not know (from a newer client): kept whole, skipped when loading."""

    model_config = ConfigDict(extra='allow')
    type: str
    union_tag: ClassVar[str] = 'unknown'


def _part_tag(value: Any) -> str | None:
    part_type = value.get('type') if isinstance(value, dict) else getattr(value, 'type', None)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if not isinstance(part_type, str):
        return None
    if part_type in _STATIC_TYPES:
        return part_type
    if part_type.startswith('tool-'):
        return 'tool'
    if part_type.startswith('data-'):
        return 'data'
    return 'unknown'


UIMessagePart: TypeAlias = Annotated[
    (
        TextUIPart
        | ReasoningUIPart
        | CustomUIPart
        | SourceUrlUIPart
        | SourceDocumentUIPart
        | FileUIPart
        | ReasoningFileUIPart
        | SteeringMessageUIPart
        | StepStartUIPart
        | DynamicToolUIPart
        | ToolUIPart
        | DataUIPart
        | UnknownUIPart
    ),
    TaggedBy(
        'type', _part_tag, custom_error_type='invalid_part_type', custom_error_message='a part needs a string type'
    ),
]

_STATIC_TYPES = frozenset(union_members(UIMessagePart)) - {'tool', 'data', 'unknown'}
"""The part types that are one fixed string, each its own member."""


class UIMessage(UIModel):
    id: str
    role: Literal['system', 'user', 'assistant']
    parts: list[UIMessagePart]
    metadata: Any = None


UIMessagePartAdapter: TypeAdapter[UIMessagePart] = TypeAdapter(UIMessagePart)


# The JSON `model_dump_json` writes for a part, without running `_leave_out_absent` (a Python function per part,
# after pydantic-core has built the whole dict): derived message ids hash it for every part of every message,
# on dump and again on load. The same dict is built here straight from `__dict__` (the fields pydantic-core
# hands the wrap serializer, in the same order) and serialized by the serializer `Any` fields use, with the
# models' (default) JSON settings, so the bytes are the same.
_any_json = json_values.serializer


def _wire_keys(cls: type[UIModel]) -> dict[str, str]:
    return {name: info.alias or name for name, info in cls.model_fields.items()}


# Classes whose fields are all plain values (no nested model) and whose kept nulls do not depend on the part.
_plain_keys: dict[type[UIModel], dict[str, str]] = {
    cls: _wire_keys(cls)
    for cls in (
        TextUIPart,
        ReasoningUIPart,
        CustomUIPart,
        SourceUrlUIPart,
        SourceDocumentUIPart,
        FileUIPart,
        ReasoningFileUIPart,
        StepStartUIPart,
        DataUIPart,
    )
}
_tool_keys: dict[type[UIModel], dict[str, str]] = {cls: _wire_keys(cls) for cls in (ToolUIPart, DynamicToolUIPart)}


def part_json(part: UIModel) -> bytes:
    """`part.model_dump_json().encode()`, built without the wrap serializer (see above). Other classes (a
    steering message's nested parts, an unknown part's extra keys, subclasses) take `model_dump_json`."""
    cls = type(part)
    values = part.__dict__
    keys = _plain_keys.get(cls)
    if keys is not None:
        keep = cls._keep_null  # pyright: ignore[reportPrivateUsage]
    else:
        keys = _tool_keys.get(cls)
        # The approval is a model: only its own class is sure to serialize as the field's declared type does.
        if keys is None or type(values.get('approval')) not in (NoneType, ToolApprovalUI):
            return part.model_dump_json().encode()
        keep = part._null_keys()  # pyright: ignore[reportPrivateUsage]
    # `type` first, as `_leave_out_absent` writes it.
    data: dict[str, Any] = {'type': values['type']}
    for name, value in values.items():
        key = keys[name]
        if value is not None or key in keep:
            data[key] = value
    return _any_json.to_json(data)
