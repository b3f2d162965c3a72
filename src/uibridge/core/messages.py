"""The neutral message model: one conversation, independent of any UI protocol.

A history is a list of `ModelMessage`s, alternating requests (what the application sends the model) and
responses (what the model answered). Field names, `kind` / `part_kind` discriminators and the JSON layout
follow the widely used pydantic-ai stored-message JSON for every part that exists there, so a history
saved by pydantic-ai loads here. Nothing stored is lost: a field uibridge has no use for is kept on the model
(pydantic `extra='allow'`) and dumped back, and a part of a kind uibridge does not know (pydantic-ai's speech,
compaction or instruction deltas, or kinds newer than this code) loads as an `OpaquePart`, which keeps every
key and dumps back as it came. No adapter shows an opaque part to a UI, and no model input is built from one.

The JSON uibridge writes loads in pydantic-ai too, each field meaning there what it means here
(`tests/core/test_pydantic_ai_compat.py` checks both ways on every kind):

- `RetryFeedbackPart.cause` is flat here (seed 003) and nested as `retry.cause` in pydantic-ai: both are
  written, and either is read;
- a response's unknown usage (`usage=None`) is written as no `usage` key, which pydantic-ai reads as its zero
  usage (it requires an object);
- an error of a retry's content that has no `input` (the UI's markers leave it out) is written with
  `"input": null`, which pydantic-ai requires;
- what only uibridge has (a file's `filename`, a citation source's UI `id`, `media_type` and `filename`, the
  `url` and `provider_reference` a provider file loaded from a Vercel file part keeps as extra keys) is ignored
  by pydantic-ai.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, NotRequired, TypeAlias, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter
from typing_extensions import TypedDict

from .citations import Citation
from .content import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    MultiModalContent,
    OpaqueContent,
    UploadedFile,
    UserContent,
    VideoUrl,
    is_none,
)
from .framing import wrap
from .json_text import compact_json, indented_json, json_values, parse_json
from .stored_spellings import (
    read_nested_cause,
    read_retried_tool_return,
    write_error_inputs,
    write_nested_cause,
    write_retried_tool_return,
)
from .tagged_unions import OPAQUE, TaggedBy
from .usage import Usage

__all__ = [
    'RETRY_SUFFIX',
    'AudioUrl',
    'BinaryContent',
    'DocumentUrl',
    'ErrorDetails',
    'FilePart',
    'FinishReason',
    'ImageUrl',
    'ModelMessage',
    'ModelMessagesTypeAdapter',
    'ModelRequest',
    'ModelRequestPart',
    'ModelResponse',
    'ModelResponsePart',
    'MultiModalContent',
    'NativeToolCallPart',
    'NativeToolReturnPart',
    'OpaqueContent',
    'OpaquePart',
    'RetryFeedbackCause',
    'RetryFeedbackPart',
    'RetryPromptPart',
    'SystemPromptPart',
    'TextPart',
    'ThinkingPart',
    'ToolCallPart',
    'ToolReturnOutcome',
    'ToolReturnPart',
    'UploadedFile',
    'UserContent',
    'UserPromptPart',
    'VideoUrl',
    'generate_tool_call_id',
]


def now_utc() -> datetime:
    return datetime.now(tz=UTC)


def generate_tool_call_id() -> str:
    return f'call_{uuid.uuid4().hex}'


class _Model(BaseModel):
    # Unknown keys are kept, so a history written by pydantic-ai (which stores more) round-trips whole.
    model_config = ConfigDict(extra='allow', ser_json_bytes='base64', val_json_bytes='base64')


class ErrorDetails(TypedDict):
    """One validation error, as pydantic reports it; `input` and `ctx` may be absent once sanitized."""

    type: str
    loc: tuple[int | str, ...]
    msg: str
    input: NotRequired[Any]
    ctx: NotRequired[dict[str, Any]]
    url: NotRequired[str]


# ------------------------------------------------------------------------------------------- requests


class SystemPromptPart(_Model):
    content: str
    timestamp: datetime = Field(default_factory=now_utc)
    dynamic_ref: str | None = None
    part_kind: Literal['system-prompt'] = 'system-prompt'


class UserPromptPart(_Model):
    content: str | list[UserContent]
    timestamp: datetime = Field(default_factory=now_utc)
    part_kind: Literal['user-prompt'] = 'user-prompt'


ToolReturnOutcome: TypeAlias = Literal['success', 'failed', 'denied', 'interrupted']


class ToolReturnPart(_Model):
    """The result of a tool call. `outcome` says whether the tool ran, failed, was denied or interrupted."""

    tool_name: str
    content: Any
    tool_call_id: str
    metadata: Any = None
    timestamp: datetime = Field(default_factory=now_utc)
    outcome: ToolReturnOutcome = 'success'
    part_kind: Literal['tool-return'] = 'tool-return'

    def model_response_str(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return compact_json(self.content)


RETRY_SUFFIX = '\n\nFix the errors and try again.'
"""The directive that ends every `RetryPromptPart.model_response()` (a UI that shows the errors leaves it out)."""


class RetryPromptPart(_Model):
    """A retry that answers a tool call: that call's result, telling the model its call failed.

    A tool-less `RetryPromptPart` (`tool_name=None`) is what older histories hold for feedback that
    answers no call; it still loads and renders exactly as it always has, so a history stored before
    `RetryFeedbackPart` existed means what it meant. New code writes `RetryFeedbackPart` for that case.
    """

    content: list[ErrorDetails] | str
    tool_name: str | None = None
    tool_call_id: str = Field(default_factory=generate_tool_call_id)
    timestamp: datetime = Field(default_factory=now_utc)
    part_kind: Literal['retry-prompt'] = 'retry-prompt'

    @pydantic.model_serializer(mode='wrap')
    def _write_back_as_retried_tool_return(self, serialize: pydantic.SerializerFunctionWrapHandler) -> dict[str, Any]:
        # pydantic-ai's spelling, when loaded from it; every error with the `input` pydantic-ai requires.
        return write_error_inputs(write_retried_tool_return(serialize(self)))

    def model_response(self) -> str:
        """The text the model is shown: the errors, framed, then the classic directive.

        The same words pydantic-ai renders for the same stored part, with what a tool, the model or a client
        wrote framed in a data tag (`<retry_feedback>` for a message, `<validation_errors>` for the error
        list), so none of it can close the frame or speak as `<system>`: `ctx` is never shown, and a
        tool-less retry leaves out the `input` of root-level errors (the model's whole answer, already in
        its context).
        """
        if isinstance(self.content, str):
            framed = wrap('retry_feedback', self.content)
            description = framed if self.tool_name is not None else f'Validation feedback:\n{framed}'
        else:
            errors = [
                {
                    key: value
                    for key, value in error.items()
                    if key != 'ctx' and not (key == 'input' and self.tool_name is None and len(error['loc']) <= 1)
                }
                for error in self.content
            ]
            dumped = indented_json(json_values.dump_python(errors, mode='json'))
            plural = '' if len(self.content) == 1 else 's'
            framed = wrap('validation_errors', f'```json\n{dumped}\n```')
            description = f'{len(self.content)} validation error{plural}:\n{framed}'
        return f'{description}{RETRY_SUFFIX}'


RetryFeedbackCause: TypeAlias = Literal['validation_error', 'no_output', 'model_retry']


class RetryFeedbackPart(_Model):
    """A retry that answers no tool call: the application's own feedback on the model's last answer.

    The part stores no wording: `cause` picks the template at render time (`uibridge.core.feedback`).
    """

    content: list[ErrorDetails] | str
    cause: RetryFeedbackCause
    timestamp: datetime = Field(default_factory=now_utc)
    part_kind: Literal['retry-feedback'] = 'retry-feedback'

    @pydantic.model_validator(mode='before')
    @classmethod
    def _accept_nested_cause(cls, data: Any) -> Any:
        return read_nested_cause(data)  # pydantic-ai stores the cause as `retry: {cause, attempt, max_retries}`

    @pydantic.model_serializer(mode='wrap')
    def _write_nested_cause_too(self, serialize: pydantic.SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Written in both spellings, so a history uibridge saved loads in pydantic-ai too; loading reads `cause`.
        return write_error_inputs(write_nested_cause(serialize(self), self.cause))


class OpaquePart(_Model):
    """A part of a kind uibridge does not know: every key kept, dumped back as it came (see the module)."""

    part_kind: str
    union_tag: ClassVar[str] = OPAQUE


ModelRequestPart: TypeAlias = Annotated[
    SystemPromptPart | UserPromptPart | ToolReturnPart | RetryPromptPart | RetryFeedbackPart | OpaquePart,
    TaggedBy('part_kind'),
]


class ModelRequest(_Model):
    parts: list[ModelRequestPart]
    instructions: str | None = None
    metadata: dict[str, Any] | None = None
    kind: Literal['request'] = 'request'

    @pydantic.field_validator('parts', mode='before')
    @classmethod
    def _accept_retried_tool_returns(cls, parts: Any) -> Any:
        # pydantic-ai's retried tool return is a `RetryPromptPart` here (`uibridge.core.stored_spellings`).
        if not isinstance(parts, list):
            return parts
        return [read_retried_tool_return(part) for part in cast('list[Any]', parts)]


# ------------------------------------------------------------------------------------------ responses


class TextPart(_Model):
    content: str
    id: str | None = None
    citations: list[Citation] | None = None
    """The sources this text cites (Vercel `source-url` / `source-document` parts)."""
    part_kind: Literal['text'] = 'text'


class ThinkingPart(_Model):
    content: str
    id: str | None = None
    signature: str | None = None
    provider_name: str | None = None
    part_kind: Literal['thinking'] = 'thinking'


class _ToolCall(_Model):
    """What a tool call is, whoever runs the tool: its name, arguments (a JSON object's text while they stream,
    parsed when whole) and id."""

    tool_name: str
    args: str | dict[str, Any] | None = None
    tool_call_id: str = Field(default_factory=generate_tool_call_id)

    def args_as_dict(self) -> dict[str, Any]:
        """The arguments as a dict; a JSON string that is not an object comes back under `INVALID_JSON`."""
        if self.args is None:
            return {}
        if isinstance(self.args, dict):
            return self.args
        if not self.args:
            return {}
        try:
            parsed = parse_json(self.args)
        except ValueError:
            return {'INVALID_JSON': self.args}
        if isinstance(parsed, dict):
            return parsed  # pyright: ignore[reportUnknownVariableType]
        return {'INVALID_JSON': self.args}

    def args_as_json_str(self) -> str:
        if self.args is None:
            return '{}'
        if isinstance(self.args, str):
            return self.args or '{}'
        return compact_json(self.args)


class ToolCallPart(_ToolCall):
    """A call to a tool the application (server or client) runs; a `ToolReturnPart` or `RetryPromptPart` in a
    later request answers it."""

    part_kind: Literal['tool-call'] = 'tool-call'


class NativeToolCallPart(_ToolCall):
    """A call to a tool the model's provider runs itself (web search, code execution): nobody here answers
    it; its `NativeToolReturnPart` comes in the same response. pydantic-ai's `builtin-tool-call`."""

    provider_name: str | None = None
    part_kind: Literal['builtin-tool-call'] = 'builtin-tool-call'


class NativeToolReturnPart(_Model):
    """What a provider-run tool returned, in the response that called it. pydantic-ai's `builtin-tool-return`."""

    tool_name: str
    content: Any
    tool_call_id: str
    provider_name: str | None = None
    timestamp: datetime = Field(default_factory=now_utc)
    part_kind: Literal['builtin-tool-return'] = 'builtin-tool-return'

    def model_response_str(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return compact_json(self.content)


class FilePart(_Model):
    """A file the model produced (an image, say)."""

    content: BinaryContent
    id: str | None = None
    part_kind: Literal['file'] = 'file'


ModelResponsePart: TypeAlias = Annotated[
    TextPart | ThinkingPart | ToolCallPart | FilePart | NativeToolCallPart | NativeToolReturnPart | OpaquePart,
    TaggedBy('part_kind'),
]

FinishReason: TypeAlias = Literal['stop', 'length', 'content_filter', 'tool_call', 'error']


class ModelResponse(_Model):
    parts: list[ModelResponsePart]
    model_name: str | None = None
    provider_name: str | None = None
    timestamp: datetime = Field(default_factory=now_utc)
    finish_reason: FinishReason | None = None
    usage: Usage | None = Field(default=None, exclude_if=is_none)
    """`None` when not reported: then no `usage` key is written, which pydantic-ai (requiring an object there)
    reads as its own default, zero usage; loading here gives `None` back."""
    provider_response_id: str | None = None
    provider_details: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    kind: Literal['response'] = 'response'


ModelMessage: TypeAlias = Annotated[ModelRequest | ModelResponse, Discriminator('kind')]

ModelMessagesTypeAdapter: TypeAdapter[list[ModelMessage]] = TypeAdapter(list[ModelMessage])
"""Loads and dumps a history as JSON (or JSON-compatible Python)."""
