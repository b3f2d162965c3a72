"""What the OpenAI integration's tests share: a client of the replay server, and whether what the integration
writes for each API is exactly the SDK's own request types. The SDK is imported when a test uses it: every pytest
worker collects these modules, most of them to run none of their tests."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from vendor_replay import ReplayServer, conforms

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@cache
def chat_params() -> dict[str, Any]:
    """The SDK's Chat Completions request type for each role."""
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionSystemMessageParam,
        ChatCompletionToolMessageParam,
        ChatCompletionUserMessageParam,
    )

    return {
        'system': ChatCompletionSystemMessageParam,
        'user': ChatCompletionUserMessageParam,
        'assistant': ChatCompletionAssistantMessageParam,
        'tool': ChatCompletionToolMessageParam,
    }


@cache
def responses_params() -> dict[str, Any]:
    """The SDK's Responses input item type for each item type."""
    from openai.types.responses import (
        EasyInputMessageParam,
        ResponseCodeInterpreterToolCallParam,
        ResponseFileSearchToolCallParam,
        ResponseFunctionToolCallParam,
        ResponseFunctionWebSearchParam,
        ResponseReasoningItemParam,
    )
    from openai.types.responses.response_input_item_param import FunctionCallOutput, ImageGenerationCall, McpCall

    return {
        'message': EasyInputMessageParam,
        'reasoning': ResponseReasoningItemParam,
        'function_call': ResponseFunctionToolCallParam,
        'function_call_output': FunctionCallOutput,
        'web_search_call': ResponseFunctionWebSearchParam,
        'file_search_call': ResponseFileSearchToolCallParam,
        'code_interpreter_call': ResponseCodeInterpreterToolCallParam,
        'image_generation_call': ImageGenerationCall,
        'mcp_call': McpCall,
    }


def chat_conforms(messages: list[Any]) -> bool:
    """Each message is exactly the SDK's request type for its role (checked per member: pydantic cannot walk
    a union of `Iterable` fields without consuming them)."""
    return all(conforms(chat_params()[message['role']], message) for message in messages)


def responses_conform(items: list[Any]) -> bool:
    return all(conforms(responses_params()[item['type']], item) for item in items)


def client(server: ReplayServer | str) -> AsyncOpenAI:
    """The SDK's async client against a loopback server (its URL or a `ReplayServer`; no retries)."""
    from openai import AsyncOpenAI

    base_url = server if isinstance(server, str) else server.base_url
    return AsyncOpenAI(api_key='test-key', base_url=f'{base_url}/v1', max_retries=0)
