"""The demo app with a benchmark agent, for uvicorn: `uvicorn e2e_app:app` (run from bench/).

The agent streams one answer of `DELTAS` text deltas as fast as it can: no model, no sleeps, so what the
benchmark measures is the bridge (request parsing, sanitizing, encoding, streaming), not a model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from e2e_script import DELTAS, TOKENS

from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart, RunFinished
from uibridge.core.messages import TextPart
from uibridge.server import AgentRun, create_app


async def bench_agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
    yield ResponseStart(model_name='bench')
    yield PartStart(0, TextPart(content=''))
    for i in range(DELTAS):
        yield PartDelta(0, TOKENS[i % len(TOKENS)])
    yield PartEnd(0)
    yield RunFinished('stop')


app = create_app(bench_agent, keep_alive=None)
