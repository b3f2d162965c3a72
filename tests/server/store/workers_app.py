"""The app `test_workers.py` serves with uvicorn's own command line (`uvicorn --workers 2 --factory
workers_app:make_app`): for each store `WORKERS_STORES` names, the demo agent with server-managed history in that
store, mounted under `/{name}`, and every response saying which worker process answered it (`x-worker: <pid>`), so
the tests know where they landed.

`WORKERS_STORES` is a JSON object: mount name -> `[store URL, stream log URL or null]`. One server for every store
keeps the module to two worker processes, rather than two per store; each mounted app is `create_app`'s own, its
store made from its URL and closed at shutdown by its own lifespan, which the root app runs."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount

from uibridge.server import create_app
from uibridge.server.cli import demo_authorize
from uibridge.server.demo import DemoAgent

SLOW_SECONDS = 2.0


def make_app() -> Any:
    stores: dict[str, tuple[str, str | None]] = json.loads(os.environ['WORKERS_STORES'])
    apps = {
        name: create_app(
            DemoAgent(delay=0, slow_seconds=SLOW_SECONDS), store=chats, stream_log=stream_log, authorize=demo_authorize
        )
        for name, (chats, stream_log) in stores.items()
    }

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for app in apps.values():
                await stack.enter_async_context(app.router.lifespan_context(app))
            yield

    root = Starlette(routes=[Mount(f'/{name}', app=app) for name, app in apps.items()], lifespan=lifespan)
    worker = str(os.getpid()).encode()

    async def tagged(scope: Any, receive: Any, send: Any) -> None:
        if scope['type'] != 'http':
            await root(scope, receive, send)
            return

        async def tag(message: Any) -> None:
            if message['type'] == 'http.response.start':
                message = {**message, 'headers': [*message.get('headers', []), (b'x-worker', worker)]}
            await send(message)

        await root(scope, receive, tag)

    return tagged
