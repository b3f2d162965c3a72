"""A neutral message's `metadata`: the application's keys, and uibridge's, told apart by one rule.

`ModelRequest.metadata` / `ModelResponse.metadata` belong to the application, except **every key that starts
with `uibridge`** (`is_own_key`), which is uibridge's. The neutral model stores under such keys:

- `uibridge_answered_by` (`ANSWERED_BY_METADATA_KEY`): who answers a response's tool calls when it is not the
  server, `{tool_call_id: 'client' | 'approval'}`;
- `uibridge_custom_data` (`CUSTOM_DATA_METADATA_KEY`): a response's UI-only data, a list of
  `custom_data_item`s;
- `uibridge_dynamic_tools` (`DYNAMIC_TOOLS_METADATA_KEY`): the ids of a response's calls to tools the UI does not
  know by name (Vercel `dynamic-tool` parts);
- `uibridge_vercel_ai`, `uibridge_ag_ui`: each adapter's bookkeeping for its round trip (ids, UI-only parts).

An adapter writes `app_metadata(metadata)` where its protocol keeps the application's metadata, and carries
each of uibridge's keys it needs in a channel it chooses (Vercel: a call's marks, `data-*` parts, its sidecar;
AG-UI: its response record, beside the application's keys, and its own records). Another adapter's bookkeeping
is left behind, and a key a client sent under uibridge's prefix is not taken for the application's.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast

# The two keys are still defined beside the events (the collector writes them; it lives there for now): this
# module is where the rule for them is, and where they belong once the collector imports them from here.
from .events import ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY

OWN_KEY_PREFIX = 'uibridge'


def is_own_key(key: str) -> bool:
    """Whether `key` of a neutral message's metadata is uibridge's (see the module docstring)."""
    return key.startswith(OWN_KEY_PREFIX)


def app_metadata(metadata: dict[str, Any] | None, *, keep: Collection[str] = ()) -> dict[str, Any] | None:
    """The application's keys of `metadata`, in their order, with those of uibridge's own named in `keep` (what
    an adapter carries in the same place); `None` when nothing is left."""
    if not metadata:
        return None
    kept = {key: value for key, value in metadata.items() if not key.startswith(OWN_KEY_PREFIX) or key in keep}
    return kept or None


def answered_by(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Who answers a response's tool calls when it is not the server (`{call id: 'client' | 'approval'}`);
    `{}` when none is recorded."""
    marks = metadata.get(ANSWERED_BY_METADATA_KEY) if metadata else None
    return cast('dict[str, Any]', marks) if isinstance(marks, dict) else {}


def custom_data_item(name: str, data: Any, item_id: str | None, position: int) -> dict[str, Any]:
    """One entry of `CUSTOM_DATA_METADATA_KEY`: `{"name", "data", "id"?, "position"}`, `position` being the
    number of the response's parts before it."""
    item: dict[str, Any] = {'name': name, 'data': data, 'position': position}
    if item_id is not None:
        item['id'] = item_id
    return item


def custom_data_items(metadata: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The entries of `CUSTOM_DATA_METADATA_KEY` that are objects (a client's copy may hold anything)."""
    items = metadata.get(CUSTOM_DATA_METADATA_KEY) if metadata else None
    if not isinstance(items, list):
        return []
    return [cast('dict[str, Any]', item) for item in cast('list[Any]', items) if isinstance(item, dict)]
