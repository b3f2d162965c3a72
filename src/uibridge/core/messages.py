"""The neutral message model: one conversation, independent of any UI protocol.

A history is a list of `ModelMessage`s, alternating requests (what the application sends the model) and
responses (what the model answered). Field names, `kind` / `part_kind` discriminators and the JSON layout
follow the widely used pydantic-ai stored-message JSON for every part that exists there, so a history
saved by pydantic-ai loads here. Fields pydantic-ai stores that uibridge has no use for are ignored on load.

The one deliberate difference is `RetryFeedbackPart.cause`: pydantic-ai nests it as `retry.cause`; we keep
it flat (seed 003) and accept the nested spelling on load.
"""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, NotRequired, TypeAlias, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter
from typing_extensions import TypedDict

from .framing import wrap
from .json_text import compact_json, indented_json, json_values, parse_json

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
    'RetryFeedbackCause',
    'RetryFeedbackPart',
    'RetryPromptPart',
    'SystemPromptPart',
    'TextPart',
    'ThinkingPart',
    'ToolCallPart',
    'ToolReturnOutcome',
    'ToolReturnPart',
    'UserContent',
    'UserPromptPart',
    'VideoUrl',
    'generate_tool_call_id',
    'now_utc',
]


def now_utc() -> datetime:
    return datetime.now(tz=UTC)


def generate_tool_call_id() -> str:
    return f'call_{uuid.uuid4().hex}'


class _Model(BaseModel):
    # Unknown keys are ignored so that histories written by pydantic-ai (which stores more) still load.
    model_config = ConfigDict(extra='ignore', ser_json_bytes='base64', val_json_bytes='base64')


class ErrorDetails(TypedDict):
    """One validation error, as pydantic reports it; `input` and `ctx` may be absent once sanitized."""

    type: str
    loc: tuple[int | str, ...]
    msg: str
    input: NotRequired[Any]
    ctx: NotRequired[dict[str, Any]]
    url: NotRequired[str]


# ---------------------------------------------------------------------------------------------- media


class ImageUrl(_Model):
    url: str
    media_type: str | None = None
    kind: Literal['image-url'] = 'image-url'


class AudioUrl(_Model):
    url: str
    media_type: str | None = None
    kind: Literal['audio-url'] = 'audio-url'


class VideoUrl(_Model):
    url: str
    media_type: str | None = None
    kind: Literal['video-url'] = 'video-url'


class DocumentUrl(_Model):
    url: str
    media_type: str | None = None
    kind: Literal['document-url'] = 'document-url'


class BinaryContent(_Model):
    """Inline bytes; base64 in JSON."""

    data: bytes
    media_type: str
    kind: Literal['binary'] = 'binary'

    @property
    def data_url(self) -> str:
        return f'data:{self.media_type};base64,{base64.b64encode(self.data).decode()}'

    @classmethod
    def from_data_url(cls, url: str) -> BinaryContent:
        """Parse a `data:<media type>;base64,<data>` URL; raises `ValueError` for anything else."""
        if not url.startswith('data:'):
            raise ValueError('not a data URL')
        header, sep, payload = url[5:].partition(',')
        if not sep or not header.endswith(';base64'):
            raise ValueError('only base64 data URLs are supported')
        media_type = header[: -len(';base64')] or 'application/octet-stream'
        try:
            data = base64.b64decode(payload, validate=True)
        except ValueError as e:
            raise ValueError('invalid base64 in data URL') from e
        return cls(data=data, media_type=media_type)


MultiModalContent: TypeAlias = Annotated[
    ImageUrl | AudioUrl | VideoUrl | DocumentUrl | BinaryContent, Discriminator('kind')
]
UserContent: TypeAlias = str | MultiModalContent

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
    answers no call; it still loads and renders exactly as it always has (seed 003). New code writes
    `RetryFeedbackPart` for that case.
    """

    content: list[ErrorDetails] | str
    tool_name: str | None = None
    tool_call_id: str = Field(default_factory=generate_tool_call_id)
    timestamp: datetime = Field(default_factory=now_utc)
    part_kind: Literal['retry-prompt'] = 'retry-prompt'

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
        # pydantic-ai stores the cause as `retry: {cause, attempt, max_retries}`.
        if isinstance(data, dict) and 'cause' not in data:
            nested = cast('dict[str, Any]', data)
            retry = nested.get('retry')
            if isinstance(retry, dict) and 'cause' in retry:
                return {**nested, 'cause': cast('dict[str, Any]', retry)['cause']}
        return cast('Any', data)

    @pydantic.model_serializer(mode='wrap')
    def _write_nested_cause_too(self, serialize: pydantic.SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Written in both spellings, so a history uibridge saved loads in pydantic-ai too (which requires
        # `retry`); loading here reads `cause`.
        data: dict[str, Any] = serialize(self)
        data['retry'] = {'cause': self.cause, 'attempt': None, 'max_retries': None}
        return data


ModelRequestPart: TypeAlias = Annotated[
    SystemPromptPart | UserPromptPart | ToolReturnPart | RetryPromptPart | RetryFeedbackPart,
    Discriminator('part_kind'),
]


class ModelRequest(_Model):
    parts: list[ModelRequestPart]
    instructions: str | None = None
    metadata: dict[str, Any] | None = None
    kind: Literal['request'] = 'request'

    @pydantic.field_validator('parts', mode='before')
    @classmethod
    def _accept_retried_tool_returns(cls, parts: Any) -> Any:
        # pydantic-ai (2.68 and later) stores a retry that answers a tool call as a tool return with
        # `outcome='retried'`; here that is a `RetryPromptPart`, the part that means exactly this.
        if not isinstance(parts, list):
            return parts
        return [_retried_tool_return_as_retry_prompt(part) for part in cast('list[Any]', parts)]


def _retried_tool_return_as_retry_prompt(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    data = cast('dict[str, Any]', part)
    if data.get('part_kind') != 'tool-return' or data.get('outcome') != 'retried':
        return data
    keys = ('content', 'tool_name', 'tool_call_id', 'timestamp')
    return {'part_kind': 'retry-prompt', **{key: data[key] for key in keys if key in data}}


# ------------------------------------------------------------------------------------------ responses


class TextPart(_Model):
    content: str
    id: str | None = None
    part_kind: Literal['text'] = 'text'


class ThinkingPart(_Model):
    content: str
    id: str | None = None
    signature: str | None = None
    provider_name: str | None = None
    part_kind: Literal['thinking'] = 'thinking'


class ToolCallPart(_Model):
    tool_name: str
    args: str | dict[str, Any] | None = None
    tool_call_id: str = Field(default_factory=generate_tool_call_id)
    part_kind: Literal['tool-call'] = 'tool-call'

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


class FilePart(_Model):
    """A file the model produced (an image, say)."""

    content: BinaryContent
    id: str | None = None
    part_kind: Literal['file'] = 'file'


ModelResponsePart: TypeAlias = Annotated[TextPart | ThinkingPart | ToolCallPart | FilePart, Discriminator('part_kind')]

FinishReason: TypeAlias = Literal['stop', 'length', 'content_filter', 'tool_call', 'error']


class ModelResponse(_Model):
    parts: list[ModelResponsePart]
    model_name: str | None = None
    provider_name: str | None = None
    timestamp: datetime = Field(default_factory=now_utc)
    finish_reason: FinishReason | None = None
    metadata: dict[str, Any] | None = None
    kind: Literal['response'] = 'response'


ModelMessage: TypeAlias = Annotated[ModelRequest | ModelResponse, Discriminator('kind')]

ModelMessagesTypeAdapter: TypeAdapter[list[ModelMessage]] = TypeAdapter(list[ModelMessage])
"""Loads and dumps a history as JSON (or JSON-compatible Python)."""
