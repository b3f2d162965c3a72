"""The Responses API stream as agent events (`events_from_responses`, re-exported by `.openai`).

Output items are addressed by `output_index` (a message's text by its content index too, a reasoning item's
summaries by their summary index). Function calls and built-in tool items open their part when the item is
added, so a UI shows the call while it runs; a built-in item's arguments and outcome come whole when it is
done (`._openai_maps` says how one item becomes a call and its return).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any

from ..core import events as ev
from ..core import messages as m
from ..core.content import BinaryContent
from ..core.json_text import compact_json
from ._openai_maps import (
    IMAGE_RESULT,
    NATIVE_TOOL_NAMES,
    PROVIDER_NAME,
    RefusalMode,
    annotation_citation,
    responses_usage,
    split_native_item,
)
from ._stream import Parts, ResponseEvents, StreamState

if TYPE_CHECKING:
    from openai.types.responses import Response, ResponseOutputItem, ResponseStreamEvent, ResponseUsage

_INCOMPLETE_FINISH: dict[str, m.FinishReason] = {'max_output_tokens': 'length', 'content_filter': 'content_filter'}


class OpenAIStreamError(RuntimeError):
    """The Responses stream reported a failed response or an error event (the SDK raises for HTTP errors)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(f'{code}: {message}' if code else message)
        self.code = code


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
            state.provider_response_id = event.response.id or None
            yield ev.ResponseStart(model_name=event.response.model or None, provider_name=PROVIDER_NAME)
        elif event.type == 'response.output_item.added':
            item = event.item
            if item.type == 'function_call':
                called = True
                call = m.ToolCallPart(tool_name=item.name, args=None, tool_call_id=item.call_id)
                yield parts.start(('item', event.output_index), call)
            elif item.type in NATIVE_TOOL_NAMES:
                yield parts.start(('item', event.output_index), _native_call(item.type, item.id or ''))
        elif event.type == 'response.output_text.delta' or event.type == 'response.refusal.delta':
            if event.type == 'response.refusal.delta' and refusal == 'error':
                refused.append(event.delta)
                continue
            key = ('text', event.output_index, event.content_index)
            if key not in parts:
                yield parts.start(key, m.TextPart(content='', id=event.item_id))
            if delta := parts.delta(key, event.delta):
                yield delta
        elif event.type == 'response.output_text.annotation.added':
            index = parts.index(('text', event.output_index, event.content_index))
            citation = annotation_citation(event.annotation)
            if index is not None and citation is not None:
                yield ev.CitationAdded(index, citation)
        elif event.type == 'response.content_part.done':
            if end := parts.end(('text', event.output_index, event.content_index)):
                yield end
        elif event.type == 'response.reasoning_summary_part.added':
            key = ('summary', event.output_index, event.summary_index)
            summaries.setdefault(event.output_index, []).append(key)
            yield parts.start(key, m.ThinkingPart(content='', id=event.item_id, provider_name=PROVIDER_NAME))
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
    for end in state.ending(parts, refused):
        yield end


def _native_call(item_type: str, item_id: str) -> m.NativeToolCallPart:
    return m.NativeToolCallPart(
        tool_name=NATIVE_TOOL_NAMES[item_type], args=None, tool_call_id=item_id, provider_name=PROVIDER_NAME
    )


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
    elif item.type in NATIVE_TOOL_NAMES:
        # What the API sent, not the SDK's defaults: merged back, the parts must be the item it was.
        events.extend(_native_done(parts, output_index, item.type, item.model_dump(mode='json', exclude_unset=True)))
    elif item.type == 'reasoning':
        keys = summaries.pop(output_index, [])
        if not keys and item.encrypted_content:
            # No summary was asked for, but the encrypted reasoning must go back with the next request.
            keys = [('summary', output_index, 0)]
            events.append(parts.start(keys[0], m.ThinkingPart(content='', id=item.id, provider_name=PROVIDER_NAME)))
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


def _native_done(parts: Parts, output_index: int, item_type: str, item: dict[str, Any]) -> list[ev.AgentEvent]:
    key = ('item', output_index)
    item_id = str(item.get('id', ''))
    events: list[ev.AgentEvent] = []
    if key not in parts and parts.index(key) is None:  # a stream that skipped `output_item.added`
        events.append(parts.start(key, _native_call(item_type, item_id)))
    args, outcome = split_native_item(item_type, item)
    if delta := parts.delta(key, compact_json(args)):
        events.append(delta)
    if end := parts.end(key):
        events.append(end)
    tool_name = NATIVE_TOOL_NAMES[item_type]
    events.append(
        ev.NativeToolResult(
            m.NativeToolReturnPart(
                tool_name=tool_name, content=outcome, tool_call_id=item_id, provider_name=PROVIDER_NAME
            )
        )
    )
    image = item.get(IMAGE_RESULT) if item_type == 'image_generation_call' else None
    if isinstance(image, str) and image:
        media_type = f'image/{item.get("output_format") or "png"}'
        content = BinaryContent(data=base64.b64decode(image), media_type=media_type)
        events.append(ev.FileOutput(m.FilePart(content=content, id=item_id)))
    return events


def _finish(state: StreamState[ResponseUsage], response: Response, called: bool) -> None:
    state.provider_usage = response.usage
    state.usage = responses_usage(response.usage) if response.usage is not None else None
    state.provider_response_id = response.id or state.provider_response_id
    state.model_name = response.model or None
    if response.service_tier:
        state.provider_details['service_tier'] = response.service_tier
    if response.status == 'incomplete':
        reason = response.incomplete_details.reason if response.incomplete_details else None
        state.provider_finish_reason = reason or 'incomplete'
        state.finish_reason = _INCOMPLETE_FINISH.get(reason or '', 'length')
        return
    state.provider_finish_reason = response.status
    state.finish_reason = 'tool_call' if called else 'stop'
