"""Neutral messages as the OpenTelemetry GenAI conventions write a conversation (`gen_ai.input.messages`,
`gen_ai.output.messages`): a list of `{"role", "parts": [{"type", ...}]}`, an output message also with its
`finish_reason`.

Recorded only when an application opts in (`Telemetry(record_content=True)`): this is the conversation's
content. Roles are `system`, `user`, `assistant` and `tool`; parts are `text`, `reasoning`, `tool_call`,
`tool_call_response`, `uri` and `blob` (media), and, for what the conventions have no part for, a part whose
`type` is uibridge's own part kind (`retry_feedback`, an unknown part's kind).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from ..core.content import AudioUrl, BinaryContent, ImageUrl, OpaqueContent, UploadedFile, VideoUrl
from ..core.json_text import compact_json
from ..core.messages import (
    FilePart,
    ModelMessage,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

GenAIMessage = dict[str, Any]
GenAIPart = dict[str, Any]


def input_messages(messages: Sequence[ModelMessage]) -> list[GenAIMessage]:
    """The history as input messages. A request's parts go to one message per role, in order (a request may
    hold a system prompt, tool results and a user prompt at once)."""
    written: list[GenAIMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            written.append({'role': 'assistant', 'parts': [_response_part(part) for part in message.parts]})
            continue
        if message.instructions:
            written.append({'role': 'system', 'parts': [_text(message.instructions)]})
        current: GenAIMessage | None = None
        for part in message.parts:
            role, parts = _request_part(part)
            if current is None or current['role'] != role:
                current = {'role': role, 'parts': []}
                written.append(current)
            current['parts'].extend(parts)
    return written


def output_messages(messages: Sequence[ModelMessage]) -> list[GenAIMessage]:
    """The run's responses as output messages."""
    return [
        {
            'role': 'assistant',
            'parts': [_response_part(part) for part in message.parts],
            'finish_reason': message.finish_reason or 'stop',
        }
        for message in messages
        if isinstance(message, ModelResponse)
    ]


def tool_result_text(content: Any) -> str:
    """A tool result as text: a string as it is, anything else as compact JSON."""
    return content if isinstance(content, str) else compact_json(content)


def _text(content: str) -> GenAIPart:
    return {'type': 'text', 'content': content}


def _request_part(part: ModelRequestPart) -> tuple[str, list[GenAIPart]]:
    if isinstance(part, SystemPromptPart):
        return 'system', [_text(part.content)]
    if isinstance(part, UserPromptPart):
        content = part.content
        return 'user', [_text(content)] if isinstance(content, str) else [_user_content(item) for item in content]
    if isinstance(part, ToolReturnPart):
        return 'tool', [_tool_response(part.tool_call_id, part.content)]
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return 'user', [_text(part.model_response())]
        return 'tool', [_tool_response(part.tool_call_id, part.model_response())]
    if isinstance(part, RetryFeedbackPart):
        return 'user', [{'type': 'retry_feedback', 'cause': part.cause, 'content': _jsonable(part.content)}]
    return 'user', [{'type': part.part_kind}]


def _response_part(part: ModelResponsePart) -> GenAIPart:
    if isinstance(part, TextPart):
        return _text(part.content)
    if isinstance(part, ThinkingPart):
        return {'type': 'reasoning', 'content': part.content}
    if isinstance(part, ToolCallPart | NativeToolCallPart):
        return {'type': 'tool_call', 'id': part.tool_call_id, 'name': part.tool_name, 'arguments': part.args_as_dict()}
    if isinstance(part, NativeToolReturnPart):
        return _tool_response(part.tool_call_id, part.content)
    if isinstance(part, FilePart):
        return _blob(part.content)
    return {'type': part.part_kind}


def _user_content(item: UserContent) -> GenAIPart:
    if isinstance(item, str):
        return _text(item)
    if isinstance(item, BinaryContent):
        return _blob(item)
    if isinstance(item, OpaqueContent):
        return {'type': item.kind}
    if isinstance(item, UploadedFile):
        handle: GenAIPart = {'type': 'file', 'file_id': item.file_id}
        if item.media_type is not None:
            handle['mime_type'] = item.media_type
        return handle
    written: GenAIPart = {'type': 'uri', 'uri': item.url}
    modality = _URL_MODALITIES.get(type(item))
    if modality is not None:
        written['modality'] = modality
    if item.media_type is not None:
        written['mime_type'] = item.media_type
    return written


_URL_MODALITIES: dict[type, str] = {ImageUrl: 'image', AudioUrl: 'audio', VideoUrl: 'video'}


def _blob(content: BinaryContent) -> GenAIPart:
    written: GenAIPart = {
        'type': 'blob',
        'mime_type': content.media_type,
        'content': base64.b64encode(content.data).decode('ascii'),
    }
    modality = content.media_type.partition('/')[0]
    if modality in ('image', 'audio', 'video'):
        written['modality'] = modality
    return written


def _tool_response(tool_call_id: str, content: Any) -> GenAIPart:
    return {'type': 'tool_call_response', 'id': tool_call_id, 'response': _jsonable(content)}


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=str)
