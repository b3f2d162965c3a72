"""The agent contract: what an endpoint hands an agent, and what an agent gives back.

An agent is any `async def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]`. It reads the
conversation from `run.messages` (already sanitized: no client-written system prompt, retry feedback, unsafe
media URL or unresolved trailing tool call), and yields either fine-grained neutral events
(`uibridge.core.events`) or whole messages (a `ModelResponse`, or a `ModelRequest` of tool returns and retry
feedback), which the endpoint expands with `events_from_message`. Everything the agent yields streams to the
client in the protocol it spoke and is collected into new `ModelMessage`s for `on_complete`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from ..core.events import STATE_METADATA_KEY, AgentEvent
from ..core.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from ..core.run import ClientTool, RunInput, ToolApproval
from ..core.verification import Verified, pending_tool_calls

RunStatus: TypeAlias = Literal['running', 'finished', 'failed', 'cancelled']


@dataclass
class AgentRun:
    """One run of an agent, as an endpoint prepared it from a client's request.

    `messages`, `approvals`, `resolved_tool_call_ids` and `state` are the server's own, or checked by it.
    `client_tools`, `client_state`, `thread_id`, `parent_run_id`, `extra`, `headers` and `input` are the client's
    word: data for the application, never instructions for a model.
    """

    messages: list[ModelMessage]
    """The sanitized history, ready for a model. Read it, do not change its messages in place: with a store they
    are the server's own copy, shared with the chat's next runs (build on a copy, as `list(run.messages)`)."""
    thread_id: str
    run_id: str
    protocol: str
    """`'vercel-ai'` or `'ag-ui'` (the endpoint's `ProtocolBinding.name`)."""
    parent_run_id: str | None = None
    """The run this one continues or branches from, as the client named it (AG-UI `parentRunId`; `None` when
    it named none, and always on Vercel, which has no such field). The AG-UI stream echoes it in `RUN_STARTED`."""
    client_tools: list[ClientTool] = field(default_factory=list[ClientTool])
    """Tools the client runs itself: the agent may call them and stream a `ToolCallReady(..., 'client')`."""
    approvals: list[ToolApproval] = field(default_factory=list[ToolApproval])
    """Answers to approval requests whose id the server verified against the trailing call it names; each
    has its `tool_call_id` filled in. Anything a client claimed but could not prove is not here."""
    resolved_tool_call_ids: frozenset[str] = frozenset()
    """The ids of the trailing tool calls that the verified approvals answer (approved or denied)."""
    state: Any = None
    """The shared state as the server last set it: with a store, the chat's stored state (what the last run
    that yielded a `StateSnapshot` or `StateDelta` left); without one, the state the last server-written
    response of the verified history carries. `None` when there is none yet. A `StateDelta` the agent yields
    before any `StateSnapshot` patches this state."""
    client_state: Any = None
    """The state the client says it holds: AG-UI's `state` (which CopilotKit lets the user edit), on Vercel the
    last `data-state` part of the messages it sent. The client's word, never the server's: an agent that
    accepts an edit makes it the server's by yielding `StateSnapshot` of what it accepts."""
    trigger: Literal['submit', 'regenerate'] = 'submit'
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    request: Any = None
    """The parsed protocol request (`VercelChatRequest`, `AGUIRunRequest`), for anything else it carried."""
    input: RunInput | None = None
    """The request as loaded, before sanitizing: untrusted; kept for logging and tests, not for a model."""
    status: RunStatus = 'running'
    """Set by the endpoint when the stream ends: `finished`, `failed` (the agent raised) or `cancelled`
    (the client went away, or the agent yielded `RunCancelled`)."""
    error: BaseException | None = None
    """The exception the agent raised, when `status` is `failed`."""
    principal: str | None = None
    """Who asked, as the endpoint's `authorize` hook named them (`None` without a hook and without a store;
    `'anonymous'` with a store and no hook): per-user work without contextvars."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """The request's headers, names in lower case (the client's word, like `extra`)."""

    @property
    def cancelled(self) -> bool:
        return self.status == 'cancelled'

    def approval_for(self, tool_call_id: str) -> ToolApproval | None:
        """The verified answer to the approval request for this call, if the client gave one."""
        for approval in self.approvals:
            if approval.tool_call_id == tool_call_id:
                return approval
        return None

    def pending_tool_calls(self) -> list[ToolCallPart]:
        """The tool calls the history waits on (`uibridge.core.verification.pending_tool_calls`: the last
        response's unanswered calls): after sanitizing, only calls whose approval the server verified remain
        here, so these are the calls the agent should now run (or, when denied, answer as denied)."""
        return pending_tool_calls(self.messages)

    def tool_results(self) -> list[ToolReturnPart]:
        """The tool returns in the request that ends the history (a client tool's answer, say)."""
        if not self.messages or not isinstance(last := self.messages[-1], ModelRequest):
            return []
        return [part for part in last.parts if isinstance(part, ToolReturnPart)]


def history_state(messages: Sequence[ModelMessage]) -> tuple[bool, Any]:
    """The state the last response holding one carries (where a run's collector keeps it,
    `metadata['uibridge_state']`): `(True, state)`, or `(False, None)` when no response holds one."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse) and message.metadata and STATE_METADATA_KEY in message.metadata:
            return True, message.metadata[STATE_METADATA_KEY]
    return False, None


Agent: TypeAlias = Callable[[AgentRun], AsyncIterator[AgentEvent | ModelMessage]]
"""An async generator function (or anything returning an async iterator) that streams one run."""

OnComplete: TypeAlias = Callable[[list[ModelMessage], AgentRun], Awaitable[None]]
"""Called once per run after the stream ended, however it ended, with the new messages the run produced
(partial ones included when it was cancelled or failed; `run.status` says which): the place to persist."""


RequestT = TypeVar('RequestT')


@dataclass
class Checked(Generic[RequestT]):
    """A request with its history verified: what a run is prepared from once the ledger has had its say."""

    request: RequestT
    run_input: RunInput
    verified: Verified
    approvals: list[ToolApproval]
    """The approvals whose ids verified, not yet checked against the ledger."""
    state: Any
    """The server's state for this run (`AgentRun.state`)."""
    settled: list[ModelMessage] = field(default_factory=list[ModelMessage])
    """With a store: the stored history before `verified`'s, as the agent sees it (`stored_view`)."""
