"""`dump_messages`: a neutral history as AG-UI 1.0 messages.

How each part maps (`_wire` says what rides in `metadata` / `encryptedValue`):

- `SystemPromptPart` -> one `SystemMessage` per part, never merged. `RetryFeedbackPart` -> a `SystemMessage` whose
  content is `render_retry_feedback(part)` and whose `encryptedValue` is the retry-feedback marker
  (`uibridge.core.feedback`), the only thing that loads it back as feedback. A legacy tool-less `RetryPromptPart` (the
  older form of that feedback) -> the same, its `model_response()` shown and its marker's `part_kind` `retry-prompt`:
  it loads back as exactly that part, when its signature verifies.
- `UserPromptPart` -> a `UserMessage`: string content stays a string, a list becomes text and media parts
  (`image` / `audio` / `video` / `document`, with a `url` source, or a `data` source for inline bytes).
- `ToolReturnPart` -> a `ToolMessage` (non-string content as compact JSON, except a list of text and media,
  which is what `load` makes of a tool message's content parts: as those parts when it holds media or was
  loaded from parts (the entry says `content_parts`); `error` set for a failed call);
  a tool-bound `RetryPromptPart` -> a `ToolMessage` whose `error` is the text the model was shown.
- A `ModelResponse` -> its parts in order: each text part opens an `AssistantMessage`; tool calls join the
  assistant message just before them (unless its text is empty) or open one with empty content; each thinking part is a
  `ReasoningMessage`. A text part's `citations` ride in its record (signed with it). A `NativeToolCallPart`
  (provider-run) is a tool call like the others, its `metadata.uibridge` saying `native: true` (and
  `provider_name`); its `NativeToolReturnPart` is a `ToolMessage` of the response, in part order, its record
  saying the same. The stream encoder groups parts by the same rule, so a client's reducer builds the same
  messages from the live stream. A `FilePart` is the `pydantic_ai_file` activity message pydantic-ai's adapter
  writes for it (AG-UI has no other message for a model's file): its data URL, media type and id, its record
  holding its `sig` and file name (and, when it is a response's first message, the markers an `encryptedValue`
  would carry, under `encrypted`); a call after it opens a new assistant message, so the parts load back in their
  order. An `OpaquePart` is left out (kept in the history, shown to no UI).

Signatures (`uibridge.core.provenance`): every part the server authors carries `keyring.sign_part(part)` where
the client keeps it and echoes it back, for `load_messages(claims=)` to read: `sig` in the message's part
record (`metadata.uibridge.part.sig`) for a text part, a thinking part and a tool result or tool retry; `sig` in
a tool call's own `metadata.uibridge`, beside `"client": true` when the response's
`metadata["uibridge_answered_by"]` says a client tool answers the call (the mark is part of what is signed);
`sig` inside the retry-feedback marker. System and user prompts are the client's to author and carry none
(a legacy tool-less retry prompt is signed like retry feedback, in its marker). The `client` marks ride on
the calls only, so they are left out of the response record's `metadata`; an `approval` mark stays there.

Ids: the ids a `ModelMessage` was loaded with (or streamed with, see `AGUIEventStream.new_messages`) are
reused when they still describe the same number of AG-UI messages. Otherwise an id is a hash of the AG-UI
message and its position in the history, so dumping the same history twice gives the same ids, never
random ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pydantic
import pydantic_core
from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    ContentPart,
    Message,
    ReasoningMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from ...core import messages as m
from ...core.events import STATE_METADATA_KEY
from ...core.exact_json import carry_exact
from ...core.json_text import iso_utc as iso
from ...core.metadata import ANSWERED_BY_METADATA_KEY, answered_by, app_metadata
from ...core.provenance import Keyring
from ...core.records import response_fields
from ...core.trusted import construct
from ._activity import is_activity_entry, kept_activity
from ._drafts import (
    Draft,
    call_record,
    citations_json,
    content_part,
    feedback_message,
    file_message,
    finish_marker,
    native_tool_message,
    thinking_marker,
    tool_call_wire,
    tool_message,
)
from ._part_extras import EXTRAS_KEY, restore_part_extras
from ._wire import METADATA_KEY, RECORD_METADATA_KEYS, SIG_KEY, STATE_SIG_KEY, WIRE_KEY

_sha256 = hashlib.sha256
_to_json = pydantic_core.to_json


def dump_messages(messages: Sequence[m.ModelMessage], *, keyring: Keyring | None = None) -> list[Message]:
    """`messages` as AG-UI messages, every server-authored part signed with `keyring` (`None`: the process's
    `default_keyring()`)."""
    return dump_more(messages, DumpCursor(), keyring=keyring)


@dataclass
class DumpCursor:
    """Where a dump of a history's first `count` messages left off: what dumping the ones after it needs to give
    what dumping the whole history gives (an id is unique in the history, and derived from its place in it)."""

    count: int = 0
    """The messages dumped so far."""
    used: set[str] = field(default_factory=set[str])
    """Every id the dumped messages got."""
    after_request: bool = False
    """Whether the last message dumped was a request (a request after a request is marked as a new one)."""


def dump_more(
    messages: Sequence[m.ModelMessage], cursor: DumpCursor, *, keyring: Keyring | None = None
) -> list[Message]:
    """The messages of a history that follow the `cursor.count` a dump already covered, as dumping the whole
    history writes them; `cursor` is moved past them. A server keeping a chat dumps only what each turn added."""
    signer = Keyring.of(keyring)
    result: list[Message] = []
    used = cursor.used
    previous_was_request = cursor.after_request
    for index, message in enumerate(messages, cursor.count):
        if isinstance(message, m.ModelRequest):
            drafts = _request_drafts(message, signer, follows_request=previous_was_request)
            previous_was_request = True
        else:
            drafts = _response_drafts(message, signer)
            previous_was_request = False
        entries = _stored_entries(message, len(drafts)) if message.metadata else None
        activity = kept_activity(message.metadata) if message.metadata else None
        for position, draft in enumerate(drafts):
            if activity and position in activity:
                result.extend(activity.pop(position))
            parts = draft.pop('_parts', None)
            if parts is not None and entries is not None and entries[position].get('content_parts') is True:
                # Loaded from a tool message whose content was these parts: it goes back as they were.
                draft['content'] = parts
                del draft['_uib']['part']['json']
            if entries is None:
                entry = None
                message_id = _derived_id(draft, index, position, used)
            else:
                entry = entries[position]
                message_id = entry.get('id')
                if not isinstance(message_id, str) or not message_id or message_id in used:
                    message_id = _derived_id(draft, index, position, used)
            used.add(message_id)
            result.append(_finish(draft, message_id, entry))
        if activity:  # after the message's last AG-UI message
            result.extend(a for position in sorted(activity) for a in activity[position])
    cursor.count += len(messages)
    cursor.after_request = previous_was_request
    return result


_MESSAGE_CLASSES: dict[str, type[Message]] = {
    'activity': ActivityMessage,
    'system': SystemMessage,
    'user': UserMessage,
    'assistant': AssistantMessage,
    'reasoning': ReasoningMessage,
    'tool': ToolMessage,
}
_FIELD_NAMES = {
    'toolCallId': 'tool_call_id',
    'encryptedValue': 'encrypted_value',
    'toolCalls': 'tool_calls',
    'activityType': 'activity_type',
}
"""The wire keys a draft may hold besides `role` and `content`, by the SDK's field names."""
# Nested lists are validated from their wire form: pydantic-core builds many small models faster than Python
# can construct them.
_validate_parts = pydantic.TypeAdapter(list[ContentPart]).validator.validate_python
_validate_tool_calls = pydantic.TypeAdapter(list[ToolCall]).validator.validate_python


def _finish(draft: Draft, message_id: str, entry: dict[str, Any] | None) -> Message:
    """The SDK message for `draft`: what validating its wire form (with `id`, `metadata`, `name`) would build.

    Built field by field instead (`core.trusted.construct`): every value is already of its field's type, taken
    from validated neutral parts, and validating the wire dict again was a fifth of `dump_messages`.
    """
    ours: dict[str, Any] = draft.pop('_uib')
    role: str = draft['role']
    content = draft['content']
    if isinstance(content, list):
        if entry is not None and EXTRAS_KEY in entry:
            restore_part_extras(cast('list[dict[str, Any]]', content), entry[EXTRAS_KEY])
        content = _validate_parts(content)
    values: dict[str, Any] = {'id': message_id, 'role': role, 'content': content}
    if len(draft) > 2:
        for key, value in draft.items():
            if key == 'toolCalls':
                values['tool_calls'] = _validate_tool_calls(value)
            elif key in _FIELD_NAMES:
                values[_FIELD_NAMES[key]] = value
            elif key != 'role' and key != 'content':
                values[key] = value
    if entry is None:
        if ours:
            values['metadata'] = {WIRE_KEY: ours}
    else:
        client_metadata = entry.get('metadata')
        metadata: dict[str, Any] = (
            dict(cast('dict[str, Any]', client_metadata)) if isinstance(client_metadata, dict) else {}
        )
        metadata.pop(WIRE_KEY, None)
        if ours:
            metadata[WIRE_KEY] = ours
        if metadata:
            values['metadata'] = metadata
        name = entry.get('name')
        if isinstance(name, str) and role in ('system', 'user', 'assistant'):
            values['name'] = name
    return construct(_MESSAGE_CLASSES[role], values)


def _stored_entries(message: m.ModelMessage, count: int) -> list[dict[str, Any]] | None:
    stored = (message.metadata or {}).get(METADATA_KEY)
    if not isinstance(stored, dict):
        return None
    entries = cast('dict[str, Any]', stored).get('messages')
    if not isinstance(entries, list):
        return None
    kept = [cast('dict[str, Any]', e) if isinstance(e, dict) else {} for e in cast('list[Any]', entries)]
    kept = [e for e in kept if not is_activity_entry(e)]  # written back on their own (`_activity`)
    return kept if len(kept) == count else None


def _derived_id(draft: Draft, index: int, position: int, used: set[str]) -> str:
    # Hashed from the AG-UI message itself (records included, so timestamps tell equal texts apart) and
    # its place in the history: stable across dumps and across changes to the neutral model's JSON.
    # pydantic-core writes the bytes directly (a third of dump_messages went to building them in Python).
    digest = _sha256(b'%d:%d:%b' % (index, position, _to_json(draft))).hexdigest()
    candidate = 'msg_' + digest[:24]
    if candidate not in used:
        return candidate
    salt = 0
    while candidate in used:
        salt += 1
        candidate = f'msg_{hashlib.sha256(f"{digest}:{salt}".encode()).hexdigest()[:24]}'
    return candidate


# ------------------------------------------------------------------------------------------- requests


def request_record(message: m.ModelRequest, *, follows_request: bool) -> dict[str, Any] | None:
    record: dict[str, Any] = {}
    if message.instructions is not None:
        record['instructions'] = message.instructions
    own_metadata = _own_metadata(message.metadata)
    if own_metadata:
        record['metadata'] = own_metadata
    if record or follows_request:
        return record
    return None


def _own_metadata(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a record's `metadata` holds: the application's metadata and, of uibridge's own keys, those this
    adapter has no other place for (`RECORD_METADATA_KEYS`), without the `client` marks of its calls, which
    ride (signed) on the calls themselves."""
    own = app_metadata(metadata, keep=RECORD_METADATA_KEYS)
    if own is None:
        return None
    answered = own.get(ANSWERED_BY_METADATA_KEY)
    if isinstance(answered, dict):
        others = {k: v for k, v in cast('dict[str, Any]', answered).items() if v != 'client'}
        if others:
            own[ANSWERED_BY_METADATA_KEY] = others
        else:
            del own[ANSWERED_BY_METADATA_KEY]
    return own


def _request_drafts(message: m.ModelRequest, keyring: Keyring, *, follows_request: bool) -> list[Draft]:
    drafts: list[Draft] = []
    for part in message.parts:
        if isinstance(part, m.SystemPromptPart):
            part_record: dict[str, Any] = {'timestamp': iso(part.timestamp)}
            if part.dynamic_ref is not None:
                part_record['dynamic_ref'] = part.dynamic_ref
            drafts.append({'role': 'system', 'content': part.content, '_uib': {'part': part_record}})
        elif isinstance(part, m.UserPromptPart):
            content = (
                part.content
                if isinstance(part.content, str)
                else [content_part(c) for c in part.content if not isinstance(c, m.OpaqueContent)]
            )
            drafts.append({'role': 'user', 'content': content, '_uib': {'part': {'timestamp': iso(part.timestamp)}}})
        elif isinstance(part, m.RetryFeedbackPart) or (isinstance(part, m.RetryPromptPart) and part.tool_name is None):
            drafts.append(feedback_message(part, keyring))
        elif isinstance(part, m.OpaquePart):
            continue  # kept in the history, shown to no UI
        else:
            drafts.append(tool_message(part, keyring))
    if drafts:
        record = request_record(message, follows_request=follows_request)
        if record is not None:
            drafts[0]['_uib'] = {'request': record, **drafts[0]['_uib']}
    return drafts


# ------------------------------------------------------------------------------------------ responses


def response_record(message: m.ModelResponse, keyring: Keyring | None = None) -> dict[str, Any]:
    """A response's record; with `keyring`, the signature of the state its metadata carries (`state_sig`, and its
    exact text `state_json` where the record's JSON object cannot give it back: `core.exact_json`)."""
    record = response_fields(message)
    own_metadata = _own_metadata(message.metadata)
    if own_metadata:
        record['metadata'] = own_metadata
        if keyring is not None and STATE_METADATA_KEY in own_metadata:
            state = own_metadata[STATE_METADATA_KEY]
            carry_exact(record, 'state', state)[STATE_SIG_KEY] = keyring.sign_state(state)
    return record


def _response_drafts(message: m.ModelResponse, keyring: Keyring) -> list[Draft]:
    drafts: list[Draft] = []
    answered = answered_by(message.metadata)
    for part in message.parts:
        if isinstance(part, m.TextPart):
            text_record: dict[str, Any] = {'id': part.id} if part.id is not None else {}
            text_record[SIG_KEY] = keyring.sign_part(part)
            if part.citations:
                text_record['citations'] = citations_json(part.citations)
            drafts.append({'role': 'assistant', 'content': part.content, '_uib': {'part': text_record}})
        elif isinstance(part, m.ToolCallPart | m.NativeToolCallPart):
            # An assistant message with empty text and no calls stands for an empty `TextPart`; a call
            # joining it would turn it into the empty placeholder a call-only message carries.
            if (
                not drafts
                or drafts[-1]['role'] != 'assistant'
                or not (drafts[-1]['content'] or 'toolCalls' in drafts[-1])
            ):
                drafts.append({'role': 'assistant', 'content': '', '_uib': {}})
            client = isinstance(part, m.ToolCallPart) and answered.get(part.tool_call_id) == 'client'
            drafts[-1].setdefault('toolCalls', []).append(
                tool_call_wire(part, call_record(part, keyring, client=client))
            )
        elif isinstance(part, m.ThinkingPart):
            draft: Draft = {
                'role': 'reasoning',
                'content': part.content,
                '_uib': {'part': {SIG_KEY: keyring.sign_part(part)}},
            }
            encrypted = thinking_marker(part)
            if encrypted is not None:
                draft['encryptedValue'] = encrypted
            drafts.append(draft)
        elif isinstance(part, m.NativeToolReturnPart):
            drafts.append(native_tool_message(part, keyring))
        elif isinstance(part, m.FilePart):
            drafts.append(file_message(part, keyring))
        # An `OpaquePart` is kept in the history and shown to no UI.
    if drafts:
        first = drafts[0]
        first['_uib'] = {'response': response_record(message, keyring), **first['_uib']}
        encrypted = finish_marker(message, keyring, first.get('encryptedValue'))
        if encrypted is not None:
            if first['role'] == 'activity':
                first['_uib']['encrypted'] = encrypted  # an activity message has no `encryptedValue`
            else:
                first['encryptedValue'] = encrypted
    return drafts
