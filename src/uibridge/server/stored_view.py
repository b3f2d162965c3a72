"""The agent's view of a stored chat, settled once per commit: what a managed turn does not redo.

A managed run's history is the stored one (the server's own) plus what the client adds. Checked whole, as
client-held history is (verified, then sanitized), it would cost every turn in proportion to the chat. But what
a client adds can change only the end of it: the last model response (whose open calls the client may answer, or
leave behind with a new prompt) and what follows. Everything before that response is settled: verified (trusted,
being the server's own: no signature is computed) and sanitized once, the open calls of its own last response
dropped as the next response drops them, and kept per chat (`StoredViews`) under the store's revision of the
history (`RunClaim.revision`). A later turn settles only what the commits since added, and checks only the window
from the last response on, with the client's additions.

Settling `history[:cut]` and checking `history[cut:]` plus the additions gives what checking the whole does,
`cut` being a model response: verification starts over at every response (what precedes one only loses the calls
nothing answered, which settling drops too), and sanitizing goes message by message but for the pending calls at
the very end, which are the window's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.messages import ModelMessage, ModelResponse
from .run import history_state
from .store import RunClaim

DEFAULT_VIEWS = 1024
"""Chats whose settled view an endpoint keeps, at most (the least recently used go first). A view holds the
stored messages themselves, shared with the store's `HistoryCache`, not copies."""


def window_start(history: Sequence[ModelMessage]) -> int:
    """Where the part of `history` a client's additions can change starts: its last model response (0 without
    one). Looks back from the end only as far as that response."""
    for index in range(len(history) - 1, -1, -1):
        if isinstance(history[index], ModelResponse):
            return index
    return 0


@dataclass(frozen=True)
class Settled:
    """`history[:cut]` as the agent sees it, and the state the last of its responses holding one carries."""

    messages: list[ModelMessage]
    state: tuple[bool, Any] = (False, None)
    """`run.history_state` of `messages`: `(True, state)`, or `(False, None)` when no response holds one."""


@dataclass(frozen=True)
class _View:
    revision: str
    """The claim whose commit left the history this view is of."""
    cut: int
    settled: tuple[ModelMessage, ...]
    state: tuple[bool, Any]
    index: object
    """What the protocol keeps of the history for the next turn (`ManagedInput.index`), or `None`."""


class StoredViews:
    """Per chat, the settled part of its history as the agent sees it, as of the last commit this endpoint made."""

    def __init__(self, max_chats: int = DEFAULT_VIEWS) -> None:
        self.max_chats = max_chats
        self._views: OrderedDict[str, _View] = OrderedDict()

    def settled(
        self,
        claim: RunClaim,
        history: Sequence[ModelMessage],
        cut: int,
        settle: Callable[[Sequence[ModelMessage]], list[ModelMessage]],
    ) -> Settled:
        """`history[:cut]` settled (`settle`): from the view the chat's last commit here left, when the claim found
        the history that commit left and `cut` is no earlier; else all of it (once, on the first turn after a
        restart, another process's commit, a regenerate or an edit)."""
        view = self._views.get(claim.chat_id)
        if view is not None and view.revision == claim.revision and view.cut <= cut:
            self._views.move_to_end(claim.chat_id)
            added = settle(history[view.cut : cut])
            found = history_state(added)
            return Settled([*view.settled, *added], found if found[0] else view.state)
        settled = settle(history[:cut])
        return Settled(settled, history_state(settled))

    def settled_up_to(self, claim: RunClaim) -> int:
        """How much of the claimed history the chat's view already covers (0 when it covers none of it)."""
        view = self._views.get(claim.chat_id)
        return view.cut if view is not None and view.revision == claim.revision else 0

    def index(self, claim: RunClaim) -> object:
        """What the protocol kept of the claimed history (`ManagedInput.index`), if it is of that history."""
        view = self._views.get(claim.chat_id)
        return view.index if view is not None and view.revision == claim.revision else None

    def committed(self, claim: RunClaim, cut: int, settled: Settled, index: object = None) -> None:
        """`claim` committed, leaving `history[:cut]` as it was (a commit replaces the history only from the run's
        prefix on, which is at or after `cut`): keep its settled view for the chat's next claim, and `index`, what
        the protocol keeps of the history up to the run's prefix."""
        self._views.pop(claim.chat_id, None)
        self._views[claim.chat_id] = _View(claim.run_id, cut, tuple(settled.messages), settled.state, index)
        while len(self._views) > self.max_chats:
            self._views.popitem(last=False)
