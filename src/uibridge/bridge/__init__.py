"""Serve a remote agent that speaks one chat protocol to a frontend that speaks the other.

```python
from uibridge.bridge import RemoteAGUIAgent, RemoteVercelAgent
from uibridge.server import create_app

app = create_app(RemoteAGUIAgent('http://agents:8000/agent'))       # useChat in front of an AG-UI backend
app = create_app(RemoteVercelAgent('http://next:3000/api/chat'))    # @ag-ui/client in front of a Vercel route
```

Each is an ordinary uibridge agent (`uibridge.server.Agent`): the endpoint verifies the frontend's history and
approvals, and signs, stores, bounds and traces the run as it does any agent's; the remote receives the verified
history in its own protocol. See `RemoteAgent` for what crosses the bridge (approvals, client tools, headers,
errors, cancellation) and docs/bridge.md for the two deployments. Needs the `client` extra (httpx).
"""

from .ag_ui import RemoteAGUIAgent
from .remote import REMOTE_METADATA_KEY, RemoteAgent, RemoteOptions, remote_approval_ids
from .vercel_ai import RemoteVercelAgent

__all__ = [
    'REMOTE_METADATA_KEY',
    'RemoteAGUIAgent',
    'RemoteAgent',
    'RemoteOptions',
    'RemoteVercelAgent',
    'remote_approval_ids',
]
