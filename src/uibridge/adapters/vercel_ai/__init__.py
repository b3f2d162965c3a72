"""The Vercel AI SDK adapter (`useChat`, `ai` 5 to 7): UI messages, the UI message stream, request parsing.

`ai` 7 is the default; `dump_messages(..., sdk_version=5)` and `VercelAIEventStream(sdk_version=5)` write
for an older client (what each version lacks, and how uibridge degrades it: `_sdk_versions`).

```python
from uibridge.adapters import vercel_ai

ui = vercel_ai.dump_messages(history, keyring=keyring)   # -> list[vercel_ai.UIMessage], signed
history = vercel_ai.load_messages(ui, claims=claims)     # UIMessage models or dicts -> list[ModelMessage]
request = vercel_ai.parse_request(body)                  # the body useChat posts -> VercelChatRequest
stream = vercel_ai.VercelAIEventStream(
    message_id=request.continuation_message_id,
    continued=request.continued_message,
    keyring=keyring,
    thread_id=request.id,
)
```

Everything the server authors carries its signature in the `uibridge` provider metadata (`sig`); `load_messages`
hands the client's claims to `uibridge.core.verification.verify_history`. No I/O here: the server reads and
writes, this package translates.
"""

from ._sdk_versions import SDK_VERSIONS, SdkVersion
from .chunks import UIMessageChunk, UIMessageChunkAdapter
from .decode import VercelAIStreamDecoder
from .dump import dump_messages
from .load import load_messages
from .request import VercelChatRequest, parse_request
from .stream import VERCEL_AI_HEADERS, VercelAIEventStream, encode_events
from .types import (
    DataUIPart,
    DynamicToolUIPart,
    FileUIPart,
    ReasoningUIPart,
    StepStartUIPart,
    TextUIPart,
    ToolApprovalUI,
    ToolUIPart,
    UIMessage,
    UIMessagePart,
)

__all__ = [
    'SDK_VERSIONS',
    'VERCEL_AI_HEADERS',
    'DataUIPart',
    'DynamicToolUIPart',
    'FileUIPart',
    'ReasoningUIPart',
    'SdkVersion',
    'StepStartUIPart',
    'TextUIPart',
    'ToolApprovalUI',
    'ToolUIPart',
    'UIMessage',
    'UIMessageChunk',
    'UIMessageChunkAdapter',
    'UIMessagePart',
    'VercelAIEventStream',
    'VercelAIStreamDecoder',
    'VercelChatRequest',
    'dump_messages',
    'encode_events',
    'load_messages',
    'parse_request',
]
