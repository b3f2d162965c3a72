"""The UI message stream chunks (`ai` 7.0 `ui-message-stream/ui-message-chunks.ts`), as pydantic models.

These models are the one declaration of the chunk wire format: the encoder (`stream.py`) writes every chunk
but the deltas through a writer derived from its model (`stream.chunk_writer`), byte for byte what the model
serializes to, so a field added here is sent with no other edit. Applications can build or check chunks with
them too.
`UIMessageChunk` validates any chunk dict; a `type` outside the protocol fails, as it does in the client (an
unknown chunk kills the stream).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, Field, TypeAdapter

from ...core.tagged_unions import TaggedBy, union_members
from .types import (
    CustomUIPart,
    ProviderMetadata,
    SourceDocumentUIPart,
    SourceUrlUIPart,
    SteeringMessageUIPart,
    UIModel,
)

__all__ = [
    'AbortChunk',
    'CustomChunk',
    'DataChunk',
    'ErrorChunk',
    'FileChunk',
    'FinishChunk',
    'FinishReasonUI',
    'FinishStepChunk',
    'MessageMetadataChunk',
    'ReasoningDeltaChunk',
    'ReasoningEndChunk',
    'ReasoningFileChunk',
    'ReasoningStartChunk',
    'ResetStepChunk',
    'SourceDocumentChunk',
    'SourceUrlChunk',
    'StartChunk',
    'StartStepChunk',
    'SteeringMessageChunk',
    'TextDeltaChunk',
    'TextEndChunk',
    'TextStartChunk',
    'ToolApprovalRequestChunk',
    'ToolApprovalResponseChunk',
    'ToolInputAvailableChunk',
    'ToolInputDeltaChunk',
    'ToolInputErrorChunk',
    'ToolInputStartChunk',
    'ToolOutputAvailableChunk',
    'ToolOutputDeniedChunk',
    'ToolOutputErrorChunk',
    'UIMessageChunk',
    'UIMessageChunkAdapter',
]

FinishReasonUI: TypeAlias = Literal['stop', 'length', 'content-filter', 'tool-calls', 'error', 'interrupted', 'other']

# Fields are declared in the order of the client's schema (`uiMessageChunkSchema`), the order `ai`'s own server
# writes them in, and so the order they are written in here: `type` first (the serializer puts it there), then
# the fields, a base class's first.


class _PartChunk(UIModel):
    id: str
    provider_metadata: ProviderMetadata | None = None


class _DeltaChunk(UIModel):
    id: str
    delta: str
    provider_metadata: ProviderMetadata | None = None


class TextStartChunk(_PartChunk):
    type: Literal['text-start'] = 'text-start'


class TextDeltaChunk(_DeltaChunk):
    type: Literal['text-delta'] = 'text-delta'


class TextEndChunk(UIModel):
    type: Literal['text-end'] = 'text-end'
    id: str
    citations: list[dict[str, Any]] | None = None
    provider_metadata: ProviderMetadata | None = None


class ReasoningStartChunk(_PartChunk):
    type: Literal['reasoning-start'] = 'reasoning-start'


class ReasoningDeltaChunk(_DeltaChunk):
    type: Literal['reasoning-delta'] = 'reasoning-delta'


class ReasoningEndChunk(_PartChunk):
    type: Literal['reasoning-end'] = 'reasoning-end'


class ErrorChunk(UIModel):
    type: Literal['error'] = 'error'
    error_text: str


class ToolInputStartChunk(UIModel):
    type: Literal['tool-input-start'] = 'tool-input-start'
    tool_call_id: str
    tool_name: str
    input_encoding: Literal['json', 'text'] | None = None
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    title: str | None = None


class ToolInputDeltaChunk(UIModel):
    type: Literal['tool-input-delta'] = 'tool-input-delta'
    tool_call_id: str
    input_text_delta: str


class _ToolInputChunk(UIModel):
    tool_call_id: str
    tool_name: str
    input: Any
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    _keep_null = frozenset({'input'})


class ToolInputAvailableChunk(_ToolInputChunk):
    type: Literal['tool-input-available'] = 'tool-input-available'
    title: str | None = None


class ToolInputErrorChunk(_ToolInputChunk):
    type: Literal['tool-input-error'] = 'tool-input-error'
    error_text: str
    title: str | None = None


class ToolApprovalRequestChunk(UIModel):
    type: Literal['tool-approval-request'] = 'tool-approval-request'
    approval_id: str
    tool_call_id: str
    approval_descriptor: Any = None
    input_schema_input: Any = None
    reason: str | None = None
    is_automatic: bool | None = None
    signature: str | None = None


class ToolApprovalResponseChunk(UIModel):
    type: Literal['tool-approval-response'] = 'tool-approval-response'
    approval_id: str
    approved: bool
    reason: str | None = None
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None


class ToolOutputAvailableChunk(UIModel):
    type: Literal['tool-output-available'] = 'tool-output-available'
    tool_call_id: str
    output: Any
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    preliminary: bool | None = None
    _keep_null = frozenset({'output'})


class ToolOutputErrorChunk(UIModel):
    type: Literal['tool-output-error'] = 'tool-output-error'
    tool_call_id: str
    error_text: str
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None
    dynamic: bool | None = None


class ToolOutputDeniedChunk(UIModel):
    type: Literal['tool-output-denied'] = 'tool-output-denied'
    tool_call_id: str


# A chunk that carries a whole part is that part's model: the client adds it to the message field for field.
CustomChunk = CustomUIPart
SourceUrlChunk = SourceUrlUIPart
SourceDocumentChunk = SourceDocumentUIPart
SteeringMessageChunk = SteeringMessageUIPart


class _FileChunk(UIModel):
    # Not the file part: the url first, and neither a filename nor a provider reference.
    url: str
    media_type: str
    provider_metadata: ProviderMetadata | None = None


class FileChunk(_FileChunk):
    type: Literal['file'] = 'file'


class ReasoningFileChunk(_FileChunk):
    type: Literal['reasoning-file'] = 'reasoning-file'


class DataChunk(UIModel):
    type: Annotated[str, Field(pattern=r'^data-')]
    union_tag: ClassVar[str] = 'data'
    id: str | None = None
    data: Any
    transient: bool | None = None
    _keep_null = frozenset({'data'})


class StartStepChunk(UIModel):
    type: Literal['start-step'] = 'start-step'


class FinishStepChunk(UIModel):
    type: Literal['finish-step'] = 'finish-step'


class ResetStepChunk(UIModel):
    type: Literal['reset-step'] = 'reset-step'


class StartChunk(UIModel):
    type: Literal['start'] = 'start'
    message_id: str | None = None
    message_metadata: Any = None


class FinishChunk(UIModel):
    type: Literal['finish'] = 'finish'
    finish_reason: FinishReasonUI | None = None
    message_metadata: Any = None


class AbortChunk(UIModel):
    type: Literal['abort'] = 'abort'
    reason: str | None = None


class MessageMetadataChunk(UIModel):
    type: Literal['message-metadata'] = 'message-metadata'
    message_metadata: Any
    _keep_null = frozenset({'messageMetadata'})


def _chunk_tag(value: Any) -> str | None:
    chunk_type = value.get('type') if isinstance(value, dict) else getattr(value, 'type', None)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if not isinstance(chunk_type, str):
        return None
    if chunk_type.startswith('data-'):
        return 'data'
    return chunk_type if chunk_type in _CHUNKS and chunk_type != 'data' else None


UIMessageChunk: TypeAlias = Annotated[
    (
        TextStartChunk
        | TextDeltaChunk
        | TextEndChunk
        | ReasoningStartChunk
        | ReasoningDeltaChunk
        | ReasoningEndChunk
        | ErrorChunk
        | ToolInputStartChunk
        | ToolInputDeltaChunk
        | ToolInputAvailableChunk
        | ToolInputErrorChunk
        | ToolApprovalRequestChunk
        | ToolApprovalResponseChunk
        | ToolOutputAvailableChunk
        | ToolOutputErrorChunk
        | ToolOutputDeniedChunk
        | CustomChunk
        | SourceUrlChunk
        | SourceDocumentChunk
        | FileChunk
        | ReasoningFileChunk
        | SteeringMessageChunk
        | DataChunk
        | StartStepChunk
        | FinishStepChunk
        | ResetStepChunk
        | StartChunk
        | FinishChunk
        | AbortChunk
        | MessageMetadataChunk
    ),
    TaggedBy('type', _chunk_tag, custom_error_type='invalid_chunk_type', custom_error_message='unknown chunk type'),
]

UIMessageChunkAdapter: TypeAdapter[UIMessageChunk] = TypeAdapter(UIMessageChunk)

_CHUNKS: dict[str, type[BaseModel]] = union_members(UIMessageChunk)
"""Each chunk class by its discriminator tag (`'data'` for every `data-*` type), read from the union."""
