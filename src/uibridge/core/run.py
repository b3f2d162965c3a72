"""What a protocol request asks of a run, in protocol-neutral terms.

Each adapter's request parser produces a `RunInput`; the server sanitizes its history and hands the rest
to the agent. Nothing here is trusted: it all came from a client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .messages import ModelMessage
from .verification import SignatureClaims

__all__ = ['ClientTool', 'RunInput', 'ToolApproval']


@dataclass(frozen=True)
class ClientTool:
    """A tool the client runs itself (a frontend tool): the agent may call it; the client answers."""

    name: str
    description: str = ''
    parameters: dict[str, Any] | None = None
    """Its JSON Schema, opaque to uibridge."""
    metadata: dict[str, Any] | None = None
    """What the client said of the tool beside its schema (AG-UI `Tool.metadata`), opaque to uibridge; a remote
    AG-UI agent gets it as it came."""


@dataclass(frozen=True)
class ToolApproval:
    """A client's answer to a tool call the server asked it to approve.

    `approval_id` is the id the server put on the request (an AG-UI interrupt id, a Vercel approval id);
    the server checks it before it believes the answer. `tool_call_id` is `None` where the protocol's
    answer does not name the call (AG-UI `resume` names only the interrupt): the server finds the call
    whose approval id matches.
    """

    approval_id: str
    approved: bool
    tool_call_id: str | None = None
    reason: str | None = None
    payload: Any = None
    """Anything else the client sent with its answer (AG-UI `resume[].payload`)."""


@dataclass
class RunInput:
    history: list[ModelMessage]
    """The conversation as the client sent it, loaded into the neutral model but not yet sanitized."""
    thread_id: str
    run_id: str
    parent_run_id: str | None = None
    """The run this one continues or branches from, when the client names one (AG-UI `parentRunId`)."""
    tools: list[ClientTool] = field(default_factory=list[ClientTool])
    approvals: list[ToolApproval] = field(default_factory=list[ToolApproval])
    state: Any = None
    """Application state the client holds (AG-UI `state`); data for the application, never instructions."""
    trigger: Literal['submit', 'regenerate'] = 'submit'
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Everything else the protocol request carried (Vercel extra body keys, AG-UI `context` and
    `forwardedProps`), untouched, for the application."""
    claims: SignatureClaims = field(default_factory=SignatureClaims)
    """The signatures the decoder read beside `history`'s parts: what the server verifies before it
    believes any of them is its own."""
