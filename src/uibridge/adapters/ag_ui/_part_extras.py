"""What an AG-UI content part carries beside its content: its `id` and `metadata`.

The neutral model's user content (text, media) has no place for either, and no model needs them; a UI does (a
part's id to address it, metadata such as a caption or an upload's state). `load` keeps them in the entry of the
AG-UI message the parts came in (`metadata["uibridge_ag_ui"]["messages"][i]["part_extras"]`, see `_wire`), one
`{"id"?, "metadata"?}` per content part in order, and `dump` puts them back on the parts it writes for that
message. They go back only while the message still has as many content parts as it was loaded with: a history
edited since cannot say which part an id belonged to.

They are the client's word about its own display and nothing else. The one key of a part's `metadata` that is
more, a media part's `filename` (the name a model is shown with the file), is the neutral part's: `load` reads
it into the part and keeps no copy here, and `dump` writes it from the part alone, never from a kept copy, so a
name nothing else carries cannot come back as the file's name. Like the rest of the adapter's bookkeeping they
are reset by `verify_history` on a client's copy, and each is checked for its type when put back, since a
history may come from anywhere.
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
        metadata = _ui_metadata(getattr(part, 'metadata', None), getattr(part, 'type', None))
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
        metadata = _ui_metadata(stored.get('metadata'), part.get('type'))
        if metadata is not None:
            own = part.get('metadata')
            if isinstance(metadata, dict) and isinstance(own, dict):
                part['metadata'] = {**cast('dict[str, Any]', metadata), **cast('dict[str, Any]', own)}
            elif own is None:
                part['metadata'] = metadata


def _ui_metadata(metadata: Any, kind: Any) -> Any:
    """A part's `metadata` without the file name a media part's neutral part carries (`None` when nothing else is
    left); a text part's is all UI data (no name is read from it)."""
    if kind == 'text' or not isinstance(metadata, dict):
        return metadata
    metadata = cast('dict[str, Any]', metadata)
    if _FILENAME not in metadata:
        return metadata
    rest = {key: value for key, value in cast('dict[str, Any]', metadata).items() if key != _FILENAME}
    return rest or None


_FILENAME = 'filename'
