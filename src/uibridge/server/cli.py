"""`python -m uibridge serve`: the demo app under uvicorn."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .auth import ANONYMOUS, RequestInfo
from .run import Agent

__all__ = ['demo_authorize', 'main']

DEMO_USER_HEADER = 'x-demo-user'


async def demo_authorize(request: RequestInfo) -> str | None:
    """The demo's `authorize`: the principal is whatever the `x-demo-user` header says (`anonymous` without
    it). Enough to show and test ownership; a real app takes it from a verified session or token."""
    return request.headers.get(DEMO_USER_HEADER) or ANONYMOUS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m uibridge', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    serve = commands.add_parser('serve', help='serve the demo agent and page (no API key needed)')
    serve.add_argument('--host', default='127.0.0.1', help='interface to bind (default 127.0.0.1)')
    serve.add_argument('--port', type=int, default=8000, help='port (default 8000)')
    serve.add_argument('--delay', type=float, default=0.02, help='seconds between streamed words (default 0.02)')
    serve.add_argument('--expose-errors', action='store_true', help="show the agent's exception text in the UI")
    serve.add_argument(
        '--store',
        metavar='URL',
        help='keep the history on the server (server-managed history, resumable streams): memory:, '
        'sqlite:///path.db or redis://host:port/N; without it the client holds the history',
    )
    serve.add_argument(
        '--lease', type=float, default=None, help="seconds a run's claim holds without a heartbeat (default 10)"
    )
    serve.add_argument(
        '--slow-seconds', type=float, default=5.0, help='how long the `slow` keyword streams (default 5)'
    )
    serve.add_argument(
        '--vercel-sdk-version',
        type=int,
        choices=(5, 6, 7),
        default=7,
        help='the major version of `ai` the Vercel clients run; older ones get what they accept (default 7)',
    )
    remote = serve.add_mutually_exclusive_group()
    remote.add_argument('--remote-ag-ui', metavar='URL', help='serve the page from a remote AG-UI agent at URL')
    remote.add_argument('--remote-vercel', metavar='URL', help='serve the page from a remote Vercel AI chat route')
    args = parser.parse_args(argv)

    try:
        import uvicorn
    except ImportError:
        print('The demo server needs uvicorn: pip install "uibridge[server]"', file=sys.stderr)
        return 1
    from .app import create_app
    from .demo import DemoAgent
    from .store import store_from_url

    agent = _remote_agent(args.remote_ag_ui, args.remote_vercel) or DemoAgent(
        delay=args.delay, slow_seconds=args.slow_seconds
    )
    sdk_version = args.vercel_sdk_version
    if args.store is None:
        app = create_app(agent, expose_errors=args.expose_errors, vercel_sdk_version=sdk_version)
    else:
        _make_sqlite_folder(args.store)
        store = store_from_url(args.store, **({'lease': args.lease} if args.lease else {}))
        app = create_app(
            agent,
            expose_errors=args.expose_errors,
            store=store,
            authorize=demo_authorize,
            vercel_sdk_version=sdk_version,
        )
    where = f'http://{args.host}:{args.port}/'
    if args.remote_ag_ui or args.remote_vercel:
        print(f'uibridge demo: the agent is remote, at {args.remote_ag_ui or args.remote_vercel}', flush=True)
    kept = f'history kept in {args.store}' if args.store else 'history kept by the client'
    print(f'uibridge demo: {where}  (Vercel AI: /api/chat for ai@{sdk_version}, AG-UI: /ag-ui; {kept})', flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level='info')
    return 0


def _remote_agent(ag_ui: str | None, vercel: str | None) -> Agent | None:
    """The remote agent the page talks to (`uibridge.bridge`), declaring the page's client tool to an AG-UI remote
    (the page's `useChat` requests name none)."""
    if ag_ui is None and vercel is None:
        return None
    from ..bridge import RemoteAGUIAgent, RemoteVercelAgent
    from ..core.run import ClientTool

    if vercel is not None:
        return RemoteVercelAgent(vercel)
    assert ag_ui is not None
    page_tool = ClientTool('get_local_time', "The browser's local time", {'type': 'object', 'properties': {}})
    return RemoteAGUIAgent(ag_ui, tools=[page_tool])


def _make_sqlite_folder(url: str) -> None:
    """`make serve` points at a file in an ignored folder that a fresh checkout does not have yet."""
    if url.lower().startswith('sqlite:///'):
        Path(url[len('sqlite:///') :]).parent.mkdir(parents=True, exist_ok=True)
