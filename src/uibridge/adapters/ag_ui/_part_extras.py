"""What an AG-UI content part carries beside its content: its `id` and `metadata`.

The neutral model's user content (text, media) has no place for either, and no model needs them; a UI does (a
part's id to address it, metadata such as a caption or an upload's state). `load` keeps them in the entry of the
AG-UI message the parts came in (`metadata["uibridge_ag_ui"]["messages"][i]["part_extras"]`, see `_wire`), one
`{"id"?, "metadata"?}` per content part in order, and `dump` puts them back on the parts it writes for that
message. What dump writes into a part's `metadata` itself (a file name) is kept over the stored copy's key.
They go back only while the message still has as many content parts as it was loaded with: a history edited
since cannot say which part an id belonged to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

EXTRAS_KEY = 'part_extras'


def content_part_extras(parts: Sequence[Any]) -> list[dict[str, Any]] | None:
    """One `{"id"?, "metadata"?}` per SDK content part in `parts`; `None` when no part has either."""
    extras: list[dict[str, Any]] = []
    found = False
    for part in parts:
        extra: dict[str, Any] = {}
        part_id = getattr(part, 'id', None)
        if part_id is not None:
            extra['id'] = part_id
        metadata = getattr(part, 'metadata', None)
        if metadata is not None:
            extra['metadata'] = metadata
        found = found or bool(extra)
        extras.append(extra)
    return extras if found else None


def restore_part_extras(content: list[dict[str, Any]], extras: Any) -> None:
    """Put the stored `extras` back on `content` (wire dicts of one message's parts), in place."""
    if not isinstance(extras, list) or len(cast('list[Any]', extras)) != len(content):
        return
    for part, extra in zip(content, cast('list[Any]', extras), strict=True):
        if not isinstance(extra, dict):
            continue
        stored = cast('dict[str, Any]', extra)
        part_id = stored.get('id')
        if isinstance(part_id, str):
            part['id'] = part_id
        metadata = stored.get('metadata')
        if metadata is not None:
            own = part.get('metadata')
            if isinstance(metadata, dict) and isinstance(own, dict):
                part['metadata'] = {**cast('dict[str, Any]', metadata), **cast('dict[str, Any]', own)}
            elif own is None:
                part['metadata'] = metadata
