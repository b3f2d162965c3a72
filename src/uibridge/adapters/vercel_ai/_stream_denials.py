"""How the stream sends a denial: the approval answer that carries its signed result metadata to the client.

`tool-output-denied` carries no metadata, and the client keeps a denied tool part only with its approval; the
one place it keeps anything of a denial's result is the call metadata, which `tool-approval-response` replaces.
So a denial goes out as that answer (with the call metadata the client holds plus the result's under `result`),
then `tool-output-denied`; a denial the client never asked for is first an approval request answered `false`.
"""

from __future__ import annotations

from typing import Any

from ._frames import chunk_writer
from ._provider_metadata import PROVIDER_KEY, denial_text
from .chunks import ToolApprovalRequestChunk, ToolApprovalResponseChunk
from .types import DynamicToolUIPart, ToolUIPart, UIMessage

__all__ = ['approval_request', 'denial']

approval_request = chunk_writer(ToolApprovalRequestChunk)
_approval_response = chunk_writer(ToolApprovalResponseChunk)


def denial(
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
    request = approval_request(approval_id=call_id, tool_call_id=call_id)
    return request + _denied(call_id, reason, metadata)
