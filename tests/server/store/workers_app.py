"""The app `test_workers.py` serves with uvicorn's own command line (`uvicorn --workers 2 --factory
workers_app:make_app`): the demo agent, server-managed history in the store `WORKERS_STORE` names (its stream
logs in `WORKERS_STREAM_LOG` when set), and every
response saying which worker process answered it (`x-worker: <pid>`), so the tests know where they landed."""

from __future__ import annotations

import os
from typing import Any

from uibridge.server import create_app
from uibridge.server.cli import demo_authorize
from uibridge.server.demo import DemoAgent

SLOW_SECONDS = 2.0


def make_app() -> Any:
    app = create_app(
        DemoAgent(delay=0, slow_seconds=SLOW_SECONDS),
        store=os.environ['WORKERS_STORE'],
        stream_log=os.environ.get('WORKERS_STREAM_LOG'),
        authorize=demo_authorize,
    )
    worker = str(os.getpid()).encode()

    async def tagged(scope: Any, receive: Any, send: Any) -> None:
        if scope['type'] != 'http':
            await app(scope, receive, send)
            return

        async def tag(message: Any) -> None:
            if message['type'] == 'http.response.start':
                message = {**message, 'headers': [*message.get('headers', []), (b'x-worker', worker)]}
            await send(message)

        await app(scope, receive, tag)

    return tagged
