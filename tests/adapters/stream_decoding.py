"""What the stream decoders' tests share: a body read whole by a decoder, and what its events add up to.
(Imported by path: `sys.path.insert(0, <tests/adapters>)`, as the tests there have no package.)"""

from __future__ import annotations

from typing import Any

from uibridge.core import events as ev
from uibridge.core.collector import MessageCollector
from uibridge.core.decoder import StreamDecoder

__all__ = ['collected', 'read_whole']


def read_whole(decoder: StreamDecoder, body: bytes) -> list[ev.AgentEvent]:
    """The events of `body`, fed in one piece, then the end of the stream."""
    return decoder.feed(body) + decoder.close()


def collected(events: list[ev.AgentEvent]) -> list[Any]:
    """The messages `events` add up to."""
    collector = MessageCollector()
    for event in events:
        collector.feed(event)
    return collector.messages
