"""What this adapter writes into AG-UI's open channels, shared by dump, load and the stream encoder.

AG-UI has two places where a server may keep what a message does not otherwise say, and the client
echoes both back unchanged: a message's `metadata` object and its `encryptedValue` string.

- `metadata["uibridge"]` (`WIRE_KEY`) holds uibridge's records for an AG-UI message:
  - `response`: on the first AG-UI message of a `ModelResponse`: `timestamp`, and when set `model_name`,
    `provider_name`, `finish_reason`, `metadata` (the response's application metadata, `core.metadata`, with
    the uibridge keys AG-UI has no other place for, `RECORD_METADATA_KEYS`: approval marks and custom data).
    It also marks where a response starts, so two responses in a row stay two on load. When the metadata holds
    the shared state, `state_sig` signs it (and `state_json` carries its exact text where the object cannot).
  - `request`: on the first AG-UI message of a `ModelRequest` that has `instructions` or `metadata` (the
    same), or that directly follows another request (the same start marker).
  - `part`: what the AG-UI message cannot say about the part it carries: `timestamp`, a system prompt's
    `dynamic_ref`, a text part's `id`, a tool result's `kind` (`retry-prompt`), `outcome` (when not
    success), `json` (the content was JSON, dumped compact) and `metadata`; and `sig` (`SIG_KEY`), the
    signature of a server-authored part (text, thinking, tool result or tool retry).
- A tool call's own `metadata["uibridge"]` holds its `sig`, and `"client": true` when it was signed as a
  call to a client tool.
- `encryptedValue` holds a JSON string namespaced the same way, `{"uibridge": {<kind>: <payload>}}`: `retry_feedback`
  (the marker of `uibridge.core.feedback`: `retry_feedback_payload(part)` plus its `sig`), `thinking` (a thinking
  part's `signature`, `provider_name` and `id`) and, on a response's first message, `finish`: a finish reason a
  round trip keeps (`core.provenance.SIGNED_FINISH_REASONS`) and its `sig` (`Keyring.sign_finish`). A stream learns
  the reason at the response's end, when the first message's `metadata` was sent long before: the marker is set
  then (`REASONING_ENCRYPTED_VALUE`, subtype `message`), which the reducer allows on any message.

On the neutral side, `ModelRequest.metadata` / `ModelResponse.metadata` keep under `METADATA_KEY`
(`uibridge_ag_ui`) one entry per AG-UI message the `ModelMessage` was loaded from or streamed as
(`{"id", "name"?, "metadata"?, "content_parts"?}`), so the same ids, names, client metadata and the form of a
tool message's content come back on dump.

Everything read back from a client is checked field by field: a record that does not validate is
ignored, never an error, because it is the client's copy of our own annotation.
"""

from __future__ import annotations

from typing import Any, cast

import pydantic
from ag_ui.core import Message

from ...core import diagnostics
from ...core.events import MESSAGE_METADATA_KEY, STATE_METADATA_KEY
from ...core.json_text import compact_json, parse_json
from ...core.json_text import parse_iso as parse_iso  # for the loaders, which read a record's times with it
from ...core.metadata import ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY

METADATA_KEY = 'uibridge_ag_ui'
RECORD_METADATA_KEYS = frozenset(
    {ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY, MESSAGE_METADATA_KEY, STATE_METADATA_KEY}
)
"""uibridge's own keys of a neutral message's metadata that a record's `metadata` carries beside the
application's (`core.metadata`): AG-UI has no other place to keep a response's approval marks, custom data,
message metadata and the shared state after it (the live stream sends the last three as events)."""
WIRE_KEY = 'uibridge'
SIG_KEY = 'sig'
CUT_RESULT_KEY = 'cut_result'
"""In a call's record: the tool message answering a call a failure cut off mid-argument (`stream`), which no
`TOOL_CALL_RESULT` could carry."""
"""A server-authored part's signature (`Keyring.sign_part`), in its record or marker."""
STATE_SIG_KEY = 'state_sig'
"""The signature of the state a response record's `metadata` carries (`Keyring.sign_state`)."""

message_adapter: pydantic.TypeAdapter[Message] = pydantic.TypeAdapter(Message)


def marker(kind: str, payload: Any) -> str:
    return compact_json({WIRE_KEY: {kind: payload}})


MARKER_START = f'{{"{WIRE_KEY}"'
"""How every `marker` starts: what is not uibridge's reads differently (`_peer_history`)."""


def with_marker(encrypted_value: str | None, kind: str, payload: Any) -> str:
    """`encrypted_value` (a marker of ours, or nothing) with `kind` added: one message's `encryptedValue` can carry
    two kinds (a response's first message, a reasoning one with its `thinking`, and the response's `finish`)."""
    inner: dict[str, Any] = {}
    if encrypted_value and encrypted_value.startswith(MARKER_START):
        try:
            data: Any = parse_json(encrypted_value)
        except ValueError:
            data = None
        held: Any = cast('dict[str, Any]', data).get(WIRE_KEY) if isinstance(data, dict) else None
        if isinstance(held, dict):
            inner = dict(cast('dict[str, Any]', held))
    inner[kind] = payload
    return compact_json({WIRE_KEY: inner})


def read_marker(encrypted_value: str | None, kind: str) -> Any:
    """The payload of a `{"uibridge": {kind: ...}}` marker, or `None` if `encrypted_value` is not one."""
    if not encrypted_value or not encrypted_value.startswith('{'):
        return None
    try:
        data: dict[str, Any] | None = parse_json(encrypted_value)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    inner: dict[str, Any] | None = data.get(WIRE_KEY)
    return inner.get(kind) if isinstance(inner, dict) else None


# No `cast()` on these per-message paths (a call each, which the load bench counts): a value read from a client's
# copy is given the type it must have and then checked at run time, `isinstance` narrowing it as a cast would.
def records(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """uibridge's records in an AG-UI message's `metadata`, `{}` when absent or malformed."""
    if not isinstance(metadata, dict):
        return {}
    inner: dict[str, Any] | None = metadata.get(WIRE_KEY)
    return inner if isinstance(inner, dict) else {}


def warn(message: str) -> None:
    diagnostics.warn(message, stacklevel=3)
