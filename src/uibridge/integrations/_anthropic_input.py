"""Neutral history → the Messages API's input (re-exported by `.anthropic`).

Requests become user turns (tool results first, as the API requires, then text and media); responses
assistant turns: signed Anthropic thinking, redacted thinking, text (with its web search citations, whose
`encrypted_index` the API asks back), `tool_use`, and Anthropic server tool calls with their results
(`server_tool_use` + `web_search_tool_result` and the other result blocks, as they came). Not sent: thinking
without a signature or from another provider (the API rejects it), other providers' native tools, a server
tool call without its result in the same response (or a result without its call), citations of documents or
search results (they point into blocks of an earlier request whose citation settings this conversion does
not set), files the model produced, usage, and opaque parts. Consecutive turns of one role merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NotRequired, cast

from typing_extensions import TypedDict

from ..core import messages as m
from ..core.json_text import parse_json
from ._anthropic_maps import PROVIDER_NAME, REDACTED_THINKING_ID, RESULT_BLOCK_TYPES
from ._history import UserContentSpelling, result_text, system_text, user_content_parts

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, DocumentBlockParam, MessageParam, TextBlockParam


class MessagesInput(TypedDict):
    """The keyword arguments of `messages.create` a history gives: `client.messages.create(**input, ...)`."""

    messages: list[MessageParam]
    system: NotRequired[str]


def to_messages_input(history: Sequence[m.ModelMessage]) -> MessagesInput:
    """`history` as `messages`, with its system prompts (and the latest instructions) as `system`."""
    result: MessagesInput = {'messages': to_messages(history)}
    if system := system_text(history):
        result['system'] = system
    return result


def to_messages(history: Sequence[m.ModelMessage]) -> list[MessageParam]:
    """`history` as Messages API `messages` (system prompts left out: `to_messages_input` gives them), as the
    module says."""
    turns: list[tuple[bool, list[ContentBlockParam]]] = []  # (is the user's, blocks)
    for message in history:
        if isinstance(message, m.ModelRequest):
            results: list[ContentBlockParam] = []
            others: list[ContentBlockParam] = []
            for part in message.parts:
                if isinstance(part, m.SystemPromptPart):
                    continue
                if isinstance(part, m.UserPromptPart):
                    others.extend(_user_blocks(part.content))
                elif isinstance(part, m.ToolReturnPart) or (isinstance(part, m.RetryPromptPart) and part.tool_name):
                    failed = not isinstance(part, m.ToolReturnPart) or part.outcome == 'failed'
                    results.append(
                        {
                            'type': 'tool_result',
                            'tool_use_id': part.tool_call_id,
                            'content': result_text(part),
                            'is_error': failed,
                        }
                    )
                elif not isinstance(part, m.OpaquePart):
                    others.append({'type': 'text', 'text': result_text(part)})
            _append(turns, True, results + others)
        else:
            _append(turns, False, _assistant_blocks(message.parts))
    messages: list[MessageParam] = []
    for users, blocks in turns:
        messages.append({'role': 'user', 'content': blocks} if users else {'role': 'assistant', 'content': blocks})
    return messages


def _assistant_blocks(parts: Sequence[m.ModelResponsePart]) -> list[ContentBlockParam]:
    paired = _server_tool_ids(parts, m.NativeToolCallPart) & _server_tool_ids(parts, m.NativeToolReturnPart)
    blocks: list[ContentBlockParam] = []
    for part in parts:
        if isinstance(part, m.ThinkingPart):
            if part.provider_name != PROVIDER_NAME or not part.signature:
                continue
            if part.id == REDACTED_THINKING_ID:
                blocks.append({'type': 'redacted_thinking', 'data': part.signature})
            else:
                blocks.append({'type': 'thinking', 'thinking': part.content, 'signature': part.signature})
        elif isinstance(part, m.TextPart) and part.content:
            blocks.append(_text_block(part))
        elif isinstance(part, m.ToolCallPart):
            blocks.append(
                {'type': 'tool_use', 'id': part.tool_call_id, 'name': part.tool_name, 'input': part.args_as_dict()}
            )
        elif isinstance(part, m.NativeToolCallPart) and part.tool_call_id in paired:
            args = parse_json(part.args_as_json_str())
            block = {'type': 'server_tool_use', 'id': part.tool_call_id, 'name': part.tool_name, 'input': args}
            blocks.append(cast('ContentBlockParam', block))
        elif isinstance(part, m.NativeToolReturnPart) and part.tool_call_id in paired:
            block = {
                'type': RESULT_BLOCK_TYPES[part.tool_name],
                'tool_use_id': part.tool_call_id,
                'content': part.content,
            }
            blocks.append(cast('ContentBlockParam', block))
    return blocks


def _server_tool_ids(
    parts: Sequence[m.ModelResponsePart], kind: type[m.NativeToolCallPart | m.NativeToolReturnPart]
) -> set[str]:
    """The ids of this response's Anthropic server tool calls (or results) that the API has a result block for."""
    return {
        part.tool_call_id
        for part in parts
        if isinstance(part, kind) and part.provider_name == PROVIDER_NAME and part.tool_name in RESULT_BLOCK_TYPES
    }


def _text_block(part: m.TextPart) -> TextBlockParam:
    block: TextBlockParam = {'type': 'text', 'text': part.content}
    citations: list[Any] = [
        details
        for citation in part.citations or ()
        if getattr(citation, 'provider_name', None) == PROVIDER_NAME
        and isinstance(details := getattr(citation, 'provider_details', None), dict)
        and cast('dict[str, Any]', details).get('type') == 'web_search_result_location'
    ]
    if citations:
        block['citations'] = citations
    return block


def _append(turns: list[tuple[bool, list[ContentBlockParam]]], users: bool, blocks: list[ContentBlockParam]) -> None:
    if not blocks:
        return
    if turns and turns[-1][0] == users:
        turns[-1][1].extend(blocks)
    else:
        turns.append((users, blocks))


def _user_blocks(content: str | list[m.UserContent]) -> list[ContentBlockParam]:
    if isinstance(content, str):
        return [{'type': 'text', 'text': content}] if content else []
    return user_content_parts(content, _MESSAGES_CONTENT)


def _base64(item: m.BinaryContent) -> str:
    return item.data_url.partition(',')[2]


def _pdf(item: m.BinaryContent) -> ContentBlockParam:
    block: DocumentBlockParam = {
        'type': 'document',
        'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': _base64(item)},
    }
    if item.filename:
        block['title'] = item.filename  # the user's name for it, which the model is shown
    return block


_MESSAGES_CONTENT: UserContentSpelling[ContentBlockParam] = UserContentSpelling(
    api='The Messages API',
    text=lambda text: {'type': 'text', 'text': text},
    image_link=lambda url: {'type': 'image', 'source': {'type': 'url', 'url': url}},
    inline={
        'image': lambda item: {
            'type': 'image',
            'source': {'type': 'base64', 'media_type': cast('Any', item.media_type), 'data': _base64(item)},
        },
        'pdf': _pdf,
    },
)
