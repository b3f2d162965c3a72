"""What each major version of the `ai` client (5, 6, 7) accepts, and the UI messages written for it.

uibridge's chunk and part models (`chunks.py`, `types.py`) are `ai` 7's. An older client refuses a chunk or a
part whose `type` it does not know (the stream dies with `AI_TypeValidationError`), and drops fields it does
not know. So for `sdk_version` 5 or 6 the stream (`ChunkDowngrade`, below) and `dump_messages` write only what that
version declares: `CHUNK_FIELDS[version]` and `PART_FIELDS[version]` are each model's wire keys minus what
`_CHUNK_SINCE` / `_PART_SINCE` say came later, so a field added to a model is written for an older client
only once someone says which versions know it (tests/adapters/vercel_ai/test_sdk_versions.py holds these
tables to each installed client's own schema, so they cannot drift). Nothing changes for 7.

What is missing, and how uibridge degrades (read from each version's `ui-message-chunks.ts`,
`ui-messages.ts`, `process-ui-message-stream.ts` and `validate-ui-messages.ts`):

- approval request. 7 and 6: `tool-approval-request`. 5 has no approvals: the call stays `input-available`,
  its call metadata marked `approval: true` with the `approval_id`; the app answers with
  `addToolResult({output: {approved, reason?}})`, which `load_messages` reads back as the approval
  (`upgrade_message`), so the request's approvals and the run are those of 6 and 7.
- a denial's result metadata (its signature). 7: `tool-approval-response`, which replaces the call metadata.
  6 has no such chunk: the call's `tool-input-available` repeated with the new call metadata, then
  `tool-output-denied`. 5: the same repeat, then `tool-output-error` (5 has no denied state) whose result
  metadata says `outcome: denied`.
- a denial nobody asked for. 7: an approval request answered `false` at once. 6 cannot write
  `approved: false` (and `output-denied` needs it) and 5 has no approvals: `tool-output-error`, as above.
- a result's metadata. 7 and 6: `resultProviderMetadata`. 5 has none: under `result` in the call metadata,
  carried by the call's `tool-input-available` (held until its result for a server tool, else repeated; a
  provider-executed call's is never held, and its repeat runs no `onToolCall`). A native return's signature,
  timestamp and position ride there too.
- dropped for 6 and 5: `text-end.citations`, the `custom`, `reasoning-file`, `steering-message` and
  `reset-step` chunks and parts, `tool-approval-request.reason` / `isAutomatic`, the finish reason
  `interrupted` (sent as `other`), a tool part's `title`, `text.citations`, `file.providerReference` (a user's
  provider file keeps it in its `uibridge` metadata instead, so it loads back as that provider file).
- dropped for 5 only: `tool-input-start.providerMetadata` / `inputEncoding` / `toolMetadata` / `title`,
  `toolMetadata` and `title` on the other tool chunks, `providerMetadata` on tool outputs, `abort.reason`,
  and on tool parts `toolMetadata`, `inputEncoding`, `resultProviderMetadata`, `approval`.
- lost by 5 itself: it declares a `file` chunk's `providerMetadata` but keeps none of it, so a file the model
  made reaches it unsigned (and without its response's info when it opens the response): the next turn's
  `verify_history` drops that file.

A repeated `tool-input-available` makes an `ai` 5 or 6 client call `onToolCall` for that call once more
(only after an approval, or a result of a call sent before it): an app's `onToolCall` must ignore calls it
does not run, as it does for server tools. Loading takes every version's form, whatever the setting.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeAlias, cast, get_args

from pydantic import BaseModel

from ...core.json_text import compact_json, sse_data
from ...core.tagged_unions import union_members
from ._provider_metadata import DENIED, PROVIDER_KEY
from .chunks import FinishReasonUI, UIMessageChunk
from .types import (
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessage,
    UIMessagePart,
    UIModel,
    UnknownUIPart,
)

SdkVersion: TypeAlias = Literal[5, 6, 7]
SDK_VERSIONS: tuple[SdkVersion, ...] = get_args(SdkVersion)

_TOOL_INPUTS = ('tool-input-available', 'tool-input-error')
_TOOL_OUTPUTS = ('tool-output-available', 'tool-output-error')
_CHUNK_SINCE: dict[str, int] = {
    'tool-approval-request': 6,
    'tool-approval-request.reason': 7,
    'tool-approval-request.isAutomatic': 7,
    'tool-approval-response': 7,
    'tool-output-denied': 6,
    'custom': 7,
    'reasoning-file': 7,
    'steering-message': 7,
    'reset-step': 7,
    'text-end.citations': 7,
    'abort.reason': 6,
    **{f'tool-input-start.{key}': 6 for key in ('inputEncoding', 'providerMetadata', 'toolMetadata', 'title')},
    **{
        f'{chunk}.{key}': 6
        for chunk in ('tool-input-available', 'tool-input-error')
        for key in ('toolMetadata', 'title')
    },
    **{f'{chunk}.{key}': 6 for chunk in _TOOL_OUTPUTS for key in ('providerMetadata', 'toolMetadata')},
}
"""What came after `ai` 5 in the `ai` 7 chunk models: the first version with that chunk type or `type.field`."""

_PART_SINCE: dict[str, int] = {
    'custom': 7,
    'reasoning-file': 7,
    'steering-message': 7,
    'unknown': 8,  # a part no version knows (kept from a newer client): never written for an older one
    'text.citations': 7,
    'file.providerReference': 7,
    **{f'{tool}.title': 7 for tool in ('tool', 'dynamic-tool')},
    **{
        f'{tool}.{key}': 6
        for tool in ('tool', 'dynamic-tool')
        for key in ('toolMetadata', 'inputEncoding', 'resultProviderMetadata', 'approval')
    },
    'approval.requestReason': 7,
    'approval.isAutomatic': 7,
}
"""The same for the UI message parts (`approval.*`: the approval object of a tool part)."""

_FINISH_SINCE: dict[str, int] = {'interrupted': 7}


def _wire_keys(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _table(models: dict[str, type[BaseModel]], since: dict[str, int], version: int) -> dict[str, frozenset[str]]:
    return {
        tag: frozenset(key for key in _wire_keys(model) if since.get(f'{tag}.{key}', 5) <= version)
        for tag, model in models.items()
        if since.get(tag, 5) <= version
    }


_PART_MODELS = {**union_members(UIMessagePart), 'approval': ToolApprovalUI}
CHUNK_FIELDS: dict[int, dict[str, frozenset[str]]] = {
    version: _table(union_members(UIMessageChunk), _CHUNK_SINCE, version) for version in SDK_VERSIONS
}
"""Per version, each chunk type it accepts (`data` for every `data-*`) and the keys it reads of it."""
PART_FIELDS: dict[int, dict[str, frozenset[str]]] = {
    version: _table(_PART_MODELS, _PART_SINCE, version) for version in SDK_VERSIONS
}
"""Per version, each UI part kind it accepts (`tool` for `tool-*`, `data` for `data-*`) and its keys."""
FINISH_REASONS: dict[int, frozenset[str]] = {
    version: frozenset(r for r in get_args(FinishReasonUI) if _FINISH_SINCE.get(r, 5) <= version)
    for version in SDK_VERSIONS
}


def chunk_tag(chunk_type: str) -> str:
    return 'data' if chunk_type.startswith('data-') else chunk_type


def _part_tag(part: UIMessagePart) -> str:
    if isinstance(part, ToolUIPart):
        return 'tool'
    if isinstance(part, DataUIPart):
        return 'data'
    return 'unknown' if isinstance(part, UnknownUIPart) else part.type


def denial_error_text(result: Any, reason: str | None) -> str:
    """The `errorText` a denial is written with where the client has no denied state: what `load_messages`
    reads back as the denial's content (its result metadata's `content`, else the reason, else the default)."""
    content = cast('dict[str, Any]', result).get('content') if isinstance(result, dict) else None
    if content is not None:
        return content if isinstance(content, str) else compact_json(content)
    return reason or DENIED


# ------------------------------------------------------------------------------------- dump_messages


def downgrade_messages(messages: list[UIMessage], version: SdkVersion) -> list[UIMessage]:
    """`messages` (as `dump_messages` writes them for `ai` 7) as the client of `version` takes them; the ids
    stay, so a message has the same id whichever version it was written for."""
    if version == 7:
        return messages
    return [_downgrade_message(message, version) for message in messages]


def _downgrade_message(message: UIMessage, version: SdkVersion) -> UIMessage:
    fields = PART_FIELDS[version]
    parts: list[UIMessagePart] = []
    for part in message.parts:
        tag = _part_tag(part)
        if tag not in fields:
            continue  # a part this client would refuse: it only ever shows UI data
        if version == 5 and isinstance(part, ToolUIPart | DynamicToolUIPart):
            part = _v5_tool_part(part)
        elif isinstance(part, FileUIPart) and part.provider_reference is not None and message.role == 'user':
            # A provider file a user sent: the reference rides in uibridge's metadata, so the file loads back as
            # that provider file (what the model is sent), not as its link.
            reference = _with_ours(part.provider_metadata, {'provider_reference': part.provider_reference})
            part = part.model_copy(update={'provider_metadata': reference})
        parts.append(_strip(part, fields[tag], version))
    return message.model_copy(update={'parts': parts})


def _strip(part: UIModel, keys: frozenset[str], version: SdkVersion) -> Any:
    """`part` without the fields `keys` leaves out (`None` is not written), and its approval stripped alike."""
    update: dict[str, Any] = {
        name: None
        for name, info in type(part).model_fields.items()
        if (info.alias or name) not in keys and getattr(part, name) is not None
    }
    approval = getattr(part, 'approval', None)
    if isinstance(approval, ToolApprovalUI) and 'approval' not in update:
        stripped = _strip(approval, PART_FIELDS[version]['approval'], version)
        if stripped is not approval:
            update['approval'] = stripped
    return part.model_copy(update=update) if update else part


def _v5_tool_part(part: ToolUIPart | DynamicToolUIPart) -> ToolUIPart | DynamicToolUIPart:
    """The `ai` 5 form (see the module docstring): no approval, no result metadata, no denied state."""
    call = dict(part.call_provider_metadata or {})
    ours = dict(call.get(PROVIDER_KEY) or {})
    result = (part.result_provider_metadata or {}).get(PROVIDER_KEY)
    if result is not None:
        ours['result'] = result
    update: dict[str, Any] = {'approval': None, 'result_provider_metadata': None}
    approval = part.approval
    if part.state in ('approval-requested', 'approval-responded') and approval is not None:
        ours['approval_id'] = approval.id
        if part.state == 'approval-responded':
            answer: dict[str, Any] = {'approved': approval.approved}
            if approval.reason is not None:
                answer['reason'] = approval.reason
            update.update(state='output-available', output=answer)
        else:
            update['state'] = 'input-available'
    elif part.state == 'output-denied':
        result = dict(ours.get('result') or {})
        reason = approval.reason if approval is not None else None
        update.update(state='output-error', error_text=denial_error_text(result, reason))
        ours['result'] = {**result, 'outcome': 'denied'}
    if ours:
        call[PROVIDER_KEY] = ours
    update['call_provider_metadata'] = call or None
    return part.model_copy(update=update)


# ------------------------------------------------------------------------------------- load_messages


_TOOL_PARTS: frozenset[type[UIMessagePart]] = frozenset({ToolUIPart, DynamicToolUIPart})


def upgrade_message(message: UIMessage) -> UIMessage:
    """`message` with each `ai` 5 approval answer (a call marked for approval whose output the app set to
    `{approved, reason?}` with `addToolResult`, and which has no result of the server's) as the
    `approval-responded` part an `ai` 6 or 7 client sends, and each approval still waiting (such a call still
    `input-available`, its `approval_id` beside the mark) as the `approval-requested` part they hold: loading and
    the request's approvals read one form, and the approval's id is kept. Returns `message` itself when it holds
    neither, as nearly every message does.

    Runs for every message a request holds, just validated from JSON: its parts are of the union's own classes
    (no subclass), so an exact class test finds the tool parts, cheaper than the `isinstance` that fails."""
    if message.role != 'assistant':
        return message
    parts: list[UIMessagePart] | None = None
    for index, part in enumerate(message.parts):
        if type(part) not in _TOOL_PARTS:
            continue
        tool = cast('ToolUIPart | DynamicToolUIPart', part)
        if tool.state == 'output-available':
            approval = _v5_answer(tool)
            update: dict[str, Any] = {'state': 'approval-responded', 'output': None, 'approval': approval}
        elif tool.state == 'input-available':
            approval = _v5_waiting(tool)
            update = {'state': 'approval-requested', 'approval': approval}
        else:
            continue
        if approval is not None:
            parts = parts if parts is not None else list(message.parts)
            parts[index] = part.model_copy(update=update)
    return message if parts is None else message.model_copy(update={'parts': parts})


_ANSWER_KEYS = frozenset({'approved', 'reason'})


def _v5_marked(part: ToolUIPart | DynamicToolUIPart) -> dict[str, Any] | None:
    """The `uibridge` call metadata of an `ai` 5 call marked for approval that has no result of the server's."""
    if part.approval is not None or part.result_provider_metadata is not None or not part.call_provider_metadata:
        return None
    ours = part.call_provider_metadata.get(PROVIDER_KEY)
    if ours is None or ours.get('approval') is not True or 'result' in ours:
        return None
    return ours


def _v5_waiting(part: ToolUIPart | DynamicToolUIPart) -> ToolApprovalUI | None:
    ours = _v5_marked(part)
    approval_id = ours.get('approval_id') if ours is not None else None
    return ToolApprovalUI(id=approval_id) if isinstance(approval_id, str) else None


def _v5_answer(part: ToolUIPart | DynamicToolUIPart) -> ToolApprovalUI | None:
    ours = _v5_marked(part)
    if ours is None:
        return None
    approval_id, output = ours.get('approval_id'), part.output
    if not isinstance(approval_id, str) or not isinstance(output, dict):
        return None
    output = cast('dict[str, Any]', output)
    approved, reason = output.get('approved'), output.get('reason')
    if not isinstance(approved, bool) or not isinstance(reason, str | None) or not set(output) <= _ANSWER_KEYS:
        return None
    return ToolApprovalUI(id=approval_id, approved=approved, reason=reason)


# ----------------------------------------------------------------------------------------------------
# `ChunkDowngrade`: the `ai` 7 UI message stream `VercelAIEventStream` writes, as an `ai` 5 or 6 client takes it.
#
# It reads the stream's bytes back, chunk by chunk, and writes what the tables above say the version accepts,
# with the approval flow degraded as this module's docstring tables it. Deltas and step bounds are the same in every
# version and pass through as they are, unparsed; the other chunks are parsed and written again, which costs
# a few microseconds each: paid only by a server that chose an older client, never by the `ai` 7 stream.
#
# It is stateful across one stream: it remembers each call's last `tool-input-available` (the only chunk an
# older client takes call metadata from), which approval id names which call, and the calls of the message
# the run continues, so that metadata `ai` 7 carries elsewhere can ride on the call.

_SAME_IN_EVERY_VERSION = (
    b'data: {"type":"text-delta"',
    b'data: {"type":"reasoning-delta"',
    b'data: {"type":"tool-input-delta"',
    b'data: {"type":"start-step"',
    b'data: {"type":"finish-step"',
    b'data: [DONE]',
)

_Chunk = dict[str, Any]


class ChunkDowngrade:
    """Call it on each piece of the stream (`start()`, every `encode(...)`): it returns the piece for `version`.
    `continued`: the assistant message the run continues, as the client sent it."""

    def __init__(self, version: SdkVersion, continued: UIMessage | None = None) -> None:
        self._fields = CHUNK_FIELDS[version]
        self._finish_reasons = FINISH_REASONS[version]
        self._v5 = version == 5
        self._continued: dict[str, ToolUIPart | DynamicToolUIPart] = {}
        self._approval_calls: dict[str, str] = {}
        """Approval id -> tool call id: `tool-approval-response` names only the approval."""
        for part in continued.parts if continued is not None else ():
            if isinstance(part, ToolUIPart | DynamicToolUIPart):
                self._continued[part.tool_call_id] = part
                if part.approval is not None:
                    self._approval_calls[part.approval.id] = part.tool_call_id
        self._calls: dict[str, _Chunk] = {}
        """Each call's last `tool-input-available`, as sent."""
        self._dynamic = {call_id for call_id, part in self._continued.items() if isinstance(part, DynamicToolUIPart)}
        """Calls to tools the UI does not know by name: a denial written as an error says so (`ai` 5 looks a
        dynamic call's part up only then)."""
        self._denials: dict[str, str | None] = {}
        """A call whose denial was announced: the error text its `tool-output-denied` becomes, or `None` to keep it."""
        self._unasked: set[str] = set()
        """Calls denied with no approval asked of the client (a request answered `false` in the same piece)."""
        self._out: list[bytes | _Chunk] = []
        self._in_piece: dict[str, int] = {}
        """Calls whose `tool-input-available` is in this piece, not sent yet: where, in `_out`."""

    def __call__(self, data: bytes) -> bytes:
        if not data:
            return data
        self._out, self._in_piece = [], {}
        frames = data.split(b'\n\n')[:-1]  # every frame ends with a blank line; JSON holds no raw newline
        for index, frame in enumerate(frames):
            if frame.startswith(_SAME_IN_EVERY_VERSION):
                self._out.append(frame + b'\n\n')
                continue
            chunk: _Chunk = json.loads(frame[len(b'data: ') :])
            following = frames[index + 1] if index + 1 < len(frames) else b''
            self._chunk(chunk, following)
        return b''.join(item if isinstance(item, bytes) else sse_data(item) for item in self._out)

    def _chunk(self, chunk: _Chunk, following: bytes) -> None:
        kind = chunk['type']
        if kind == 'tool-approval-request':
            self._approval_request(chunk, following)
        elif kind == 'tool-approval-response':
            self._approval_response(chunk)
        elif kind == 'tool-output-denied':
            self._output_denied(chunk)
        else:
            if self._v5 and kind in ('tool-output-available', 'tool-output-error'):
                self._v5_result(chunk)
            elif kind == 'finish' and chunk.get('finishReason', 'other') not in self._finish_reasons:
                chunk['finishReason'] = 'other'
            self._emit(chunk)

    def _emit(self, chunk: _Chunk) -> None:
        keys = self._fields.get(chunk_tag(chunk['type']))
        if keys is None:
            return  # a chunk type this client does not know: it would end the stream
        if chunk.get('dynamic') is True:
            self._dynamic.add(chunk['toolCallId'])
        chunk = {key: value for key, value in chunk.items() if key in keys}
        if chunk['type'] == 'tool-input-available':
            self._calls[chunk['toolCallId']] = chunk
            self._in_piece[chunk['toolCallId']] = len(self._out)
        self._out.append(chunk)

    # ------------------------------------------------------------------------------------ approvals

    def _approval_request(self, chunk: _Chunk, following: bytes) -> None:
        approval_id, call_id = chunk['approvalId'], chunk['toolCallId']
        self._approval_calls[approval_id] = call_id
        if following.startswith(b'data: {"type":"tool-approval-response"'):
            answer = json.loads(following[len(b'data: ') :])
            if answer.get('approvalId') == approval_id:
                self._unasked.add(call_id)  # no approval on the call then: its denial is an error
                return
        if self._v5:
            metadata = self._call_metadata(call_id)
            self._set_call_metadata(call_id, _with_ours(metadata, {'approval_id': approval_id}))
            return
        self._emit(chunk)

    def _approval_response(self, chunk: _Chunk) -> None:
        call_id = self._approval_calls.get(chunk['approvalId'])
        if call_id is None or chunk.get('approved') is not False:
            return  # the stream sends only denials this way
        metadata = chunk.get('providerMetadata')
        ours = _ours(metadata)
        # `ai` 6 keeps the denied state when the client answered the approval itself; otherwise an error.
        if call_id not in self._unasked and not self._v5:
            self._denials[call_id] = None
        else:
            part = self._continued.get(call_id)
            client_reason = part.approval.reason if part is not None and part.approval is not None else None
            result = ours.get('result')
            self._denials[call_id] = denial_error_text(result, chunk.get('reason') or client_reason)
            if isinstance(result, dict):
                metadata = _with_ours(metadata, {'result': {**cast('dict[str, Any]', result), 'outcome': 'denied'}})
        if metadata is not None:
            self._set_call_metadata(call_id, metadata)

    def _output_denied(self, chunk: _Chunk) -> None:
        call_id = chunk['toolCallId']
        text = self._denials.pop(call_id, DENIED if self._v5 else None)
        if text is None:
            self._emit(chunk)
        else:
            error: _Chunk = {'type': 'tool-output-error', 'toolCallId': call_id, 'errorText': text}
            if call_id in self._dynamic:
                error['dynamic'] = True
            self._emit(error)

    def _v5_result(self, chunk: _Chunk) -> None:
        """A result's metadata, which an `ai` 5 client keeps nowhere, under `result` in the call metadata."""
        result = _ours(chunk.get('providerMetadata')) or None
        if result is not None:
            call_id = chunk['toolCallId']
            self._set_call_metadata(call_id, _with_ours(self._call_metadata(call_id), {'result': result}))

    # -------------------------------------------------------------------------------- call metadata

    def _call_metadata(self, call_id: str) -> Any:
        sent = self._calls.get(call_id)
        if sent is not None:
            return sent.get('providerMetadata')
        part = self._continued.get(call_id)
        return part.call_provider_metadata if part is not None else None

    def _set_call_metadata(self, call_id: str, metadata: Any) -> None:
        """Give the call `metadata`: in its `tool-input-available` when this piece still holds it, else in
        that chunk repeated (an older client takes call metadata from nothing else)."""
        at = self._in_piece.get(call_id)
        if at is not None:
            chunk = cast('_Chunk', self._out[at])
            chunk['providerMetadata'] = metadata
            return
        sent: _Chunk | None = self._calls.get(call_id)
        if sent is None:
            part = self._continued.get(call_id)
            if part is None:
                return  # a call this stream never saw: nothing to carry it on
            sent = {'type': 'tool-input-available', 'toolCallId': call_id, 'toolName': part.tool_name}
            sent['input'] = part.input
            if part.provider_executed is not None:
                sent['providerExecuted'] = part.provider_executed
            if isinstance(part, DynamicToolUIPart):
                sent['dynamic'] = True
        self._emit({**sent, 'providerMetadata': metadata})


def _ours(metadata: Any) -> dict[str, Any]:
    value = cast('dict[str, Any]', metadata).get(PROVIDER_KEY) if isinstance(metadata, dict) else None
    return cast('dict[str, Any]', value) if isinstance(value, dict) else {}


def _with_ours(metadata: Any, fields: dict[str, Any]) -> dict[str, Any]:
    base = cast('dict[str, Any]', metadata) if isinstance(metadata, dict) else {}
    return {**base, PROVIDER_KEY: {**_ours(metadata), **fields}}
