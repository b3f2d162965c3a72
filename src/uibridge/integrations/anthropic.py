"""Anthropic: a streamed Messages API answer as uibridge agent events, and history as Messages input.

Install with `pip install 'uibridge[anthropic]'`. One loop turn:

    events = events_from_messages_stream(await client.messages.create(
        model=..., max_tokens=..., tools=..., stream=True, **to_messages_input(history)))
    async for event in events:
        yield event
    history.append(events.response)   # then run its tool calls, yield ToolResult(...) and go again

What maps: `message_start` → `ResponseStart` (model name); text blocks → text parts; thinking blocks →
thinking parts whose `signature_delta` arrives as the part's signature (provider `anthropic`); a redacted
thinking block → a thinking part with no text, `id='redacted_thinking'` and its opaque `data` as signature
(pydantic-ai's spelling, so the block goes back as it came); `tool_use` blocks → tool-call parts whose
`input_json_delta`s stream the arguments; `message_delta.stop_reason` → `events.finish_reason`. The events of
`client.messages.stream(...)` work too (its extra derived events are skipped).

Not mapped yet (TODO, issue 14: no neutral events for them): usage (on `events.usage`, the SDK's own
`MessageDeltaUsage` of the last `message_delta`, meanwhile), server tools (`server_tool_use`, web search /
fetch and code execution results: skipped), citations. An `error` event mid-stream is raised by the SDK
(`anthropic.APIStatusError`) and propagates.

The SDK's types are imported for type checking only: importing this module does not import `anthropic`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict

from ..core import events as ev
from ..core.messages import (
    BinaryContent,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    OpaquePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from ._history import media_kind, result_text, system_text, unsupported
from ._stream import Parts, ResponseEvents, StreamState

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageDeltaUsage, MessageParam, MessageStreamEvent

__all__ = [
    'PROVIDER_NAME',
    'REDACTED_THINKING_ID',
    'MessagesInput',
    'ResponseEvents',
    'events_from_messages_stream',
    'to_messages',
    'to_messages_input',
]

PROVIDER_NAME = 'anthropic'
REDACTED_THINKING_ID = 'redacted_thinking'

_STOP: dict[str, FinishReason] = {
    'end_turn': 'stop',
    'stop_sequence': 'stop',
    'pause_turn': 'stop',
    'max_tokens': 'length',
    'model_context_window_exceeded': 'length',
    'tool_use': 'tool_call',
    'refusal': 'content_filter',
}


def events_from_messages_stream(stream: AsyncIterable[MessageStreamEvent]) -> ResponseEvents[MessageDeltaUsage]:
    """The events of one model response from `messages.create(..., stream=True)` or `messages.stream(...)`."""
    return ResponseEvents(lambda state: _events(stream, state))


async def _events(
    stream: AsyncIterable[MessageStreamEvent], state: StreamState[MessageDeltaUsage]
) -> AsyncIterator[ev.AgentEvent]:
    parts = Parts()
    signatures: dict[int, str] = {}  # block index → a thinking block's signature (or redacted data)
    whole_inputs: dict[int, str] = {}  # block index → a tool_use input that came whole in its start block
    streamed_input: set[int] = set()
    async for event in stream:
        if event.type == 'message_start':
            yield ev.ResponseStart(model_name=event.message.model or None, provider_name=PROVIDER_NAME)
        elif event.type == 'content_block_start':
            block, index = event.content_block, event.index
            if block.type == 'text':
                yield parts.start(index, TextPart(content=block.text))
            elif block.type == 'thinking':
                yield parts.start(index, ThinkingPart(content=block.thinking, provider_name=PROVIDER_NAME))
                if block.signature:
                    signatures[index] = block.signature
            elif block.type == 'redacted_thinking':
                part = ThinkingPart(content='', id=REDACTED_THINKING_ID, provider_name=PROVIDER_NAME)
                yield parts.start(index, part)
                signatures[index] = block.data
            elif block.type == 'tool_use':
                yield parts.start(index, ToolCallPart(tool_name=block.name, args=None, tool_call_id=block.id))
                if block.input:
                    # Given whole in the start block (the API streams it as deltas, but an SDK may not).
                    whole_inputs[index] = json.dumps(block.input, ensure_ascii=False)
        elif event.type == 'content_block_delta':
            delta, index = event.delta, event.index
            text: str | None = None
            if delta.type == 'text_delta':
                text = delta.text
            elif delta.type == 'thinking_delta':
                text = delta.thinking
            elif delta.type == 'input_json_delta':
                streamed_input.add(index)
                text = delta.partial_json
            elif delta.type == 'signature_delta':
                signatures[index] = delta.signature
            if text and (part_delta := parts.delta(index, text)):
                yield part_delta
        elif event.type == 'content_block_stop':
            index = event.index
            whole = whole_inputs.pop(index, None)
            if whole is not None and index not in streamed_input and (part_delta := parts.delta(index, whole)):
                yield part_delta
            if end := parts.end(index, signatures.pop(index, None)):
                yield end
        elif event.type == 'message_delta':
            state.usage = event.usage
            if event.delta.stop_reason is not None:
                state.provider_finish_reason = event.delta.stop_reason
                state.finish_reason = _STOP.get(event.delta.stop_reason)
    for end in parts.end_all():
        yield end


class MessagesInput(TypedDict):
    """The keyword arguments of `messages.create` a history gives: `client.messages.create(**input, ...)`."""

    messages: list[MessageParam]
    system: NotRequired[str]


def to_messages_input(history: Sequence[ModelMessage]) -> MessagesInput:
    """`history` as `messages`, with its system prompts (and the latest instructions) as `system`."""
    result: MessagesInput = {'messages': to_messages(history)}
    if system := system_text(history):
        result['system'] = system
    return result


def to_messages(history: Sequence[ModelMessage]) -> list[MessageParam]:
    """`history` as Messages API `messages` (system prompts left out: `to_messages_input` gives them).

    Requests become user turns (tool results first, as the API requires, then text and media); responses
    assistant turns (signed Anthropic thinking, redacted thinking, text, tool_use). Thinking without a
    signature or from another provider is not sent (the API rejects it); consecutive turns of one role merge.
    """
    turns: list[tuple[bool, list[ContentBlockParam]]] = []  # (is the user's, blocks)
    for message in history:
        if isinstance(message, ModelRequest):
            results: list[ContentBlockParam] = []
            others: list[ContentBlockParam] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    continue
                if isinstance(part, UserPromptPart):
                    others.extend(_user_blocks(part.content))
                elif isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name):
                    failed = not isinstance(part, ToolReturnPart) or part.outcome == 'failed'
                    results.append(
                        {
                            'type': 'tool_result',
                            'tool_use_id': part.tool_call_id,
                            'content': result_text(part),
                            'is_error': failed,
                        }
                    )
                elif not isinstance(part, OpaquePart):
                    others.append({'type': 'text', 'text': result_text(part)})
            _append(turns, True, results + others)
        else:
            _append(turns, False, _assistant_blocks(message.parts))
    messages: list[MessageParam] = []
    for users, blocks in turns:
        messages.append({'role': 'user', 'content': blocks} if users else {'role': 'assistant', 'content': blocks})
    return messages


def _assistant_blocks(parts: Sequence[Any]) -> list[ContentBlockParam]:
    blocks: list[ContentBlockParam] = []
    for part in parts:
        if isinstance(part, ThinkingPart):
            if part.provider_name != PROVIDER_NAME or not part.signature:
                continue
            if part.id == REDACTED_THINKING_ID:
                blocks.append({'type': 'redacted_thinking', 'data': part.signature})
            else:
                blocks.append({'type': 'thinking', 'thinking': part.content, 'signature': part.signature})
        elif isinstance(part, TextPart) and part.content:
            blocks.append({'type': 'text', 'text': part.content})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {'type': 'tool_use', 'id': part.tool_call_id, 'name': part.tool_name, 'input': part.args_as_dict()}
            )
    return blocks


def _append(turns: list[tuple[bool, list[ContentBlockParam]]], users: bool, blocks: list[ContentBlockParam]) -> None:
    if not blocks:
        return
    if turns and turns[-1][0] == users:
        turns[-1][1].extend(blocks)
    else:
        turns.append((users, blocks))


def _user_blocks(content: str | list[UserContent]) -> list[ContentBlockParam]:
    if isinstance(content, str):
        return [{'type': 'text', 'text': content}] if content else []
    blocks: list[ContentBlockParam] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({'type': 'text', 'text': item})
        elif isinstance(item, ImageUrl):
            blocks.append({'type': 'image', 'source': {'type': 'url', 'url': item.url}})
        elif isinstance(item, BinaryContent) and media_kind(item) == 'image':
            data = item.data_url.partition(',')[2]
            media_type: Any = item.media_type
            blocks.append({'type': 'image', 'source': {'type': 'base64', 'media_type': media_type, 'data': data}})
        elif isinstance(item, BinaryContent) and media_kind(item) == 'pdf':
            data = item.data_url.partition(',')[2]
            blocks.append(
                {'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': data}}
            )
        elif isinstance(item, BinaryContent):
            raise unsupported('The Messages API', f'{item.media_type} content')
        else:
            raise unsupported('The Messages API', f'{item.kind} link')
    return blocks
