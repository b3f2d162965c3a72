"""pydantic-ai's stream events as uibridge agent events, one model response or tool step at a time.

pydantic-ai numbers the parts of a response from 0 as uibridge does, but counts every part, including those
uibridge does not stream (a native tool's return, a file, a kind it does not know): `ResponseParts` gives each
streamed part the next neutral index instead. A part's content and a tool call's arguments stream as deltas;
anything else a part learns after it started (a thinking part's signature aside, which `PartEnd` carries) has
no event and is not carried.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic_ai import messages as pai

from ..core import events as ev
from ..core import messages as m
from ..core.usage import Usage
from ._pydantic_ai_messages import request_part, response_part


class ResponseParts:
    """The parts of one model response as they stream: pydantic-ai's part index → the neutral one."""

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._kinds: dict[int, type] = {}
        self._next = 0

    def events(self, event: Any) -> Iterator[ev.AgentEvent]:
        if isinstance(event, pai.PartStartEvent):
            yield from self._start(event.index, event.part)
        elif isinstance(event, pai.PartDeltaEvent):
            yield from self._delta(event.index, event.delta)
        elif isinstance(event, pai.PartEndEvent):
            yield from self._end(event.index, event.part)

    def close(self) -> Iterator[ev.PartEnd]:
        """End what is still streaming (a stream that stopped without ending its parts)."""
        for index in sorted(self._index.values()):
            yield ev.PartEnd(index)
        self._index.clear()

    def _start(self, source: int, part: Any) -> Iterator[ev.AgentEvent]:
        if source in self._index:
            # pydantic-ai restarts a part to replace it; the neutral stream cannot take a part back, so the
            # old one ends as it got and the replacement streams as a part of its own.
            yield ev.PartEnd(self._index.pop(source))
        neutral = response_part(part)
        if isinstance(neutral, m.NativeToolReturnPart):
            yield ev.NativeToolResult(neutral)
        elif isinstance(neutral, m.FilePart):
            yield ev.FileOutput(neutral)
        elif isinstance(neutral, m.TextPart | m.ThinkingPart | m.ToolCallPart | m.NativeToolCallPart):
            self._index[source] = index = self._next
            self._next += 1
            self._kinds[source] = type(neutral)
            if isinstance(neutral, m.ThinkingPart) and neutral.signature is not None:
                # The signature is known whole only at the end: sent once, there (`PartEnd`).
                neutral = neutral.model_copy(update={'signature': None})
            if isinstance(neutral, m.ToolCallPart | m.NativeToolCallPart) and isinstance(neutral.args, str):
                # Argument text that came whole streams as one delta, so it is collected as the object it
                # denotes, like streamed arguments (a JSON string kept as text would come back from a client
                # as an object: no longer the call the server made).
                yield ev.PartStart(index, neutral.model_copy(update={'args': ''}))
                if neutral.args:
                    yield ev.PartDelta(index, neutral.args)
                return
            yield ev.PartStart(index, neutral)
        # Any other kind (speech, compaction, a kind newer than uibridge) is not shown to a UI: not streamed.

    def _delta(self, source: int, delta: Any) -> Iterator[ev.AgentEvent]:
        index = self._index.get(source)
        if index is None:
            return
        text: str | None = None
        if isinstance(delta, pai.TextPartDelta | pai.ThinkingPartDelta):
            text = delta.content_delta
        elif isinstance(delta, pai.ToolCallPartDelta) and isinstance(delta.args_delta, str):
            text = delta.args_delta
        if text:
            yield ev.PartDelta(index, text)

    def _end(self, source: int, part: Any) -> Iterator[ev.AgentEvent]:
        index = self._index.pop(source, None)
        if index is None:
            return
        signature = part.signature if isinstance(part, pai.ThinkingPart) else None
        yield ev.PartEnd(index, signature=signature)


class ToolResultOrder:
    """A tool step's results in the order of the calls they answer, which is the order of pydantic-ai's next
    request, not the order the tools finished in (its result events come as each parallel call completes).

    A collected request in completion order would not be pydantic-ai's: sent back as history, a provider that
    pairs results with calls by position (no call ids) would pair them wrongly. So a result waits for those of
    the calls before it; a call that gets no result in the step (deferred, answered before) holds the ones
    after it until `rest` at the step's end.
    """

    def __init__(self, response: pai.ModelResponse, answered: set[str]) -> None:
        calls = (p.tool_call_id for p in response.parts if isinstance(p, pai.ToolCallPart))
        self._pending = [call_id for call_id in calls if call_id not in answered]
        self._held: dict[str, ev.ToolResult] = {}

    def take(self, event: ev.ToolResult) -> list[ev.ToolResult]:
        """The results that can go out now that `event` came (none, if an earlier call is still running)."""
        if event.part.tool_call_id not in self._pending:
            return [event]
        self._held[event.part.tool_call_id] = event
        ready: list[ev.ToolResult] = []
        while self._pending and self._pending[0] in self._held:
            ready.append(self._held.pop(self._pending.pop(0)))
        return ready

    def rest(self) -> list[ev.ToolResult]:
        """What is still held, in call order (the step ended)."""
        ready = [self._held.pop(call_id) for call_id in self._pending if call_id in self._held]
        self._pending = []
        return ready


def response_info(response: pai.ModelResponse) -> ev.ResponseInfo:
    """What pydantic-ai knows of a response once it ended: usage, names, finish reason, the provider's id."""
    neutral = m.ModelResponse.model_validate({'parts': [], **_response_fields(response)})
    return ev.ResponseInfo(
        usage=neutral.usage if isinstance(neutral.usage, Usage) else None,
        finish_reason=neutral.finish_reason,
        provider_response_id=neutral.provider_response_id,
        model_name=neutral.model_name,
        provider_name=neutral.provider_name,
        provider_details=neutral.provider_details,
    )


def _response_fields(response: pai.ModelResponse) -> dict[str, Any]:
    dumped = pai.ModelMessagesTypeAdapter.dump_python([response], mode='json')[0]
    names = ('usage', 'finish_reason', 'provider_response_id', 'model_name', 'provider_name', 'provider_details')
    return {name: dumped.get(name) for name in names}


def request_events(parts: Any) -> Iterator[ev.AgentEvent]:
    """The tool results and retry feedback among pydantic-ai request parts, as events (prompts are input)."""
    for part in parts:
        if not isinstance(part, pai.ToolReturnPart | pai.RetryFeedbackPart):
            continue
        neutral = request_part(part)
        if isinstance(neutral, m.ToolReturnPart | m.RetryPromptPart):
            yield ev.ToolResult(neutral)
        elif isinstance(neutral, m.RetryFeedbackPart):
            yield ev.RetryFeedback(neutral)
