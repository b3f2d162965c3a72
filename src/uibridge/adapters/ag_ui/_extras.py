"""The AG-UI events for what a run shows beside its messages: shared state, steps, activity, a provider's raw
events, sources, message metadata, late response info and token usage (`AGUIEventStream`'s hooks for them).

- `StateSnapshot` / `StateDelta` -> `STATE_SNAPSHOT` / `STATE_DELTA`, the patch as the agent wrote it: the
  client applies it with its own JSON Patch to the state it holds, which then equals `collector.state` (the
  collector applied the same patch first, so a patch that does not apply fails the run before it is sent).
- `StepStarted` / `StepFinished` -> `STEP_STARTED` / `STEP_FINISHED`. The client refuses a step started twice,
  a step finished that is not open, and a `RUN_FINISHED` while a step is open; so a second start of an open step
  and the end of a step that is not open are not sent, and the steps still open when the run finishes (or is
  cancelled) are finished first, in the order they started.
- `ActivitySnapshot` / `ActivityDelta` -> `ACTIVITY_SNAPSHOT` / `ACTIVITY_DELTA`; `RawEvent` -> `RAW`. UI only.
- A source a text part cites: a `CUSTOM` event `uibridge.source`, `{"messageId", "source"}` (`source` is the
  citation source's JSON, `core.citations`), once per source; the citations themselves ride, signed, in the text
  message's part record (see `dump`).
- `MessageMetadata`: `CUSTOM` `uibridge.message_metadata`, `{"messageId", "metadata"}` with the event's own keys
  (the client merges them over what it has, key by key, as the collector does).
- `ResponseInfo`: `CUSTOM` `uibridge.response_info`, `{"messageId", <field>: ...}` with the fields the event sets
  other than `usage` (`finish_reason`, `provider_response_id`, `model_name`, `provider_name`,
  `provider_details`). `messageId` is the response's first AG-UI message, the one whose record a dump writes
  them in. Usage goes in the run's end instead.
- Usage: `RUN_FINISHED.usage` (and `RUN_ERROR.usage`): one `TokenUsage` per provider and model, over the run's
  responses (`usage_by_model`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TokenUsage,
)
from ag_ui.core import RawEvent as SdkRawEvent

from ...core import events as ev
from ...core.citations import Citation
from ...core.messages import ModelResponse
from ...core.usage import Usage, usage_by_model
from ._frames import now_ms, sdk_frame

__all__ = [
    'MESSAGE_METADATA_EVENT',
    'RESPONSE_INFO_EVENT',
    'SOURCE_EVENT',
    'EventsBesideMessages',
    'message_metadata_frame',
    'response_info_frame',
    'source_frames',
    'token_usage',
]

SOURCE_EVENT = 'uibridge.source'
MESSAGE_METADATA_EVENT = 'uibridge.message_metadata'
RESPONSE_INFO_EVENT = 'uibridge.response_info'
_LATE_FIELDS = ('finish_reason', 'provider_response_id', 'model_name', 'provider_name', 'provider_details')


class EventsBesideMessages:
    """The encoder hooks that need nothing of the run but the steps open (a mixin of `AGUIEventStream`)."""

    _open_steps: dict[str, None]
    """The steps started and not finished, in the order they started."""

    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes:
        return sdk_frame(StateSnapshotEvent(snapshot=event.snapshot, timestamp=now_ms()))

    def _state_delta(self, event: ev.StateDelta) -> bytes:
        return sdk_frame(StateDeltaEvent.model_validate({'delta': event.delta, 'timestamp': now_ms()}))

    def _step_started(self, event: ev.StepStarted) -> bytes:
        if event.name in self._open_steps:
            return b''
        self._open_steps[event.name] = None
        return sdk_frame(StepStartedEvent(step_name=event.name, timestamp=now_ms()))

    def _step_finished(self, event: ev.StepFinished) -> bytes:
        if event.name not in self._open_steps:
            return b''
        del self._open_steps[event.name]
        return sdk_frame(StepFinishedEvent(step_name=event.name, timestamp=now_ms()))

    def _finish_steps(self) -> bytes:
        """`STEP_FINISHED` for every step still open: a run may not finish with one open."""
        names, self._open_steps = list(self._open_steps), {}
        return b''.join(sdk_frame(StepFinishedEvent(step_name=name, timestamp=now_ms())) for name in names)

    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes:
        return sdk_frame(
            ActivitySnapshotEvent(
                message_id=event.message_id,
                activity_type=event.activity_type,
                content=event.content,
                replace=None if event.replace else False,  # absent means replace (the protocol's default)
                timestamp=now_ms(),
            )
        )

    def _activity_delta(self, event: ev.ActivityDelta) -> bytes:
        values = {'messageId': event.message_id, 'activityType': event.activity_type, 'patch': event.patch}
        return sdk_frame(ActivityDeltaEvent.model_validate({**values, 'timestamp': now_ms()}))

    def _raw_event(self, event: ev.RawEvent) -> bytes:
        return sdk_frame(SdkRawEvent(event=event.event, source=event.source, timestamp=now_ms()))


def _custom(name: str, value: dict[str, Any]) -> bytes:
    return sdk_frame(CustomEvent(name=name, value=value, timestamp=now_ms()))


def source_frames(message_id: str, citations: Iterable[Citation]) -> bytes:
    """One `uibridge.source` event per source of `citations`, for the text message `message_id`."""
    return b''.join(
        _custom(SOURCE_EVENT, {'messageId': message_id, 'source': source.model_dump(mode='json', exclude_none=True)})
        for citation in citations
        for source in citation.sources
    )


def message_metadata_frame(message_id: str, event: ev.MessageMetadata) -> bytes:
    return _custom(MESSAGE_METADATA_EVENT, {'messageId': message_id, 'metadata': event.metadata})


def response_info_frame(message_id: str, event: ev.ResponseInfo) -> bytes:
    """The late fields `event` sets besides usage, or nothing when it sets none."""
    fields = {name: value for name in _LATE_FIELDS if (value := getattr(event, name)) is not None}
    return _custom(RESPONSE_INFO_EVENT, {'messageId': message_id, **fields}) if fields else b''


def token_usage(responses: Sequence[ModelResponse]) -> list[TokenUsage] | None:
    """The run's usage per provider and model, in AG-UI's accounting (`None` when no response reported any)."""
    totals = usage_by_model((r.provider_name, r.model_name, r.usage) for r in responses if r.usage is not None)
    return [_token_usage(t.provider_name, t.model_name, t.usage) for t in totals] or None


def _token_usage(provider: str | None, model: str | None, usage: Usage) -> TokenUsage:
    # The totals always; a breakdown only when the provider reported it (absent, not 0, says "not known").
    return TokenUsage(
        provider=provider,
        model=model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        reasoning_tokens=usage.output_reasoning_tokens or None,
        cached_input_tokens=usage.cache_read_tokens or None,
        cache_write_input_tokens=usage.cache_write_tokens or None,
    )
