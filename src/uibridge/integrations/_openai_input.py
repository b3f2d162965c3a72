"""Neutral history → the input of OpenAI's Chat Completions and Responses APIs (re-exported by `.openai`).

Each request part becomes what that API has for it: system prompts system messages, user prompts user
messages (text, images, audio and PDFs inline), tool returns and tool retry prompts the call's result
(`tool` message / `function_call_output`), and a retry that answers no call (a tool-less retry prompt,
retry feedback) a user message holding the text uibridge renders for it. A response becomes an assistant
message with its tool calls (Chat Completions) or its items in order (Responses: reasoning items built from
OpenAI thinking parts, assistant messages, function calls, and OpenAI built-in tool calls merged with their
returns into the output item they came as, a generated image with its `FilePart`'s bytes). Thinking and
native tools from another provider, native tools in Chat Completions (it has none), files the model produced
and citations (Responses output text annotations; Chat Completions has none) are not sent: the text goes
without them. Usage is never input. Opaque parts are skipped. The latest request's `instructions` go first,
as a system message.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from ..core import messages as m
from ..core.json_text import parse_json
from ._history import UserContentSpelling, instructions, result_text, user_content_parts
from ._openai_maps import IMAGE_RESULT, PROVIDER_NAME, native_item

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
    )
    from openai.types.responses import ResponseInputContentParam, ResponseInputItemParam


def to_chat_completions_messages(history: Sequence[m.ModelMessage]) -> list[ChatCompletionMessageParam]:
    """`history` as Chat Completions `messages`, in order."""
    messages: list[ChatCompletionMessageParam] = []
    if latest := instructions(history):
        messages.append({'role': 'system', 'content': latest})
    for message in history:
        if isinstance(message, m.ModelRequest):
            for part in message.parts:
                if isinstance(part, m.SystemPromptPart):
                    messages.append({'role': 'system', 'content': part.content})
                elif isinstance(part, m.UserPromptPart):
                    messages.append({'role': 'user', 'content': _chat_user_content(part.content)})
                elif isinstance(part, m.ToolReturnPart | m.RetryPromptPart) and part.tool_name is not None:
                    messages.append({'role': 'tool', 'tool_call_id': part.tool_call_id, 'content': result_text(part)})
                elif not isinstance(part, m.OpaquePart):
                    messages.append({'role': 'user', 'content': result_text(part)})
            continue
        texts = [part.content for part in message.parts if isinstance(part, m.TextPart)]
        calls: list[ChatCompletionMessageFunctionToolCallParam] = [
            {
                'id': part.tool_call_id,
                'type': 'function',
                'function': {'name': part.tool_name, 'arguments': part.args_as_json_str()},
            }
            for part in message.parts
            if isinstance(part, m.ToolCallPart)
        ]
        if not texts and not calls:
            continue  # only thinking or files: nothing Chat Completions takes back
        assistant: ChatCompletionAssistantMessageParam = {'role': 'assistant', 'content': ''.join(texts) or None}
        if calls:
            assistant['tool_calls'] = calls
        messages.append(assistant)
    return messages


def _chat_user_content(content: str | list[m.UserContent]) -> str | list[ChatCompletionContentPartParam]:
    return content if isinstance(content, str) else user_content_parts(content, _CHAT_CONTENT)


def _chat_audio(item: m.BinaryContent) -> ChatCompletionContentPartParam | None:
    audio_format = _AUDIO_FORMATS.get(item.media_type.lower())
    if audio_format is None:
        return None
    return {'type': 'input_audio', 'input_audio': {'data': item.data_url.partition(',')[2], 'format': audio_format}}


def _pdf_name(item: m.BinaryContent) -> str:
    """The name the API shows the model for a PDF (it requires one): the user's, else a stand-in."""
    return item.filename or 'document.pdf'


_CHAT_CONTENT: UserContentSpelling[ChatCompletionContentPartParam] = UserContentSpelling(
    api='Chat Completions',
    text=lambda text: {'type': 'text', 'text': text},
    image_link=lambda url: {'type': 'image_url', 'image_url': {'url': url}},
    inline={
        'image': lambda item: {'type': 'image_url', 'image_url': {'url': item.data_url}},
        'audio': _chat_audio,
        'pdf': lambda item: {'type': 'file', 'file': {'file_data': item.data_url, 'filename': _pdf_name(item)}},
    },
)


_AUDIO_FORMATS: dict[str, Literal['wav', 'mp3']] = {
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
}


def to_responses_input(history: Sequence[m.ModelMessage]) -> list[ResponseInputItemParam]:
    """`history` as the Responses API's `input` items, in order (for a stateless request: no
    `previous_response_id`)."""
    items: list[ResponseInputItemParam] = []
    if latest := instructions(history):
        items.append({'type': 'message', 'role': 'system', 'content': latest})
    for message in history:
        if isinstance(message, m.ModelRequest):
            for part in message.parts:
                if isinstance(part, m.SystemPromptPart):
                    items.append({'type': 'message', 'role': 'system', 'content': part.content})
                elif isinstance(part, m.UserPromptPart):
                    items.append({'type': 'message', 'role': 'user', 'content': _responses_user_content(part.content)})
                elif isinstance(part, m.ToolReturnPart | m.RetryPromptPart) and part.tool_name is not None:
                    items.append(
                        {'type': 'function_call_output', 'call_id': part.tool_call_id, 'output': result_text(part)}
                    )
                elif not isinstance(part, m.OpaquePart):
                    items.append({'type': 'message', 'role': 'user', 'content': result_text(part)})
            continue
        reasoning_id: str | None = None
        for part in message.parts:
            if isinstance(part, m.ThinkingPart):
                if part.provider_name != PROVIDER_NAME or not part.id:
                    continue
                _add_reasoning(items, part, continues=part.id == reasoning_id)
                reasoning_id = part.id
                continue
            reasoning_id = None
            if isinstance(part, m.NativeToolCallPart):
                if item := _native_input(part, message):
                    items.append(item)
            elif isinstance(part, m.TextPart):
                items.append({'type': 'message', 'role': 'assistant', 'content': part.content})
            elif isinstance(part, m.ToolCallPart):
                items.append(
                    {
                        'type': 'function_call',
                        'call_id': part.tool_call_id,
                        'name': part.tool_name,
                        'arguments': part.args_as_json_str(),
                    }
                )
    return items


def _native_input(call: m.NativeToolCallPart, response: m.ModelResponse) -> ResponseInputItemParam | None:
    """An OpenAI built-in tool call and its return in `response`, as the output item they came as; `None` for
    another provider's, and for a call whose return is missing (the item would not say how it ended)."""
    if call.provider_name != PROVIDER_NAME:
        return None
    returned = next(
        (p for p in response.parts if isinstance(p, m.NativeToolReturnPart) and p.tool_call_id == call.tool_call_id),
        None,
    )
    args = parse_json(call.args_as_json_str())
    if returned is None or not isinstance(args, dict):
        return None
    item = native_item(call.tool_name, call.tool_call_id, cast('dict[str, Any]', args), returned.content)
    if item is None:
        return None
    if item['type'] == 'image_generation_call':
        image = next((p for p in response.parts if isinstance(p, m.FilePart) and p.id == call.tool_call_id), None)
        item[IMAGE_RESULT] = base64.b64encode(image.content.data).decode() if image is not None else None
    return cast('ResponseInputItemParam', item)


def _add_reasoning(items: list[ResponseInputItemParam], part: m.ThinkingPart, *, continues: bool) -> None:
    """A reasoning item for `part`, or its next summary when `part` continues the item just added (one item
    streams one thinking part per summary, all with the item's id)."""
    if continues:
        item = items[-1]
        assert item.get('type') == 'reasoning' and 'summary' in item
        summary = list(item['summary'])  # pyright: ignore[reportGeneralTypeIssues, reportTypedDictNotRequiredAccess]
    else:
        summary = []
        item = None
    if part.content:
        summary.append({'type': 'summary_text', 'text': part.content})
    reasoning: ResponseInputItemParam = {'type': 'reasoning', 'id': part.id or '', 'summary': summary}
    encrypted = part.signature or (item.get('encrypted_content') if item is not None else None)
    if encrypted:
        reasoning['encrypted_content'] = encrypted
    if continues:
        items[-1] = reasoning
    else:
        items.append(reasoning)


def _responses_user_content(content: str | list[m.UserContent]) -> str | list[ResponseInputContentParam]:
    return content if isinstance(content, str) else user_content_parts(content, _RESPONSES_CONTENT)


_RESPONSES_CONTENT: UserContentSpelling[ResponseInputContentParam] = UserContentSpelling(
    api='The Responses API',
    text=lambda text: {'type': 'input_text', 'text': text},
    image_link=lambda url: {'type': 'input_image', 'image_url': url, 'detail': 'auto'},
    inline={
        'image': lambda item: {'type': 'input_image', 'image_url': item.data_url, 'detail': 'auto'},
        'pdf': lambda item: {'type': 'input_file', 'file_data': item.data_url, 'filename': _pdf_name(item)},
    },
)
