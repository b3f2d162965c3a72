"""How an AG-UI run ends: `AGUIEventStream`'s hooks for who answers a call and for the run's last event.

- The run ends with `RUN_FINISHED`: outcome `interrupt` when calls await approval (one interrupt per call,
  `id` from `keyring.approval_id(thread_id, call)`: only this server can mint it, for this call in this
  thread; `reason: "tool_approval"`), else `success` with `pendingToolCallIds` for calls the client's own tools
  must answer. Approval wins when both are pending: an interrupt outcome has no pending list. A provider-run
  (native) call is never pending nor awaiting approval: the provider answers it. A `RunCancelled` becomes
  outcome `cancelled` only for a client that declared protocol 1.0 or later; an older client (or one that
  declared nothing) gets a plain `RUN_FINISHED`, which every version reads as a finished run, instead of an
  outcome it may not know. A `RunError` closes everything open and ends with `RUN_ERROR`.
- Both carry the run's token usage (`usage`, see `_extras.token_usage`), and a finished run first finishes the
  steps still open (the client refuses a `RUN_FINISHED` while one is).
"""

from __future__ import annotations

from ag_ui.core import (
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
)

from ...core import events as ev
from ...core.collector import MessageCollector
from ...core.messages import ModelResponse, ToolCallPart
from ...core.provenance import Keyring
from ._extras import EventsBesideMessages, token_usage
from ._frames import declares_1_0, now_ms, sdk_frame

__all__ = ['RunOutcome']


class RunOutcome(EventsBesideMessages):
    """A mixin of `AGUIEventStream`: the calls the run's end names, and that end."""

    thread_id: str
    run_id: str
    client_protocol_version: str | None
    _keyring: Keyring
    _collector: MessageCollector
    _responses: list[ModelResponse]
    _approvals: list[str]
    _client_calls: list[str]
    _answered: set[str]
    """The calls a `ToolResult` of this run answered."""
    _native_ids: set[str]
    """The provider-run calls of this run."""

    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        # A mark after the call's END (after its own result) comes too late to sign; the run's outcome still
        # names the call. The provider answers a native call: a mark on one is no client's or approver's work.
        if event.tool_call_id in self._native_ids:
            return b''
        if event.answered_by == 'approval':
            self._approvals.append(event.tool_call_id)
        else:
            self._client_calls.append(event.tool_call_id)
        return b''

    def _run_finished(self, event: ev.RunFinished) -> bytes:
        if self._approvals:
            interrupts = [self._interrupt(call_id) for call_id in self._approvals]
            return self._finished(RunFinishedInterruptOutcome(interrupts=interrupts))
        pending = [call_id for call_id in self._client_calls if call_id not in self._answered]
        return self._finished(RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None))

    def _run_error(self, event: ev.RunError) -> bytes:
        usage = token_usage(self._responses)
        return sdk_frame(RunErrorEvent(message=event.message, code=event.code, usage=usage, timestamp=now_ms()))

    def _run_cancelled(self, event: ev.RunCancelled) -> bytes:
        return self._finished(RunFinishedCancelledOutcome() if declares_1_0(self.client_protocol_version) else None)

    def _interrupt(self, tool_call_id: str) -> Interrupt:
        call = self._collector.tool_call(tool_call_id) or ToolCallPart(tool_name='', tool_call_id=tool_call_id)
        return Interrupt(
            id=self._keyring.approval_id(self.thread_id, call),
            reason='tool_approval',
            tool_call_id=tool_call_id,
            message=f'Approve the call to {call.tool_name}?' if call.tool_name else None,
        )

    def _finished(
        self, outcome: RunFinishedSuccessOutcome | RunFinishedInterruptOutcome | RunFinishedCancelledOutcome | None
    ) -> bytes:
        usage = token_usage(self._responses)
        return self._finish_steps() + sdk_frame(
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, usage=usage, timestamp=now_ms()
            )
        )
