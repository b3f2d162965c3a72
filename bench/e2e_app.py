"""The demo app with a benchmark agent, for uvicorn: `uvicorn e2e_app:app` (run from bench/).

The agent is `e2e_agents.fast_agent` (500 text deltas as fast as it can: no model, no sleeps, so what the
benchmark measures is the bridge: request parsing, sanitizing, encoding, streaming), or
`e2e_agents.slow_agent` (a delta every 20 ms, each stamped with when it was yielded) when
`UIBRIDGE_BENCH_AGENT=slow`.
"""

from __future__ import annotations

from e2e_agents import fast_agent, slow, slow_agent

from uibridge.server import create_app

app = create_app(slow_agent if slow() else fast_agent, keep_alive=None)
