"""`create_app`: one Starlette app serving an agent over both protocols, and the demo page at `/`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from typing_extensions import Unpack

from ..core.provenance import Keyring
from .ag_ui import AGUIEndpoint
from .options import AppOptions, EndpointOptions, check_sdk_version
from .run import Agent
from .store import store_from_url
from .vercel_ai import VercelAIEndpoint

__all__ = ['PAGE_PATH', 'create_app']

PAGE_PATH = Path(__file__).parent / 'demo' / 'page.html'
FAVICON_PATH = Path(__file__).parent / 'demo' / 'favicon.svg'


def create_app(agent: Agent | None = None, **options: Unpack[AppOptions]) -> Starlette:
    """`POST /api/chat` (Vercel AI), `POST /ag-ui` (AG-UI) and the demo page at `GET /`.

    `agent` defaults to the built-in demo agent. `vercel_sdk_version` is the Vercel endpoint's `sdk_version`
    (the `ai` major version of its clients: 5, 6 or 7, the default). The other `options` go to both endpoints
    (see `ChatEndpoint`); both
    sign and verify with one keyring (`secret`, else `UIBRIDGE_SECRET`, else a random key for this process)
    and share one ledger of approvals already acted on (the store's with a store, else the process's).

    With `store=` (a `ChatStore`, or a URL for `store_from_url`), both endpoints keep server-managed history
    in that one store, and each also answers `GET {api}/{chatId}` (the stored messages),
    `GET {api}/{chatId}/stream` (resume the chat's stream) and `DELETE {api}/{chatId}/stream` (stop its run).
    A store made here from a URL is closed when the app shuts down. Without a store,
    `GET /api/chat/{chatId}/stream` answers 204 (nothing to resume).
    """
    sdk_version = check_sdk_version(options.pop('vercel_sdk_version', 7))
    if agent is None:
        from .demo import DemoAgent

        agent = DemoAgent()
    options['secret'] = Keyring.of(options.get('secret', options.pop('approval_secret', None)))
    store = options.get('store')
    owned = store_from_url(store) if isinstance(store, str) else None  # one store, so one ledger, for both
    if owned is not None:
        options['store'] = owned
    shared = cast('EndpointOptions', options)  # `vercel_sdk_version` popped: what both endpoints take
    vercel = VercelAIEndpoint(agent, sdk_version=sdk_version, **shared)
    ag_ui = AGUIEndpoint(agent, **shared)
    page = PAGE_PATH.read_text(encoding='utf-8')
    favicon = FAVICON_PATH.read_bytes()

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers={'cache-control': 'no-cache'})

    async def icon(request: Request) -> Response:
        # The page links it; without it, a browser asks for /favicon.ico and logs the 404 as a console error.
        return Response(favicon, media_type='image/svg+xml', headers={'cache-control': 'max-age=86400'})

    async def nothing_to_resume(request: Request) -> Response:
        # `useChat({resume: true})` asks here for a stream to resume; runs do not outlive their request.
        return Response(status_code=204)

    routes = [
        Route('/', index, methods=['GET']),
        Route('/favicon.svg', icon, methods=['GET']),
        Route('/api/chat', vercel),
        Route('/ag-ui', ag_ui),
    ]
    if store is None:
        routes.append(Route('/api/chat/{chat_id}/stream', nothing_to_resume, methods=['GET']))
    else:
        for api, endpoint in (('/api/chat', vercel), ('/ag-ui', ag_ui)):
            routes.append(Route(api + '/{chat_id}', endpoint, methods=['GET']))
            routes.append(Route(api + '/{chat_id}/stream', endpoint, methods=['GET', 'DELETE']))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            if owned is not None:
                await owned.aclose()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.vercel_ai = vercel
    app.state.ag_ui = ag_ui
    app.state.agent = agent
    app.state.store = options.get('store')
    return app
