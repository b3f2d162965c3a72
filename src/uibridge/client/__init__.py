"""Python clients for both chat protocols, on httpx (the `client` extra): drive any compliant server (uibridge's
own, pydantic-ai's, a Vercel AI SDK route, any AG-UI producer) from tests, evaluations and scripts, in the
neutral model.

```python
from uibridge.client import AGUIClient, VercelAIClient

run = await AGUIClient('http://127.0.0.1:8000/ag-ui').run(history)      # -> ClientRun
run = await VercelAIClient('http://127.0.0.1:8000/api/chat').run(history)
history += run.messages
async for event in VercelAIClient(url).stream(history):                 # the neutral events as they arrive
    ...
```

Each turn dumps the history into the protocol (`dump_messages`), posts it and reads the answer with the protocol's
stream decoder (`uibridge.adapters.<protocol>.decode`); `ClientRun` holds the new messages, how the run ended,
the approvals it asks for and the calls the client's tools must answer. `RemoteError` is a server that cannot be
asked or a stream that cannot be read; `StreamLimits` bounds what is read.
"""

from .ag_ui import AGUIClient, AGUITurn
from .stream import ClientOptions, RemoteError, StreamLimits
from .turn import ClientRun, Exchange, Turn
from .vercel_ai import VercelAIClient, VercelTurn

__all__ = [
    'AGUIClient',
    'AGUITurn',
    'ClientOptions',
    'ClientRun',
    'Exchange',
    'RemoteError',
    'StreamLimits',
    'Turn',
    'VercelAIClient',
    'VercelTurn',
]
