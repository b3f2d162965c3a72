"""The floor for `e2e_app.py`, for uvicorn: `uvicorn e2e_floor_app:app` (run from bench/).

A bare Starlette app that does the least a streaming chat endpoint can: it parses the same JSON body, then
streams the same frames our encoders write for the same run, pre-encoded once at import, through Starlette's
`StreamingResponse` (one ASGI `send` per frame, as any generator-fed stream does). No history is loaded,
verified or sanitized and nothing is encoded per request, so the difference between our row and this one is
what uibridge's request handling and streaming cost on top of the frames themselves.

With `UIBRIDGE_BENCH_AGENT=slow` it streams the slow run instead: the same frames with each delta's stamp
substituted when it is sent, `SLOW_INTERVAL` seconds apart.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
from e2e_agents import (
    AG_UI_BODY,
    SLOW_DELTAS,
    SLOW_INTERVAL,
    STAMP_PLACEHOLDER,
    VERCEL_BODY,
    fast_events,
    head_events,
    slow,
    stamp,
    tail_events,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from uibridge.core.events import AgentEvent, PartDelta
from uibridge.core.provenance import Keyring
from uibridge.core.stream import EventStreamEncoder
from uibridge.server.ag_ui import AGUIBinding
from uibridge.server.vercel_ai import VercelAIBinding

_KEYRING = Keyring('bench-floor')


class _Frames:
    """One protocol's response, pre-encoded: headers, the frames before the deltas, one delta frame per
    fast delta (or the slow run's delta template), and the frames after them."""

    def __init__(self, binding: VercelAIBinding | AGUIBinding, body: bytes) -> None:
        encoder = _encoder(binding, body)
        self.headers = {**encoder.headers, 'cache-control': 'no-cache', 'x-accel-buffering': 'no'}
        self.fast = _encode_all(_encoder(binding, body), fast_events())
        self.head = [encoder.start(), *(encoder.encode(event) for event in head_events())]
        self.delta = encoder.encode(PartDelta(0, STAMP_PLACEHOLDER))
        self.tail = [*(encoder.encode(event) for event in tail_events()), encoder.close()]


def _encoder(binding: VercelAIBinding | AGUIBinding, body: bytes) -> EventStreamEncoder:
    request, run_input = binding.parse(json.loads(body))
    return binding.encoder(request, run_input, _KEYRING)  # pyright: ignore[reportArgumentType]


def _encode_all(encoder: EventStreamEncoder, events: list[AgentEvent]) -> list[bytes]:
    frames = [encoder.start(), *(encoder.encode(event) for event in events), encoder.close()]
    return [frame for frame in frames if frame]


async def _fast(frames: _Frames) -> AsyncIterator[bytes]:
    for frame in frames.fast:
        yield frame


async def _slow(frames: _Frames) -> AsyncIterator[bytes]:
    for frame in frames.head:
        if frame:
            yield frame
    placeholder = STAMP_PLACEHOLDER.encode()
    for _ in range(SLOW_DELTAS):
        await anyio.sleep(SLOW_INTERVAL)
        yield frames.delta.replace(placeholder, stamp().encode())
    for frame in frames.tail:
        if frame:
            yield frame


def _endpoint(frames: _Frames) -> Any:
    stream = _slow if slow() else _fast

    async def endpoint(request: Request) -> Response:
        body: Mapping[str, Any] = await request.json()  # the same parse of the same body
        if not isinstance(body.get('messages'), list):
            return Response(status_code=422)
        return StreamingResponse(stream(frames), headers=frames.headers)

    return endpoint


async def index(request: Request) -> Response:
    return HTMLResponse('<!doctype html><title>floor</title>')


app = Starlette(
    routes=[
        Route('/', index, methods=['GET']),
        Route('/api/chat', _endpoint(_Frames(VercelAIBinding(), VERCEL_BODY)), methods=['POST']),
        Route('/ag-ui', _endpoint(_Frames(AGUIBinding(), AG_UI_BODY)), methods=['POST']),
    ]
)
