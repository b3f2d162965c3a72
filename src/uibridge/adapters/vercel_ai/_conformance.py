"""Every `ai` 7 UI message stream chunk type and UI message part type, with what uibridge does with it.

Chunks: `emitted` is written by `VercelAIEventStream` from neutral events, `loaded` is read into neutral events
by `VercelAIStreamDecoder` (its dispatch table: a chunk it skips is not loaded). Parts: `emitted` is written by
`dump_messages` from a neutral history (and built by the client from the stream's chunks), `loaded` is read by
`load_messages`, into the neutral history or kept beside it for the UI. `tool-*` and `data-*` stand for every
type with that prefix. The tests in `tests/adapters/vercel_ai/test_vercel_conformance.py` hold both tables to
`ai` 7's type declarations and to the code.
"""

from __future__ import annotations

from .._conformance import Support, both, loaded, not_applicable

_APPEND_ONLY = (
    'the neutral stream is append-only: what streamed is what the run keeps and signs (an AG-UI client cannot '
    'take content back either); a retried model call streams a new response'
)
_OPAQUE = "a provider's own content is an `OpaquePart`: kept server-side, shown to no UI"
_NO_THINKING_FILE = 'no neutral part is a file made while thinking; a model file is a `FileOutput`, sent as `file`'
_NO_STEERING = 'a server run takes its input only from the request that starts it: nothing steers a running answer'

CHUNKS: dict[str, Support] = {
    'text-start': both('a `TextPart`'),
    'text-delta': both('a `TextPart`'),
    'text-end': both('a `TextPart` (its signature and citations)'),
    'reasoning-start': both('a `ThinkingPart`'),
    'reasoning-delta': both('a `ThinkingPart`'),
    'reasoning-end': both('a `ThinkingPart` (its signature)'),
    'custom': not_applicable(f'{_OPAQUE}; skipped when read'),
    'error': both('`RunError`'),
    'tool-input-available': both('a finished `ToolCallPart`, or a `NativeToolCallPart` (`providerExecuted`)'),
    'tool-input-error': both('a call cut off by `RunError`; read: the failed result the model is shown'),
    'tool-approval-request': both("`ToolCallReady(answered_by='approval')`"),
    'tool-approval-response': both('a denial the client never asked for, sent with its `tool-output-denied`'),
    'tool-output-available': both('`ToolResult` / `NativeToolResult`'),
    'tool-output-error': both('a failed `ToolResult` (an error or a retry prompt)'),
    'tool-output-denied': both('a denied `ToolResult`'),
    'tool-input-start': both('a `ToolCallPart` / `NativeToolCallPart` (`dynamic`: `PartStart(dynamic=True)`)'),
    'tool-input-delta': both("a call's argument text (`PartDelta`)"),
    'source-url': both("`CitationAdded`, a `TextPart`'s citations"),
    'source-document': both("`CitationAdded`, a `TextPart`'s citations"),
    'file': both('`FileOutput` (read: a data URL only; a remote file is not fetched)'),
    'reasoning-file': not_applicable(f'{_NO_THINKING_FILE}; skipped when read'),
    'data-*': both(
        '`CustomData`; `data-state`: `StateSnapshot` / `StateDelta`; `data-retry-feedback`: `RetryFeedback`; '
        'transient `data-activity`: `ActivitySnapshot` / `ActivityDelta`'
    ),
    'steering-message': not_applicable(f'{_NO_STEERING}; skipped when read'),
    'start-step': both('`ResponseStart`: a model response'),
    'finish-step': both('the end of a model response'),
    'reset-step': not_applicable(f'{_APPEND_ONLY}; skipped when read'),
    'start': both("the run's message id and `MessageMetadata`"),
    'finish': both('`RunFinished` and its finish reason'),
    'abort': both('`RunCancelled`'),
    'message-metadata': both('`MessageMetadata`; `ResponseInfo` (usage, response id) under `uibridge`'),
}
"""Every chunk type of `ai` 7's `UIMessageChunk`, in its order."""

PARTS: dict[str, Support] = {
    'text': both('a `TextPart`, a user prompt, a system prompt'),
    'custom': loaded(f'kept for the UI and dumped back as it came; never made: {_OPAQUE}'),
    'reasoning': both('a `ThinkingPart` (in a user message: kept for the UI, as `convertToModelMessages` skips it)'),
    'tool-*': both('a `ToolCallPart` and its `ToolReturnPart` / `RetryPromptPart`, or a native call and return'),
    'dynamic-tool': both('a call streamed with `PartStart(dynamic=True)` (a tool the UI does not know by name)'),
    'source-url': both("a `TextPart`'s citations"),
    'source-document': both("a `TextPart`'s citations"),
    'file': both("a `FilePart`, a user's media, an `UploadedFile` (`providerReference`)"),
    'reasoning-file': loaded(f'kept for the UI and dumped back as it came; never made: {_NO_THINKING_FILE}'),
    'data-*': both('the shared state (`data-state`), retry feedback (`data-retry-feedback`), kept `CustomData`'),
    'steering-message': loaded(
        f"the user's prompt between two steps, dumped back in place as the steering message it was; never made: "
        f'{_NO_STEERING}'
    ),
    'step-start': both('the start of a `ModelResponse`'),
}
"""Every part type of `ai` 7's `UIMessagePart`, in its order."""
