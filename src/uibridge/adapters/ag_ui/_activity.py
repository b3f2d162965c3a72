"""AG-UI `activity` messages across load and dump.

An activity message is structured progress a frontend shows as a message of its own (built from
`ACTIVITY_SNAPSHOT` / `ACTIVITY_DELTA`). No model sees one and the neutral model has no part for it, so `load`
keeps each as bookkeeping of the neutral message it sits in: an entry `{"activity": <the message, wire JSON>}`
among that message's AG-UI entries (`metadata["uibridge_ag_ui"]["messages"]`, see `_wire`), in its place. `dump`
writes it back there, so a history loaded and dumped again (the client's copy as a server loaded it, `run.input`;
a stored history) holds its activity messages where they were. Activity messages before any other message join
the first one; a history of nothing but activity messages has no neutral message to hold them and says so with
a warning.

They are the client's word about its own display: never a part, so nothing a model is shown, and reset with the
rest of the adapter's bookkeeping by `verify_history` on a client's copy (the agent gets none of them). Each is
validated again when written back, since a history may come from anywhere. (`@ag-ui/client` itself leaves
activity messages out of the requests it sends; other clients and stored histories include them.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pydantic
from ag_ui.core import ActivityMessage

from ._wire import METADATA_KEY, warn

ACTIVITY_KEY = 'activity'
_activity_adapter = pydantic.TypeAdapter(ActivityMessage)


def activity_entry(message: ActivityMessage) -> dict[str, Any]:
    """The entry that keeps `message` among its neutral message's AG-UI entries."""
    return {ACTIVITY_KEY: message.model_dump(mode='json', by_alias=True, exclude_none=True)}


def is_activity_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and ACTIVITY_KEY in cast('dict[str, Any]', entry)


def kept_activity(metadata: dict[str, Any]) -> dict[int, list[ActivityMessage]] | None:
    """The activity messages a neutral message's `metadata` keeps, by the position among its other AG-UI
    messages they come before (the count of those: after the last); `None` when it keeps none. An entry that
    no longer validates (a client's copy of it was edited) is left out with a warning."""
    stored = metadata.get(METADATA_KEY)
    entries = cast('dict[str, Any]', stored).get('messages') if isinstance(stored, dict) else None
    if not isinstance(entries, list) or not any(is_activity_entry(e) for e in cast('list[Any]', entries)):
        return None
    return _placed(cast('list[Any]', entries))


def _placed(entries: Sequence[Any]) -> dict[int, list[ActivityMessage]]:
    placed: dict[int, list[ActivityMessage]] = {}
    position = 0
    for entry in entries:
        if not is_activity_entry(entry):
            position += 1
            continue
        try:
            message = _activity_adapter.validate_python(cast('dict[str, Any]', entry)[ACTIVITY_KEY])
        except pydantic.ValidationError:
            warn('an activity message kept in a history no longer validates: it was left out of the dump.')
            continue
        placed.setdefault(position, []).append(message)
    return placed


def unplaced_warning(count: int) -> None:
    """What `load` says of activity messages no neutral message can hold (a history of nothing else)."""
    warn(f'{count} activity message(s) left out: a history holding nothing else has no message to keep them.')
