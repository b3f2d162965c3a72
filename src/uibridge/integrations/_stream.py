"""What the vendor stream mappings share: part addressing, and the iterator that reports how a response ended.

Each vendor addresses the pieces of one response its own way (a Chat Completions choice's content and its
tool calls by their own `index`, a Responses output item by `output_index` and summary or content index, an
Anthropic content block by `index`). `Parts` gives each piece the next neutral part index the first time it
is seen, so the agent events address parts from 0 in the order they began, as `uibridge.core.events` expects.

`ResponseEvents` is what every `events_from_*` function returns: the events of one model response, and,
once they are consumed, what the loop around it needs next (the collected `ModelResponse`, why it stopped,
its usage). What a vendor tells only at the end (usage, finish reason, response id) is streamed as one
`ResponseInfo`, the response's last event, so the UI and the collected history both get it. The finish
reason is not streamed as a `RunFinished`: that event ends the whole run, while a tool loop streams several
responses in one run; the agent yields it after the last one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from ..core import events as ev
from ..core.collector import MessageCollector
from ..core.messages import FinishReason, ModelResponse
from ..core.usage import Usage

UsageT = TypeVar('UsageT')


class Parts:
    """The open parts of one response, keyed by the vendor's own address for them."""

    def __init__(self) -> None:
        self._next = 0
        self._open: dict[Hashable, int] = {}
        self._started: dict[Hashable, int] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self._open

    def start(self, key: Hashable, part: ev.StreamablePart) -> ev.PartStart:
        index = self._open[key] = self._started[key] = self._next
        self._next += 1
        return ev.PartStart(index, part)

    def index(self, key: Hashable) -> int | None:
        """The index of the part started at `key`, open or ended (a citation may come after its text ended)."""
        return self._started.get(key)

    def delta(self, key: Hashable, text: str) -> ev.PartDelta | None:
        """The delta for the part at `key`; `None` when it adds nothing or no such part is open."""
        index = self._open.get(key)
        if index is None or not text:
            return None
        return ev.PartDelta(index, text)

    def end(self, key: Hashable, signature: str | None = None) -> ev.PartEnd | None:
        index = self._open.pop(key, None)
        return None if index is None else ev.PartEnd(index, signature=signature)

    def end_all(self) -> list[ev.PartEnd]:
        """End every part still open, in the order they began (a stream that stopped without closing them)."""
        ends = [ev.PartEnd(index) for index in sorted(self._open.values())]
        self._open.clear()
        return ends


class StreamState(Generic[UsageT]):
    """What a vendor mapping learns about its response besides the events: written as the stream goes."""

    def __init__(self) -> None:
        self.finish_reason: FinishReason | None = None
        self.provider_finish_reason: str | None = None
        self.usage: Usage | None = None
        self.provider_usage: UsageT | None = None
        self.provider_response_id: str | None = None
        self.model_name: str | None = None
        self.provider_details: dict[str, Any] = {}

    def info(self) -> ev.ResponseInfo | None:
        """The `ResponseInfo` that ends the response: what the stream told of it (`None` when nothing)."""
        details = dict(self.provider_details)
        if self.provider_finish_reason is not None:
            details['finish_reason'] = self.provider_finish_reason
        info = ev.ResponseInfo(
            usage=self.usage,
            finish_reason=self.finish_reason,
            provider_response_id=self.provider_response_id,
            model_name=self.model_name,
            provider_details=details or None,
        )
        return None if info == ev.ResponseInfo() else info

    def ending(self, parts: Parts, refused: Sequence[str] = ()) -> list[ev.AgentEvent]:
        """The events that end the response once its stream is done: the parts still open, the `ResponseInfo`,
        and, when the mapping was asked to fail on a refusal (`refused` holds its text), a `RunError`."""
        events: list[ev.AgentEvent] = [*parts.end_all()]
        if info := self.info():
            events.append(info)
        if refused:
            events.append(ev.RunError(''.join(refused), code='refusal'))
        return events


class ResponseEvents(StreamState[UsageT]):
    """The agent events of one model response, read from a vendor stream as it arrives.

    Iterate it (once) and yield each event from the agent. Afterwards:

    - `response`: the `ModelResponse` those events describe (what `MessageCollector` builds from them), with
      `finish_reason` set: append it to the history for the next request;
    - `finish_reason`: the neutral reason (`'tool_call'` when the model called tools), and
      `provider_finish_reason`, the vendor's own word for it;
    - `usage`: the response's `Usage` (also on `response.usage`), every count the vendor reported mapped;
      `provider_usage` is the SDK's own usage object, as the stream reported it.

    Vendor errors (the SDK's `APIError`s, a failed response) propagate from the iteration; the endpoint turns
    an agent's exception into the protocol's error event.
    """

    def __init__(self, produce: Callable[[StreamState[UsageT]], AsyncIterator[ev.AgentEvent]]) -> None:
        super().__init__()
        self._events = produce(self)
        self._collector = MessageCollector()

    def __aiter__(self) -> ResponseEvents[UsageT]:
        return self

    async def __anext__(self) -> ev.AgentEvent:
        event = await self._events.__anext__()
        self._collector.feed(event)
        return event

    @property
    def response(self) -> ModelResponse:
        """The response streamed so far (whole once the iteration ended); an empty one before any event."""
        last = self._collector.last_message
        if not isinstance(last, ModelResponse):
            return ModelResponse(parts=[], finish_reason=self.finish_reason)
        response = self._collector.messages[-1]
        assert isinstance(response, ModelResponse)
        response.finish_reason = self.finish_reason
        return response
