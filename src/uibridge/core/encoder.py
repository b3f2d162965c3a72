"""`StreamEncoder`: what every protocol's stream encoder does the same way, so each protocol writes only its wire.

The skeleton keeps a run's state and calls one hook per event kind, where the protocol writes its bytes:

- started and ended: `start()` once, `encode(event)` per event (opening the stream first if need be), `close()`
  as a normal finish unless a terminal event (`RunFinished`, `RunError`, `RunCancelled`) already ended it;
  after the end every event encodes to `b''`;
- the `MessageCollector`, fed every event before its hook runs: a hook reads the run as it stands after the
  event (a part's finished form at its end, the new response at its start), so what it signs is what was sent;
- the response boundary: a part, a file or kept custom data outside any response opens one implicitly, as the
  collector does, and the protocol hears of every new response once (`_response_started`);
- the open-part table (`index` -> the protocol's record), and closing what is open when a response, a result,
  feedback or the run's end cuts it off, in the order the parts started (`_close_parts`);
- held tool calls. Who answers a call (`ToolCallReady`) is said after its `PartEnd`, and a call a client tool
  answers is signed with that mark; re-sending the call once the mark is known would run a client tool twice.
  So a finished call is held (`_call_ended`) until the encoder knows: its mark (sent marked), its result, the
  run's end or a point the protocol chooses (`_release_held`), whichever comes first (sent unmarked). A mark
  that comes while the call still streams is kept for its end. A call reusing an id fails the run (the
  collector refuses it): two calls sharing an id are a history verification refuses;
- one dispatch table by event class, filled the first time a class is seen (a subclassed event takes its base
  class's hook). What is no agent event is a `TypeError` naming it, and the `match` that fills the table ends
  in `_not_an_event(event: Never)`, so the type checker flags an event kind without a hook, as an abstract hook
  a protocol leaves out makes its class abstract.

Frames are written one way in both protocols: a chunk or event sent per part, tool call or result (or once per
stream) by the writer `frame_writer` derives from its pydantic model, which hands the model's wire keys and the
values to pydantic-core's serializer (`json_text.sse_data`); only the per-delta frames are written by hand, in
each protocol's stream module, as one string escape into a prefix the open part keeps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from math import isfinite
from typing import Any, ClassVar, Generic, Never, NoReturn, ParamSpec, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from . import events as ev
from .collector import Feeder, MessageCollector
from .json_text import sse_data
from .messages import ModelMessage, ModelResponse, ModelResponsePart, RetryPromptPart, ToolCallPart, ToolReturnPart
from .provenance import Keyring


@dataclass(eq=False, slots=True)
class OpenPart:
    """Where the collector keeps a streaming part: a protocol's open-part record extends it."""

    response: ModelResponse
    slot: int

    @property
    def finished(self) -> ModelResponsePart:
        """The part as the collector holds it: joined, parsed and final once the part has ended."""
        return self.response.parts[self.slot]


OpenT = TypeVar('OpenT', bound=OpenPart)
_Hook: TypeAlias = Callable[[Any, Any], bytes]
_Entry: TypeAlias = tuple[Feeder, _Hook]


class StreamEncoder(ABC, Generic[OpenT]):
    """Implements `uibridge.core.stream.EventStreamEncoder` around a protocol's hooks (the abstract methods).

    `OpenT` is the protocol's record of an open part; a finished call is held as its record."""

    _hooks: ClassVar[dict[type, _Entry]] = {}
    """Each event class's collector feeder and hook, for this class (filled by `_hook_for`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._hooks = {}  # a subclass may override hooks: its table is its own

    def __init__(self, keyring: Keyring | None, state: Any = None) -> None:
        """`state`: the shared state the client holds (`run.state`), which a `StateDelta` before any snapshot
        patches (see `MessageCollector`)."""
        self._keyring = Keyring.of(keyring)
        self._collector = MessageCollector(state)
        self._open: dict[int, OpenT] = {}
        self._held: dict[str, OpenT] = {}
        """Finished calls waiting to learn who answers them, in the order they ended."""
        self._marks: dict[str, ev.AnsweredBy] = {}
        """Who answers a call that was still streaming when its `ToolCallReady` came."""
        self._in_response = False
        self._started = False
        self._ended = False
        self.failing = False
        """Whether the run is ending in an error: the calls it cut off end now, their arguments as far as they got."""

    # ---------------------------------------------------------------------------------- protocol

    @property
    @abstractmethod
    def headers(self) -> Mapping[str, str]: ...

    @property
    @abstractmethod
    def new_messages(self) -> list[ModelMessage]: ...

    def start(self) -> bytes:
        if self._started:
            return b''
        self._started = True
        return self._stream_started()

    def encode(self, event: ev.AgentEvent) -> bytes:
        if self._ended:
            return b''
        # One lookup gives both what the collector does with the event and the hook: a text delta pays for
        # no more dispatch than the collector alone did before.
        feed, hook = self._hooks.get(type(event)) or self._hook_for(event)
        feed(self._collector, event)
        if self._started:
            return hook(self, event)
        return self.start() + hook(self, event)

    def close(self) -> bytes:
        return b'' if self._ended else self.encode(ev.RunFinished())

    # ---------------------------------------------------------------------------------- dispatch

    @classmethod
    def _hook_for(cls, event: ev.AgentEvent) -> _Entry:
        hook: _Hook
        match event:
            case ev.PartDelta():
                hook = cls._part_delta  # the hot path: straight to the protocol
            case ev.PartStart():
                hook = cls._on_part_start
            case ev.PartEnd():
                hook = cls._on_part_end
            case ev.ResponseStart():
                hook = cls._on_response_start
            case ev.ToolCallReady():
                hook = cls._on_tool_call_ready
            case ev.ToolResult():
                hook = cls._on_tool_result
            case ev.RetryFeedback():
                hook = cls._on_retry_feedback
            case ev.FileOutput():
                hook = cls._on_file_output
            case ev.CustomData():
                hook = cls._on_custom_data
            case ev.NativeToolResult():
                hook = cls._on_native_tool_result
            case ev.CitationAdded():
                hook = cls._citation_added
            case ev.ResponseInfo():
                hook = cls._response_info
            case ev.MessageMetadata():
                hook = cls._message_metadata
            case ev.StateSnapshot():
                hook = cls._state_snapshot
            case ev.StateDelta():
                hook = cls._state_delta
            case ev.StepStarted():
                hook = cls._step_started
            case ev.StepFinished():
                hook = cls._step_finished
            case ev.ActivitySnapshot():
                hook = cls._activity_snapshot
            case ev.ActivityDelta():
                hook = cls._activity_delta
            case ev.RawEvent():
                hook = cls._raw_event
            case ev.RunFinished():
                hook = cls._on_run_finished
            case ev.RunError():
                hook = cls._on_run_error
            case ev.RunCancelled():
                hook = cls._on_run_cancelled
            case _:
                _not_an_event(event)
        entry = cls._hooks[type(event)] = (MessageCollector.feeder(type(event)), hook)
        return entry

    # -------------------------------------------------------------------------- what is shared

    def _on_response_start(self, event: ev.ResponseStart) -> bytes:
        out = self._close_parts()
        self._in_response = True
        return out + self._response_started()

    def _on_part_start(self, event: ev.PartStart) -> bytes:
        out = self._ensure_response()  # a call reusing an id never gets here: the collector (fed first) refuses it
        response = self._collector.last_message
        assert isinstance(response, ModelResponse)  # the collector (fed first) has just appended the part to it
        opened, data = self._part_started(event, response, len(response.parts) - 1)
        self._open[event.index] = opened
        return out + data

    def _on_part_end(self, event: ev.PartEnd) -> bytes:
        return self._part_ended(self._open.pop(event.index), None)

    def _on_tool_call_ready(self, event: ev.ToolCallReady) -> bytes:
        call_id = event.tool_call_id
        held = self._held.pop(call_id, None)
        if held is not None:
            return self._send_call(held, event.answered_by) + self._tool_call_ready(event, late=False)
        if self._collector.streams_call(call_id):
            self._marks[call_id] = event.answered_by
            return self._tool_call_ready(event, late=False)
        return self._tool_call_ready(event, late=True)

    def _on_tool_result(self, event: ev.ToolResult) -> bytes:
        out = self._close_parts()
        self._in_response = False
        part = event.part
        if isinstance(part, RetryPromptPart) and part.tool_name is None:
            return out + self._retry_prompt(part)  # a legacy retry, no tool call's answer: nothing to release
        if self._held:
            out += self._release_call(part.tool_call_id)
        return out + self._tool_result(event)

    def _on_retry_feedback(self, event: ev.RetryFeedback) -> bytes:
        out = self._close_parts()
        self._in_response = False
        return out + self._retry_feedback(event)

    def _on_file_output(self, event: ev.FileOutput) -> bytes:
        return self._ensure_response() + self._file_output(event)

    def _on_custom_data(self, event: ev.CustomData) -> bytes:
        # Transient data is shown, never kept: it belongs to no response (the collector skips it too).
        return (b'' if event.transient else self._ensure_response()) + self._custom_data(event)

    def _on_native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        return self._ensure_response() + self._native_tool_result(event)

    def _on_run_finished(self, event: ev.RunFinished) -> bytes:
        return self._end_run(None) + self._run_finished(event)

    def _on_run_error(self, event: ev.RunError) -> bytes:
        # A call the error cut off (mid-arguments, or finished with nothing to answer it yet) is answered here,
        # as failed with the error the client is shown: signed like any result the server wrote, so the next
        # turn's history holds the call and how it ended, where an unanswered call would be dropped. The call
        # itself ends as any call does (its arguments as far as they got, signed): the failure is its result's.
        out = b''
        self.failing = True
        if self._open:
            open_parts, self._open = self._open, {}
            self._collector.close()
            out = b''.join(
                [
                    self._part_ended(opened, None if self._answered_here(opened.finished) else event.message)
                    for opened in open_parts.values()
                ]
            )
        self._collector.close()
        for call in self._collector.unanswered_calls():
            failed = ToolReturnPart(
                tool_name=call.tool_name, content=event.message, tool_call_id=call.tool_call_id, outcome='failed'
            )
            out += self.encode(ev.ToolResult(failed))
        return out + self._end_run(event.message) + self._run_error(event)

    def _on_run_cancelled(self, event: ev.RunCancelled) -> bytes:
        return self._end_run(None) + self._run_cancelled(event)

    def _end_run(self, error: str | None) -> bytes:
        """Close what is open (cut off by `error` for a failed run) and send every held call, unmarked:
        nothing said a client answers them. The stream has ended once this returns."""
        out = self._close_parts(error) + self._release_held()
        self._collector.close()  # whatever it still streams, should a hook have failed mid-part
        self._ended = True
        return out

    def _answered_here(self, part: ModelResponsePart) -> bool:
        """Whether a failed run answers this call itself: a call of the server's (a call a client tool or an
        approval answers is still cut off as it was, never handed to the client with half its arguments)."""
        return isinstance(part, ToolCallPart) and part.tool_call_id not in self._marks

    def _ensure_response(self) -> bytes:
        if self._in_response:
            return b''
        self._in_response = True
        return self._response_started()

    def _close_parts(self, error: str | None = None) -> bytes:
        """End every open part, in the order they started. The collector finishes them first (it would only do
        so on the event that follows), so each is signed as the client built it."""
        if not self._open:
            return b''
        open_parts, self._open = self._open, {}
        self._collector.close()
        return b''.join([self._part_ended(opened, error) for opened in open_parts.values()])

    def _call_ended(self, tool_call_id: str, held: OpenT, error: str | None = None) -> bytes:
        """A call's arguments are complete: sent now when its mark is known or it failed (`error`), else held."""
        mark = self._marks.pop(tool_call_id, None) if self._marks else None
        if mark is None and error is None:
            self._held[tool_call_id] = held
            return b''
        return self._send_call(held, mark, error)

    def _release_call(self, tool_call_id: str) -> bytes:
        held = self._held.pop(tool_call_id, None)
        return b'' if held is None else self._send_call(held, None)

    def _release_held(self) -> bytes:
        """Send every held call unmarked, in the order they ended."""
        if not self._held:
            return b''
        held, self._held = self._held, {}
        return b''.join([self._send_call(call, None) for call in held.values()])

    # ----------------------------------------------------------------------- the protocol's hooks

    @abstractmethod
    def _stream_started(self) -> bytes:
        """The bytes that open the stream."""

    @abstractmethod
    def _response_started(self) -> bytes:
        """A model response begins (explicitly or implicitly); the collector's last message is it."""

    @abstractmethod
    def _part_started(self, event: ev.PartStart, response: ModelResponse, slot: int) -> tuple[OpenT, bytes]:
        """The record of a part that starts at `response.parts[slot]`, and its bytes."""

    @abstractmethod
    def _part_delta(self, event: ev.PartDelta) -> bytes:
        """A delta for the open part `self._open[event.index]` (the collector has checked it is open)."""

    @abstractmethod
    def _part_ended(self, opened: OpenT, error: str | None) -> bytes:
        """A part ends, whole in `opened.finished`; `error` when a failed run cuts it off. A tool call's ends
        through `_call_ended`, which sends it (`_send_call`) or holds it."""

    @abstractmethod
    def _send_call(self, held: OpenT, mark: ev.AnsweredBy | None, error: str | None = None) -> bytes:
        """A finished call's closing bytes, signed with `mark` (`None`: nothing says a client answers it)."""

    @abstractmethod
    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        """After the skeleton sent or marked the call: `late` when it was neither held nor streaming."""

    @abstractmethod
    def _tool_result(self, event: ev.ToolResult) -> bytes:
        """A result that answers a tool call (the call itself already sent)."""

    @abstractmethod
    def _retry_prompt(self, part: RetryPromptPart) -> bytes:
        """A tool-less `RetryPromptPart`, which answers no call."""

    @abstractmethod
    def _retry_feedback(self, event: ev.RetryFeedback) -> bytes: ...

    @abstractmethod
    def _file_output(self, event: ev.FileOutput) -> bytes: ...

    @abstractmethod
    def _custom_data(self, event: ev.CustomData) -> bytes: ...

    @abstractmethod
    def _native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        """What a provider-run tool returned; its call (a `NativeToolCallPart`) was sent, never held."""

    @abstractmethod
    def _citation_added(self, event: ev.CitationAdded) -> bytes:
        """A source the text part at `event.index` cites (the collector has added it to the part)."""

    @abstractmethod
    def _response_info(self, event: ev.ResponseInfo) -> bytes:
        """Late-bound response metadata (the collector has set it on the response): sent before the stream ends."""

    @abstractmethod
    def _message_metadata(self, event: ev.MessageMetadata) -> bytes: ...

    @abstractmethod
    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes: ...

    @abstractmethod
    def _state_delta(self, event: ev.StateDelta) -> bytes: ...

    @abstractmethod
    def _step_started(self, event: ev.StepStarted) -> bytes: ...

    @abstractmethod
    def _step_finished(self, event: ev.StepFinished) -> bytes: ...

    @abstractmethod
    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes: ...

    @abstractmethod
    def _activity_delta(self, event: ev.ActivityDelta) -> bytes: ...

    @abstractmethod
    def _raw_event(self, event: ev.RawEvent) -> bytes: ...

    @abstractmethod
    def _run_finished(self, event: ev.RunFinished) -> bytes: ...

    @abstractmethod
    def _run_error(self, event: ev.RunError) -> bytes: ...

    @abstractmethod
    def _run_cancelled(self, event: ev.RunCancelled) -> bytes: ...


def _not_an_event(event: Never) -> NoReturn:
    """Typed `Never`: a call the type checker can reach is an `AgentEvent` kind `_hook_for` does not take."""
    raise TypeError(f'not an agent event: {type(event).__name__}')


# ------------------------------------------------------------------------------------------- frames

_P = ParamSpec('_P')
_REQUIRED: Any = object()
"""The default of a field the model requires: a writer given no value for it refuses the call."""


def frame_writer(
    model: Callable[_P, BaseModel], *, optional: Collection[str] | None = None, keep_null: Collection[str] = ()
) -> Callable[_P, bytes]:
    """The writer of one pydantic model type's SSE frame, `data: <json>\\n\\n`, from field values, without
    building the model: its wire keys and the values, as a dict, through pydantic-core's serializer
    (`json_text.sse_data`).

    `write = frame_writer(Model)`; `write(**fields)` takes the model's own parameters (its field names, keyword
    only, with its defaults: a misspelt or missing one is refused, by the type checker and by the writer) and
    returns what `Model(**fields)` serializes to, given JSON-ready values as the model would hold them (they are
    not validated), for a model that serializes as the protocols' chunk and event models do: `type` first, then
    the fields in their declared order under their serialization aliases, and a field that holds nothing (`None`,
    or a float JSON cannot hold) left out unless the model requires it or `keep_null` names its wire key.

    `optional`: the optional fields the writer takes, when not all of the model's; the others are never written
    (their default is `None`) or always written with their default (an event's `type`), and passing one is
    refused. A writer goes over its fields once per frame, so a stream's writers name the few optional fields
    they set, out of the many a model has. A field added to the model is written with no other edit if it must
    be (a required one, or one with a default); tests hold each writer to its model, byte for byte.

    Why not build the model: validating every value and running the model's serializer costs several times what
    writing the dict does, at several frames per tool call. A lone surrogate, which pydantic-core refuses, takes
    the `json` module, as `sse_data` says.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f'{model!r} is not a pydantic model')
    name = model.__name__
    unknown = set(optional or ()) - set(model.model_fields)
    if unknown:
        raise TypeError(f'{name} has no field {", ".join(sorted(unknown))}')
    # (name, wire key, default, left out when it holds nothing) of each field the writer writes or takes.
    written: list[tuple[str, str, Any, bool]] = []
    for field, info in model.model_fields.items():
        key = info.serialization_alias or info.alias or field
        required = info.is_required()
        default = _REQUIRED if required else info.get_default(call_default_factory=True)
        if isinstance(default, Enum):
            default = default.value  # what the serializer writes for it (an event's `type`)
        omittable = not required and key not in keep_null
        if optional is None or required or field in optional or not (omittable and default is None):
            written.append((field, key, default, omittable))
    fields = tuple(sorted(written, key=lambda entry: entry[0] != 'type'))

    def write(*args: _P.args, **values: _P.kwargs) -> bytes:
        take = values.pop
        body: dict[str, Any] = {}
        missing: list[str] = []
        for field, key, default, omittable in fields:
            value = take(field, default)
            if omittable:
                if value is None or (value.__class__ is float and not isfinite(cast('float', value))):
                    continue
            elif value is _REQUIRED:
                missing.append(field)
                continue
            body[key] = value
        if args or values or missing:
            raise _refusal(name, args, list(values), missing)
        return sse_data(body)

    return write


def _refusal(name: str, args: tuple[Any, ...], unexpected: list[str], missing: list[str]) -> TypeError:
    """What Python says of a function with keyword-only parameters called this way."""
    if args:
        return TypeError(f'{name}() takes keyword arguments only')
    if unexpected:
        return TypeError(f'{name}() got an unexpected keyword argument {unexpected[0]!r}')
    plural = 's' if len(missing) > 1 else ''
    names = ' and '.join(repr(field) for field in missing)
    return TypeError(f'{name}() missing {len(missing)} required keyword-only argument{plural}: {names}')
