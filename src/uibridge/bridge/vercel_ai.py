"""`RemoteVercelAgent`: a Vercel AI SDK chat route (`streamText(...).toUIMessageStreamResponse()`, or any server of
the UI message stream) as a uibridge agent, so `create_app(RemoteVercelAgent(url))` serves `@ag-ui/client` (and
`useChat`) from it.

Each run posts what `DefaultChatTransport` would (`VercelAIClient`): `{id, messages, trigger}` with the history
dumped with `vercel_ai.dump_messages` for the route's `ai` version, the approvals the endpoint verified set on their
calls' parts (`approval-responded`, with the remote's approval ids, `RemoteAgent`), and as extra body keys the
`body` given here, a Vercel frontend's own extra keys, and from an AG-UI frontend its `state` and `tools` (the
route defines its client tools itself, as tools without `execute`; these are for a route that wants them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from ..adapters.vercel_ai import SdkVersion
from ..client.turn import Exchange
from ..client.vercel_ai import VercelAIClient
from ..core.run import ToolApproval
from ..server.run import AgentRun
from .remote import RemoteAgent, RemoteOptions, forwarded_state


class RemoteVercelAgent(RemoteAgent):
    """The Vercel AI chat route at `url` as an agent. `sdk_version`: the route's `ai` major version (what its
    messages may hold); `body`: extra body keys sent on every run. The other options are `RemoteOptions`."""

    def __init__(
        self,
        url: str,
        *,
        sdk_version: SdkVersion = 7,
        body: Mapping[str, Any] | None = None,
        **options: Unpack[RemoteOptions],
    ) -> None:
        super().__init__(url, **options)
        self.body = dict(body or {})
        self.client = VercelAIClient(url, sdk_version=sdk_version, **self.options)

    def _exchange(self, run: AgentRun, approvals: list[ToolApproval], headers: dict[str, str]) -> Exchange:
        body = dict(self.body)
        if run.protocol == 'vercel-ai':
            body.update(run.extra)
        else:
            if (state := forwarded_state(run)) is not None:
                body['state'] = state
            if run.client_tools:
                body['tools'] = [
                    {'name': tool.name, 'description': tool.description, 'parameters': tool.parameters}
                    for tool in run.client_tools
                ]
        return self.client.exchange(
            run.messages,
            chat_id=run.thread_id,
            approvals=approvals,
            trigger='regenerate-message' if run.trigger == 'regenerate' else 'submit-message',
            body=body,
            headers=headers,
        )
