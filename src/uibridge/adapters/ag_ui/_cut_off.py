"""How a tool call closes on the wire when a failed run cuts it off before its argument text was whole.

A call normally closes with `TOOL_CALL_END`, whose `metadata` carries the call's signed record (the reducer
merges an event's `metadata` into the call it names). `TOOL_CALL_END` also says "these arguments are complete",
and a validator holds the server to it (ag-ui-validate AGUI204: the concatenated `TOOL_CALL_ARGS` must parse as
JSON). A call the run's failure cut off mid-argument never had complete arguments, so it gets no END: the
signed record rides on one last `TOOL_CALL_ARGS` with an empty delta, which the reducer merges into the call the
same way, and the `RUN_ERROR` that follows ends the run with the call left open, as the protocol expects of a
failed run. The client keeps the call exactly as it was built, signed, and sends it back on its next turn.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import ToolCallArgsEvent

from ...core.json_text import parse_json
from ...core.messages import NativeToolCallPart, ToolCallPart
from ._frames import now_ms, sdk_frame, tool_call_end

__all__ = ['arguments_unfinished', 'call_closing_frame']


def arguments_unfinished(call: ToolCallPart | NativeToolCallPart) -> bool:
    """Whether the argument text the client built for `call` is not JSON (the collector keeps text it could not
    parse as the string it was; a dict was complete, and no text at all is a call without arguments)."""
    args = call.args
    if not isinstance(args, str) or not args:
        return False
    try:
        parse_json(args)
    except ValueError:
        return True
    return False


def call_closing_frame(call: ToolCallPart | NativeToolCallPart, metadata: dict[str, Any], error: str | None) -> bytes:
    """The frame that closes `call` with its signed `metadata`: `TOOL_CALL_END`, unless a failed run (`error`)
    cut the call off with argument text that does not parse; then an empty `TOOL_CALL_ARGS` carrying it."""
    if error is not None and arguments_unfinished(call):
        return sdk_frame(
            ToolCallArgsEvent(tool_call_id=call.tool_call_id, delta='', metadata=metadata, timestamp=now_ms())
        )
    return tool_call_end(now_ms(), tool_call_id=call.tool_call_id, metadata=metadata)
