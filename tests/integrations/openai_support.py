"""What the OpenAI integration's tests share: a client of the replay server, and whether what the integration
writes for each API is exactly the SDK's own request types."""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.responses import (
    EasyInputMessageParam,
    ResponseCodeInterpreterToolCallParam,
    ResponseFileSearchToolCallParam,
    ResponseFunctionToolCallParam,
    ResponseFunctionWebSearchParam,
    ResponseReasoningItemParam,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput, ImageGenerationCall, McpCall
from vendor_replay import ReplayServer, conforms

CHAT_PARAMS: dict[str, Any] = {
    'system': ChatCompletionSystemMessageParam,
    'user': ChatCompletionUserMessageParam,
    'assistant': ChatCompletionAssistantMessageParam,
    'tool': ChatCompletionToolMessageParam,
}
RESPONSES_PARAMS: dict[str, Any] = {
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
    return all(conforms(CHAT_PARAMS[message['role']], message) for message in messages)


def responses_conform(items: list[Any]) -> bool:
    return all(conforms(RESPONSES_PARAMS[item['type']], item) for item in items)


def client(server: ReplayServer) -> AsyncOpenAI:
    return AsyncOpenAI(api_key='test-key', base_url=f'{server.base_url}/v1', max_retries=0)
