"""Both encoders do O(1) work per event: they never rebuild the collected history while streaming.

Reading `MessageCollector.messages` copies every message so far; doing that per event made 1,000 tool calls
take seconds (quadratic). This pins the fix structurally instead of with a timing threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from uibridge import ModelMessage, ToolCallPart, ToolReturnPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core import events as ev
from uibridge.core.collector import MessageCollector
from uibridge.core.stream import EventStreamEncoder


def _tool_calls(count: int) -> Iterator[ev.AgentEvent]:
    for i in range(count):
        yield ev.ResponseStart()
        yield ev.PartStart(0, ToolCallPart(tool_name='lookup', args=None, tool_call_id=f'c{i}'))
        yield ev.PartDelta(0, '{"q": 1}')
        yield ev.PartEnd(0)
        yield ev.ToolResult(ToolReturnPart(tool_name='lookup', content={'ok': i}, tool_call_id=f'c{i}'))
    yield ev.ResponseStart()
    yield ev.PartStart(0, ToolCallPart(tool_name='approve_me', args={'x': 1}, tool_call_id='last'))
    yield ev.PartEnd(0)
    yield ev.ToolCallReady('last', 'approval')
    yield ev.RunFinished()


ENCODERS: dict[str, Callable[[], EventStreamEncoder]] = {
    'vercel_ai': lambda: vercel_ai.VercelAIEventStream(message_id='m'),
    'ag_ui': lambda: ag_ui.AGUIEventStream(thread_id='t', run_id='r'),
}


@pytest.mark.parametrize('name', ENCODERS)
def test_encoding_never_snapshots_the_collected_history(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = 0
    snapshot = MessageCollector.messages.fget
    assert snapshot is not None

    def counting(self: MessageCollector) -> list[ModelMessage]:
        nonlocal reads
        reads += 1
        return snapshot(self)

    monkeypatch.setattr(MessageCollector, 'messages', property(counting))
    encoder = ENCODERS[name]()
    body = encoder.start() + b''.join(encoder.encode(event) for event in _tool_calls(50)) + encoder.close()
    assert reads == 0
    assert b'c49' in body
    assert len(encoder.new_messages) == 101
