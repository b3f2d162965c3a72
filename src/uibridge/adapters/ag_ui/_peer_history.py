"""AG-UI messages that pydantic-ai's own `AGUIAdapter` stored, respelled as uibridge's, so they load with
their meaning: a migration path for applications moving their stored chats to uibridge.

pydantic-ai keeps what an AG-UI message cannot say in its `encryptedValue`, as JSON:

- a reasoning message: the thinking part's `{"id", "signature", "provider_name"}` (not namespaced), respelled
  as uibridge's `thinking` marker;
- a tool message: `{"pydantic_ai": {"outcome", "retry"}}`; `retried` becomes the tool-bound `RetryPromptPart`
  (structured errors when the content is pydantic's error list), `failed` / `denied` / `interrupted` stay so;
- a user or system message: `{"pydantic_ai": {"retry_feedback": <marker>}}` (`core.peer_feedback`), which
  becomes a system message holding uibridge's marker and rendering, so it loads as that `RetryFeedbackPart`:
  only the marker makes feedback, never the text.

- an `activity` message of type `pydantic_ai_file` (a file the model produced: a data URL, its media type and
  id) is that `FilePart` of the response (`peer_file`); `dump` writes every `FilePart` so too, its signature
  and file name in uibridge's record beside it.

Not carried: a retry's attempt counts. Nothing here is
signed: these are the server's own stored records, so this is for `load_messages` on the server followed by
saving the history again; sent through a client, `verify_history` drops the server parts, as it drops any
unsigned one.
"""

from __future__ import annotations

from typing import Any, cast

import pydantic
from ag_ui.core import ActivityMessage, Message, ReasoningMessage, SystemMessage, ToolMessage, UserMessage

from ...core.feedback import render_retry_feedback
from ...core.json_text import parse_json
from ...core.messages import BinaryContent, ErrorDetails, FilePart
from ...core.peer_feedback import PEER_KEY, our_marker, peer_retry_feedback
from ._wire import MARKER_START, WIRE_KEY, marker

FILE_ACTIVITY = 'pydantic_ai_file'


def peer_file(message: ActivityMessage) -> FilePart | None:
    """The `FilePart` a pydantic-ai file activity message stands for; `None` for any other activity message (or
    one whose URL is no data URL)."""
    if message.activity_type != FILE_ACTIVITY:
        return None
    url = message.content.get('url')
    if not isinstance(url, str):
        return None
    try:
        content = BinaryContent.from_data_url(url)
    except ValueError:
        return None
    file_id = message.content.get('id')
    return FilePart(content=content, id=file_id if isinstance(file_id, str) else None)


_THINKING_KEYS = frozenset({'id', 'signature', 'provider_name', 'provider_details'})
_OUTCOMES = frozenset({'failed', 'denied', 'interrupted'})
_errors = pydantic.TypeAdapter(list[ErrorDetails])


def _record(encrypted_value: Any) -> dict[str, Any] | None:
    """pydantic-ai's JSON in `encryptedValue`, or `None` (uibridge's own marker, or anything else)."""
    if not isinstance(encrypted_value, str) or not encrypted_value.startswith('{'):
        return None
    if encrypted_value.startswith(MARKER_START):
        return None
    try:
        data = parse_json(encrypted_value)
    except ValueError:
        return None
    return cast('dict[str, Any]', data) if isinstance(data, dict) else None


def peer_message(message: Message) -> Message | None:
    """`message` respelled as uibridge's, or `None` when pydantic-ai did not write it: then it loads as it is."""
    record = _record(getattr(message, 'encrypted_value', None))
    if record is None:
        return None
    if isinstance(message, ReasoningMessage):
        if not record or not set(record) <= _THINKING_KEYS:
            return None
        fields = {key: value for key, value in record.items() if key != 'provider_details'}
        return message.model_copy(update={'encrypted_value': marker('thinking', fields)})
    peer = record.get(PEER_KEY)
    if not isinstance(peer, dict):
        return None
    peer = cast('dict[str, Any]', peer)
    if isinstance(message, ToolMessage):
        return _tool(message, peer)
    if isinstance(message, UserMessage | SystemMessage):
        feedback = peer_retry_feedback(peer.get('retry_feedback'))
        if feedback is not None:
            return SystemMessage(
                id=message.id,
                content=render_retry_feedback(feedback),
                encrypted_value=marker('retry_feedback', our_marker(feedback)),
            )
    return None


def _tool(message: ToolMessage, peer: dict[str, Any]) -> ToolMessage | None:
    outcome = peer.get('outcome')
    part: dict[str, Any]
    if outcome == 'retried':
        part = {'kind': 'retry-prompt'}
        if isinstance(message.content, str):
            try:
                _errors.validate_python(parse_json(message.content))
                part['json'] = True  # pydantic's error list, kept structured
            except (ValueError, pydantic.ValidationError):
                pass
    elif outcome in _OUTCOMES:
        part = {'outcome': outcome}
    else:
        return None
    metadata = {**(message.metadata or {}), WIRE_KEY: {'part': part}}
    return message.model_copy(update={'encrypted_value': None, 'metadata': metadata})
