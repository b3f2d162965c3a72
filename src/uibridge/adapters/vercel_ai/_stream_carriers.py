"""The stream's carriers for issue 14's events, in the layout `dump_messages` writes (`_message_info`, `_sources`,
`_native_tools`), so that the message a client builds loads as the run's new messages:

- `MessageCarrier`: what belongs to the whole assistant message. The shared state as one `data-state` part (id
  `state`, data = the whole state after the event), sent at the event inside a step, else when the next step
  starts (or at the end), its signature in the message metadata at the end; message metadata as
  `message-metadata` with the application's keys at top level;
  late response info as `message-metadata` under `uibridge`: the step's entry by its index within the message
  (counting the continued message's steps) and the message's new totals, which the client's deep merge adds to
  what it holds. It also amends the collector's messages the way loading reads the client's message back;
- `source_chunks`: a text part's citations as `source-url` / `source-document` after its `text-end`, or one
  late citation, signed with the text it now completes;
- `native_call_end` / `native_result`: a provider-executed call as `tool-input-available` with
  `providerExecuted: true` at its end (never held, never an approval), its return as `tool-output-available`;
- `activity`: a transient `data-activity` part (id: the activity's message id), shown, never kept.
"""

from __future__ import annotations

from typing import Any, cast

from ...core.events import MESSAGE_METADATA_KEY, ActivityDelta, ActivitySnapshot
from ...core.messages import (
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
)
from ...core.provenance import Keyring
from ._frames import chunk_writer
from ._message_info import STATE_ID, STATE_TYPE, is_state_part, late_info, state_fields, state_placement, summary
from ._native_tools import native_call_fields, native_input, native_result_fields
from ._provider_metadata import PROVIDER_KEY, SIDECAR_KEY, sidecar
from ._sources import source_parts
from .chunks import (
    DataChunk,
    MessageMetadataChunk,
    SourceDocumentChunk,
    SourceUrlChunk,
    ToolInputAvailableChunk,
    ToolInputErrorChunk,
    ToolOutputAvailableChunk,
)
from .types import SourceUrlUIPart, StepStartUIPart, UIMessage

__all__ = ['MessageCarrier', 'activity', 'native_call_end', 'native_result', 'source_chunks']

_data = chunk_writer(DataChunk)
_metadata = chunk_writer(MessageMetadataChunk)
_source_url = chunk_writer(SourceUrlChunk)
_source_document = chunk_writer(SourceDocumentChunk)
_input_available = chunk_writer(ToolInputAvailableChunk)
_input_error = chunk_writer(ToolInputErrorChunk)
_output_available = chunk_writer(ToolOutputAvailableChunk)


class MessageCarrier:
    """The message-wide state of one stream: steps counted, the state's place, the steps' late info sent."""

    def __init__(self, continued: UIMessage | None, keyring: Keyring | None = None) -> None:
        self._continued = continued
        self._keyring = keyring
        self._state_sent = False
        self._offset = 0
        self._steps: dict[int, dict[str, Any]] = {}
        """Each step's late info as the client holds it (the continued message's, then this run's)."""
        if continued is not None:
            self._offset = sum(isinstance(part, StepStartUIPart) for part in continued.parts)
            held: Any = continued.metadata
            ours = cast('dict[str, Any]', held).get(PROVIDER_KEY) if isinstance(held, dict) else None
            kept = cast('dict[str, Any]', ours).get('steps') if isinstance(ours, dict) else None
            for key, entry in cast('dict[str, Any]', kept).items() if isinstance(kept, dict) else ():
                if key.isdigit() and isinstance(entry, dict):
                    self._steps[int(key)] = cast('dict[str, Any]', entry)
        self._response: ModelResponse | None = None
        self._responses = 0
        self._ui_only = 0
        """UI-only parts (kept custom data) sent in the current step: the state part's slot among them."""
        self._state_due = False
        self._info_due = False
        self._state_at: tuple[int, int, int] | None = None
        """Where the client holds the state part: (step, position, slot), as `state_placement` reads it."""

    @property
    def _step(self) -> int:
        return self._offset + self._responses - 1

    def step_started(self, response: ModelResponse, state: Any) -> bytes:
        """A step starts (`response`, the collector's): what waited for one goes out in it."""
        self._response = response
        self._responses += 1
        self._ui_only = 0
        out = b''
        if self._state_due:
            out += self.state(state, step_open=True)
        if self._info_due:
            self._info_due = False
            out += self.response_info()
        return out

    def ui_only_sent(self) -> None:
        self._ui_only += 1

    def state(self, state: Any, *, step_open: bool) -> bytes:
        if not step_open or self._response is None:
            self._state_due = True
            return b''
        self._state_due = False
        self._state_sent = True
        if self._state_at is None:
            self._state_at = self._continued_state_at() or (self._step, len(self._response.parts), self._ui_only)
        return _data(type=STATE_TYPE, id=STATE_ID, data=state)

    def _continued_state_at(self) -> tuple[int, int, int] | None:
        """The place of the state part the continued message holds: the client replaces its data in place."""
        continued = self._continued
        if continued is None or not any(is_state_part(part) for part in continued.parts):
            return None
        from .load import load_messages  # load imports nothing of the stream; only a continued state needs it

        loaded = [m for m in load_messages([continued.model_dump(mode='json')]) if isinstance(m, ModelResponse)]
        return state_placement(loaded[-1]) if loaded else None

    def message_metadata(self, metadata: dict[str, Any]) -> bytes:
        return _metadata(message_metadata=metadata)

    def response_info(self) -> bytes:
        """The current step's late info, when it changed, with the message's new totals."""
        if self._response is None:
            self._info_due = True  # the collector keeps it for the first response too
            return b''
        entry = late_info(self._response)
        if entry is None or self._steps.get(self._step) == entry:
            return b''
        self._steps[self._step] = entry
        totals = summary(self._steps[step] for step in sorted(self._steps))
        return _metadata(message_metadata={PROVIDER_KEY: {**totals, 'steps': {str(self._step): entry}}})

    def at_end(self, state: Any) -> bytes:
        """The run ends: the state still due (sent at the end of the last step), and the last step's late info
        if the run's end changed it (its finish reason)."""
        out = b''
        if self._state_due and self._response is not None:
            self._state_due = False
            self._state_sent = True
            if self._state_at is None:
                self._state_at = self._continued_state_at() or (self._step, len(self._response.parts), self._ui_only)
            out += _data(type=STATE_TYPE, id=STATE_ID, data=state)
        if self._state_sent and self._keyring is not None:
            # The state the message now holds, signed once it is final (`_message_info.state_fields`).
            out += _metadata(message_metadata={PROVIDER_KEY: state_fields(state, self._keyring)})
        return out + self.response_info() if self._response is not None else out

    def amend(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The collector's messages as loading reads the client's message back: the application's message
        metadata merged onto the last response, and there the state part's place (`state_at`)."""
        indexes = [index for index, message in enumerate(messages) if isinstance(message, ModelResponse)]
        if not indexes:
            return messages
        merged: dict[str, Any] = {}
        for index in indexes:
            metadata = messages[index].metadata or {}
            if MESSAGE_METADATA_KEY in metadata and index != indexes[-1]:
                merged.update(metadata[MESSAGE_METADATA_KEY])
                rest = {key: value for key, value in metadata.items() if key != MESSAGE_METADATA_KEY}
                messages[index] = messages[index].model_copy(update={'metadata': rest or None})
        last = messages[indexes[-1]]
        metadata = dict(last.metadata or {})
        if merged:
            metadata[MESSAGE_METADATA_KEY] = {**merged, **metadata.get(MESSAGE_METADATA_KEY, {})}
        if self._state_at is not None:
            step, position, slot = self._state_at
            metadata[SIDECAR_KEY] = {
                **sidecar(metadata),
                'state_at': {'step': step, 'position': position, 'slot': slot},
            }
        if merged or self._state_at is not None:
            messages[indexes[-1]] = last.model_copy(update={'metadata': metadata})
        return messages


def source_chunks(response: ModelResponse, slot: int, keyring: Keyring | None = None) -> bytes:
    """The sources of the text part at `response.parts[slot]`: all of them at its end, or (with `keyring`) only
    its last citation's, signed with the text it completes (its `text-end` signed the citations known then)."""
    part = response.parts[slot]
    assert isinstance(part, TextPart) and part.citations
    text_index = sum(isinstance(other, TextPart) for other in response.parts[:slot])
    if keyring is None:
        parts = source_parts(part, text_index)
    else:
        parts = source_parts(part, text_index, len(part.citations) - 1, keyring.sign_part(part))
    out = b''
    for source in parts:
        if isinstance(source, SourceUrlUIPart):
            metadata = source.provider_metadata
            out += _source_url(
                source_id=source.source_id, url=source.url, title=source.title, provider_metadata=metadata
            )
        else:
            out += _source_document(
                source_id=source.source_id,
                media_type=source.media_type,
                title=source.title,
                filename=source.filename,
                provider_metadata=source.provider_metadata,
            )
    return out


def native_call_end(call: NativeToolCallPart, response: dict[str, Any] | None, sig: str, error: str | None) -> bytes:
    """A native call's arguments are complete: sent at once (a provider runs it; nothing waits for a mark)."""
    fields: dict[str, Any] = {
        'tool_call_id': call.tool_call_id,
        'tool_name': call.tool_name,
        'input': native_input(call),
        'provider_executed': True,
        'provider_metadata': {PROVIDER_KEY: native_call_fields(call, response, sig)},
    }
    return _input_available(**fields) if error is None else _input_error(**fields, error_text=error)


def native_result(part: NativeToolReturnPart, sig: str, position: int | None) -> bytes:
    """`position`: where the return sits in its response, when not right after its call (as the dump keeps it)."""
    return _output_available(
        tool_call_id=part.tool_call_id,
        output=part.content,
        provider_executed=True,
        provider_metadata={PROVIDER_KEY: native_result_fields(part, sig, position)},
    )


def activity(event: ActivitySnapshot | ActivityDelta) -> bytes:
    """The fields of AG-UI's ACTIVITY_SNAPSHOT / ACTIVITY_DELTA, so a UI handles both protocols' alike."""
    data: dict[str, Any] = {'activityType': event.activity_type}
    if isinstance(event, ActivitySnapshot):
        data.update(content=event.content, replace=event.replace)
    else:
        data['patch'] = event.patch
    return _data(type='data-activity', id=event.message_id, data=data, transient=True)
