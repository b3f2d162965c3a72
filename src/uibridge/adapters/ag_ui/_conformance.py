"""Every AG-UI event type (`ag_ui.core.EventType`), with what uibridge does with it.

`emitted` is written from neutral events by `AGUIEventStream` (or, for `MESSAGES_SNAPSHOT`, by the AG-UI
endpoint around it), `loaded` is read into neutral events by `AGUIStreamDecoder` (its dispatch table: an event
it skips is not loaded). The tests in `tests/adapters/ag_ui/test_agui_conformance.py` hold the table to the
installed `ag_ui` package and to the code.
"""

from __future__ import annotations

from .._conformance import Support, both, emitted, loaded, not_applicable


def _whole(events: str) -> str:
    return f'sent as {events} instead, which carry the signed record; read as the client reads it'


_NO_SUBAGENTS = (
    "no neutral event is a sub-agent's run (what an agent delegates streams as its own parts); skipped when read"
)

EVENTS: dict[str, Support] = {
    'TEXT_MESSAGE_START': both('a `TextPart` (its response record: `ResponseStart`)'),
    'TEXT_MESSAGE_CONTENT': both('a `TextPart`'),
    'TEXT_MESSAGE_END': both('a `TextPart` (its signature and citations)'),
    'TEXT_MESSAGE_CHUNK': loaded(f'a `TextPart`; {_whole("`TEXT_MESSAGE_START` / `CONTENT` / `END`")}'),
    'TOOL_CALL_START': both('a `ToolCallPart`, or a `NativeToolCallPart` (`native` in `metadata`)'),
    'TOOL_CALL_ARGS': both(
        "a call's argument text (`PartDelta`); an empty one carries the signed record of a call a failed run cut "
        'off before its arguments parsed, which gets no `TOOL_CALL_END`, and then its failed result too'
    ),
    'TOOL_CALL_END': both('a finished call (its signature, the client-tool mark)'),
    'TOOL_CALL_CHUNK': loaded(f'a tool call; {_whole("`TOOL_CALL_START` / `ARGS` / `END`")}'),
    'TOOL_CALL_RESULT': both('`ToolResult` / `NativeToolResult`'),
    'STATE_SNAPSHOT': both('`StateSnapshot`'),
    'STATE_DELTA': both('`StateDelta`'),
    'MESSAGES_SNAPSHOT': emitted(
        'the stored history, after `RUN_STARTED`, from an endpoint with a store (first one of the prefix both '
        'agree on when the client holds its messages in another order); skipped when read (the thread so far, not '
        "the run's output)"
    ),
    'ACTIVITY_SNAPSHOT': both(
        "`ActivitySnapshot`; a model's file (`FileOutput`) as the `pydantic_ai_file` activity message, signed"
    ),
    'ACTIVITY_DELTA': both('`ActivityDelta`'),
    'RAW': both('`RawEvent`'),
    'CUSTOM': both(
        '`CustomData`; `uibridge.message_metadata`: `MessageMetadata`; `uibridge.response_info`: '
        '`ResponseInfo`; `uibridge.source`: `CitationAdded`'
    ),
    'RUN_STARTED': both('the run'),
    'RUN_FINISHED': both('`RunFinished` / `RunCancelled`, usage; interrupts: `ToolCallReady(answered_by=...)`'),
    'RUN_ERROR': both('`RunError` (usage)'),
    'STEP_STARTED': both('`StepStarted`'),
    'STEP_FINISHED': both('`StepFinished`'),
    'REASONING_START': both('a `ThinkingPart` (its bounds)'),
    'REASONING_MESSAGE_START': both('a `ThinkingPart`'),
    'REASONING_MESSAGE_CONTENT': both('a `ThinkingPart`'),
    'REASONING_MESSAGE_END': both('a `ThinkingPart`'),
    'REASONING_MESSAGE_CHUNK': loaded(f'a `ThinkingPart`; {_whole("`REASONING_MESSAGE_START` / `CONTENT` / `END`")}'),
    'REASONING_END': both('a `ThinkingPart` (its bounds)'),
    'REASONING_ENCRYPTED_VALUE': both(
        "a thinking signature; `RetryFeedback`'s marker (a legacy tool-less retry prompt's too)"
    ),
    'SUBAGENT_STARTED': not_applicable(_NO_SUBAGENTS),
    'SUBAGENT_FINISHED': not_applicable(_NO_SUBAGENTS),
    'SUBAGENT_ERROR': not_applicable(_NO_SUBAGENTS),
}
"""Every member of `ag_ui.core.EventType`, in its order."""
