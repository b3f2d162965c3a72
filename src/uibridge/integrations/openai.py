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
  addressed by their own `index` so parallel calls may interleave; `finish_reason` → `events.finish_reason`.
- Responses API events: `response.created` → `ResponseStart` (model name); output text and refusals as
  above; each reasoning summary → a thinking part (id: the reasoning item's id, signature: its
  `encrypted_content` when requested, provider `openai`), so `to_responses_input` sends the item back;
  function calls with streamed arguments; `response.completed` / `response.incomplete` → the finish reason,
  `response.failed` and `error` → `OpenAIStreamError`.

Not mapped yet (TODO, issue 14: the neutral events for them do not exist): usage (kept on `events.usage`
as the SDK's own object meanwhile), built-in tools (web search, file search, code interpreter, image
generation, MCP, shell, custom tools: their items are skipped), URL / file citations (annotations), audio
output, raw reasoning text (`response.reasoning_text.*` of open-weight models), and choices beyond the first.
The SDK's own errors (`openai.APIError`) propagate unchanged.

The SDK's types are imported for type checking only: importing this module does not import `openai`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..core import events as ev
from ..core.messages import FinishReason, TextPart, ThinkingPart, ToolCallPart
from ._openai_input import to_chat_completions_messages, to_responses_input
from ._stream import Parts, ResponseEvents, StreamState

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.completion_usage import CompletionUsage
    from openai.types.responses import Response, ResponseOutputItem, ResponseStreamEvent, ResponseUsage

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

PROVIDER_NAME = 'openai'

RefusalMode = Literal['text', 'error']
"""How a refusal reaches the UI: as the answer's text (kept in the history), or as the run's error."""

_CHAT_FINISH: dict[str, FinishReason] = {
    'stop': 'stop',
    'length': 'length',
    'tool_calls': 'tool_call',
    'function_call': 'tool_call',
    'content_filter': 'content_filter',
}
_INCOMPLETE_FINISH: dict[str, FinishReason] = {'max_output_tokens': 'length', 'content_filter': 'content_filter'}


class OpenAIStreamError(RuntimeError):
    """The Responses stream reported a failed response or an error event (the SDK raises for HTTP errors)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(f'{code}: {message}' if code else message)
        self.code = code


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
            yield ev.ResponseStart(model_name=chunk.model or None, provider_name=PROVIDER_NAME)
        if chunk.usage is not None:
            state.usage = chunk.usage
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
    for end in parts.end_all():
        yield end
    if refused:
        yield ev.RunError(''.join(refused), code='refusal')


def _start_call(parts: Parts, key: tuple[str, int], call: _PendingCall) -> list[ev.AgentEvent]:
    part = ToolCallPart(tool_name=call.name or '', args=None)
    if call.tool_call_id:
        part = ToolCallPart(tool_name=part.tool_name, args=None, tool_call_id=call.tool_call_id)
    events: list[ev.AgentEvent] = [parts.start(key, part)]
    if call.arguments and (delta := parts.delta(key, ''.join(call.arguments))):
        events.append(delta)
    return events


def events_from_responses(
    stream: AsyncIterable[ResponseStreamEvent], *, refusal: RefusalMode = 'text'
) -> ResponseEvents[ResponseUsage]:
    """The events of one model response from a `responses.create(..., stream=True)` stream (or the events of
    `responses.stream(...)`, which are the same types)."""
    return ResponseEvents(lambda state: _responses_events(stream, state, refusal))


async def _responses_events(
    stream: AsyncIterable[ResponseStreamEvent], state: StreamState[ResponseUsage], refusal: RefusalMode
) -> AsyncIterator[ev.AgentEvent]:
    parts = Parts()
    summaries: dict[int, list[tuple[str, int, int]]] = {}  # output index → keys of its summary parts
    argued: set[int] = set()  # function calls whose arguments streamed as deltas
    refused: list[str] = []
    called = False
    async for event in stream:
        if event.type == 'response.created':
            yield ev.ResponseStart(model_name=event.response.model or None, provider_name=PROVIDER_NAME)
        elif event.type == 'response.output_item.added':
            if event.item.type == 'function_call':
                called = True
                call = ToolCallPart(tool_name=event.item.name, args=None, tool_call_id=event.item.call_id)
                yield parts.start(('item', event.output_index), call)
        elif event.type == 'response.output_text.delta':
            key = ('text', event.output_index, event.content_index)
            if key not in parts:
                yield parts.start(key, TextPart(content='', id=event.item_id))
            if delta := parts.delta(key, event.delta):
                yield delta
        elif event.type == 'response.refusal.delta':
            if refusal == 'error':
                refused.append(event.delta)
                continue
            key = ('text', event.output_index, event.content_index)
            if key not in parts:
                yield parts.start(key, TextPart(content='', id=event.item_id))
            if delta := parts.delta(key, event.delta):
                yield delta
        elif event.type == 'response.content_part.done':
            if end := parts.end(('text', event.output_index, event.content_index)):
                yield end
        elif event.type == 'response.reasoning_summary_part.added':
            key = ('summary', event.output_index, event.summary_index)
            summaries.setdefault(event.output_index, []).append(key)
            yield parts.start(key, ThinkingPart(content='', id=event.item_id, provider_name=PROVIDER_NAME))
        elif event.type == 'response.reasoning_summary_text.delta':
            if delta := parts.delta(('summary', event.output_index, event.summary_index), event.delta):
                yield delta
        elif event.type == 'response.function_call_arguments.delta':
            argued.add(event.output_index)
            if delta := parts.delta(('item', event.output_index), event.delta):
                yield delta
        elif event.type == 'response.output_item.done':
            for item_event in _item_done(parts, event.output_index, event.item, summaries, argued):
                yield item_event
        elif event.type == 'response.completed' or event.type == 'response.incomplete':
            _finish(state, event.response, called)
        elif event.type == 'response.failed':
            error = event.response.error
            raise OpenAIStreamError(error.message if error else 'The response failed.', error.code if error else None)
        elif event.type == 'error':
            raise OpenAIStreamError(event.message, event.code)
    for end in parts.end_all():
        yield end
    if refused:
        yield ev.RunError(''.join(refused), code='refusal')


def _item_done(
    parts: Parts,
    output_index: int,
    item: ResponseOutputItem,
    summaries: dict[int, list[tuple[str, int, int]]],
    argued: set[int],
) -> list[ev.AgentEvent]:
    events: list[ev.AgentEvent] = []
    if item.type == 'function_call':
        key = ('item', output_index)
        if output_index not in argued and (delta := parts.delta(key, item.arguments)):
            events.append(delta)  # arguments that came whole, without deltas
        if end := parts.end(key):
            events.append(end)
    elif item.type == 'reasoning':
        keys = summaries.pop(output_index, [])
        if not keys and item.encrypted_content:
            # No summary was asked for, but the encrypted reasoning must go back with the next request.
            keys = [('summary', output_index, 0)]
            events.append(parts.start(keys[0], ThinkingPart(content='', id=item.id, provider_name=PROVIDER_NAME)))
        for position, key in enumerate(keys):
            # The item's signature (its encrypted content) rides on its last summary part.
            signature = item.encrypted_content if position == len(keys) - 1 else None
            if end := parts.end(key, signature):
                events.append(end)
    elif item.type == 'message':
        for content_index in range(len(item.content)):
            if end := parts.end(('text', output_index, content_index)):
                events.append(end)
    return events


def _finish(state: StreamState[ResponseUsage], response: Response, called: bool) -> None:
    state.usage = response.usage
    if response.status == 'incomplete':
        reason = response.incomplete_details.reason if response.incomplete_details else None
        state.provider_finish_reason = reason or 'incomplete'
        state.finish_reason = _INCOMPLETE_FINISH.get(reason or '', 'length')
        return
    state.provider_finish_reason = response.status
    state.finish_reason = 'tool_call' if called else 'stop'
