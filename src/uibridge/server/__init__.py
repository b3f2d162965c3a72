"""Starlette/ASGI endpoints that serve an agent over the Vercel AI and AG-UI protocols, and the demo app.

```python
from starlette.applications import Starlette
from starlette.routing import Route
from uibridge.server import AGUIEndpoint, VercelAIEndpoint

app = Starlette(routes=[Route('/api/chat', VercelAIEndpoint(my_agent)), Route('/ag-ui', AGUIEndpoint(my_agent))])
```

`create_app(agent)` builds that app, with `GET /healthz` and `GET /readyz` (and the demo chat page at `/` with
`page=True`); `python -m uibridge serve [module:agent]` runs it with the page, for your agent or the built-in demo.
"""

from typing import TYPE_CHECKING, Any

from .ag_ui import AGUIBinding, AGUIEndpoint
from .endpoint import DEFAULT_MAX_BODY_BYTES, ChatEndpoint, ProtocolBinding
from .options import EndpointOptions
from .run import Agent, AgentRun, OnComplete, RunStatus
from .telemetry import Telemetry
from .vercel_ai import VercelAIBinding, VercelAIEndpoint

if TYPE_CHECKING:
    from .app import create_app


def __getattr__(name: str) -> Any:
    # The endpoints are plain ASGI apps; only `create_app` builds a Starlette app, so Starlette is imported
    # when it is asked for, not by everyone who mounts an endpoint in another framework.
    if name == 'create_app':
        from .app import create_app

        return create_app
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


__all__ = [
    'DEFAULT_MAX_BODY_BYTES',
    'AGUIBinding',
    'AGUIEndpoint',
    'Agent',
    'AgentRun',
    'ChatEndpoint',
    'EndpointOptions',
    'OnComplete',
    'ProtocolBinding',
    'RunStatus',
    'Telemetry',
    'VercelAIBinding',
    'VercelAIEndpoint',
    'create_app',
]
