"""`MessageCollector`: a run's events folded back into the `ModelMessage`s they describe.

The new messages of a run, for the application to persist, built the same way for every protocol: each
encoder feeds its collector every event (`uibridge.core.encoder`), and reads from it what it signs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias, cast

from . import events as ev
from .citations import Citation
from .factories import new_list
from .json_patch import apply_patch
from .json_text import tool_args
from .messages import (
    FinishReason,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    NativeToolCallPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from .trusted import construct, replace


@dataclass(slots=True)
class _OpenPart:
    part: ev.StreamablePart
    chunks: list[str] = field(default_factory=new_list)
    citations: list[Citation] | None = None
    """Those a `CitationAdded` gave while the text streamed; a list only once one came (few parts cite)."""


class MessageCollector:
    """Folds a run's events into the `ModelMessage`s they describe.

    Deltas are joined once, at `PartEnd` (or when the messages are read), so collecting costs O(1) per delta.
    A tool call's streamed argument text becomes a dict when it is a JSON object, as a stored history holds it;
    arguments that arrive whole in `PartStart`, with no deltas, are kept exactly as given.
    """

    def __init__(self, state: Any = None) -> None:
        """`state`: the shared state the client holds at the run's start (`run.state`), what a `StateDelta`
        before any `StateSnapshot` applies to, as the client applies it."""
        self._messages: list[ModelMessage] = []
        self._response: ModelResponse | None = None
        self._open: dict[int, _OpenPart] = {}
        self._slots: dict[int, int] = {}
        self._tool_calls: dict[str, ToolCallPart] = {}
        self._call_responses: dict[str, ModelResponse] = {}
        self._call_ids: set[str] = set()  # every call id the run started, provider-run ones too
        self.finish_reason: FinishReason | None = None
        self.cancelled = False
        self.error: ev.RunError | None = None
        self.state: Any = state
        """The shared state after the run's `StateSnapshot` / `StateDelta` events (`None` before any)."""
        self._state_seen = False
        self._state_holder: ModelResponse | None = None
        """The response that holds the state now: always the run's last one (the state moves on with the run)."""
        self._early: list[ev.ResponseInfo | ev.MessageMetadata] = []
        """Response info and message metadata that came before any response: the first response takes them."""

    @property
    def messages(self) -> list[ModelMessage]:
        """A snapshot of the messages so far; parts still streaming are included as far as they got.

        The snapshot is the caller's: later events change neither it nor are changed by what the caller does
        with it (each message and its parts list are copies; the parts themselves are never mutated).
        """
        snapshot: list[ModelMessage] = []
        for message in self._messages:
            if message is self._response and self._open:
                parts = list(message.parts)
                for index, open_part in self._open.items():
                    parts[self._slots[index]] = _finished(open_part, None)
                snapshot.append(message.model_copy(update={'parts': parts}))
            else:
                snapshot.append(message.model_copy(update={'parts': list(message.parts)}))
        return snapshot

    @property
    def last_message(self) -> ModelMessage | None:
        """The message being built, as it stands (not a copy: read it, don't change it). O(1), unlike
        `messages`, so an encoder may consult it on every event."""
        return self._messages[-1] if self._messages else None

    def tool_call(self, tool_call_id: str) -> ToolCallPart | None:
        """The finished tool call with this id, if the run has made one (not a copy). O(1)."""
        return self._tool_calls.get(tool_call_id)

    def streams_call(self, tool_call_id: str) -> bool:
        """Whether a tool call with this id has started and not ended yet (linear in the parts now open)."""
        return any(
            isinstance(open_part.part, ToolCallPart) and open_part.part.tool_call_id == tool_call_id
            for open_part in self._open.values()
        )

    def unanswered_calls(self) -> list[ToolCallPart]:
        """The run's tool calls that nothing answers: no result in the run, and no client tool or approval said
        to answer them (`ToolCallReady`). Read once parts are closed: a call still streaming is not counted."""
        answered = {
            part.tool_call_id
            for message in self._messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart | RetryPromptPart)
        }
        calls: list[ToolCallPart] = []
        for message in self._messages:
            if not isinstance(message, ModelResponse):
                continue
            marks: Any = (message.metadata or {}).get(ev.ANSWERED_BY_METADATA_KEY)
            done = (
                answered | {str(key) for key in cast('dict[Any, Any]', marks)} if isinstance(marks, dict) else answered
            )
            calls.extend(
                part for part in message.parts if isinstance(part, ToolCallPart) and part.tool_call_id not in done
            )
        return calls

    def close(self) -> None:
        """End every part still streaming (the run stopped mid-part: an error or a cancel)."""
        for index in list(self._open):
            self._close(index, None)

    def feed(self, event: ev.AgentEvent) -> None:
        # One lookup by exact type, where class patterns tried in order cost more the later an event's class
        # comes: the collector sees every event of a run. A subclass resolves through its MRO, once.
        feeder = self._feeders.get(type(event)) or self._feeder_for(type(event))
        feeder(self, event)

    @classmethod
    def feeder(cls, kind: type) -> Feeder:
        """What `feed` does with an event of class `kind`, as `feeder(collector, event)`: for a caller that
        dispatches by class itself (an encoder), so that an event costs it one lookup and one call, not two."""
        return cls._feeders.get(kind) or cls._feeder_for(kind)

    @classmethod
    def _feeder_for(cls, kind: type) -> Feeder:
        """The feeder of `kind`'s nearest event base class (a subclassed event), remembered for the next one."""
        feeder = next((cls._feeders[base] for base in kind.__mro__ if base in cls._feeders), None)
        cls._feeders[kind] = feeder = feeder or MessageCollector._nothing
        return feeder

    def _delta(self, event: ev.PartDelta) -> None:
        open_part = self._open.get(event.index)
        if open_part is None:
            raise ValueError(f'a delta for part {event.index}, which is not streaming')
        open_part.chunks.append(event.delta)

    def _part_start(self, event: ev.PartStart) -> None:
        response = self._current_response()
        if event.index in self._open:
            raise ValueError(f'part {event.index} was started twice')
        part = event.part
        if isinstance(part, _CALL_PARTS):
            # Two calls sharing an id are no conversation a provider or a client takes (verification refuses
            # the history with a 422 on every later turn): the run fails here instead, naming the agent's bug.
            if part.tool_call_id in self._call_ids:
                raise ValueError(f'the agent started tool call {part.tool_call_id!r} twice in one run')
            self._call_ids.add(part.tool_call_id)
        self._slots[event.index] = len(response.parts)
        response.parts.append(event.part)
        self._open[event.index] = _OpenPart(event.part)
        if event.dynamic and isinstance(part, _CALL_PARTS):
            metadata = dict(response.metadata or {})
            dynamic = [*metadata.get(ev.DYNAMIC_TOOLS_METADATA_KEY, ()), part.tool_call_id]
            metadata[ev.DYNAMIC_TOOLS_METADATA_KEY] = dynamic
            response.metadata = metadata

    def _part_end(self, event: ev.PartEnd) -> None:
        if event.index not in self._open:
            raise ValueError(f'part {event.index} ended but is not streaming')
        self._close(event.index, event.signature)

    def _response_start(self, event: ev.ResponseStart) -> None:
        self._start_response(event.model_name, event.provider_name)

    def _request_part(self, event: ev.ToolResult | ev.RetryFeedback) -> None:
        self._append_request_part(event.part)

    def _file(self, event: ev.FileOutput) -> None:
        self._current_response().parts.append(event.part)

    def _custom(self, event: ev.CustomData) -> None:
        if event.transient:
            return
        response = self._current_response()
        metadata = dict(response.metadata or {})
        items: list[dict[str, Any]] = list(metadata.get(ev.CUSTOM_DATA_METADATA_KEY, []))
        item: dict[str, Any] = {'name': event.name, 'data': event.data, 'position': len(response.parts)}
        if event.id is not None:
            item['id'] = event.id
        items.append(item)
        metadata[ev.CUSTOM_DATA_METADATA_KEY] = items
        response.metadata = metadata

    def _run_finished(self, event: ev.RunFinished) -> None:
        if event.finish_reason is None:
            return  # the run's reason stays the last response's own (`ResponseInfo`), if it said one
        self.finish_reason = event.finish_reason
        if self._response is not None:
            self._response.finish_reason = event.finish_reason

    def _run_error(self, event: ev.RunError) -> None:
        self.error = event

    def _run_cancelled(self, event: ev.RunCancelled) -> None:
        self.cancelled = True

    def _ready(self, event: ev.ToolCallReady) -> None:
        response = self._call_responses.get(event.tool_call_id) or self._response
        if response is None:
            return
        metadata = dict(response.metadata or {})
        answered: dict[str, str] = dict(metadata.get(ev.ANSWERED_BY_METADATA_KEY) or {})
        answered[event.tool_call_id] = event.answered_by
        metadata[ev.ANSWERED_BY_METADATA_KEY] = answered
        response.metadata = metadata

    def _native_result(self, event: ev.NativeToolResult) -> None:
        self._current_response().parts.append(event.part)

    def _citation(self, event: ev.CitationAdded) -> None:
        open_part = self._open.get(event.index)
        if open_part is not None and isinstance(open_part.part, TextPart):
            if open_part.citations is None:
                open_part.citations = []
            open_part.citations.append(event.citation)
            return
        response = self._response
        slot = self._slots.get(event.index) if response is not None else None
        part = response.parts[slot] if response is not None and slot is not None else None
        if not isinstance(part, TextPart):
            raise ValueError(f'a citation for part {event.index}, which is no text part of this response')
        assert response is not None and slot is not None
        response.parts[slot] = replace(part, {'citations': [*(part.citations or ()), event.citation]})

    def _response_info(self, event: ev.ResponseInfo) -> None:
        response = self._response or self._last_response()
        if response is None:
            self._early.append(event)  # no response to describe yet: an empty one would be a message of its own
            return
        self._apply_info(response, event)

    def _apply_info(self, response: ModelResponse, event: ev.ResponseInfo) -> None:
        for name in ('usage', 'finish_reason', 'provider_response_id', 'model_name', 'provider_name'):
            value = getattr(event, name)
            if value is not None:
                setattr(response, name, value)
        if event.provider_details is not None:
            response.provider_details = event.provider_details
        if event.finish_reason is not None and response is self._messages[-1]:
            self.finish_reason = event.finish_reason

    def _message_metadata(self, event: ev.MessageMetadata) -> None:
        response = self._response or self._last_response()
        if response is None:
            self._early.append(event)
            return
        self._apply_metadata(response, event)

    def _apply_metadata(self, response: ModelResponse, event: ev.MessageMetadata) -> None:
        metadata = dict(response.metadata or {})
        metadata[ev.MESSAGE_METADATA_KEY] = {**metadata.get(ev.MESSAGE_METADATA_KEY, {}), **event.metadata}
        response.metadata = metadata

    def _state_snapshot(self, event: ev.StateSnapshot) -> None:
        self.state = event.snapshot
        self._keep_state()

    def _state_delta(self, event: ev.StateDelta) -> None:
        self.state = apply_patch(self.state, event.delta)  # a patch that does not apply raises: the run fails
        self._keep_state()

    def _keep_state(self) -> None:
        self._state_seen = True
        response = self._last_response()
        if response is not None:  # else the first response to start takes it
            self._hold_state(response)

    def _hold_state(self, response: ModelResponse) -> None:
        """Put the state on `response` (the run's last), and take it off the one that held it before."""
        holder = self._state_holder
        if holder is not None and holder is not response and holder.metadata:
            rest = {key: value for key, value in holder.metadata.items() if key != ev.STATE_METADATA_KEY}
            holder.metadata = rest or None
        response.metadata = {**(response.metadata or {}), ev.STATE_METADATA_KEY: self.state}
        self._state_holder = response

    def _last_response(self) -> ModelResponse | None:
        for message in reversed(self._messages):
            if isinstance(message, ModelResponse):
                return message
        return None

    def _nothing(self, event: object) -> None:
        """What is no agent event at all, or one the conversation does not keep (steps, activity, raw)."""

    _feeders: ClassVar[dict[type, Feeder]] = {
        ev.PartDelta: _delta,
        ev.PartStart: _part_start,
        ev.PartEnd: _part_end,
        ev.ResponseStart: _response_start,
        ev.ToolResult: _request_part,
        ev.RetryFeedback: _request_part,
        ev.FileOutput: _file,
        ev.CustomData: _custom,
        ev.ToolCallReady: _ready,
        ev.NativeToolResult: _native_result,
        ev.CitationAdded: _citation,
        ev.ResponseInfo: _response_info,
        ev.MessageMetadata: _message_metadata,
        ev.StateSnapshot: _state_snapshot,
        ev.StateDelta: _state_delta,
        ev.StepStarted: _nothing,
        ev.StepFinished: _nothing,
        ev.ActivitySnapshot: _nothing,
        ev.ActivityDelta: _nothing,
        ev.RawEvent: _nothing,
        ev.RunFinished: _run_finished,
        ev.RunError: _run_error,
        ev.RunCancelled: _run_cancelled,
    }
    """How `feed` takes each event class."""

    def _start_response(self, model_name: str | None, provider_name: str | None) -> None:
        if self._open:
            for index in list(self._open):
                self._close(index, None)
        self._response = construct(
            ModelResponse, {'parts': [], 'model_name': model_name, 'provider_name': provider_name}
        )
        self._messages.append(self._response)
        self._slots = {}
        if self._early:
            early, self._early = self._early, []
            for event in early:
                if isinstance(event, ev.ResponseInfo):
                    self._apply_info(self._response, event)
                else:
                    self._apply_metadata(self._response, event)
        if self._state_seen:
            self._hold_state(self._response)

    def _current_response(self) -> ModelResponse:
        if self._response is None:
            self._start_response(None, None)
        assert self._response is not None
        return self._response

    def _append_request_part(self, part: ModelRequestPart) -> None:
        if self._open:
            for index in list(self._open):
                self._close(index, None)
        self._response = None
        last = self._messages[-1] if self._messages else None
        if isinstance(last, ModelRequest):
            last.parts.append(part)
        else:
            self._messages.append(construct(ModelRequest, {'parts': [part]}))

    def _close(self, index: int, signature: str | None) -> None:
        open_part = self._open.pop(index)
        assert self._response is not None
        part = _finished(open_part, signature)
        self._response.parts[self._slots[index]] = part
        if isinstance(part, ToolCallPart):
            self._tool_calls[part.tool_call_id] = part
            self._call_responses[part.tool_call_id] = self._response


Feeder: TypeAlias = Callable[[MessageCollector, Any], None]


_CALL_PARTS = (ToolCallPart, NativeToolCallPart)  # a tuple built once: `_finished` runs for every part


def _finished(open_part: _OpenPart, signature: str | None) -> ev.StreamablePart:
    part = open_part.part
    added = ''.join(open_part.chunks)
    if isinstance(part, _CALL_PARTS):
        if not added:
            return part  # arguments that arrived whole stay as the agent wrote them
        args = _paired((part.args if isinstance(part.args, str) else '') + added)
        return replace(part, {'args': _parse_args(args)})
    update: dict[str, Any] = {'content': _paired(part.content + added)}
    if isinstance(part, ThinkingPart) and signature is not None:
        update['signature'] = signature
    if open_part.citations and isinstance(part, TextPart):
        update['citations'] = [*(part.citations or ()), *open_part.citations]
    return replace(part, update)


_SURROGATE = re.compile('[\ud800-\udfff]')


def _paired(text: str) -> str:
    """`text` with each surrogate pair made the one character it encodes.

    A provider may cut a character beyond the BMP (an emoji) between two deltas, each half then a lone
    surrogate; joined, the halves sit side by side but are still two code points, which UTF-8 cannot encode
    (a provider call with this text would fail) and which differ from the character every client builds
    from the same deltas. Halves that never found their partner stay as they are. Once per part, and the
    search is all a text without surrogates pays.
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode('utf-16-le', 'surrogatepass').decode('utf-16-le', 'surrogatepass')


def _parse_args(args: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    # The dict only where it gives the streamed text back exactly: the text is what the model wrote, what a
    # client assembles from the deltas, and what the call's signature covers (`json_text.tool_args`).
    return tool_args(args) if isinstance(args, str) else args
