"""The bridge under benchmark, for uvicorn: `uvicorn bridge_app:app` (run from bench/), in front of the remote at
`UIBRIDGE_BENCH_REMOTE`: `create_app(RemoteAGUIAgent(url))` for an AG-UI endpoint (`.../ag-ui`), else
`create_app(RemoteVercelAgent(url))` for a Vercel AI chat route. Keep-alive comments off, as in `e2e_app`."""

from __future__ import annotations

import os

from uibridge.bridge import RemoteAGUIAgent, RemoteVercelAgent
from uibridge.server import create_app

REMOTE_ENV = 'UIBRIDGE_BENCH_REMOTE'

if REMOTE_ENV in os.environ:  # imported by bench_bridge.py for the name alone
    _remote = os.environ[REMOTE_ENV]
    _agent = RemoteAGUIAgent(_remote) if _remote.endswith('/ag-ui') else RemoteVercelAgent(_remote)
    app = create_app(_agent, keep_alive=None)
