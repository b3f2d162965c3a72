"""Believing a client's answer to an approval request only when the server can verify it.

The server signs each approval request (`ApprovalSigner.approval_id(call)`: a keyed hash of the call's id,
tool name and arguments). A client's answer names that id, and, where the protocol says so, the call.
The answer is believed only when the id verifies against a tool call that ends the client's history, that
is, a call still waiting for its result. A made-up id, an id copied onto another call, or a call whose
arguments were edited after the server asked all fail, and the call is then stripped by
`sanitize_messages` like any other tool call the client wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from ..core.approvals import ApprovalSigner
from ..core.messages import ModelMessage, ModelResponse, ToolCallPart
from ..core.run import ToolApproval

__all__ = ['trailing_tool_calls', 'verify_approvals']

logger = logging.getLogger('uibridge.server')


def trailing_tool_calls(history: Sequence[ModelMessage]) -> list[ToolCallPart]:
    """The tool calls in the responses that end `history`: those no result has answered yet."""
    calls: list[ToolCallPart] = []
    for message in reversed(history):
        if not isinstance(message, ModelResponse):
            break
        calls[:0] = [part for part in message.parts if isinstance(part, ToolCallPart)]
    return calls


def verify_approvals(
    history: Sequence[ModelMessage], approvals: Sequence[ToolApproval], signer: ApprovalSigner
) -> list[ToolApproval]:
    """The approvals that verify, each with `tool_call_id` set to the call it answers; one per call.

    An answer that names its call (Vercel) must verify against that very call; one that names only the
    approval id (an AG-UI interrupt) is matched to the trailing call whose signed id it is. Anything else is
    dropped with a logged warning and never reaches the agent.
    """
    calls = trailing_tool_calls(history)
    by_id = {call.tool_call_id: call for call in calls}
    verified: list[ToolApproval] = []
    answered: set[str] = set()
    for approval in approvals:
        call = _call_for(approval, calls, by_id, signer)
        if call is None:
            logger.warning(
                'Ignored an approval the server cannot verify (approval id %.64r, tool call id %.64r): '
                'it names no pending tool call this server asked about.',
                approval.approval_id,
                approval.tool_call_id,
            )
            continue
        if call.tool_call_id in answered:
            continue
        answered.add(call.tool_call_id)
        verified.append(replace(approval, tool_call_id=call.tool_call_id))
    return verified


def _call_for(
    approval: ToolApproval,
    calls: list[ToolCallPart],
    by_id: dict[str, ToolCallPart],
    signer: ApprovalSigner,
) -> ToolCallPart | None:
    if approval.tool_call_id is not None:
        call = by_id.get(approval.tool_call_id)
        return call if call is not None and signer.verify(approval.approval_id, call) else None
    for call in calls:
        if signer.verify(approval.approval_id, call):
            return call
    return None
