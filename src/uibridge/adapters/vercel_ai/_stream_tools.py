"""`VercelAIEventStream`'s hooks for who answers a call and for tool results (a mixin of the stream class), and
how it sends a denial: the approval answer that carries its signed result metadata to the client.

`tool-output-denied` carries no metadata, and the client keeps a denied tool part only with its approval; the
one place it keeps anything of a denial's result is the call metadata, which `tool-approval-response` replaces.
So a denial goes out as that answer (with the call metadata the client holds plus the result's under `result`),
then `tool-output-denied`; a denial the client never asked for is first an approval request answered `false`.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...core import events as ev
from ...core.collector import MessageCollector
from ...core.messages import RetryPromptPart, ToolCallPart
from ...core.provenance import Keyring
from ._frames import chunk_writer
from ._provider_metadata import PROVIDER_KEY, denial_text, tool_result
from .chunks import (
    ToolApprovalRequestChunk,
    ToolApprovalResponseChunk,
    ToolOutputAvailableChunk,
    ToolOutputDeniedChunk,
    ToolOutputErrorChunk,
)
from .types import DynamicToolUIPart, ToolUIPart, UIMessage

__all__ = ['ToolHooks']

_approval_request = chunk_writer(ToolApprovalRequestChunk)
_approval_response = chunk_writer(ToolApprovalResponseChunk)
_output_available = chunk_writer(ToolOutputAvailableChunk)
_output_error = chunk_writer(ToolOutputErrorChunk)
_output_denied = chunk_writer(ToolOutputDeniedChunk)


def _as_is(value: Any) -> Any:
    # The writers write any value as `provider_metadata.jsonable` + JSON would: no JSON-ready copy is needed.
    return value


class ToolHooks:
    """The hooks, over the stream's own state (declared here, set by `VercelAIEventStream.__init__`)."""

    _keyring: Keyring
    _collector: MessageCollector
    _thread_id: str
    _continued: UIMessage | None
    _continues: bool
    _request_slot: int
    """Where the next tool result lands in its request (the collector's layout, for `index`)."""
    _started_calls: dict[str, dict[str, Any]]
    """Calls started in this stream, with the call metadata sent for each."""
    _approvals: dict[str, dict[str, Any]]
    """The approvals asked for in this stream, as the client holds them, by tool call id."""
    _waiting: set[str]

    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        call_id = event.tool_call_id
        self._waiting.add(call_id)
        if not late:
            return b''
        if event.answered_by == 'client':
            if call_id in self._started_calls:
                warnings.warn(
                    f'ToolCallReady for {call_id!r} came after its step ended: the client already holds the call '
                    'without the client-tool mark, so its result will not verify on the next turn',
                    UserWarning,
                    stacklevel=4,
                )
            return b''
        call = self._collector.tool_call(call_id)
        if call is None:
            warnings.warn(f'no tool call {call_id!r} to ask an approval for', UserWarning, stacklevel=4)
            return b''
        return self._ask_approval(call)

    def _ask_approval(self, call: ToolCallPart) -> bytes:
        approval_id = self._keyring.approval_id(self._thread_id, call)
        self._approvals[call.tool_call_id] = {'id': approval_id}
        return _approval_request(approval_id=approval_id, tool_call_id=call.tool_call_id)

    def _retry_prompt(self, part: RetryPromptPart) -> bytes:
        # A legacy tool-less retry has no place in an assistant message: only collected, and counted.
        self._request_slot += 1
        return b''

    def _tool_result(self, event: ev.ToolResult) -> bytes:
        part = event.part
        slot = self._request_slot
        self._request_slot += 1
        call_id = part.tool_call_id
        self._waiting.discard(call_id)
        started = call_id in self._started_calls
        if not started and not self._continues:
            warnings.warn(
                f'a result for tool call {call_id!r}, which this stream did not send and does not continue; '
                'the client could not place it, so it was not sent',
                UserWarning,
                stacklevel=4,
            )
            return b''
        state, value, fields = tool_result(part, slot, json_ready=_as_is, sig=self._keyring.sign_part(part))
        if state == 'output-available':
            return _output_available(tool_call_id=call_id, output=value, provider_metadata={PROVIDER_KEY: fields})
        if state == 'output-error':
            return _output_error(tool_call_id=call_id, error_text=value, provider_metadata={PROVIDER_KEY: fields})
        sent = self._started_calls[call_id] if started else None
        out = _denial(call_id, value, fields, sent, self._approvals, self._continued)
        return out + _output_denied(tool_call_id=call_id)


def _denial(
    call_id: str,
    reason: str,
    fields: dict[str, Any],
    sent_call: dict[str, Any] | None,
    approvals: dict[str, dict[str, Any]],
    continued: UIMessage | None,
) -> bytes:
    """The approval answer for a denial of `call_id` (`fields`: its signed result metadata). `sent_call` is the
    call metadata this stream sent, when it sent the call; `approvals` the approvals it asked for (the answer is
    recorded there); `continued` the message the run continues, which holds a call this stream did not send."""
    if sent_call is not None:
        metadata: dict[str, Any] = {PROVIDER_KEY: {**sent_call, 'result': fields}}
        asked = approvals.get(call_id)
        if asked is None:
            return _asked_and_denied(call_id, reason, metadata)  # a denial the client never asked for
        approvals[call_id] = {**asked, 'approved': False, 'reason': reason}
        return _denied(asked['id'], reason, metadata)
    part = _continued_call(continued, call_id)
    if part is None:
        return b''  # the client holds the call, but this stream was not given it: the result stays bare
    approval = part.approval
    if approval is not None and approval.approved is False:
        # The client's own answer stays as it wrote it, its reason included; the denial's text goes beside.
        fields = denial_text(fields, reason, approval.reason)
    held = part.call_provider_metadata or {}
    metadata = {**held, PROVIDER_KEY: {**held.get(PROVIDER_KEY, {}), 'result': fields}}
    if approval is None:
        return _asked_and_denied(call_id, reason, metadata)
    return _denied(approval.id, None if approval.approved is False else reason, metadata)


def _continued_call(continued: UIMessage | None, tool_call_id: str) -> ToolUIPart | DynamicToolUIPart | None:
    if continued is None:
        return None
    for part in continued.parts:
        if isinstance(part, ToolUIPart | DynamicToolUIPart) and part.tool_call_id == tool_call_id:
            return part
    return None


def _denied(approval_id: str, reason: str | None, metadata: dict[str, Any]) -> bytes:
    return _approval_response(approval_id=approval_id, approved=False, reason=reason, provider_metadata=metadata)


def _asked_and_denied(call_id: str, reason: str, metadata: dict[str, Any]) -> bytes:
    """An approval request answered `false` at once: the client keeps a denied call only with its approval."""
    request = _approval_request(approval_id=call_id, tool_call_id=call_id)
    return request + _denied(call_id, reason, metadata)
