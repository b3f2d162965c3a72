"""`RemoteAGUIAgent`: an AG-UI backend (pydantic-ai's `AGUIAdapter`, LangGraph, CrewAI, Mastra, any AG-UI 1.0
server) as a uibridge agent, so `create_app(RemoteAGUIAgent(url))` serves `useChat` (and AG-UI clients) from it.

Each run posts a `RunAgentInput` (`AGUIClient`): the history dumped with `ag_ui.dump_messages`, the thread and run
ids, the shared state, the tools the frontend runs itself (`tools` given here, for a frontend whose protocol
declares none, such as `useChat`, and the run's own), `resume` entries for the approvals the endpoint verified
(with the remote's interrupt ids, `RemoteAgent`), and an AG-UI frontend's `context` and `forwardedProps` (a
Vercel frontend's extra body keys become `forwardedProps`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from typing_extensions import Unpack

from ..client.ag_ui import AGUIClient
from ..client.turn import Exchange
from ..core.run import ClientTool, ToolApproval
from ..server.run import AgentRun
from .remote import RemoteAgent, RemoteOptions, forwarded_state


class RemoteAGUIAgent(RemoteAgent):
    """The AG-UI endpoint at `url` as an agent. `tools`: the frontend's own tools the remote may call, declared
    on every run (a `useChat` frontend's, which its requests do not name); an AG-UI frontend's are added to
    them. The other options are `RemoteOptions`."""

    def __init__(self, url: str, *, tools: Sequence[ClientTool] = (), **options: Unpack[RemoteOptions]) -> None:
        super().__init__(url, **options)
        self.tools = list(tools)
        self.client = AGUIClient(url, **self.options)

    def _exchange(self, run: AgentRun, approvals: list[ToolApproval], headers: dict[str, str]) -> Exchange:
        declared = {tool.name for tool in run.client_tools}
        tools = [*(tool for tool in self.tools if tool.name not in declared), *run.client_tools]
        context: Any = run.extra.get('context') if run.protocol == 'ag-ui' else None
        props: Any = run.extra.get('forwarded_props') if run.protocol == 'ag-ui' else (run.extra or None)
        return self.client.exchange(
            run.messages,
            thread_id=run.thread_id,
            run_id=run.run_id,
            tools=tools,
            state=forwarded_state(run),
            approvals=approvals,
            context=cast('list[Mapping[str, str]]', context) if isinstance(context, list) else (),
            forwarded_props=props,
            headers=headers,
        )
