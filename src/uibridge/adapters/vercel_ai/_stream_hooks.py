"""`VercelAIEventStream`'s hooks for issue 14's events (`core.encoder`), a mixin of the stream class; what each
sends is `_stream_carriers`' (see its docstring). Named steps (`StepStarted` / `StepFinished`) and raw events have
no Vercel carrier and are not sent: the UI message stream has no chunk for a named step within a model step, and
a raw provider event is for a protocol that forwards them (AG-UI's RAW); the collector keeps neither either.
"""

from __future__ import annotations

from ...core import events as ev
from ...core.collector import MessageCollector
from ...core.messages import ModelResponse
from ...core.provenance import Keyring
from ._stream_carriers import MessageCarrier, activity, native_result, source_chunks

__all__ = ['MessageHooks']


class MessageHooks:
    """The hooks, over the stream's own state (declared here, set by `VercelAIEventStream.__init__`)."""

    _keyring: Keyring
    _collector: MessageCollector
    _message: MessageCarrier
    _current: ModelResponse | None
    """The response being built (the collector's), once one started."""
    _text_slots: dict[int, int]
    _native_slots: dict[str, int]
    _results_after_end: dict[str, bytes]
    _step_open: bool

    def _text_open(self, index: int) -> bool:
        raise NotImplementedError

    def _native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        part = event.part
        response = self._current
        assert response is not None  # the skeleton opened one
        slot = len(response.parts) - 1  # the collector (fed first) has just appended the return
        at = self._native_slots.get(part.tool_call_id)
        out = native_result(part, self._keyring.sign_part(part), None if at is not None and slot == at + 1 else slot)
        if part.tool_call_id not in self._results_after_end:
            return out
        self._results_after_end[part.tool_call_id] += out  # its call is still streaming: after its end, then
        return b''

    def _citation_added(self, event: ev.CitationAdded) -> bytes:
        slot = self._text_slots.get(event.index)
        if self._text_open(event.index) or self._current is None or slot is None:
            return b''  # still streaming: its sources follow its `text-end`
        return source_chunks(self._current, slot, self._keyring)

    def _response_info(self, event: ev.ResponseInfo) -> bytes:
        return self._message.response_info()

    def _message_metadata(self, event: ev.MessageMetadata) -> bytes:
        return self._message.message_metadata(event.metadata)

    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes:
        return self._message.state(self._collector.state, step_open=self._step_open)

    def _state_delta(self, event: ev.StateDelta) -> bytes:
        return self._message.state(self._collector.state, step_open=self._step_open)

    def _step_started(self, event: ev.StepStarted) -> bytes:
        return b''

    def _step_finished(self, event: ev.StepFinished) -> bytes:
        return b''

    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes:
        return activity(event)

    def _activity_delta(self, event: ev.ActivityDelta) -> bytes:
        return activity(event)

    def _raw_event(self, event: ev.RawEvent) -> bytes:
        return b''
