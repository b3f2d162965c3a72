"""What the Anthropic integration's tests share: the model they name, the SDK's client, and whether what the
integration writes is exactly the SDK's own request types. The SDK is imported when a test uses it: importing it
takes seconds, and every pytest worker collects these modules, most of them to run none of their tests."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from vendor_replay import conforms

MODEL = 'claude-sonnet-4-5-20250929'
if TYPE_CHECKING:
    from anthropic import AsyncAnthropic


def anthropic_client(base_url: str) -> AsyncAnthropic:
    """The SDK's async client against a loopback server (no retries: a test sees the first answer)."""
    from anthropic import AsyncAnthropic

    return AsyncAnthropic(api_key='test-key', base_url=base_url, max_retries=0)


@cache
def block_params() -> dict[str, Any]:
    """The SDK's request type for each kind of content block."""
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

    return {
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
        and all(conforms(block_params()[block['type']], block) for block in message['content'])
        for message in messages
    )
