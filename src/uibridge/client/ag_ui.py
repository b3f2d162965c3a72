"""`AGUIClient`: drive any AG-UI 1.0 server from Python, a turn at a time, in the neutral model.

```python
client = AGUIClient('http://127.0.0.1:8000/ag-ui')
run = await client.run(history, tools=[ClientTool('get_local_time')])
history += run.messages
if run.approval_ids:                       # the run waits for approvals: answer them in the next turn
    run = await client.run(history, approvals=[run.approval(call_id) for call_id in run.approval_ids])
```

A turn is one `RunAgentInput` POST, as `@ag-ui/client`'s `HttpAgent` sends it: the history dumped with
`ag_ui.dump_messages` (each part the history holds as the server's signed with `keyring`: a uibridge server
without a store keeps only what verifies, so give it the server's secret), the client's tools, the state,
`resume` entries for approvals, `context` and `forwardedProps`. The answer is read with `AGUIStreamDecoder`:
`stream()` gives its events as they arrive, `run()` what they add up to (`ClientRun`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ag_ui.core.version import PROTOCOL_VERSION
from typing_extensions import Unpack

from ..adapters.ag_ui import dump_messages
from ..adapters.ag_ui.decode import AGUIStreamDecoder
from ..core.messages import ModelMessage
from ..core.run import ClientTool, ToolApproval
from .stream import ChatClient
from .turn import ClientRun, Exchange, Turn


class AGUITurn(TypedDict, total=False):
    """What one turn sends beside the history (every key optional)."""

    thread_id: str
    """The thread (a fresh uuid when absent)."""
    run_id: str
    tools: Sequence[ClientTool]
    """The client's own tools: the agent may call them, and the run then waits for their results."""
    state: Any
    approvals: Sequence[ToolApproval]
    """Answers to the approvals the last run asked for (`ClientRun.approval`): `resume` entries."""
    context: Sequence[Mapping[str, str]]
    forwarded_props: Any
    headers: Mapping[str, str]
    """This turn's own headers, over the client's."""


class AGUIClient(ChatClient):
    """A client of one AG-UI endpoint (`url`); the options are `ClientOptions`."""

    def body(self, history: Sequence[ModelMessage], **options: Unpack[AGUITurn]) -> dict[str, Any]:
        """The `RunAgentInput` a turn posts (wire names), in `HttpAgent`'s key order."""
        state = options.get('state')
        forwarded_props = options.get('forwarded_props')
        body: dict[str, Any] = {
            'threadId': options.get('thread_id') or str(uuid.uuid4()),
            'runId': options.get('run_id') or str(uuid.uuid4()),
            'protocolVersion': PROTOCOL_VERSION,
            'state': {} if state is None else state,
            'messages': [
                message.model_dump(mode='json', by_alias=True, exclude_none=True)
                for message in dump_messages(history, keyring=self.keyring)
            ],
            'tools': [_tool(tool) for tool in options.get('tools', ())],
            'context': [dict(item) for item in options.get('context', ())],
            'forwardedProps': {} if forwarded_props is None else forwarded_props,
        }
        if approvals := options.get('approvals'):
            body['resume'] = [resume_entry(approval) for approval in approvals]
        return body

    def stream(self, history: Sequence[ModelMessage], **options: Unpack[AGUITurn]) -> Turn:
        """One turn, its events as they arrive (`async for event in turn`; `await turn.result()` at the end)."""
        return Turn(self.exchange(history, **options))

    def exchange(self, history: Sequence[ModelMessage], **options: Unpack[AGUITurn]) -> Exchange:
        """One turn's request under way, its events not collected (what a bridge relays)."""
        thread_id = options['thread_id'] = options.get('thread_id') or str(uuid.uuid4())
        headers = {**self.headers, **options.pop('headers', {}), 'accept': 'text/event-stream'}
        body = self.body(history, **options)
        limits = self.limits
        decoder = AGUIStreamDecoder(
            history=history, max_frame_bytes=limits.max_frame_bytes, max_buffer_bytes=limits.max_buffer_bytes
        )
        return Exchange(
            self._events('POST', self.url, decoder, headers, body), decoder, thread_id, options.get('state')
        )

    async def run(self, history: Sequence[ModelMessage], **options: Unpack[AGUITurn]) -> ClientRun:
        """One turn, read to its end: the new messages and how the run ended. Raises `RemoteError` when the
        server cannot be asked or its stream cannot be read."""
        return await self.stream(history, **options).result()


def resume_entry(approval: ToolApproval) -> dict[str, Any]:
    """The `resume` entry answering an approval interrupt: `resolved`, with `{"approved", "reason"?}`, the payload
    uibridge and pydantic-ai read."""
    payload: dict[str, Any] = {'approved': approval.approved}
    if approval.reason is not None:
        payload['reason'] = approval.reason
    return {'interruptId': approval.approval_id, 'status': 'resolved', 'payload': payload}


def _tool(tool: ClientTool) -> dict[str, Any]:
    wire: dict[str, Any] = {'name': tool.name, 'description': tool.description}
    if tool.parameters is not None:
        wire['parameters'] = tool.parameters
    if tool.metadata is not None:
        wire['metadata'] = tool.metadata
    return wire
