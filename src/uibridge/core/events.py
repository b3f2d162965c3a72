"""The neutral stream events an agent yields, and how they add up to messages.

An agent streams one run as a sequence of these events; each protocol's encoder turns them into its own
chunks (`uibridge.adapters.<protocol>`). The vocabulary is deliberately small:

- `ResponseStart` opens a model response (a Vercel step, a fresh AG-UI assistant message id). A part event
  outside any response opens one implicitly.
- `PartStart` / `PartDelta` / `PartEnd` stream a text, thinking or tool-call part of the current response,
  addressed by its `index` within that response (so parallel tool calls may interleave their arguments).
  A `PartStart` may already hold content; deltas append text, thinking text or argument JSON. A call's
  `PartStart(..., dynamic=True)` says the UI does not know the tool by name (an MCP server's, found at run
  time): Vercel shows it as a `dynamic-tool` part.
- `ToolCallReady` says who answers a finished tool call when it is not the server: the client's own tool
  (`'client'`) or a human approval (`'approval'`). Calls without it are answered by a later `ToolResult`.
- `ToolResult` and `RetryFeedback` carry the request-side parts that answer a response.
- `FileOutput` adds a file the model produced; `CustomData` is UI-only data (Vercel `data-*`, AG-UI `CUSTOM`).
- A `NativeToolCallPart` streams like any part; `NativeToolResult` adds what the provider's own tool returned.
  `CitationAdded` cites a source from a text part (a `PartStart` may carry its citations already).
- `ResponseInfo` sets what is known of the current response only at its end: usage, finish reason, the
  provider's response id, model and provider names. `MessageMetadata` is the application's own metadata for
  the UI message (Vercel `messageMetadata`).
- `StateSnapshot` / `StateDelta` (an RFC 6902 JSON Patch) update the application state the UI shares with the
  agent (AG-UI state events; a Vercel `data-state` part).
- `StepStarted` / `StepFinished` name a step of the agent's work, `ActivitySnapshot` / `ActivityDelta` show
  structured progress, `RawEvent` passes a provider event through: UI only (AG-UI's events of the same names).
- `RunFinished`, `RunError` and `RunCancelled` end the run.

`events_from_message` expands a whole `ModelResponse` / `ModelRequest` into these events, so an agent may
yield either. `MessageCollector` (`uibridge.core.collector`, which imports this module, never the other way round)
folds events back into `ModelMessage`s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from . import messages as m
from .citations import Citation
from .usage import Usage

__all__ = [
    'ANSWERED_BY_METADATA_KEY',
    'CUSTOM_DATA_METADATA_KEY',
    'DYNAMIC_TOOLS_METADATA_KEY',
    'MESSAGE_METADATA_KEY',
    'STATE_METADATA_KEY',
    'ActivityDelta',
    'ActivitySnapshot',
    'AgentEvent',
    'AnsweredBy',
    'CitationAdded',
    'CustomData',
    'FileOutput',
    'MessageMetadata',
    'NativeToolResult',
    'PartDelta',
    'PartEnd',
    'PartStart',
    'RawEvent',
    'ResponseInfo',
    'ResponseStart',
    'RetryFeedback',
    'RunCancelled',
    'RunError',
    'RunFinished',
    'StateDelta',
    'StateSnapshot',
    'StepFinished',
    'StepStarted',
    'StreamablePart',
    'ToolCallReady',
    'ToolResult',
    'events_from_message',
]

StreamablePart: TypeAlias = m.TextPart | m.ThinkingPart | m.ToolCallPart | m.NativeToolCallPart

AnsweredBy: TypeAlias = Literal['client', 'approval']
"""Who answers a finished tool call when it is not the server (`ToolCallReady`)."""

ANSWERED_BY_METADATA_KEY = 'uibridge_answered_by'
"""Where `MessageCollector` keeps who answers a response's tool calls when it is not the server (`ToolCallReady`):
`{tool_call_id: 'client' | 'approval'}` in `ModelResponse.metadata`. A call addressed to a client tool is
signed with that mark (`uibridge.core.provenance`), so the client may answer it after a reload too."""

CUSTOM_DATA_METADATA_KEY = 'uibridge_custom_data'
"""Where `MessageCollector` keeps a response's `CustomData` in `ModelResponse.metadata`: a list of
`{"name", "data", "id"?, "position"}` dicts, `position` being the number of parts before it."""

DYNAMIC_TOOLS_METADATA_KEY = 'uibridge_dynamic_tools'
"""Where `MessageCollector` keeps which of a response's calls (tool calls and native calls) are to tools the UI does
not know by name (`PartStart(..., dynamic=True)`): their ids, in `ModelResponse.metadata`, in the order they
started. Nothing a model sees: a UI draws such a call generically (Vercel `dynamic-tool`), so no signature covers
the list and a client's copy of it is reset with the rest of its metadata (`verify_history`)."""

MESSAGE_METADATA_KEY = 'uibridge_message_metadata'
"""Where `MessageCollector` keeps the application's `MessageMetadata` in `ModelResponse.metadata`: one dict, each
event's keys merged over the last (shallow), on the response current when it came (else the run's last one)."""

STATE_METADATA_KEY = 'uibridge_state'
"""Where `MessageCollector` keeps the shared state after the run's state events in `ModelResponse.metadata`: the
whole state, on the run's last response only (it moves on as responses start; a state event before any response
waits for the first one)."""


@dataclass(frozen=True, slots=True)
class ResponseStart:
    model_name: str | None = None
    provider_name: str | None = None


@dataclass(frozen=True, slots=True)
class PartStart:
    index: int
    part: StreamablePart
    dynamic: bool = False
    """On a tool or native call: the UI does not know the tool by name (an MCP server's tools, discovered at run
    time), so it draws the call generically (Vercel `dynamic-tool`); kept in `DYNAMIC_TOOLS_METADATA_KEY`."""


@dataclass(frozen=True, slots=True)
class PartDelta:
    index: int
    delta: str


@dataclass(frozen=True, slots=True)
class PartEnd:
    index: int
    signature: str | None = None
    """A thinking part's signature, when the provider sends it last."""


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    tool_call_id: str
    answered_by: AnsweredBy


@dataclass(frozen=True, slots=True)
class ToolResult:
    part: m.ToolReturnPart | m.RetryPromptPart


@dataclass(frozen=True, slots=True)
class RetryFeedback:
    part: m.RetryFeedbackPart


@dataclass(frozen=True, slots=True)
class FileOutput:
    part: m.FilePart


@dataclass(frozen=True, slots=True)
class CustomData:
    name: str
    data: Any
    id: str | None = None
    transient: bool = False
    """Shown live but not kept in the message (Vercel `transient`)."""


@dataclass(frozen=True, slots=True)
class NativeToolResult:
    """What a provider-run tool returned (its call, a `NativeToolCallPart`, streamed before it)."""

    part: m.NativeToolReturnPart


@dataclass(frozen=True, slots=True)
class CitationAdded:
    """The text part at `index` of the current response (streaming or ended) cites `citation`."""

    index: int
    citation: Citation


@dataclass(frozen=True, slots=True)
class ResponseInfo:
    """What is known of the current response only at its end (or the run's last response, between responses).
    Each field that is set replaces the response's own; `usage` replaces, it does not add."""

    usage: Usage | None = None
    finish_reason: m.FinishReason | None = None
    provider_response_id: str | None = None
    model_name: str | None = None
    provider_name: str | None = None
    provider_details: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MessageMetadata:
    """The application's own metadata for the UI message (Vercel `messageMetadata`): JSON, merged key by key."""

    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """The whole application state the UI shares with the agent (JSON)."""

    snapshot: Any


@dataclass(frozen=True, slots=True)
class StateDelta:
    """A change to the shared state: RFC 6902 JSON Patch operations (`{"op", "path", ...}` dicts)."""

    delta: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class StepStarted:
    name: str


@dataclass(frozen=True, slots=True)
class StepFinished:
    name: str


@dataclass(frozen=True, slots=True)
class ActivitySnapshot:
    """Structured progress the UI shows as a message of its own (AG-UI `ACTIVITY_SNAPSHOT`); not kept."""

    message_id: str
    activity_type: str
    content: dict[str, Any]
    replace: bool = True


@dataclass(frozen=True, slots=True)
class ActivityDelta:
    """A JSON Patch to an activity's content (AG-UI `ACTIVITY_DELTA`); not kept."""

    message_id: str
    activity_type: str
    patch: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class RawEvent:
    """A provider's own event, passed through for a UI that wants it (AG-UI `RAW`); not kept."""

    event: Any
    source: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    finish_reason: m.FinishReason | None = None


@dataclass(frozen=True, slots=True)
class RunError:
    message: str = 'An error occurred.'
    """Text safe to show the user; the server decides whether an exception's own text may appear here."""
    code: str | None = None


@dataclass(frozen=True, slots=True)
class RunCancelled:
    reason: str | None = None


AgentEvent: TypeAlias = (
    ResponseStart
    | PartStart
    | PartDelta
    | PartEnd
    | ToolCallReady
    | ToolResult
    | RetryFeedback
    | FileOutput
    | CustomData
    | NativeToolResult
    | CitationAdded
    | ResponseInfo
    | MessageMetadata
    | StateSnapshot
    | StateDelta
    | StepStarted
    | StepFinished
    | ActivitySnapshot
    | ActivityDelta
    | RawEvent
    | RunFinished
    | RunError
    | RunCancelled
)


def events_from_message(message: m.ModelMessage) -> Iterator[AgentEvent]:
    """The events that stream `message` whole.

    Raises `TypeError` for request parts an agent cannot stream (system and user prompts): those are
    the application's input, not the run's output.
    """
    if isinstance(message, m.ModelResponse):
        yield ResponseStart(model_name=message.model_name, provider_name=message.provider_name)
        dynamic = dynamic_calls(message)
        index = 0
        for part in message.parts:
            if isinstance(part, m.FilePart):
                yield FileOutput(part)
                continue
            if isinstance(part, m.NativeToolReturnPart):
                yield NativeToolResult(part)
                continue
            if isinstance(part, m.OpaquePart):
                continue  # kept in the history, never streamed (see `uibridge.core.messages`)
            if isinstance(part, m.ThinkingPart) and part.signature is not None:
                yield PartStart(index, part.model_copy(update={'signature': None}))
                yield PartEnd(index, signature=part.signature)
            elif dynamic and isinstance(part, m.ToolCallPart | m.NativeToolCallPart):
                yield PartStart(index, part, dynamic=part.tool_call_id in dynamic)
                yield PartEnd(index)
            else:
                yield PartStart(index, part)
                yield PartEnd(index)
            index += 1
        if message.usage is not None or message.provider_response_id is not None or message.provider_details:
            yield ResponseInfo(
                usage=message.usage,
                provider_response_id=message.provider_response_id,
                provider_details=message.provider_details,
            )
        return
    for request_part in message.parts:
        if isinstance(request_part, m.ToolReturnPart | m.RetryPromptPart):
            yield ToolResult(request_part)
        elif isinstance(request_part, m.RetryFeedbackPart):
            yield RetryFeedback(request_part)
        elif isinstance(request_part, m.OpaquePart):
            continue
        else:
            raise TypeError(f'an agent cannot stream a {request_part.part_kind!r} part; it is input, not output')


def dynamic_calls(response: m.ModelResponse) -> frozenset[str]:
    """The ids of `response`'s calls to tools the UI does not know by name (`DYNAMIC_TOOLS_METADATA_KEY`)."""
    ids = response.metadata.get(DYNAMIC_TOOLS_METADATA_KEY) if response.metadata else None
    if not isinstance(ids, list):
        return frozenset()
    return frozenset(item for item in cast('list[Any]', ids) if isinstance(item, str))
