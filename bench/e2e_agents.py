"""The two scripted answers the end-to-end servers stream, shared by our app and the bare-Starlette floor.

- fast: `DELTAS` text deltas as fast as the agent can yield them (no model, no sleeps), so what is measured
  is the bridge (parsing, encoding, streaming), not a model;
- slow: `SLOW_DELTAS` deltas `SLOW_INTERVAL` seconds apart, like a model streaming tokens. Each delta's text
  is a stamp of the moment it was yielded (`time.monotonic()`, which every process on the machine shares), so
  the client can tell how long each delta took from the agent's `yield` to its own read.

Which one a server streams is chosen by the `UIBRIDGE_BENCH_AGENT` environment variable (`fast` by default),
so that each server process serves one kind of run and its CPU time counts that kind alone.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import AsyncIterator

import anyio
from e2e_script import DELTAS, TOKENS

from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart, RunFinished
from uibridge.core.messages import TextPart

VERCEL_BODY = json.dumps(
    {
        'id': 'bench-chat',
        'trigger': 'submit-message',
        'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'Tell me about the weather.'}]}],
    }
).encode()
AG_UI_BODY = json.dumps(
    {
        'threadId': 'bench-thread',
        'runId': 'bench-run',
        'state': None,
        'messages': [{'id': 'u1', 'role': 'user', 'content': 'Tell me about the weather.'}],
        'tools': [],
        'context': [],
        'forwardedProps': {},
    }
).encode()
"""The requests every server answers, byte for byte."""

AGENT_ENV = 'UIBRIDGE_BENCH_AGENT'
INTERVAL_ENV = 'UIBRIDGE_BENCH_INTERVAL'
SLOW_DELTAS = 50
SLOW_INTERVAL = float(os.environ.get(INTERVAL_ENV, '0.02'))
"""Seconds between two slow deltas. `bench/instructions.py` sets 0: the agent still waits between deltas (a
checkpoint), so each delta is its own batch, but nothing is timed."""
STAMP_PATTERN = re.compile(rb'@(\d+\.\d{6});')
"""A stamp as it appears on the wire: `@<seconds>;` inside the delta's JSON string (neither protocol escapes it)."""
STAMP_PLACEHOLDER = '@0000000000.000000;'
"""What the floor pre-encodes in place of a stamp, to substitute at send time."""


def slow() -> bool:
    return os.environ.get(AGENT_ENV, 'fast') == 'slow'


def stamp() -> str:
    return f'@{time.monotonic():.6f};'


def head_events() -> list[AgentEvent]:
    return [ResponseStart(model_name='bench'), PartStart(0, TextPart(content=''))]


def tail_events() -> list[AgentEvent]:
    return [PartEnd(0), RunFinished('stop')]


def fast_events() -> list[AgentEvent]:
    """What the fast agent yields, as a list (for the floor to pre-encode)."""
    deltas: list[AgentEvent] = [PartDelta(0, TOKENS[i % len(TOKENS)]) for i in range(DELTAS)]
    return head_events() + deltas + tail_events()


async def fast_agent(run: object) -> AsyncIterator[AgentEvent]:
    yield ResponseStart(model_name='bench')
    yield PartStart(0, TextPart(content=''))
    for i in range(DELTAS):
        yield PartDelta(0, TOKENS[i % len(TOKENS)])
    yield PartEnd(0)
    yield RunFinished('stop')


async def slow_agent(run: object) -> AsyncIterator[AgentEvent]:
    yield ResponseStart(model_name='bench')
    yield PartStart(0, TextPart(content=''))
    for _ in range(SLOW_DELTAS):
        await anyio.sleep(SLOW_INTERVAL)
        yield PartDelta(0, stamp())
    yield PartEnd(0)
    yield RunFinished('stop')
