"""One AG-UI event as SSE bytes: `data: <json>\\n\\n`, LF only, `content-type: text/event-stream`.

Every event carries an integer millisecond `timestamp` (the TS client rejects a float) and no optional
field is ever `null`: the SDK models omit them.

Two paths, both writing exactly the bytes `ag_ui.encoder.EventEncoder` writes for the same event:

- `sdk_frame`: the SDK model through `EventEncoder` itself, for the events a run sends once (`RUN_STARTED`,
  `RUN_FINISHED`, `RUN_ERROR`) and for `CUSTOM`, whose application value gets the SDK's own serialization.
- `event_frame` (the events sent per message, part and tool call) and `delta_frame` (per delta): the same JSON
  written straight from the values. Building an SDK model and encoding it costs 10 to 25 µs an event, the
  direct form 1 to 3 µs (a `TextMessageContentEvent`: about 13 µs against 1.3 µs). `event_frame` takes the
  field order, the camelCase names and the non-`None` defaults from the SDK model class, so the layout is the
  SDK's, never re-declared here. Property tests check both against `EventEncoder`, byte for byte.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from ag_ui.core import (
    BaseEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from ...core.json_text import json_string, sse_data, utf8_json

__all__ = [
    'CONTENT_TYPE',
    'declares_1_0',
    'delta_frame',
    'event_frame',
    'now_ms',
    'reasoning_encrypted_value',
    'reasoning_end',
    'reasoning_message_end',
    'reasoning_message_start',
    'reasoning_start',
    'sdk_frame',
    'text_end',
    'text_start',
    'tool_call_end',
    'tool_call_result',
    'tool_call_start',
]

_encoder = EventEncoder()

CONTENT_TYPE = _encoder.get_content_type()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


_VERSION = re.compile(r'(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?')


def declares_1_0(version: str | None) -> bool:
    """Whether a client's declared `protocolVersion` is 1.0 or later: `major.minor` or a semantic version
    (`1.0.0`, `1.2.3+build`); a pre-release of 1.0.0 (`1.0.0-rc.1`) comes before it, and anything else is no."""
    if version is None:
        return False
    match = _VERSION.fullmatch(version)
    if match is None:
        return False
    major, minor, patch, prerelease = int(match[1]), int(match[2]), int(match[3] or 0), match[4]
    if major == 1 and minor == 0 and patch == 0 and prerelease:
        return False
    return major >= 1


def sdk_frame(event: BaseEvent) -> bytes:
    return utf8_json(_encoder.encode(event))


def delta_frame(event_type: str, id_key: str, entity_id: str, delta: str) -> bytes:
    """A `*_CONTENT` / `TOOL_CALL_ARGS` frame, byte for byte what the SDK model serializes to: `type`,
    `timestamp`, then the event's own fields, compact, non-ASCII as UTF-8."""
    return utf8_json(
        f'data: {{"type":"{event_type}","timestamp":{now_ms()},"{id_key}":{json_string(entity_id)},'
        f'"delta":{json_string(delta)}}}\n\n'
    )


def event_frame(event_class: type[BaseEvent]) -> Callable[..., bytes]:
    """A writer of one SDK event type: `write(timestamp, message_id=..., ...)` with the model's own field names
    (snake_case, as its constructor takes them), only JSON-ready values (str, int, dicts and lists of them),
    `None` for absent.

    The writer is generated from the model class, the way `dataclasses` writes `__init__`: keyword-only
    parameters in the model's field order, so Python itself rejects a misspelt or missing field (naming the
    event class), and one statement per field. Half the cost of a loop over the fields, which matters at five
    events a tool call.
    """
    fields = event_class.model_fields
    namespace: dict[str, Any] = {'sse_data': sse_data}
    params: list[str] = []
    body: list[str] = [f"    body = {{'type': {fields['type'].default.value!r}, 'timestamp': timestamp}}"]
    for name, info in fields.items():
        if name in ('type', 'timestamp'):
            continue
        if not name.isidentifier():  # pragma: no cover - the SDK's fields are snake_case identifiers
            raise TypeError(f'{event_class.__name__}.{name} is not an identifier')
        key = info.serialization_alias or info.alias or name
        if info.is_required():
            params.append(name)
            body.append(f'    body[{key!r}] = {name}')
        else:
            namespace[f'_default_{name}'] = info.default
            params.append(f'{name}=_default_{name}')
            body.append(f'    if {name} is not None:\n        body[{key!r}] = {name}')
    signature = f'def {event_class.__name__}(timestamp, *, {", ".join(params)}):'
    exec('\n'.join([signature, *body, '    return sse_data(body)']), namespace)  # names from the model only
    return namespace[event_class.__name__]


# The events a run sends per message, part and tool call, written directly (`event_frame`).
text_start = event_frame(TextMessageStartEvent)
text_end = event_frame(TextMessageEndEvent)
reasoning_start = event_frame(ReasoningStartEvent)
reasoning_message_start = event_frame(ReasoningMessageStartEvent)
reasoning_message_end = event_frame(ReasoningMessageEndEvent)
reasoning_encrypted_value = event_frame(ReasoningEncryptedValueEvent)
reasoning_end = event_frame(ReasoningEndEvent)
tool_call_start = event_frame(ToolCallStartEvent)
tool_call_end = event_frame(ToolCallEndEvent)
tool_call_result = event_frame(ToolCallResultEvent)
