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
`input_json_delta`s stream the arguments; server tools (`server_tool_use`: web search, web fetch, code
execution, bash / text editor code execution, tool search) → `NativeToolCallPart`s streamed the same way,
and their result blocks (`web_search_tool_result`, `code_execution_tool_result`, ...) → `NativeToolResult`
with the block's `content` as the API sent it; `citations_delta` (web search result, character, page,
content block and search result locations) → `CitationAdded` on its text part; `message_start`'s usage with
the last `message_delta`'s cumulative counts, the stop reason, the message id and model → one
`ResponseInfo` (`events.finish_reason`, `events.usage` too). The events of `client.messages.stream(...)`
work too (its extra derived events are skipped).

Usage: `input_tokens` is every input token (the API's own `input_tokens`, which leaves the cache out, plus
cache writes and reads), `cache_write_tokens` / `cache_read_tokens` the cache's,
`output_reasoning_tokens` the thinking tokens, and `details` the cache writes by lifetime
(`ephemeral_5m_input_tokens`, `ephemeral_1h_input_tokens`) and server tool requests (`web_search_requests`,
`web_fetch_requests`); the service tier and stop sequence are in `provider_details`.

Not mapped: citations have no anchor (the API's offsets point into the cited document; the cited claim is
the whole text part, as the API splits text at citation boundaries), a `container_upload` block is
skipped. An `error` event mid-stream is raised by the SDK (`anthropic.APIStatusError`) and propagates.

The SDK's types are imported for type checking only: importing this module does not import `anthropic`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

from ..core import events as ev
from ..core.messages import FinishReason, NativeToolCallPart, NativeToolReturnPart, TextPart, ThinkingPart, ToolCallPart
from ._anthropic_input import MessagesInput, to_messages, to_messages_input
from ._anthropic_maps import PROVIDER_NAME, REDACTED_THINKING_ID, RESULT_TOOL_NAMES, message_usage, text_citation
from ._stream import Parts, ResponseEvents, StreamState

if TYPE_CHECKING:
    from anthropic.types import ContentBlock, MessageDeltaUsage, MessageStreamEvent, RawContentBlockDelta
    from anthropic.types import Usage as AnthropicUsage

__all__ = [
    'PROVIDER_NAME',
    'REDACTED_THINKING_ID',
    'MessagesInput',
    'ResponseEvents',
    'events_from_messages_stream',
    'to_messages',
    'to_messages_input',
]

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
    blocks = _Blocks()
    start_usage: AnthropicUsage | None = None
    async for event in stream:
        if event.type == 'message_start':
            message = event.message
            start_usage = message.usage
            state.provider_response_id, state.model_name = message.id or None, message.model or None
            if message.usage.service_tier:
                state.provider_details['service_tier'] = message.usage.service_tier
            yield ev.ResponseStart(model_name=message.model or None, provider_name=PROVIDER_NAME)
        elif event.type == 'content_block_start':
            for block_event in blocks.start(event.content_block, event.index):
                yield block_event
        elif event.type == 'content_block_delta':
            if block_event := blocks.delta(event.delta, event.index):
                yield block_event
        elif event.type == 'content_block_stop':
            for block_event in blocks.stop(event.index):
                yield block_event
        elif event.type == 'message_delta':
            state.provider_usage = event.usage
            if event.delta.stop_reason is not None:
                state.provider_finish_reason = event.delta.stop_reason
                state.finish_reason = _STOP.get(event.delta.stop_reason)
            if event.delta.stop_sequence is not None:
                state.provider_details['stop_sequence'] = event.delta.stop_sequence
    state.usage = message_usage(start_usage, state.provider_usage)
    for end in state.ending(blocks.parts):
        yield end


class _Blocks:
    """The content blocks of one message as parts: each block's events, by the block's `index`."""

    def __init__(self) -> None:
        self.parts = Parts()
        self._signatures: dict[int, str] = {}  # block index → a thinking block's signature (or redacted data)
        self._whole_inputs: dict[int, str] = {}  # block index → a tool input that came whole in its start block
        self._streamed_input: set[int] = set()
        self._server_tools: dict[str, str] = {}  # server tool call id → its name, for its result

    def start(self, block: ContentBlock, index: int) -> list[ev.AgentEvent]:
        parts = self.parts
        if block.type == 'text':
            start = parts.start(index, TextPart(content=block.text))
            return [start, *(ev.CitationAdded(start.index, text_citation(c)) for c in block.citations or ())]
        if block.type == 'thinking':
            if block.signature:
                self._signatures[index] = block.signature
            return [parts.start(index, ThinkingPart(content=block.thinking, provider_name=PROVIDER_NAME))]
        if block.type == 'redacted_thinking':
            self._signatures[index] = block.data
            return [parts.start(index, ThinkingPart(content='', id=REDACTED_THINKING_ID, provider_name=PROVIDER_NAME))]
        if block.type == 'tool_use' or block.type == 'server_tool_use':
            if block.input:
                # Given whole in the start block (the API streams it as deltas, but an SDK may not).
                self._whole_inputs[index] = json.dumps(block.input, ensure_ascii=False)
            if block.type == 'tool_use':
                return [parts.start(index, ToolCallPart(tool_name=block.name, args=None, tool_call_id=block.id))]
            self._server_tools[block.id] = block.name
            call = NativeToolCallPart(
                tool_name=block.name, args=None, tool_call_id=block.id, provider_name=PROVIDER_NAME
            )
            return [parts.start(index, call)]
        if block.type in RESULT_TOOL_NAMES and block.type != 'container_upload':
            # The block's content as the API sent it (not the SDK's defaults), so it goes back unchanged.
            content = block.model_dump(mode='json', exclude_unset=True).get('content')
            tool_name = self._server_tools.get(block.tool_use_id) or RESULT_TOOL_NAMES[block.type]
            result = NativeToolReturnPart(
                tool_name=tool_name, content=content, tool_call_id=block.tool_use_id, provider_name=PROVIDER_NAME
            )
            return [ev.NativeToolResult(result)]
        return []  # a container upload: nothing a UI or the next request needs from it

    def delta(self, delta: RawContentBlockDelta, index: int) -> ev.AgentEvent | None:
        text: str | None = None
        if delta.type == 'text_delta':
            text = delta.text
        elif delta.type == 'thinking_delta':
            text = delta.thinking
        elif delta.type == 'input_json_delta':
            self._streamed_input.add(index)
            text = delta.partial_json
        elif delta.type == 'signature_delta':
            self._signatures[index] = delta.signature
        elif delta.type == 'citations_delta':
            part_index = self.parts.index(index)
            return None if part_index is None else ev.CitationAdded(part_index, text_citation(delta.citation))
        return self.parts.delta(index, text) if text else None

    def stop(self, index: int) -> list[ev.AgentEvent]:
        events: list[ev.AgentEvent] = []
        whole = self._whole_inputs.pop(index, None)
        if whole is not None and index not in self._streamed_input and (part_delta := self.parts.delta(index, whole)):
            events.append(part_delta)
        if end := self.parts.end(index, self._signatures.pop(index, None)):
            events.append(end)
        return events
