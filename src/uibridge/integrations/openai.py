"""OpenAI: a streamed Chat Completions or Responses answer as uibridge agent events, and history as their input.

Install with `pip install 'uibridge[openai]'`. One loop turn is `history → request → stream → events → next
history`:

    events = events_from_chat_completions(await client.chat.completions.create(
        model=..., messages=to_chat_completions_messages(history), tools=..., stream=True))
    async for event in events:
        yield event
    history.append(events.response)   # then run its tool calls, yield ToolResult(...) and go again

What maps (to the neutral vocabulary of `uibridge.core.events`):

- Chat Completions chunks (choice 0): `content` → a text part; `refusal` → a text part of its own, or with
  `refusal='error'` a `RunError` (code `'refusal'`) after the response; tool-call deltas → tool-call parts,
  addressed by their own `index` so parallel calls may interleave; the last chunk's usage (ask for it with
  `stream_options={'include_usage': True}`), the finish reason and the completion's id → one `ResponseInfo`.
- Responses API events: `response.created` → `ResponseStart` (model name); output text and refusals as
  above; each reasoning summary → a thinking part (id: the reasoning item's id, signature: its
  `encrypted_content` when requested, provider `openai`), so `to_responses_input` sends the item back;
  function calls with streamed arguments; built-in tool items (web search, file search, code interpreter,
  image generation, remote MCP calls) → a `NativeToolCallPart` opened when the item is added, its arguments
  and a `NativeToolResult` when it is done (a generated image also as a `FileOutput`); `url_citation`,
  `file_citation` and `container_file_citation` annotations → `CitationAdded` on their text part, anchored
  where the API says; `response.completed` / `response.incomplete` usage, status and id → `ResponseInfo`;
  `response.failed` and `error` → `OpenAIStreamError`.

Usage maps every count: `cached_tokens` → `cache_read_tokens`, `cache_write_tokens`, reasoning and audio
tokens to their fields, and the rest (prediction tokens, text / image token breakdowns, cache writes by
retention) into `Usage.details` under the API's names (Chat Completions' prefixed `prompt_` / `completion_`).

Not mapped (skipped): `file_path` annotations (a link to a file the model wrote, no source), tools the
client runs that are not function calls (computer use, local shell, shell, apply patch, custom tools), MCP
tool listings and approval requests, tool search items, audio output, raw reasoning text
(`response.reasoning_text.*` of open-weight models), partial images, and choices beyond the first. A code
interpreter's code arrives with its item, not as it is written. The SDK's own errors (`openai.APIError`)
propagate unchanged.

The SDK's types are imported for type checking only: importing this module does not import `openai`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import events as ev
from ..core.messages import FinishReason, TextPart, ToolCallPart
from ._openai_input import to_chat_completions_messages, to_responses_input
from ._openai_maps import PROVIDER_NAME, RefusalMode, chat_usage
from ._openai_responses import OpenAIStreamError, events_from_responses
from ._stream import Parts, ResponseEvents, StreamState

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.completion_usage import CompletionUsage

__all__ = [
    'PROVIDER_NAME',
    'OpenAIStreamError',
    'RefusalMode',
    'ResponseEvents',
    'events_from_chat_completions',
    'events_from_responses',
    'to_chat_completions_messages',
    'to_responses_input',
]

_CHAT_FINISH: dict[str, FinishReason] = {
    'stop': 'stop',
    'length': 'length',
    'tool_calls': 'tool_call',
    'function_call': 'tool_call',
    'content_filter': 'content_filter',
}


def events_from_chat_completions(
    stream: AsyncIterable[ChatCompletionChunk], *, refusal: RefusalMode = 'text'
) -> ResponseEvents[CompletionUsage]:
    """The events of one model response from a `chat.completions.create(..., stream=True)` stream."""
    return ResponseEvents(lambda state: _chat_events(stream, state, refusal))


@dataclass
class _PendingCall:
    """A tool call whose name has not arrived yet (some compatible servers send it after the id)."""

    tool_call_id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list[str])


async def _chat_events(
    stream: AsyncIterable[ChatCompletionChunk], state: StreamState[CompletionUsage], refusal: RefusalMode
) -> AsyncIterator[ev.AgentEvent]:
    parts = Parts()
    pending: dict[int, _PendingCall] = {}
    refused: list[str] = []
    started = False
    async for chunk in stream:
        if not started:
            started = True
            state.provider_response_id = chunk.id or None
            yield ev.ResponseStart(model_name=chunk.model or None, provider_name=PROVIDER_NAME)
        state.model_name = chunk.model or state.model_name
        if chunk.service_tier:
            state.provider_details['service_tier'] = chunk.service_tier
        if chunk.usage is not None:
            state.provider_usage = chunk.usage
            state.usage = chat_usage(chunk.usage)
        choice = next((choice for choice in chunk.choices if choice.index == 0), None)
        if choice is None:
            continue
        delta = choice.delta
        if delta.content:
            if 'text' not in parts:
                yield parts.start('text', TextPart(content=''))
            if event := parts.delta('text', delta.content):
                yield event
        if delta.refusal:
            if refusal == 'error':
                refused.append(delta.refusal)
            else:
                if 'refusal' not in parts:
                    yield parts.start('refusal', TextPart(content=''))
                if event := parts.delta('refusal', delta.refusal):
                    yield event
        for call in delta.tool_calls or ():
            key = ('call', call.index)
            function = call.function
            if key not in parts:
                waiting = pending.setdefault(call.index, _PendingCall())
                waiting.tool_call_id = waiting.tool_call_id or call.id
                waiting.name = waiting.name or (function.name if function else None)
                if function and function.arguments:
                    waiting.arguments.append(function.arguments)
                if waiting.name:
                    for event in _start_call(parts, key, pending.pop(call.index)):
                        yield event
            elif function and function.arguments and (event := parts.delta(key, function.arguments)):
                yield event
        if choice.finish_reason is not None:
            state.provider_finish_reason = choice.finish_reason
            state.finish_reason = _CHAT_FINISH.get(choice.finish_reason)
    for index in sorted(pending):  # a call whose name never came: kept, so its result can still answer it
        for event in _start_call(parts, ('call', index), pending[index]):
            yield event
    for end in state.ending(parts, refused):
        yield end


def _start_call(parts: Parts, key: tuple[str, int], call: _PendingCall) -> list[ev.AgentEvent]:
    part = ToolCallPart(tool_name=call.name or '', args=None)
    if call.tool_call_id:
        part = ToolCallPart(tool_name=part.tool_name, args=None, tool_call_id=call.tool_call_id)
    events: list[ev.AgentEvent] = [parts.start(key, part)]
    if call.arguments and (delta := parts.delta(key, ''.join(call.arguments))):
        events.append(delta)
    return events
