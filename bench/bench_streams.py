"""Stream encoding, both protocols: neutral events to SSE bytes, ours against the peer's event streams.

Bars (issue 6): at least 3x faster than the peer per event, and within 3x of `json.dumps` of the same chunk
dicts. Two workloads: one answer streamed as 10,000 text deltas, and 1,000 tool calls (each a model
response with one call whose arguments stream as one delta, then its result).

Each side is fed its own library's events for the same run: ours the neutral `uibridge.core.events`, the
peer pydantic-ai's agent stream events (`PartStartEvent`, `PartDeltaEvent`, ..., `FunctionToolResultEvent`),
which its `VercelAIEventStream` / `AGUIEventStream` transform and encode. The peer's streams are async
generators by design, so they run on one event loop kept across repetitions; ours is sans-IO and runs as a
plain loop, as the server drives it. The `json.dumps` floor parses our own output back into chunk dicts
and times `json.dumps` of each.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from _harness import Row, compare, fmt_time, print_table

from uibridge.core import events as ev
from uibridge.core import messages as ub
from uibridge.core.collector import MessageCollector

DELTAS = 10_000
CALLS = 1_000
TOKENS = [' the', ' weather', ' in', ' Paris', ' is', ' "mild"', ',', ' 21', ' °C', '.\n', ' Rain', ' later', '?']
ARGS = '{"city": "Paris", "days": 3}'
RESULT = {'temp_c': 21, 'sky': 'clear', 'hourly': [{'h': h, 't': 18 + h % 5} for h in range(6)]}


def _token(i: int) -> str:
    return TOKENS[i % len(TOKENS)]


# ----------------------------------------------------------------------------------------- ours


def ours_text() -> list[ev.AgentEvent]:
    events: list[ev.AgentEvent] = [ev.ResponseStart(model_name='bench'), ev.PartStart(0, ub.TextPart(content=''))]
    events += [ev.PartDelta(0, _token(i)) for i in range(DELTAS)]
    events += [ev.PartEnd(0), ev.RunFinished('stop')]
    return events


def ours_tools() -> list[ev.AgentEvent]:
    events: list[ev.AgentEvent] = []
    for i in range(CALLS):
        call_id = f'call_{i}'
        events += [
            ev.ResponseStart(model_name='bench'),
            ev.PartStart(0, ub.ToolCallPart(tool_name='get_weather', args=None, tool_call_id=call_id)),
            ev.PartDelta(0, ARGS),
            ev.PartEnd(0),
            ev.ToolResult(ub.ToolReturnPart(tool_name='get_weather', content=RESULT, tool_call_id=call_id)),
        ]
    events.append(ev.RunFinished('stop'))
    return events


# ----------------------------------------------------------------------------------------- peer


def peer_text() -> list[Any]:
    from pydantic_ai import messages as pa

    events: list[Any] = [pa.PartStartEvent(index=0, part=pa.TextPart(content=''))]
    events += [pa.PartDeltaEvent(index=0, delta=pa.TextPartDelta(content_delta=_token(i))) for i in range(DELTAS)]
    events.append(pa.PartEndEvent(index=0, part=pa.TextPart(content=''.join(_token(i) for i in range(DELTAS)))))
    return events


def peer_tools() -> list[Any]:
    from pydantic_ai import messages as pa

    events: list[Any] = []
    for i in range(CALLS):
        call_id = f'call_{i}'
        done = pa.ToolCallPart(tool_name='get_weather', args=ARGS, tool_call_id=call_id)
        events += [
            pa.PartStartEvent(index=0, part=pa.ToolCallPart(tool_name='get_weather', args=None, tool_call_id=call_id)),
            pa.PartDeltaEvent(index=0, delta=pa.ToolCallPartDelta(args_delta=ARGS, tool_call_id=call_id)),
            pa.PartEndEvent(index=0, part=done),
            pa.FunctionToolCallEvent(part=done),
            pa.FunctionToolResultEvent(
                pa.ToolReturnPart(tool_name='get_weather', content=RESULT, tool_call_id=call_id)
            ),
        ]
    return events


class _PeerRunner:
    """Drives a peer event stream over its source events on one event loop, returning the SSE bytes."""

    def __init__(self, make_stream: Callable[[], Any]) -> None:
        self.loop = asyncio.new_event_loop()
        self.make_stream = make_stream

    def run(self, events: list[Any]) -> bytes:
        return self.loop.run_until_complete(self._run(events))

    async def _run(self, events: list[Any]) -> bytes:
        async def source() -> AsyncIterator[Any]:
            for event in events:
                yield event

        stream = self.make_stream()
        out = [chunk async for chunk in stream.encode_stream(stream.transform_stream(source()))]
        return ''.join(out).encode()


# --------------------------------------------------------------------------------------- compare


async def _async_encode(make_stream: Callable[[], Any], events: list[ev.AgentEvent]) -> bytes:
    """Ours driven the way the peer's stream is: events from an async generator, chunks through another."""

    async def source() -> AsyncIterator[ev.AgentEvent]:
        for event in events:
            yield event

    async def chunks() -> AsyncIterator[bytes]:
        stream = make_stream()
        yield stream.start()
        async for event in source():
            yield stream.encode(event)
        yield stream.close()

    return b''.join([chunk async for chunk in chunks()])


def chunk_dicts(sse: bytes) -> list[Any]:
    """The JSON payload of every `data:` line of an SSE stream (the `[DONE]` terminator left out)."""
    dicts: list[Any] = []
    for line in sse.decode().split('\n'):
        if line.startswith('data: ') and line != 'data: [DONE]':
            dicts.append(json.loads(line[len('data: ') :]))
    return dicts


def _rows(
    protocol: str,
    encode: Callable[[Iterable[ev.AgentEvent]], bytes],
    make_stream: Callable[[], Any],
    peer: _PeerRunner,
) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    notes: list[str] = []
    for label, ours_events, peer_events in (
        (f'{DELTAS:,} text deltas', ours_text(), peer_text()),
        (f'{CALLS:,} tool calls', ours_tools(), peer_tools()),
    ):
        ours_bytes = encode(ours_events)
        peer_bytes = peer.run(peer_events)
        dicts = chunk_dicts(ours_bytes)

        def floor(dicts: list[Any] = dicts, dumps: Callable[[Any], str] = json.dumps) -> None:
            for chunk in dicts:
                dumps(chunk)

        def collect(events: list[ev.AgentEvent] = ours_events) -> None:
            collector = MessageCollector()
            for event in events:
                collector.feed(event)

        t_ours, t_peer, t_floor, t_ours_async, t_collect = compare(
            [
                lambda ours_events=ours_events: encode(ours_events),
                lambda peer_events=peer_events: peer.run(peer_events),
                floor,
                lambda ours_events=ours_events: peer.loop.run_until_complete(_async_encode(make_stream, ours_events)),
                collect,
            ],
            repeat=7,
        )
        per_ours = t_ours / len(ours_events)
        per_peer = t_peer / len(peer_events)
        speedup = per_peer / per_ours
        rows.append(
            Row(
                f'{protocol}: {label}',
                f'{fmt_time(t_ours)} ({per_ours * 1e6:.2f} µs/event)',
                f'{fmt_time(t_peer)} ({per_peer * 1e6:.2f} µs/event)',
                f'{speedup:.1f}x faster',
                '≥ 3x faster per event',
                speedup >= 3,
            )
        )
        over_floor = t_ours / t_floor
        rows.append(
            Row(
                f'{protocol}: {label}, vs `json.dumps` of the same {len(dicts):,} chunk dicts',
                fmt_time(t_ours),
                f'`json.dumps`: {fmt_time(t_floor)}',
                f'{over_floor:.1f}x `json.dumps`',
                '≤ 3x `json.dumps`',
                over_floor <= 3,
            )
        )
        notes.append(
            f'{protocol}, {label}: ours {len(ours_events):,} events → {len(dicts):,} chunks, '
            f'{len(ours_bytes):,} bytes; the peer {len(peer_events):,} events → '
            f'{len(chunk_dicts(peer_bytes)):,} chunks, {len(peer_bytes):,} bytes. Driven like the peer (events '
            f'from an async generator, chunks yielded through another, same event loop) ours takes '
            f'{fmt_time(t_ours_async)}. Of ours, {fmt_time(t_collect)} ({t_collect / t_ours:.0%}) is collecting the '
            f"run's messages (`MessageCollector` alone over the same events), which the peer's stream does not do: "
            "pydantic-ai's agent builds its messages outside it."
        )
    return rows, notes


def main() -> bool:
    warnings.simplefilter('ignore')
    from pydantic_ai.ui.ag_ui import AGUIEventStream as PeerAGUIEventStream
    from pydantic_ai.ui.vercel_ai import VercelAIEventStream as PeerVercelAIEventStream

    from uibridge.adapters import ag_ui, vercel_ai

    rows: list[Row] = []
    notes: list[str] = []
    for protocol, encode, make_stream, peer in (
        (
            'Vercel',
            lambda events: vercel_ai.encode_events(events, message_id='msg_bench'),
            lambda: vercel_ai.VercelAIEventStream(message_id='msg_bench'),
            _PeerRunner(lambda: PeerVercelAIEventStream(sdk_version=7, server_message_id='msg_bench')),
        ),
        (
            'AG-UI',
            lambda events: ag_ui.encode_events(events, thread_id='thread', run_id='run'),
            lambda: ag_ui.AGUIEventStream(thread_id='thread', run_id='run'),
            _PeerRunner(lambda: PeerAGUIEventStream(thread_id='thread', run_id='run')),
        ),
    ):
        more_rows, more_notes = _rows(protocol, encode, make_stream, peer)
        rows += more_rows
        notes += more_notes
    return print_table('Stream encoding: events to SSE bytes', rows, notes)


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
