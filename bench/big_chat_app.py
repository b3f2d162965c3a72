"""The demo app with a store and a one-line agent, for uvicorn: `uvicorn big_chat_app:app` (run from bench/),
the store's URL in `UIBRIDGE_BENCH_STORE`. Used by `bench_big_chat.py`, also against an older source tree (its
`src` first on `PYTHONPATH`), so it uses nothing newer than `create_app(agent, store=...)`."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from uibridge import ModelResponse, TextPart
from uibridge.server import AgentRun, create_app


async def agent(run: AgentRun) -> AsyncIterator[ModelResponse]:
    yield ModelResponse(parts=[TextPart(content=f'{len(run.messages)} messages so far.')])


app = create_app(agent, store=os.environ['UIBRIDGE_BENCH_STORE'], keep_alive=None)
