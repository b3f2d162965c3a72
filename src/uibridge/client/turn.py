"""One turn of a chat as a client sees it: the events as they arrive (`Turn`), and what they add up to
(`ClientRun`: the new messages, how the run ended, what it waits for)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..core import events as ev
from ..core.collector import MessageCollector
from ..core.decoder import StreamDecoder
from ..core.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from ..core.run import ToolApproval

RunOutcome: TypeAlias = Literal['finished', 'failed', 'cancelled']


@dataclass
class ClientRun:
    """What one turn produced. The next turn sends `history + run.messages` (and what answers it)."""

    messages: list[ModelMessage]
    """The new messages, as the events describe them (`MessageCollector`)."""
    events: list[ev.AgentEvent]
    status: RunOutcome
    """`finished`, `failed` (the server's error event, its text in `error`) or `cancelled`."""
    thread_id: str
    error: str | None = None
    error_code: str | None = None
    state: Any = None
    """The shared state after the run's state events (`None` when it sent none and none was sent)."""
    approval_ids: dict[str, str] = field(default_factory=dict[str, str])
    """The calls awaiting approval: tool call id -> the id to answer with (Vercel approval id, AG-UI interrupt
    id)."""
    client_calls: list[ToolCallPart] = field(default_factory=list[ToolCallPart])
    """The calls the client's own tools must answer (their results go in the next turn's history)."""
    message_id: str | None = None
    """The assistant message's id, where the protocol names one (Vercel `start`)."""

    @property
    def text(self) -> str:
        """The text of the new responses, joined: what a script usually wants to read."""
        return ''.join(
            part.content
            for message in self.messages
            if isinstance(message, ModelResponse)
            for part in message.parts
            if isinstance(part, TextPart)
        )

    def approval(self, tool_call_id: str, approved: bool = True, reason: str | None = None) -> ToolApproval:
        """The answer to the approval this run asked for `tool_call_id`, for the next turn's `approvals`."""
        approval_id = self.approval_ids.get(tool_call_id)
        if approval_id is None:
            raise KeyError(f'the run asked no approval for tool call {tool_call_id!r}')
        return ToolApproval(approval_id=approval_id, approved=approved, tool_call_id=tool_call_id, reason=reason)

    def tool_results(self, outputs: Mapping[str, Any]) -> ModelRequest:
        """The request answering `client_calls` (tool call id -> output), for the next turn's history."""
        calls = {call.tool_call_id: call for call in self.client_calls}
        missing = set(outputs) - set(calls)
        if missing:
            raise KeyError(f'no client tool call {sorted(missing)[0]!r} in this run')
        return ModelRequest(
            parts=[
                ToolReturnPart(tool_name=calls[call_id].tool_name, content=output, tool_call_id=call_id)
                for call_id, output in outputs.items()
            ]
        )


@dataclass(eq=False)
class Exchange:
    """One request under way: its events as they arrive, those of each chunk of the body in one list, and the
    decoder reading them (which keeps what the stream said beside its events: the approval ids it asked with, the
    message id). Closing `events` closes the response."""

    events: AsyncGenerator[list[ev.AgentEvent]]
    decoder: StreamDecoder
    thread_id: str
    state: Any = None


class Turn:
    """One request's events as they arrive (`async for event in turn`), and what they add up to (`await
    turn.result()`, which reads whatever is left first). `aclose()` stops reading: the response is closed, so
    the server sees its client go away."""

    def __init__(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._events = exchange.events
        self._collector = MessageCollector(exchange.state)
        self._seen: list[ev.AgentEvent] = []
        self._ready: list[ev.AgentEvent] = []
        """Events of the last chunk not handed out yet (reversed: popped from the end)."""
        self._client_calls: list[str] = []
        self._approval_calls: set[str] = set()
        self._terminal: ev.RunFinished | ev.RunError | ev.RunCancelled | None = None

    def __aiter__(self) -> Turn:
        return self

    async def __anext__(self) -> ev.AgentEvent:
        while not self._ready:
            self._ready = (await self._events.__anext__())[::-1]
        event = self._ready.pop()
        self._seen.append(event)
        self._collector.feed(event)
        if isinstance(event, ev.ToolCallReady):
            if event.answered_by == 'client':
                self._client_calls.append(event.tool_call_id)
            else:
                self._approval_calls.add(event.tool_call_id)
        elif isinstance(event, ev.RunFinished | ev.RunError | ev.RunCancelled) and self._terminal is None:
            self._terminal = event
        return event

    async def aclose(self) -> None:
        await self._events.aclose()

    async def result(self) -> ClientRun:
        async for _ in self:
            pass
        terminal = self._terminal
        status: RunOutcome = 'finished'
        if isinstance(terminal, ev.RunError):
            status = 'failed'
        elif isinstance(terminal, ev.RunCancelled):
            status = 'cancelled'
        calls = [self._collector.tool_call(call_id) for call_id in self._client_calls]
        decoder = self._exchange.decoder
        approvals = decoder.approval_ids
        return ClientRun(
            messages=self._collector.messages,
            events=list(self._seen),
            status=status,
            thread_id=self._exchange.thread_id,
            error=terminal.message if isinstance(terminal, ev.RunError) else None,
            error_code=terminal.code if isinstance(terminal, ev.RunError) else None,
            state=self._collector.state,
            approval_ids={call_id: approvals[call_id] for call_id in approvals if call_id in self._approval_calls},
            client_calls=[call for call in calls if call is not None],
            message_id=decoder.message_id,
        )
