"""`create_app`: one Starlette app serving an agent over both protocols, with health and readiness routes, and the
demo page at `/` when asked for."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import cast

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from typing_extensions import Unpack

from ..core.provenance import Keyring
from .ag_ui import AGUIEndpoint
from .options import AppOptions, EndpointOptions, check_bool, check_sdk_version
from .request_ids import REQUEST_ID_HEADER, request_id_for
from .run import Agent
from .store import ChatStore, store_from_url
from .vercel_ai import VercelAIEndpoint

logger = logging.getLogger('uibridge.server')

PAGE_PATH = Path(__file__).parent / 'demo' / 'page.html'
FAVICON_PATH = Path(__file__).parent / 'demo' / 'favicon.svg'
READY_TIMEOUT = 2.0
"""Seconds `GET /readyz` waits for the store's answer before it reports the store unavailable: a store that hangs
(a Redis host that drops packets) must not hang the probe past its own timeout."""
YOUR_AGENT = '<body data-agent="yours">'
"""How the page is told that it talks to another agent than the demo's (it then hides the demo's keyword list)."""

_NO_STORE = {'cache-control': 'no-store'}


def create_app(agent: Agent | None = None, *, page: bool = False, **options: Unpack[AppOptions]) -> Starlette:
    """`POST /api/chat` (Vercel AI), `POST /ag-ui` (AG-UI), `GET /healthz`, `GET /readyz`, and with `page=True`
    the demo chat page at `GET /` (without it, `/` is a 404).

    `agent` defaults to the built-in demo agent. `vercel_sdk_version` is the Vercel endpoint's `sdk_version`
    (the `ai` major version of its clients: 5, 6 or 7, the default). The other `options` go to both endpoints
    (see `ChatEndpoint`); both
    sign and verify with one keyring (`secret`, else `UIBRIDGE_SECRET`, else a random key for this process)
    and share one ledger of approvals already acted on (the store's with a store, else the process's).

    With `store=` (a `ChatStore`, or a URL for `store_from_url`), both endpoints keep server-managed history
    in that one store, and each also answers `GET {api}/{chatId}` (the stored messages),
    `GET {api}/{chatId}/stream` (resume the chat's stream) and `DELETE {api}/{chatId}/stream` (stop its run).
    `stream_log=` (a `redis://` URL, with `store=` a URL) keeps the streams' logs there and the chats in
    the store (`store_from_url`'s `stream_log`): `store='postgresql://…', stream_log='redis://…'`.
    A store made here from a URL is closed when the app shuts down. Without a store,
    `GET /api/chat/{chatId}/stream` answers 204 (nothing to resume).

    `GET /healthz` says the process serves requests (200); `GET /readyz` says whether it can serve chats: 200 when
    the store answers (`ChatStore.ping`) or there is none, 503 with the reason when it does not (within
    `READY_TIMEOUT` seconds). Neither asks `authorize`: probes carry no credentials, and neither says anything
    about a chat.
    """
    check_bool('page', page)
    sdk_version = check_sdk_version(options.pop('vercel_sdk_version', 7))
    if agent is None:
        from .demo import DemoAgent

        agent = DemoAgent()
    options['secret'] = Keyring.of(options.get('secret', options.pop('approval_secret', None)))
    store = options.get('store')
    stream_log = options.pop('stream_log', None)
    if stream_log is not None and not isinstance(store, str):
        raise ValueError(
            'stream_log= goes with store= given as a URL (create_app makes both, and closes both at shutdown); '
            'for a store object, pass store=SplitStore(store, RedisStreamLog(url)) and close it yourself'
        )
    # One store, so one ledger, for both endpoints.
    owned = store_from_url(store, stream_log=stream_log) if isinstance(store, str) else None
    if owned is not None:
        options['store'] = owned
    chat_store = cast('ChatStore | None', options.get('store'))
    shared = cast('EndpointOptions', options)  # `vercel_sdk_version`, `stream_log` popped: what both endpoints take
    vercel = VercelAIEndpoint(agent, sdk_version=sdk_version, **shared)
    ag_ui = AGUIEndpoint(agent, **shared)

    async def nothing_to_resume(request: Request) -> Response:
        # `useChat({resume: true})` asks here for a stream to resume; runs do not outlive their request.
        return Response(status_code=204, headers=_request_id(request))

    async def healthz(request: Request) -> Response:
        return JSONResponse({'status': 'ok'}, headers=_NO_STORE | _request_id(request))

    async def readyz(request: Request) -> Response:
        reason = None if chat_store is None else await _store_unavailable(chat_store)
        headers = _NO_STORE | _request_id(request)
        if reason is None:
            return JSONResponse({'status': 'ready'}, headers=headers)
        return JSONResponse({'status': 'unavailable', 'reason': reason}, status_code=503, headers=headers)

    routes = [
        Route('/healthz', healthz, methods=['GET']),
        Route('/readyz', readyz, methods=['GET']),
        Route('/api/chat', vercel),
        Route('/ag-ui', ag_ui),
    ]
    if page:
        routes += _page_routes(demo=_is_demo(agent))
    if chat_store is None:
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

    # Every answer names its request (`x-request-id`): the endpoints' (each adds it to its own), the probes' and
    # the page's, and the router's refusals (an unknown path, a method a route does not take).
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: _refused})
    app.state.vercel_ai = vercel
    app.state.ag_ui = ag_ui
    app.state.agent = agent
    app.state.store = chat_store
    return app


def _request_id(request: Request) -> dict[str, str]:
    """The `x-request-id` header of an answer of `create_app`'s own (the endpoints add theirs)."""
    return {REQUEST_ID_HEADER: request_id_for(request.headers)}


async def _refused(request: Request, error: Exception) -> Response:
    """The router's refusal (404 for an unknown path, 405 for a method a route does not take), naming its request."""
    assert isinstance(error, HTTPException)
    headers = {**(error.headers or {}), **_request_id(request)}
    if error.status_code in (204, 304):  # answers that have no body
        return Response(status_code=error.status_code, headers=headers)
    return PlainTextResponse(error.detail, status_code=error.status_code, headers=headers)


async def _store_unavailable(store: ChatStore) -> str | None:
    """Why the store cannot serve chats now (it raised, or did not answer in time), or None when it answered.
    The reason names the failure's kind only; its text (hosts, ports) goes to the server's log."""
    try:
        with anyio.fail_after(READY_TIMEOUT):
            await store.ping()
    except TimeoutError:
        logger.warning('Readiness: the store did not answer within %s s', READY_TIMEOUT)
        return f'the store did not answer within {READY_TIMEOUT:g} s'
    except Exception as error:
        logger.warning('Readiness: the store did not answer: %r', error)
        return f'the store did not answer: {type(error).__name__}'
    return None


def _is_demo(agent: Agent) -> bool:
    from .demo import DemoAgent

    return isinstance(agent, DemoAgent)


def _page_routes(*, demo: bool) -> list[Route]:
    """The demo chat page and its icon. With another agent than the demo's, the page leaves out what it says
    about the demo agent (its keywords)."""
    html = PAGE_PATH.read_text(encoding='utf-8')
    if not demo:
        html = html.replace('<body>', YOUR_AGENT, 1)
    favicon = FAVICON_PATH.read_bytes()

    async def index(request: Request) -> Response:
        return HTMLResponse(html, headers={'cache-control': 'no-cache'} | _request_id(request))

    async def icon(request: Request) -> Response:
        # The page links it; without it, a browser asks for /favicon.ico and logs the 404 as a console error.
        headers = {'cache-control': 'max-age=86400'} | _request_id(request)
        return Response(favicon, media_type='image/svg+xml', headers=headers)

    return [Route('/', index, methods=['GET']), Route('/favicon.svg', icon, methods=['GET'])]
