"""`python -m uibridge serve`: the demo app under uvicorn."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ['main']


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m uibridge', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    serve = commands.add_parser('serve', help='serve the demo agent and page (no API key needed)')
    serve.add_argument('--host', default='127.0.0.1', help='interface to bind (default 127.0.0.1)')
    serve.add_argument('--port', type=int, default=8000, help='port (default 8000)')
    serve.add_argument('--delay', type=float, default=0.02, help='seconds between streamed words (default 0.02)')
    serve.add_argument('--expose-errors', action='store_true', help="show the agent's exception text in the UI")
    args = parser.parse_args(argv)

    try:
        import uvicorn
    except ImportError:
        print('The demo server needs uvicorn: pip install "uibridge[server]"', file=sys.stderr)
        return 1
    from .app import create_app
    from .demo import DemoAgent

    app = create_app(DemoAgent(delay=args.delay), expose_errors=args.expose_errors)
    print(f'uibridge demo: http://{args.host}:{args.port}/  (Vercel AI: /api/chat, AG-UI: /ag-ui)', flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level='info')
    return 0
