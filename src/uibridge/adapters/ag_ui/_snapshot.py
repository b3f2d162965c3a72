"""`snapshots_for`: the `MESSAGES_SNAPSHOT`s that leave a client holding the server's messages in the server's order.

`@ag-ui/client` 1.0 does not apply a snapshot as a plain replacement. Its reducer keeps the messages it already
holds that the snapshot names, in its own order (each replaced by the snapshot's copy), drops the others, and
appends the snapshot's messages it did not have, in the snapshot's order. A client that is behind (a second tab
that never saw the other tab's turns) holds its new prompt and little else: one snapshot of the whole chat leaves
that prompt first, ahead of the history it missed.

So when the messages the client holds are not already a prefix of the server's list in the server's order, a
first snapshot of the longest prefix they agree on comes first: it drops what the client holds beyond that point
(the reducer keeps none of it), and the whole snapshot then appends the rest in the server's order. Each snapshot
is a plain `MESSAGES_SNAPSHOT`; a client that applies snapshots as replacements ends the same.

What the reducer keeps whatever a snapshot says: `activity` messages when the snapshot has none (the server keeps
none), where they were; and its `reasoning` messages when the snapshot has none. A reasoning message the client
holds past the agreed prefix, when that prefix holds no reasoning message, therefore keeps the client's place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ag_ui.core import Message


def snapshots_for(server: Sequence[Message], client_ids: Sequence[str]) -> list[list[Message]]:
    """The snapshots to send, in order, to a client that holds messages with `client_ids` (in its order, as its
    request listed them) so that it ends holding `server`, in that order."""
    server_ids = {message.id for message in server}
    kept = [message_id for message_id in client_ids if message_id in server_ids]
    agreed = 0
    while agreed < min(len(kept), len(server)) and kept[agreed] == server[agreed].id:
        agreed += 1
    if agreed == len(kept):  # what it keeps is already the server's prefix: the rest is appended after it
        return [list(server)]
    return [list(server[:agreed]), list(server)]
