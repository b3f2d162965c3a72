"""`ChunkDowngrade`: the `ai` 7 UI message stream `VercelAIEventStream` writes, as an `ai` 5 or 6 client takes it.

It reads the stream's bytes back, chunk by chunk, and writes what `_sdk_versions` says the version accepts,
with the approval flow degraded as its module docstring tables. Deltas and step bounds are the same in every
version and pass through as they are, unparsed; the other chunks are parsed and written again, which costs
a few microseconds each: paid only by a server that chose an older client, never by the `ai` 7 stream.

It is stateful across one stream: it remembers each call's last `tool-input-available` (the only chunk an
older client takes call metadata from), which approval id names which call, and the calls of the message
the run continues, so that metadata `ai` 7 carries elsewhere can ride on the call.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ...core.json_text import sse_data
from ._provider_metadata import DENIED, PROVIDER_KEY
from ._sdk_versions import CHUNK_FIELDS, FINISH_REASONS, SdkVersion, chunk_tag, denial_error_text
from .types import DynamicToolUIPart, ToolUIPart, UIMessage

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
