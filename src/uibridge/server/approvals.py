"""Believing a client's answer to an approval request only when the server can verify it, and only once.

The server mints each approval request's id (`Keyring.approval_id(thread_id, call)`: a keyed hash of the
thread, the call's id, tool name and arguments). A client's answer names that id and, where the protocol
says so, the call. The answer is believed only when the id verifies against a verified tool call that ends
the client's history (a call still waiting for its result) in this very thread. A made-up id, an id copied
onto another call or into another thread, or a call whose arguments were edited after the server asked all
fail, and the call is then stripped by `sanitize_messages` like any other tool call the client wrote.

Once: a call that already has a result is not at the end of the history, so no answer reaches it; and an
answer already acted on (`ApprovalLedger`) is not acted on again when a client replays the same request,
whichever endpoint it replays it to:

- without a store, the ledger is this process's memory (`ProcessLedger`), one for every endpoint of the
  process unless an endpoint is given its own: the Vercel AI and AG-UI endpoints of one app share it;
- with a store, the ledger is the store's (`StoreLedger`, `ChatStore.use_approval`): every worker sharing it,
  and a process restarted over it, see the approvals used, for the store's `approval_ttl`.

An approval is marked used before the agent sees it: at most once, never twice (a run that fails after the
mark does not get the approval back).

Linear: each trailing call's approval ids are computed once (one HMAC per key), and each answer is looked
up by its call id or its approval id.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from ..core.messages import ModelMessage
from ..core.provenance import Keyring, approval_matches
from ..core.run import ToolApproval
from ..core.verification import pending_tool_calls
from .store import ChatStore

__all__ = [
    'DEFAULT_LEDGER_CAPACITY',
    'ApprovalLedger',
    'ProcessLedger',
    'StoreLedger',
    'first_uses',
    'process_ledger',
    'verify_approvals',
]

logger = logging.getLogger('uibridge.server')

DEFAULT_LEDGER_CAPACITY = 100_000


class ApprovalLedger(ABC):
    """The approval ids acted on: what makes an approval act once however often a client sends it."""

    @abstractmethod
    async def use(self, approval_id: str) -> bool:
        """Mark `approval_id` used; `False` if it already was."""


class ProcessLedger(ApprovalLedger):
    """The approval ids this process has acted on, the most recent `capacity` kept (an approval id names one
    call in one thread, so an old one only matters to a client replaying an old request). Another process, and
    this one after a restart, does not see them: only a store's ledger (`StoreLedger`) crosses processes."""

    def __init__(self, capacity: int = DEFAULT_LEDGER_CAPACITY) -> None:
        self._used: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    async def use(self, approval_id: str) -> bool:
        with self._lock:
            if approval_id in self._used:
                return False
            self._used[approval_id] = None
            if len(self._used) > self._capacity:
                self._used.popitem(last=False)
            return True


class StoreLedger(ApprovalLedger):
    """The approval ids acted on, kept in a store (`ChatStore.use_approval`): shared by every process using
    it, kept across restarts, each for the store's `approval_ttl`."""

    def __init__(self, store: ChatStore) -> None:
        self.store = store

    async def use(self, approval_id: str) -> bool:
        return await self.store.use_approval(approval_id)


_PROCESS_LEDGER = ProcessLedger()


def process_ledger() -> ProcessLedger:
    """The ledger every endpoint without a store (and without one of its own) uses: one per process, so two
    endpoints mounted side by side (Vercel AI and AG-UI for one agent) never act on one approval twice."""
    return _PROCESS_LEDGER


async def first_uses(approvals: Sequence[ToolApproval], ledger: ApprovalLedger) -> list[ToolApproval]:
    """Of verified approvals, those `ledger` had not seen used, each now marked used (one log line for the rest)."""
    fresh: list[ToolApproval] = []
    replayed: list[ToolApproval] = []
    for approval in approvals:
        (fresh if await ledger.use(approval.approval_id) else replayed).append(approval)
    if replayed:
        logger.warning(
            'Ignored %d approval(s) already acted on (the first: approval id %.64r): a replayed request runs nothing.',
            len(replayed),
            replayed[0].approval_id,
        )
    return fresh


def verify_approvals(
    history: Sequence[ModelMessage],
    approvals: Sequence[ToolApproval],
    keyring: Keyring,
    thread_id: str,
) -> list[ToolApproval]:
    """The approvals that verify, each with `tool_call_id` set to the call it answers and `approval_id` to the
    id the keyring's first key mints for it; one per call.

    `history` must be verified already (`verify_history`): only the server's own calls are at its end. An
    answer that names its call (Vercel) must verify against that very call; one that names only the approval
    id (an AG-UI interrupt) is matched to the trailing call whose id it is. Anything else is dropped with a
    logged warning and never reaches the agent. Whether an approval was acted on before is the ledger's
    question, asked after this one (`first_uses`).
    """
    if not approvals:
        return []
    calls = pending_tool_calls(history)
    expected = {call.tool_call_id: keyring.approval_ids(thread_id, call) for call in calls}
    by_approval_id = {ids[0]: call_id for call_id, ids in expected.items()}
    by_old_key = {approval_id: call_id for call_id, ids in expected.items() for approval_id in ids[1:]}
    verified: list[ToolApproval] = []
    answered: set[str] = set()
    unverified: list[ToolApproval] = []
    for approval in approvals:
        if approval.tool_call_id is not None:
            call_id = approval.tool_call_id
            ok = call_id in expected and approval_matches(approval.approval_id, expected[call_id])
        else:
            found = by_approval_id.get(approval.approval_id) or by_old_key.get(approval.approval_id)
            call_id = found or ''
            ok = found is not None
        if not ok:
            unverified.append(approval)
            continue
        if call_id in answered:
            continue
        answered.add(call_id)
        # The ledger's key is the id the current key mints: an answer under a key since rotated out is the
        # same answer, never a second one.
        verified.append(replace(approval, tool_call_id=call_id, approval_id=expected[call_id][0]))
    # One log line per kind per request, however many answers a client sent.
    if unverified:
        logger.warning(
            'Ignored %d approval(s) the server cannot verify (the first: approval id %.64r, tool call id %.64r): '
            'they name no pending tool call this server asked about in this thread.',
            len(unverified),
            unverified[0].approval_id,
            unverified[0].tool_call_id,
        )
    return verified
