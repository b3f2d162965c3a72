"""What the Anthropic integration's tests share: the model they name, and whether what the integration writes
is exactly the SDK's own request types."""

from __future__ import annotations

from typing import Any

from anthropic.types import (
    CodeExecutionToolResultBlockParam,
    RedactedThinkingBlockParam,
    ServerToolUseBlockParam,
    TextBlockParam,
    ThinkingBlockParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    WebSearchToolResultBlockParam,
)
from vendor_replay import conforms

MODEL = 'claude-sonnet-4-5-20250929'
BLOCK_PARAMS: dict[str, Any] = {
    'text': TextBlockParam,
    'thinking': ThinkingBlockParam,
    'redacted_thinking': RedactedThinkingBlockParam,
    'tool_use': ToolUseBlockParam,
    'tool_result': ToolResultBlockParam,
    'server_tool_use': ServerToolUseBlockParam,
    'web_search_tool_result': WebSearchToolResultBlockParam,
    'code_execution_tool_result': CodeExecutionToolResultBlockParam,
}


def messages_conform(messages: list[Any]) -> bool:
    """Each message is a `MessageParam` whose every block is exactly the SDK's request type for its kind
    (checked per block: pydantic cannot walk `MessageParam`'s union of `Iterable`s without consuming them)."""
    return all(
        set(message) == {'role', 'content'}
        and message['role'] in ('user', 'assistant')
        and all(conforms(BLOCK_PARAMS[block['type']], block) for block in message['content'])
        for message in messages
    )
