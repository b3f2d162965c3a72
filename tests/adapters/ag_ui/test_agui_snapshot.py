"""`snapshots_for`: the snapshots that bring a client to the server's messages in the server's order, checked
against a model of how `@ag-ui/client` 1.0 applies a `MESSAGES_SNAPSHOT` (the live behaviour is checked through
the real client in tests/e2e/test_agui_fidelity.py)."""

from __future__ import annotations

import itertools

from ag_ui.core import AssistantMessage, Message, UserMessage

from uibridge.adapters.ag_ui._snapshot import snapshots_for


def _messages(ids: str) -> list[Message]:
    return [
        UserMessage(id=i, content=i) if n % 2 == 0 else AssistantMessage(id=i, content=i) for n, i in enumerate(ids)
    ]


def _reduce(local: list[str], snapshot: list[Message]) -> list[str]:
    """The reducer's rule for messages other than activity and reasoning: the known ones kept in local order,
    the others dropped, the snapshot's new ones appended in its order."""
    named = [m.id for m in snapshot]
    kept = [i for i in local if i in named]
    return kept + [i for i in named if i not in kept]


def test_a_client_in_step_gets_one_snapshot() -> None:
    server = _messages('abcd')
    assert snapshots_for(server, ['a', 'b']) == [server]
    assert snapshots_for(server, []) == [server]
    assert snapshots_for(server, ['a', 'b', 'x']) == [server]  # what the server has not is dropped anyway


def test_a_client_behind_first_gets_the_prefix_both_agree_on() -> None:
    server = _messages('abcde')
    assert snapshots_for(server, ['a', 'e']) == [server[:1], server]
    assert snapshots_for(server, ['e']) == [[], server]


def test_every_client_order_ends_in_the_servers_order() -> None:
    server = _messages('abcd')
    ids = [m.id for m in server]
    for size in range(len(ids) + 1):
        for local in itertools.permutations([*ids, 'x'], size):
            held = list(local)
            snapshots = snapshots_for(server, held)
            assert len(snapshots) <= 2
            for snapshot in snapshots:
                held = _reduce(held, snapshot)
            assert held == ids, local
