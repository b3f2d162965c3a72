"""The peer's equivalent of `e2e_app.py`, for uvicorn: `uvicorn e2e_peer_app:app` (run from bench/).

pydantic-ai serves a chat endpoint through its adapters' `dispatch_request` with an `Agent`; the nearest
thing to our benchmark agent is an agent whose model is a `FunctionModel` that streams the same 500 text
deltas, without latency. So this side runs pydantic-ai's agent loop as well as its UI adapters: the
comparison is between the two ways of serving a scripted answer, not between encoders alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from e2e_script import DELTAS, TOKENS
from pydantic_ai import Agent
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from pydantic_ai.ui.vercel_ai import VercelAIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route


async def _stream(messages: list[Any], info: AgentInfo) -> AsyncIterator[str]:
    for i in range(DELTAS):
        yield TOKENS[i % len(TOKENS)]


agent = Agent(FunctionModel(stream_function=_stream))


async def vercel(request: Request) -> Response:
    return await VercelAIAdapter.dispatch_request(request, agent=agent, sdk_version=7)


async def ag_ui(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


async def index(request: Request) -> Response:
    return HTMLResponse('<!doctype html><title>peer</title>')


app = Starlette(
    routes=[
        Route('/', index, methods=['GET']),
        Route('/api/chat', vercel, methods=['POST']),
        Route('/ag-ui', ag_ui, methods=['POST']),
    ]
)
