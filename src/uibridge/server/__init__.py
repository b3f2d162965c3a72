"""Starlette/ASGI endpoints that serve an agent over the Vercel AI and AG-UI protocols, and the demo app.

```python
from starlette.applications import Starlette
from starlette.routing import Mount
from uibridge.server import AGUIEndpoint, VercelAIEndpoint

app = Starlette(routes=[Mount('/api/chat', VercelAIEndpoint(my_agent)), Mount('/ag-ui', AGUIEndpoint(my_agent))])
```
"""

from .endpoint import DEFAULT_MAX_BODY_BYTES, ChatEndpoint, ProtocolBinding
from .run import Agent, AgentRun, OnComplete, RunStatus

__all__ = [
    'DEFAULT_MAX_BODY_BYTES',
    'Agent',
    'AgentRun',
    'ChatEndpoint',
    'OnComplete',
    'ProtocolBinding',
    'RunStatus',
]
