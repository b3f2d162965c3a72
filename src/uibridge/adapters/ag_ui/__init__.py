"""AG-UI 1.0 adapter: the official `ag_ui.core` models and `ag_ui.encoder`, never re-declared.

The four faces every adapter has: `dump_messages` / `load_messages` (history), `AGUIEventStream` (neutral
events to AG-UI SSE) and `parse_request` (a `RunAgentInput` body to a neutral `RunInput`). No I/O here.

Modules: `dump`, `load`, `stream`, `request` (one face each); `_wire` (what uibridge keeps in AG-UI's
`metadata` / `encryptedValue` channels, and in `ModelMessage.metadata["uibridge_ag_ui"]`); `_drafts` (one part as
its AG-UI message, for dump and stream alike) and `_load_parts` (one message as its part); `_validation`
(forward compatibility and error paths for client input).
"""

from .decode import AGUIStreamDecoder
from .dump import dump_messages
from .load import load_messages
from .request import AGUIRunRequest, parse_request
from .stream import AGUIEventStream, encode_events

__all__ = [
    'AGUIEventStream',
    'AGUIRunRequest',
    'AGUIStreamDecoder',
    'dump_messages',
    'encode_events',
    'load_messages',
    'parse_request',
]
