"""What MessageCollector offers encoders beyond `feed` (how it folds events into messages is in test_events.py)."""

from __future__ import annotations

from dataclasses import dataclass

from uibridge.core import collector
from uibridge.core.events import PartDelta, PartEnd, PartStart, ResponseStart, RunFinished
from uibridge.core.messages import ModelResponse, TextPart, ToolCallPart


def test_streams_call_says_whether_a_call_is_open() -> None:
    c = collector.MessageCollector()
    c.feed(ResponseStart())
    c.feed(PartStart(0, TextPart(content='')))
    c.feed(PartStart(1, ToolCallPart(tool_name='t', tool_call_id='c1')))
    assert c.streams_call('c1')
    assert not c.streams_call('c2')
    c.feed(PartEnd(1))
    assert not c.streams_call('c1')


def test_feeder_is_what_feed_applies_subclasses_included() -> None:
    @dataclass(frozen=True, slots=True)
    class MyDelta(PartDelta):
        pass

    by_feed, by_feeder = collector.MessageCollector(), collector.MessageCollector()
    run = [PartStart(0, TextPart(content='a')), MyDelta(0, 'b'), RunFinished('stop')]
    for event in run:
        by_feed.feed(event)
        collector.MessageCollector.feeder(type(event))(by_feeder, event)
    [fed], [by_hand] = by_feed.messages, by_feeder.messages
    assert isinstance(fed, ModelResponse)
    assert by_hand.model_copy(update={'timestamp': fed.timestamp}) == fed  # made a moment apart
    assert by_hand.parts == [TextPart(content='ab')]
    assert collector.MessageCollector.feeder(MyDelta) is collector.MessageCollector.feeder(PartDelta)
