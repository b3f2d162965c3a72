"""`load_messages`: AG-UI messages (SDK models or plain dicts) as a neutral history.

The inverse of `dump_messages`. Consecutive system / developer / user / tool messages form one
`ModelRequest`, consecutive assistant / reasoning messages one `ModelResponse`; a `request` / `response`
record (see `_wire`) starts a new one, so a history that dump wrote comes back with the same grouping.

- A `DeveloperMessage` loads as a system prompt (and `sanitize_messages` strips it like one).
- A `SystemMessage` becomes a `RetryFeedbackPart` (or the legacy tool-less `RetryPromptPart` the marker's
  `part_kind` names) only when its `encryptedValue` is a retry-feedback marker that validates and its `content`
  is exactly what that marker renders (`retry_feedback_from_marker`); text that merely reads like feedback, or
  feedback whose text was edited, stays a system prompt.
- An assistant message's content becomes a `TextPart` (empty content beside tool calls is the placeholder
  an announced tool-call message carries, not a part); its tool calls come back with their arguments as
  the dict they were (a JSON object string is parsed; anything else is kept as the string).
- A tool message must answer a tool call that an earlier assistant message made: otherwise `InputError`
  naming the message. It becomes a `ToolReturnPart` (`outcome='failed'` when `error` is set and no record
  says otherwise; content parts are a list of text and media, as a user prompt's, which dump writes back as the
  same parts) or, from dump's record, the tool-bound
  `RetryPromptPart` it was. A tool call or tool message whose record says `native: true` is a
  `NativeToolCallPart` / `NativeToolReturnPart` of the response; a text record's `citations` are the part's.
- `activity` messages are UI-only: no part of any message, but kept, in their place, in the metadata of the
  neutral message they sit in, so dump writes them back (`_activity`); so are content parts' `id` and
  `metadata` (`_part_extras`), a media part's `metadata.filename` aside, which is the part's file name. One
  activity type is pydantic-ai's record of a model's file (`pydantic_ai_file`): that response's `FilePart`,
  claiming no signature (`_peer_history`), so only the server's own history keeps it.

Given `claims`, the signature the client echoed beside each server-authored part (`sig` in the message's part
record, in a tool call's own `metadata.uibridge` with its `client` mark, or inside the retry-feedback
marker; see `dump`) is recorded there for the part built, for `verify_history`; the messages are the same
either way. A tool call marked `"client": true` comes back as a `client` entry of its response's
`metadata["uibridge_answered_by"]`; a `client` entry in a response record's `metadata` does not (only a
call's own mark, which its signature covers, says that a client tool answers it).

Forward compatibility (`validation`): a message with an unknown `role`, a content part with an unknown
`type`, or a media part with an unknown `source.type` is skipped with a `UserWarning`; so is a `file`
source, a provider's file handle the neutral model has no form for. The rest of the request still loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast, get_args

import pydantic
from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    DeveloperMessage,
    Message,
    ReasoningMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
)

from ...core.errors import InputError
from ...core.events import STATE_METADATA_KEY
from ...core.exact_json import carried_value, read_exact
from ...core.json_text import tool_args
from ...core.messages import (
    ErrorDetails,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnOutcome,
    ToolReturnPart,
)
from ...core.metadata import ANSWERED_BY_METADATA_KEY, app_metadata
from ...core.provenance import SIGNED_FINISH_REASONS
from ...core.records import read_response_fields
from ...core.trusted import construct
from ...core.verification import SignatureClaims
from ._activity import activity_entry, unplaced_warning
from ._load_parts import (
    citations,
    part_timestamp,
    system_part,
    text_field,
    thinking_part,
    user_content,
    user_part,
)
from ._part_extras import EXTRAS_KEY, content_part_extras
from ._peer_history import peer_file, peer_message
from ._validation import client_part_numbered, prefilter_message, validation_error
from ._wire import (
    CUT_RESULT_KEY,
    MARKER_START,
    METADATA_KEY,
    RECORD_METADATA_KEYS,
    SIG_KEY,
    STATE_SIG_KEY,
    WIRE_KEY,
    message_adapter,
    read_marker,
    records,
)

_OUTCOMES: frozenset[str] = frozenset(get_args(ToolReturnOutcome))
_errors_adapter = pydantic.TypeAdapter(list[ErrorDetails])


def load_messages(
    messages: Sequence[Message | Mapping[str, Any]], *, claims: SignatureClaims | None = None
) -> list[ModelMessage]:
    """Raises `InputError` (path `<index>.<field>`) for a message the neutral model cannot take.

    `claims`, when given, receives the signature the client sent beside each part (see the module docstring).
    """
    loader = _Loader(claims)
    add = loader.add
    for index, raw in enumerate(messages):
        message = raw if isinstance(raw, pydantic.BaseModel) else _coerce(raw, str(index))
        if message is not None:
            add(message, index)
    return loader.finish()


def _coerce(raw: Any, path: str) -> Message | None:
    filtered = prefilter_message(raw, path)
    if filtered is None:
        return None
    message, part_indexes = filtered
    try:
        return message_adapter.validate_python(message)
    except pydantic.ValidationError as e:
        raise client_part_numbered(validation_error(e), part_indexes).at(path) from None


# ------------------------------------------------------------------------------------- conversion

_NO_RECORD: dict[str, Any] = {}
"""Read only: what a message without records reads as."""
_NAMED_ROLES = frozenset({'developer', 'system', 'assistant', 'user'})
_RESPONSE_ROLES = frozenset({'assistant', 'reasoning', 'activity'})
"""The roles of a response's messages; an activity message that reaches there is a model's file (`peer_file`)."""
"""The roles whose SDK model has a `name` field (on the others a `name` can only be an unknown key)."""


class _Loader:
    """Consecutive AG-UI messages of one side become one `ModelMessage`: the open group is `side` (`None`
    when there is none), its `record`, its `parts` and the `entries` that remember its AG-UI messages."""

    def __init__(self, claims: SignatureClaims | None) -> None:
        self.claims = claims
        self.result: list[ModelMessage] = []
        self.calls: dict[str, str] = {}
        self.side: Literal['request', 'response'] | None = None
        self.record: dict[str, Any] | None = None
        self.parts: list[Any] = []
        self.entries: list[dict[str, Any]] = []
        self.client_calls: list[str] = []
        """The calls of the open response marked `"client": true`."""
        self.early_activity: list[dict[str, Any]] = []
        """Activity messages met before any other message: kept by the first one."""
        self.finish_payload: Any = None
        """The `finish` marker of the open response's first message, as the client sent it."""
        self.state_payload: Any = None
        """The `state` marker of the open response's first message (a state set after its record went out)."""
        self.cut_results: list[ToolMessage] = []
        """The tool messages the last assistant message's cut-off calls carried (`CUT_RESULT_KEY`)."""

    def add(self, message: Message, index: int) -> None:
        file: FilePart | None = None
        if isinstance(message, ActivityMessage):
            file = peer_file(message)
            if file is None:  # UI-only: kept in place (`_activity`)
                (self.entries if self.side is not None else self.early_activity).append(activity_entry(message))
                return
            encrypted = None
        else:
            # pydantic-ai keeps its records in `encryptedValue` (`_peer_history`); uibridge's own markers, most of
            # those a history holds, are told by their start without a call.
            encrypted = message.encrypted_value
            if encrypted is not None and not (type(encrypted) is str and encrypted.startswith(MARKER_START)):
                message = peer_message(message) or message
        role = message.role
        metadata = message.metadata
        ours = records(metadata) if metadata else _NO_RECORD
        if file is not None and isinstance(ours.get('encrypted'), str):
            encrypted = ours['encrypted']  # the markers of a response whose first AG-UI message is a file
        part_record: dict[str, Any] = ours.get('part', _NO_RECORD) if ours else _NO_RECORD
        if not isinstance(part_record, dict):  # pyright: ignore[reportUnnecessaryIsInstance]: a client's copy
            part_record = _NO_RECORD
        side: Literal['request', 'response'] = 'response' if role in _RESPONSE_ROLES else 'request'
        if role == 'tool' and part_record.get('native') is True:
            side = 'response'  # what a provider-run tool returned is a part of the response that called it
        own = ours.get(side)
        if not isinstance(own, dict):
            own = None
        if side != self.side or (own is not None and self.entries):
            self._flush()
            self.side = side
            self.record = own  # pyright: ignore[reportUnknownMemberType]
            if side == 'response' and encrypted is not None:
                self.finish_payload = read_marker(encrypted, 'finish')
                self.state_payload = read_marker(encrypted, 'state')
        if self.early_activity:
            self.entries.extend(self.early_activity)
            self.early_activity = []
        entry: dict[str, Any] = {'id': message.id}
        # `getattr` as before, but only where it finds something: on a tool or reasoning message a `name`
        # can only be an unknown key the SDK keeps (and a failed `getattr` costs pydantic an exception).
        name = getattr(message, 'name', None) if role in _NAMED_ROLES or message.model_extra else None
        if isinstance(name, str):
            entry['name'] = name
        if metadata and (len(metadata) > 1 or WIRE_KEY not in metadata):
            entry['metadata'] = {k: v for k, v in metadata.items() if k != WIRE_KEY}
        self.entries.append(entry)
        parts = self.parts
        claims = self.claims
        if file is not None:
            filename = part_record.get('filename')
            if isinstance(filename, str):
                file.content.filename = filename
            if claims is not None:
                claims.add(file, part_record.get(SIG_KEY))
            parts.append(file)
        elif isinstance(message, AssistantMessage):
            self._assistant(message, part_record, parts)
            if self.cut_results:
                results, self.cut_results = self.cut_results, []
                for result in results:
                    self.add(result, index)
        elif isinstance(message, ToolMessage):
            part = self._native_return(message, part_record, index) if side == 'response' else None
            part = part or self._tool(message, part_record, index)
            if not isinstance(message.content, str):
                entry['content_parts'] = True  # so dump writes the parts back, not their JSON text
                _keep_part_extras(entry, message.content)
            if claims is not None:
                claims.add(part, part_record.get(SIG_KEY))
            parts.append(part)
        elif isinstance(message, ReasoningMessage):
            thinking = thinking_part(message)
            if claims is not None:
                claims.add(thinking, part_record.get(SIG_KEY))
            parts.append(thinking)
        elif isinstance(message, UserMessage):
            parts.append(user_part(message, part_record, index))
            if not isinstance(message.content, str):
                _keep_part_extras(entry, message.content)
        else:
            assert isinstance(message, (SystemMessage, DeveloperMessage))
            parts.append(system_part(message, part_record, claims))

    def finish(self) -> list[ModelMessage]:
        self._flush()
        if self.early_activity:
            unplaced_warning(len(self.early_activity))
        return self.result

    def _flush(self) -> None:
        # The messages are built without validating them again (`core.trusted.construct`): the parts are
        # validated models and the rest is checked field by field here, exactly what validation would keep.
        side = self.side
        if side is None:
            return
        rec = self.record or _NO_RECORD
        parts = self.parts
        entries = self.entries
        client_calls = self.client_calls
        self.side = self.record = None
        self.parts = []
        self.entries = []
        own_metadata = rec.get('metadata')
        metadata: dict[str, Any] = {}
        if isinstance(own_metadata, dict):
            metadata = app_metadata(cast('dict[str, Any]', own_metadata), keep=RECORD_METADATA_KEYS) or {}
        if side == 'response' and (client_calls or ANSWERED_BY_METADATA_KEY in metadata):
            _answered_by(metadata, client_calls)
            self.client_calls = []
        metadata[METADATA_KEY] = {'messages': entries}
        if side == 'request':
            instructions = rec.get('instructions')
            values: dict[str, Any] = {
                'parts': parts,
                'instructions': instructions if isinstance(instructions, str) else None,
                'metadata': metadata,
            }
            self.result.append(construct(ModelRequest, values))
            return
        values = {'parts': parts, 'metadata': metadata}
        if rec:
            values.update(read_response_fields(rec))
        state_sig = None
        late: Any = self.state_payload
        self.state_payload = None
        if isinstance(late, dict) and 'state' in late:  # set after the record went out: it replaces the record's
            late = cast('dict[str, Any]', late)
            metadata[STATE_METADATA_KEY] = carried_value(late, 'state', late['state'])
            state_sig = late.get(STATE_SIG_KEY)
        elif STATE_METADATA_KEY in metadata:
            metadata[STATE_METADATA_KEY] = carried_value(rec, 'state', metadata[STATE_METADATA_KEY])
            state_sig = rec.get(STATE_SIG_KEY)
        held: Any = self.finish_payload
        finish: dict[str, Any] | None = cast('dict[str, Any]', held) if isinstance(held, dict) else None
        self.finish_payload = None
        reason = finish.get('finish_reason') if finish is not None else None
        if reason in SIGNED_FINISH_REASONS:
            values['finish_reason'] = reason
        response = construct(ModelResponse, values)
        if state_sig is not None and self.claims is not None:
            self.claims.add_state(response, state_sig)
        if reason in SIGNED_FINISH_REASONS and self.claims is not None:
            self.claims.add_finish(response, finish.get(SIG_KEY) if finish is not None else None)
        self.result.append(response)

    def _assistant(self, message: AssistantMessage, part_record: dict[str, Any], parts: list[Any]) -> None:
        calls = message.tool_calls or ()
        content = message.content
        claims = self.claims
        if content or (content is not None and not calls):
            text_id = part_record.get('id')
            text_fields: dict[str, Any] = {'content': content, 'id': text_id if isinstance(text_id, str) else None}
            if 'citations' in part_record:
                text_fields['citations'] = citations(part_record['citations'])
            text = construct(TextPart, text_fields)
            if claims is not None:
                claims.add(text, part_record.get(SIG_KEY))
            parts.append(text)
        for call in calls:
            function = call.function
            call_id = call.id
            tool_name = function.name
            self.calls[call_id] = tool_name
            fields = {'tool_name': tool_name, 'args': tool_args(function.arguments), 'tool_call_id': call_id}
            call_metadata = call.metadata
            record = records(call_metadata) if call_metadata else _NO_RECORD
            if record and record.get('native') is True:
                native = construct(NativeToolCallPart, {**fields, 'provider_name': text_field(record, 'provider_name')})
                if claims is not None:
                    claims.add(native, record.get(SIG_KEY))
                parts.append(native)
                continue
            part = construct(ToolCallPart, fields)
            if record:
                if CUT_RESULT_KEY in record:
                    self._cut_result(record[CUT_RESULT_KEY], call_id)
                client = record.get('client') is True
                if client:
                    self.client_calls.append(call_id)
                if claims is not None:
                    claims.add(part, record.get(SIG_KEY), client=client)
            parts.append(part)

    def _cut_result(self, value: Any, call_id: str) -> None:
        """The tool message a cut-off call carried, to load right after its assistant message; what is no tool
        message for this call is ignored (it proves nothing: its part verifies like any other, or drops)."""
        if not isinstance(value, dict):
            return
        try:
            message = ToolMessage.model_validate(value)
        except pydantic.ValidationError:
            return
        if message.tool_call_id == call_id:
            self.cut_results.append(message)

    def _tool(self, message: ToolMessage, part_record: dict[str, Any], index: int) -> ModelRequestPart:
        call_id = message.tool_call_id
        tool_name = self.calls.get(call_id)
        if tool_name is None:
            raise InputError(
                'a tool message answers a tool call that no earlier assistant message made', f'{index}.toolCallId'
            )
        fields: dict[str, Any] = {'tool_name': tool_name, 'tool_call_id': call_id}
        timestamp = part_timestamp(part_record)
        if timestamp is not None:
            fields['timestamp'] = timestamp
        as_json = part_record.get('json') is True
        sent = message.content
        content: Any
        if isinstance(sent, str):
            content = sent
            if as_json:
                # Only JSON written exactly as the server writes it: other text (a duplicate key, spacing) stays
                # text, which verifies as nothing the server signed.
                as_json, read = read_exact(sent)
                if as_json:
                    content = read
        else:
            content = user_content(sent, index)
        if part_record.get('kind') == 'retry-prompt':
            retry_content: list[ErrorDetails] | str = content if isinstance(content, str) else str(sent)
            if as_json:
                try:
                    retry_content = _errors_adapter.validate_python(content)
                except pydantic.ValidationError:
                    retry_content = sent if isinstance(sent, str) else ''
            fields['content'] = retry_content
            return construct(RetryPromptPart, fields)
        error = message.error
        outcome = part_record.get('outcome')
        if not (isinstance(outcome, str) and outcome in _OUTCOMES):
            outcome = 'failed' if error is not None else 'success'
        if content == '' and error:
            # A failure told only in `error` (AG-UI keeps it beside the content): the model is shown why.
            content = error
        fields['content'] = content
        fields['outcome'] = outcome
        fields['metadata'] = carried_value(part_record, 'metadata', part_record.get('metadata'))
        return construct(ToolReturnPart, fields)

    def _native_return(self, message: ToolMessage, part_record: dict[str, Any], index: int) -> ModelResponsePart | None:
        """What a provider-run tool returned (a tool message whose record says `native: true`), as dump wrote it."""
        tool_name = self.calls.get(message.tool_call_id)
        if tool_name is None:
            return None  # no call to answer: `_tool` says so
        content: Any = message.content
        if isinstance(content, str):
            if part_record.get('json') is True:
                exact, read = read_exact(content)
                content = read if exact else content
        else:
            content = user_content(content, index)
        fields: dict[str, Any] = {
            'tool_name': tool_name,
            'content': content,
            'tool_call_id': message.tool_call_id,
            'provider_name': text_field(part_record, 'provider_name'),
        }
        timestamp = part_timestamp(part_record)
        if timestamp is not None:
            fields['timestamp'] = timestamp
        return construct(NativeToolReturnPart, fields)


def _keep_part_extras(entry: dict[str, Any], parts: Sequence[Any]) -> None:
    extras = content_part_extras(parts)
    if extras is not None:
        entry[EXTRAS_KEY] = extras


def _answered_by(metadata: dict[str, Any], client_calls: list[str]) -> None:
    """`metadata`'s answered-by marks: the record's own without its `client` entries (a record is not signed),
    and one `client` entry per call marked `"client": true` (a mark its signature covers)."""
    recorded = metadata.get(ANSWERED_BY_METADATA_KEY)
    marks: dict[str, Any] = {}
    if isinstance(recorded, dict):
        marks = {k: v for k, v in cast('dict[str, Any]', recorded).items() if v != 'client'}
    for call_id in client_calls:
        marks[call_id] = 'client'
    if marks:
        metadata[ANSWERED_BY_METADATA_KEY] = marks
    else:
        metadata.pop(ANSWERED_BY_METADATA_KEY, None)
