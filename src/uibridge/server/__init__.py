"""Starlette/ASGI endpoints that serve an agent over the Vercel AI and AG-UI protocols, and the demo app.

```python
from starlette.applications import Starlette
from starlette.routing import Route
from uibridge.server import AGUIEndpoint, VercelAIEndpoint

app = Starlette(routes=[Route('/api/chat', VercelAIEndpoint(my_agent)), Route('/ag-ui', AGUIEndpoint(my_agent))])
```

`create_app(agent)` builds that app with the demo page at `/`; `python -m uibridge serve` runs it with the
built-in demo agent.
"""

from .ag_ui import AGUIBinding, AGUIEndpoint
from .app import create_app
from .endpoint import DEFAULT_MAX_BODY_BYTES, ChatEndpoint, ProtocolBinding
from .run import Agent, AgentRun, OnComplete, RunStatus
from .vercel_ai import VercelAIBinding, VercelAIEndpoint

__all__ = [
    'DEFAULT_MAX_BODY_BYTES',
    'AGUIBinding',
    'AGUIEndpoint',
    'Agent',
    'AgentRun',
    'ChatEndpoint',
    'OnComplete',
    'ProtocolBinding',
    'RunStatus',
    'VercelAIBinding',
    'VercelAIEndpoint',
    'create_app',
]
