"""A pydantic-ai `Agent` as a uibridge agent: `PydanticAIAgent(agent, deps=...)`, mounted like any other.

```python
from pydantic_ai import Agent
from uibridge.integrations.pydantic_ai import PydanticAIAgent
from uibridge.server import create_app

app = create_app(PydanticAIAgent(Agent('openai:gpt-5', instructions='Be brief.')))
```

Each request becomes one `agent.iter(...)` run (`pip install 'uibridge[pydantic-ai]'`):

- the verified, sanitized history goes in as `message_history` (`to_pydantic_ai`), and the run's nodes come
  back as events: each model response streams part by part (text, thinking with its signature, tool calls,
  native tool calls and their results, files), then its usage, names, finish reason and provider response
  id (`ResponseInfo`); each tool's result or retry (`ModelRetry`, bad arguments) as it comes; the feedback
  pydantic-ai sends when it rejects an answer that called no tool (an output validator's `ModelRetry`,
  output that failed validation) as `RetryFeedback`. The collected messages are what `result.new_messages()`
  holds (docs/pydantic-ai.md lists the bookkeeping fields the events do not carry);
- approvals and client tools are pydantic-ai deferred tools, so the agent's `output_type` must include
  `DeferredToolRequests` (pydantic-ai's own rule; it says so if it is missing). A tool with
  `requires_approval=True` that the model calls ends the run with an approval request
  (`ToolCallReady(..., 'approval')`); the client's verified answers come back as `DeferredToolResults`
  (approved, or `ToolDenied` with the client's reason);
- the client's own tools (AG-UI `tools`, plus `client_tools` given here, which is how a Vercel page's tools are
  named) are an `ExternalToolset`: a call to one ends the run waiting for the browser
  (`ToolCallReady(..., 'client')`), whose answer comes back in the history;
- AG-UI shared state: when the run's deps have a `state` attribute, the client's state is put there (validated
  into the attribute's pydantic model when it holds one; a dataclass or pydantic deps is copied per run, never
  shared),
  and whenever a tool step or the run leaves it changed, the new state streams as a `StateSnapshot`;
- a cancelled stream (the client went away) cancels the run where it awaits: the model request stops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel

try:
    from pydantic_ai import AgentRunResult, DeferredToolResults, ToolDenied
    from pydantic_ai import messages as pai
    from pydantic_ai.agent import AbstractAgent
    from pydantic_ai.agent import Agent as PAIAgent
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ExternalToolset
except ModuleNotFoundError as missing:  # an optional extra: say which, not just the module's name
    raise ModuleNotFoundError(
        "uibridge.integrations.pydantic_ai needs pydantic-ai: pip install 'uibridge[pydantic-ai]'", name=missing.name
    ) from missing

from ..core import events as ev
from ..core.json_text import compact_json, parse_json
from ..core.messages import ModelMessage
from ..server.options import check_async_hook
from ..server.run import AgentRun
from ._pydantic_ai_events import ResponseParts, ToolResultOrder, request_events, response_info
from ._pydantic_ai_messages import from_pydantic_ai, to_pydantic_ai

__all__ = ['PydanticAIAgent', 'from_pydantic_ai', 'to_pydantic_ai']


class PydanticAIAgent:
    """A pydantic-ai agent served by a uibridge endpoint (`VercelAIEndpoint`, `AGUIEndpoint`, `create_app`).

    - `deps`: the run's dependencies; or `deps_for(run)`, called per run (the `AgentRun`: thread, principal,
      headers), for deps that depend on the request. A deps object with a `state` attribute gets the client's
      shared state (see the module).
    - `client_tools`: tools the browser runs, as pydantic-ai `ToolDefinition`s, offered on every run besides
      those the client declares itself (AG-UI); a Vercel client declares none, so name its tools here.
    - `model`, `model_settings`, `usage_limits`, `toolsets`: passed to each run, as to `agent.iter`.
    - `on_result(result, run)`: awaited with pydantic-ai's own `AgentRunResult` when a run ends (not when it
      was cancelled or failed), for an application that also keeps pydantic-ai's history.
    """

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        deps: Any = None,
        deps_for: Callable[[AgentRun], Any] | None = None,
        client_tools: Sequence[ToolDefinition] = (),
        model: Any = None,
        model_settings: Any = None,
        usage_limits: Any = None,
        toolsets: Sequence[AbstractToolset[Any]] = (),
        on_result: Callable[[AgentRunResult[Any], AgentRun], Awaitable[None]] | None = None,
    ) -> None:
        if deps is not None and deps_for is not None:
            raise TypeError('give deps or deps_for, not both')
        check_async_hook('on_result', on_result, ('result', 'run'))
        self.agent = agent
        self.deps = deps
        self.deps_for = deps_for
        self.client_tools = list(client_tools)
        self.model = model
        self.model_settings = model_settings
        self.usage_limits = usage_limits
        self.toolsets = list(toolsets)
        self.on_result = on_result

    async def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        history = to_pydantic_ai(run.messages)
        deps = self._deps(run)
        client = self._client_tools(run)
        toolsets = [*self.toolsets, ExternalToolset(client)] if client else self.toolsets
        client_names = {tool.name for tool in client}
        state = _StateWatch(deps)
        streamed = False  # a model response streamed in this run, its `ResponseInfo` still to come
        answered = {p.tool_call_id for m in history for p in m.parts if isinstance(p, pai.ToolReturnPart)}
        async with self.agent.iter(
            message_history=history,
            deferred_tool_results=_deferred_results(run),
            deps=deps,
            toolsets=toolsets,
            model=self.model,
            model_settings=self.model_settings,
            usage_limits=self.usage_limits,
        ) as agent_run:
            async for node in agent_run:
                if PAIAgent.is_model_request_node(node):
                    if not node.is_resuming_without_prompt:
                        for event in request_events(_unanswered(node.request.parts, answered)):
                            yield event
                    yield ev.ResponseStart()
                    parts = ResponseParts()
                    async with node.stream(agent_run.ctx) as stream:
                        async for event in stream:
                            for out in parts.events(event):
                                yield out
                    for out in parts.close():
                        yield out
                    streamed = True
                elif PAIAgent.is_call_tools_node(node):
                    if streamed:  # not the history's own last response, resumed with deferred results
                        yield response_info(node.model_response)
                        streamed = False
                    order = ToolResultOrder(node.model_response, answered)
                    async with node.stream(agent_run.ctx) as stream:
                        async for event in stream:
                            for out in _tool_step_events(event, answered, client_names):
                                for ready in order.take(out) if isinstance(out, ev.ToolResult) else [out]:
                                    yield ready
                    for out in order.rest():
                        yield out
                    if (snapshot := state.changed()) is not None:
                        yield snapshot
            result = agent_run.result
            if result is not None:
                # What the run ended with and no node streamed (an output tool's return, say).
                trailing = result.new_messages()[-1:]
                if trailing and isinstance(trailing[0], pai.ModelRequest):
                    for event in request_events(_unanswered(trailing[0].parts, answered)):
                        yield event
                if self.on_result is not None:
                    await self.on_result(result, run)
            if (snapshot := state.changed()) is not None:
                yield snapshot

    def _deps(self, run: AgentRun) -> Any:
        deps = self.deps_for(run) if self.deps_for is not None else self.deps
        if deps is None or run.state is None or not hasattr(deps, 'state'):
            return deps
        current = deps.state
        state = type(current).model_validate(run.state) if isinstance(current, BaseModel) else run.state
        if dataclasses.is_dataclass(deps) and not isinstance(deps, type):
            return dataclasses.replace(deps, state=state)  # pyright: ignore[reportUnknownVariableType]
        if isinstance(deps, BaseModel):
            # Copied too: a shared `deps=` must not carry one run's state into another (and a frozen one can't be set).
            return deps.model_copy(update={'state': state})
        deps.state = state  # pyright: ignore[reportAttributeAccessIssue]  # the application's own object (from `deps_for`): set in place
        return deps

    def _client_tools(self, run: AgentRun) -> list[ToolDefinition]:
        tools = list(self.client_tools)
        known = {tool.name for tool in tools}
        for tool in run.client_tools:
            if tool.name in known:
                continue
            schema = tool.parameters or {'type': 'object', 'properties': {}}
            tools.append(ToolDefinition(name=tool.name, description=tool.description, parameters_json_schema=schema))
        return tools


def _deferred_results(run: AgentRun) -> DeferredToolResults | None:
    """The client's verified approval answers, for the calls the history waits on."""
    approvals: dict[str, bool | ToolDenied] = {}
    for call in run.pending_tool_calls():
        approval = run.approval_for(call.tool_call_id)
        if approval is None:
            continue
        approvals[call.tool_call_id] = True if approval.approved else ToolDenied(_denial(approval.reason))
    return DeferredToolResults(approvals=dict(approvals)) if approvals else None


def _denial(reason: str | None) -> str:
    return f'The user denied this call: {reason}' if reason else 'The user denied this call.'


def _unanswered(parts: Sequence[Any], answered: set[str]) -> list[Any]:
    """The request parts not streamed yet (each tool return once, by its call id)."""
    fresh: list[Any] = []
    for part in parts:
        if isinstance(part, pai.ToolReturnPart):
            if part.tool_call_id in answered:
                continue
            answered.add(part.tool_call_id)
        fresh.append(part)
    return fresh


def _tool_step_events(event: Any, answered: set[str], client_names: set[str]) -> list[ev.AgentEvent]:
    if isinstance(event, pai.ToolResultEvent):
        return list(request_events(_unanswered([event.part], answered)))
    if isinstance(event, pai.DeferredToolRequestsEvent):
        requests = event.requests
        ready = [ev.ToolCallReady(call.tool_call_id, 'approval') for call in requests.approvals]
        # A deferred call to a tool the client does not run (a server tool raising `CallDeferred`) has nobody
        # here to answer it: left unmarked, it is dropped from the next request's history.
        ready += [ev.ToolCallReady(c.tool_call_id, 'client') for c in requests.calls if c.tool_name in client_names]
        return list(ready)
    return []


class _StateWatch:
    """The deps' `state`, as JSON, compared after each step: a `StateSnapshot` when it changed."""

    def __init__(self, deps: Any) -> None:
        self._deps = deps
        self._last = self._dump()

    def _dump(self) -> str | None:
        if self._deps is None or not hasattr(self._deps, 'state'):
            return None
        state = self._deps.state
        return compact_json(state.model_dump(mode='json') if isinstance(state, BaseModel) else state)

    def changed(self) -> ev.StateSnapshot | None:
        dumped = self._dump()
        if dumped is None or dumped == self._last:
            return None
        self._last = dumped
        # A value of its own, parsed from the JSON compared: a tool that later changes the deps' state in
        # place must not change a snapshot already sent (nor the state the collector keeps from it).
        return ev.StateSnapshot(parse_json(dumped))
