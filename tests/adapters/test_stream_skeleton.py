"""The rules both encoders take from `uibridge.core.encoder`, checked on each protocol's own wire: what is no
event, subclassed events, parts cut off, and when a finished tool call is sent and with which mark."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from uibridge import NativeToolCallPart, TextPart, ToolCallPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core import events as ev
from uibridge.core.provenance import Keyring
from uibridge.core.stream import EventStreamEncoder, encode_all

KEYRING = Keyring('test')

ENCODERS: dict[str, Callable[[], EventStreamEncoder]] = {
    'vercel_ai': lambda: vercel_ai.VercelAIEventStream(message_id='m', keyring=KEYRING),
    'ag_ui': lambda: ag_ui.AGUIEventStream(thread_id='t', run_id='r', keyring=KEYRING),
}
CALL_SENT = {'vercel_ai': ('tool-input-available', 'tool-input-error'), 'ag_ui': ('TOOL_CALL_END',)}
CALL_STARTED = {'vercel_ai': 'tool-input-start', 'ag_ui': 'TOOL_CALL_START'}
PART_ENDED = {'vercel_ai': ('text-end', 'id'), 'ag_ui': ('TEXT_MESSAGE_END', 'messageId')}
PART_STARTED = {'vercel_ai': ('text-start', 'id'), 'ag_ui': ('TEXT_MESSAGE_START', 'messageId')}


def frames(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.decode().split('\n\n') if line.startswith('data: {')]


def encode(name: str, events: Sequence[ev.AgentEvent]) -> list[dict[str, Any]]:
    return frames(encode_all(ENCODERS[name](), events))


def sent_calls(name: str, stream: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each finished call as the stream sends it: its id, and whether it is signed for a client tool."""
    sent: list[tuple[str, bool]] = []
    for frame in stream:
        if frame['type'] in CALL_SENT[name]:
            record: dict[str, Any] = (frame.get('providerMetadata') or frame['metadata'])['uibridge']
            sent.append((frame['toolCallId'], record.get('client', False)))
    return sent


def _without_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timestamps(v) for k, v in value.items() if k != 'timestamp'}  # pyright: ignore[reportUnknownVariableType]
    return value


@pytest.mark.parametrize('name', ENCODERS)
def test_what_is_no_agent_event_is_a_type_error(name: str) -> None:
    with pytest.raises(TypeError, match='not an agent event: str'):
        ENCODERS[name]().encode('text')  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize('name', ENCODERS)
def test_subclassed_events_are_written_like_their_base_classes(name: str) -> None:
    @dataclass(frozen=True, slots=True)
    class MyStart(ev.ResponseStart):
        pass

    @dataclass(frozen=True, slots=True)
    class MyEnd(ev.PartEnd):
        pass

    plain = [ev.ResponseStart(model_name='m'), ev.PartStart(0, TextPart(content='Hi')), ev.PartEnd(0)]
    subclassed = [MyStart(model_name='m'), ev.PartStart(0, TextPart(content='Hi')), MyEnd(0)]
    assert [_without_timestamps(f) for f in encode(name, subclassed)] == [
        _without_timestamps(f) for f in encode(name, plain)
    ]


@pytest.mark.parametrize('name', ENCODERS)
def test_parts_cut_off_end_in_the_order_they_started(name: str) -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(1, TextPart(content='a')),
        ev.PartStart(0, TextPart(content='b')),
        ev.ResponseStart(),
    ]
    stream = encode(name, events)
    start_type, key = PART_STARTED[name]
    end_type, _ = PART_ENDED[name]
    started = [f[key] for f in stream if f['type'] == start_type]
    assert len(started) == 2
    assert [f[key] for f in stream if f['type'] == end_type] == started


@pytest.mark.parametrize('name', ENCODERS)
@pytest.mark.parametrize('second', ['call', 'native'])
def test_a_call_reusing_a_calls_id_fails_the_run_and_sends_nothing_of_it(name: str, second: str) -> None:
    # Two calls sharing an id are a history verification refuses (a 422 on every later turn, a managed chat
    # stuck for good), so the agent's bug fails its own run, where the pump reports it, before any of it is sent.
    reused = (
        ToolCallPart(tool_name='f', args={'n': 2}, tool_call_id='c')
        if second == 'call'
        else NativeToolCallPart(tool_name='ws', args={'q': 1}, tool_call_id='c')
    )
    stream = ENCODERS[name]()
    stream.start()
    stream.encode(ev.PartStart(0, ToolCallPart(tool_name='f', args={'n': 1}, tool_call_id='c')))
    stream.encode(ev.PartEnd(0))
    with pytest.raises(ValueError, match="started tool call 'c' twice in one run"):
        stream.encode(ev.PartStart(1, reused))
    assert [p.tool_call_id for p in stream.new_messages[-1].parts if isinstance(p, ToolCallPart)] == ['c']


@pytest.mark.parametrize('name', ENCODERS)
def test_of_two_marks_while_a_call_streams_the_last_counts(name: str) -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, ToolCallPart(tool_name='f', args={}, tool_call_id='c')),
        ev.ToolCallReady('c', 'approval'),
        ev.ToolCallReady('c', 'client'),
        ev.PartEnd(0),
    ]
    assert sent_calls(name, encode(name, events)) == [('c', True)]


@pytest.mark.parametrize('name', ENCODERS)
def test_a_mark_before_its_call_starts_marks_nothing(name: str) -> None:
    events: list[ev.AgentEvent] = [
        ev.ToolCallReady('c', 'client'),
        ev.PartStart(0, ToolCallPart(tool_name='f', args={}, tool_call_id='c')),
        ev.PartEnd(0),
    ]
    assert sent_calls(name, encode(name, events)) == [('c', False)]
