"""The UI message stream chunks (`ai` 7.0 `ui-message-stream/ui-message-chunks.ts`), as pydantic models.

The encoder (`stream.py`) writes chunks as plain dicts for speed; these models are the schema it keeps to,
for tests and for applications that want to build or check chunks themselves. `UIMessageChunk` validates any
chunk dict; a `type` outside the protocol fails, as it does in the client (an unknown chunk kills the stream).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag, TypeAdapter

from .types import FileUIPart, ProviderMetadata, TextUIPart, UIModel

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


class TextStartChunk(UIModel):
    type: Literal['text-start'] = 'text-start'
    id: str
    provider_metadata: ProviderMetadata | None = None


class TextDeltaChunk(UIModel):
    type: Literal['text-delta'] = 'text-delta'
    id: str
    delta: str
    provider_metadata: ProviderMetadata | None = None


class TextEndChunk(UIModel):
    type: Literal['text-end'] = 'text-end'
    id: str
    citations: list[dict[str, Any]] | None = None
    provider_metadata: ProviderMetadata | None = None


class ReasoningStartChunk(UIModel):
    type: Literal['reasoning-start'] = 'reasoning-start'
    id: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningDeltaChunk(UIModel):
    type: Literal['reasoning-delta'] = 'reasoning-delta'
    id: str
    delta: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningEndChunk(UIModel):
    type: Literal['reasoning-end'] = 'reasoning-end'
    id: str
    provider_metadata: ProviderMetadata | None = None


class ErrorChunk(UIModel):
    type: Literal['error'] = 'error'
    error_text: str


class _ToolChunk(UIModel):
    tool_call_id: str
    tool_name: str
    provider_executed: bool | None = None
    provider_metadata: ProviderMetadata | None = None
    tool_metadata: dict[str, Any] | None = None
    dynamic: bool | None = None
    title: str | None = None


class ToolInputStartChunk(_ToolChunk):
    type: Literal['tool-input-start'] = 'tool-input-start'
    input_encoding: Literal['json', 'text'] | None = None


class ToolInputDeltaChunk(UIModel):
    type: Literal['tool-input-delta'] = 'tool-input-delta'
    tool_call_id: str
    input_text_delta: str


class ToolInputAvailableChunk(_ToolChunk):
    type: Literal['tool-input-available'] = 'tool-input-available'
    input: Any
    _keep_null = frozenset({'input'})


class ToolInputErrorChunk(_ToolChunk):
    type: Literal['tool-input-error'] = 'tool-input-error'
    input: Any
    error_text: str
    _keep_null = frozenset({'input'})


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


class CustomChunk(UIModel):
    type: Literal['custom'] = 'custom'
    kind: str
    provider_metadata: ProviderMetadata | None = None


class SourceUrlChunk(UIModel):
    type: Literal['source-url'] = 'source-url'
    source_id: str
    url: str
    title: str | None = None
    provider_metadata: ProviderMetadata | None = None


class SourceDocumentChunk(UIModel):
    type: Literal['source-document'] = 'source-document'
    source_id: str
    media_type: str
    title: str
    filename: str | None = None
    provider_metadata: ProviderMetadata | None = None


class FileChunk(UIModel):
    type: Literal['file'] = 'file'
    url: str
    media_type: str
    provider_metadata: ProviderMetadata | None = None


class ReasoningFileChunk(UIModel):
    type: Literal['reasoning-file'] = 'reasoning-file'
    url: str
    media_type: str
    provider_metadata: ProviderMetadata | None = None


class SteeringMessageChunk(UIModel):
    type: Literal['steering-message'] = 'steering-message'
    id: str
    parts: list[Annotated[TextUIPart | FileUIPart, Discriminator('type')]]


class DataChunk(UIModel):
    type: Annotated[str, Field(pattern=r'^data-')]
    data: Any
    id: str | None = None
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


_CHUNKS: dict[str, type[UIModel]] = {
    cls.model_fields['type'].default: cls
    for cls in (
        TextStartChunk,
        TextDeltaChunk,
        TextEndChunk,
        ReasoningStartChunk,
        ReasoningDeltaChunk,
        ReasoningEndChunk,
        ErrorChunk,
        ToolInputStartChunk,
        ToolInputDeltaChunk,
        ToolInputAvailableChunk,
        ToolInputErrorChunk,
        ToolApprovalRequestChunk,
        ToolApprovalResponseChunk,
        ToolOutputAvailableChunk,
        ToolOutputErrorChunk,
        ToolOutputDeniedChunk,
        CustomChunk,
        SourceUrlChunk,
        SourceDocumentChunk,
        FileChunk,
        ReasoningFileChunk,
        SteeringMessageChunk,
        StartStepChunk,
        FinishStepChunk,
        ResetStepChunk,
        StartChunk,
        FinishChunk,
        AbortChunk,
        MessageMetadataChunk,
    )
}


def _chunk_tag(value: Any) -> str | None:
    chunk_type = value.get('type') if isinstance(value, dict) else getattr(value, 'type', None)  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
    if not isinstance(chunk_type, str):
        return None
    if chunk_type.startswith('data-'):
        return 'data'
    return chunk_type if chunk_type in _CHUNKS else None


UIMessageChunk: TypeAlias = Annotated[
    Annotated[TextStartChunk, Tag('text-start')]
    | Annotated[TextDeltaChunk, Tag('text-delta')]
    | Annotated[TextEndChunk, Tag('text-end')]
    | Annotated[ReasoningStartChunk, Tag('reasoning-start')]
    | Annotated[ReasoningDeltaChunk, Tag('reasoning-delta')]
    | Annotated[ReasoningEndChunk, Tag('reasoning-end')]
    | Annotated[ErrorChunk, Tag('error')]
    | Annotated[ToolInputStartChunk, Tag('tool-input-start')]
    | Annotated[ToolInputDeltaChunk, Tag('tool-input-delta')]
    | Annotated[ToolInputAvailableChunk, Tag('tool-input-available')]
    | Annotated[ToolInputErrorChunk, Tag('tool-input-error')]
    | Annotated[ToolApprovalRequestChunk, Tag('tool-approval-request')]
    | Annotated[ToolApprovalResponseChunk, Tag('tool-approval-response')]
    | Annotated[ToolOutputAvailableChunk, Tag('tool-output-available')]
    | Annotated[ToolOutputErrorChunk, Tag('tool-output-error')]
    | Annotated[ToolOutputDeniedChunk, Tag('tool-output-denied')]
    | Annotated[CustomChunk, Tag('custom')]
    | Annotated[SourceUrlChunk, Tag('source-url')]
    | Annotated[SourceDocumentChunk, Tag('source-document')]
    | Annotated[FileChunk, Tag('file')]
    | Annotated[ReasoningFileChunk, Tag('reasoning-file')]
    | Annotated[SteeringMessageChunk, Tag('steering-message')]
    | Annotated[DataChunk, Tag('data')]
    | Annotated[StartStepChunk, Tag('start-step')]
    | Annotated[FinishStepChunk, Tag('finish-step')]
    | Annotated[ResetStepChunk, Tag('reset-step')]
    | Annotated[StartChunk, Tag('start')]
    | Annotated[FinishChunk, Tag('finish')]
    | Annotated[AbortChunk, Tag('abort')]
    | Annotated[MessageMetadataChunk, Tag('message-metadata')],
    Discriminator(_chunk_tag, custom_error_type='invalid_chunk_type', custom_error_message='unknown chunk type'),
]

UIMessageChunkAdapter: TypeAdapter[UIMessageChunk] = TypeAdapter(UIMessageChunk)
