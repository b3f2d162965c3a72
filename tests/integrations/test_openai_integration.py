"""uibridge.integrations.openai through the real `openai` SDK (AsyncOpenAI) against a loopback replay server.

Each fixture is an SSE body in the API's documented wire format; the SDK parses it into its own types, the
integration maps those to agent events, and a `MessageCollector` folds the events into messages.
"""

from __future__ import annotations

import pytest
from openai_support import chat_conforms, client, responses_conform
from vendor_replay import ReplayServer, fixture, without_timestamps

from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    RunError,
    RunFinished,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResult,
    ToolReturnPart,
    Usage,
    UserPromptPart,
    render_retry_feedback,
)
from uibridge.core.collector import MessageCollector
from uibridge.core.messages import BinaryContent, ImageUrl
from uibridge.integrations.openai import (
    OpenAIStreamError,
    events_from_chat_completions,
    events_from_responses,
    to_chat_completions_messages,
    to_responses_input,
)

pytestmark = pytest.mark.anyio

WEATHER = {'Paris': '18C, sunny', '東京 🗼': '24C, rain', 'Tokyo': '24C, rain'}


def history_start() -> list[ModelMessage]:
    return [ModelRequest(parts=[SystemPromptPart(content='Be brief.'), UserPromptPart(content='Weather?')])]


def answer(calls: list[ToolCallPart]) -> list[ToolResult]:
    return [
        ToolResult(
            ToolReturnPart(
                tool_name=call.tool_name, content=WEATHER[call.args_as_dict()['city']], tool_call_id=call.tool_call_id
            )
        )
        for call in calls
    ]


async def test_chat_completions_tool_loop() -> None:
    """Two requests: the model calls two tools in parallel (their argument deltas interleaved), the results go
    back as `tool` messages, and the second answer is text. The run's collected messages are the history."""
    history = history_start()
    collector = MessageCollector()
    async with ReplayServer([fixture('chat_tool_calls.sse'), fixture('chat_final.sse')]) as server:
        sdk = client(server)
        for _ in range(2):
            stream = await sdk.chat.completions.create(
                model='gpt-4o-mini', messages=to_chat_completions_messages(history), stream=True
            )
            events = events_from_chat_completions(stream)
            async for event in events:
                collector.feed(event)
            history.append(events.response)
            calls = [part for part in events.response.parts if isinstance(part, ToolCallPart)]
            if events.finish_reason != 'tool_call':
                collector.feed(RunFinished(events.finish_reason))
                break
            assert events.usage is not None and events.usage.total_tokens == 123
            assert events.provider_usage is not None and events.provider_usage.total_tokens == 123
            results = answer(calls)
            for result in results:
                collector.feed(result)
            history.append(ModelRequest(parts=[result.part for result in results]))

    # The last chunk's usage, every count: cached prompt tokens, and the prediction counts in `details`.
    usage = Usage(
        input_tokens=82,
        cache_read_tokens=64,
        output_tokens=41,
        details={'accepted_prediction_tokens': 3, 'rejected_prediction_tokens': 1},
    )
    first = ModelResponse(
        parts=[
            TextPart(content='Checking both cities.'),
            # The arguments as the model streamed them: the text a signature covers and the next request sends back.
            ToolCallPart(tool_name='get_weather', args='{"city": "Paris"}', tool_call_id='call_paris'),
            ToolCallPart(tool_name='get_weather', args='{"city": "東京 🗼"}', tool_call_id='call_tokyo'),
        ],
        model_name='gpt-4o-mini-2024-07-18',
        provider_name='openai',
        finish_reason='tool_call',
        usage=usage,
        provider_response_id='chatcmpl-1',
        provider_details={'finish_reason': 'tool_calls', 'service_tier': 'default'},
    )
    final = ModelResponse(
        parts=[TextPart(content='Paris: 18C, sunny. Tokyo: 24C, rain.')],
        model_name='gpt-4o-mini-2024-07-18',
        provider_name='openai',
        finish_reason='stop',
        provider_response_id='chatcmpl-2',
        provider_details={'finish_reason': 'stop'},
    )
    collected = collector.messages
    assert without_timestamps(collected) == without_timestamps([first, history[2], final])
    assert without_timestamps(history[1:]) == without_timestamps(collected)

    second_request = server.received[1]
    assert second_request.path == '/v1/chat/completions'
    assert second_request.body['stream'] is True
    assert second_request.body['messages'] == [
        {'role': 'system', 'content': 'Be brief.'},
        {'role': 'user', 'content': 'Weather?'},
        {
            'role': 'assistant',
            'content': 'Checking both cities.',
            'tool_calls': [
                {
                    'id': 'call_paris',
                    'type': 'function',
                    'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'},
                },
                {
                    'id': 'call_tokyo',
                    'type': 'function',
                    'function': {'name': 'get_weather', 'arguments': '{"city": "東京 🗼"}'},
                },
            ],
        },
        {'role': 'tool', 'tool_call_id': 'call_paris', 'content': '18C, sunny'},
        {'role': 'tool', 'tool_call_id': 'call_tokyo', 'content': '24C, rain'},
    ]
    assert chat_conforms(second_request.body['messages'])


async def test_chat_completions_refusal_as_text_or_error() -> None:
    async with ReplayServer([fixture('chat_refusal.sse'), fixture('chat_refusal.sse')]) as server:
        sdk = client(server)
        as_text = events_from_chat_completions(
            await sdk.chat.completions.create(model='gpt-4o', messages=[], stream=True)
        )
        text_events = [event async for event in as_text]
        as_error = events_from_chat_completions(
            await sdk.chat.completions.create(model='gpt-4o', messages=[], stream=True), refusal='error'
        )
        error_events = [event async for event in as_error]
    assert as_text.response.parts == [TextPart(content="I'm sorry, I can't help with that.")]
    assert not any(isinstance(event, RunError) for event in text_events)
    assert error_events[-1] == RunError("I'm sorry, I can't help with that.", code='refusal')
    assert as_error.response.parts == []


async def test_chat_completions_error_mid_stream_raises_the_sdk_error_after_the_partial_answer() -> None:
    collector = MessageCollector()
    async with ReplayServer([fixture('chat_error_midstream.sse')]) as server:
        events = events_from_chat_completions(
            await client(server).chat.completions.create(model='gpt-4o-mini', messages=[], stream=True)
        )
        from openai import APIError

        with pytest.raises(APIError, match='server had an error'):
            async for event in events:
                collector.feed(event)
    assert without_timestamps(collector.messages) == without_timestamps(
        [
            ModelResponse(
                parts=[TextPart(content='Half an ans')], model_name='gpt-4o-mini-2024-07-18', provider_name='openai'
            )
        ]
    )


async def test_responses_tool_loop_with_reasoning_summaries_and_encrypted_reasoning() -> None:
    """Reasoning summaries become thinking parts carrying the item's id and encrypted content, which go back
    as the reasoning item of the next request, before its function call and the call's output."""
    history = history_start()
    collector = MessageCollector()
    async with ReplayServer([fixture('responses_tool_call.sse'), fixture('responses_final.sse')]) as server:
        sdk = client(server)
        for _ in range(2):
            stream = await sdk.responses.create(
                model='o4-mini', input=to_responses_input(history), include=['reasoning.encrypted_content'], stream=True
            )
            events = events_from_responses(stream)
            async for event in events:
                collector.feed(event)
            history.append(events.response)
            if events.finish_reason != 'tool_call':
                collector.feed(RunFinished(events.finish_reason))
                break
            results = answer([part for part in events.response.parts if isinstance(part, ToolCallPart)])
            for result in results:
                collector.feed(result)
            history.append(ModelRequest(parts=[result.part for result in results]))

    assert events.usage is not None and events.usage.total_tokens == 239
    first = ModelResponse(
        parts=[
            ThinkingPart(content='**Weather lookup**\n\nThe user wants Paris.', id='rs_1', provider_name='openai'),
            ThinkingPart(
                content="I'll call the tool.", id='rs_1', provider_name='openai', signature='gAAAAB-encrypted-reasoning'
            ),
            ToolCallPart(tool_name='get_weather', args='{"city": "Paris"}', tool_call_id='call_paris'),
        ],
        model_name='o4-mini-2025-04-16',
        provider_name='openai',
        finish_reason='tool_call',
        usage=Usage(input_tokens=75, output_tokens=120, output_reasoning_tokens=64),
        provider_response_id='resp_1',
        provider_details={'finish_reason': 'completed'},
    )
    final = ModelResponse(
        parts=[TextPart(content='Paris is 18C and sunny.', id='msg_2')],
        model_name='o4-mini-2025-04-16',
        provider_name='openai',
        finish_reason='stop',
        usage=Usage(input_tokens=230, output_tokens=9),
        provider_response_id='resp_2',
        provider_details={'finish_reason': 'completed'},
    )
    assert without_timestamps(collector.messages) == without_timestamps([first, history[2], final])

    sent = server.received[1].body
    assert sent['include'] == ['reasoning.encrypted_content']
    assert sent['input'] == [
        {'type': 'message', 'role': 'system', 'content': 'Be brief.'},
        {'type': 'message', 'role': 'user', 'content': 'Weather?'},
        {
            'type': 'reasoning',
            'id': 'rs_1',
            'summary': [
                {'type': 'summary_text', 'text': '**Weather lookup**\n\nThe user wants Paris.'},
                {'type': 'summary_text', 'text': "I'll call the tool."},
            ],
            'encrypted_content': 'gAAAAB-encrypted-reasoning',
        },
        {'type': 'function_call', 'call_id': 'call_paris', 'name': 'get_weather', 'arguments': '{"city": "Paris"}'},
        {'type': 'function_call_output', 'call_id': 'call_paris', 'output': '18C, sunny'},
    ]
    assert responses_conform(sent['input'])


async def test_responses_failed_response_raises_after_the_partial_answer() -> None:
    collector = MessageCollector()
    async with ReplayServer([fixture('responses_failed.sse')]) as server:
        events = events_from_responses(await client(server).responses.create(model='o4-mini', input='hi', stream=True))
        with pytest.raises(OpenAIStreamError, match='server_error: The model failed') as raised:
            async for event in events:
                collector.feed(event)
    assert raised.value.code == 'server_error'
    assert [part.content for part in events.response.parts if isinstance(part, TextPart)] == ['Partial']


def retry_history() -> tuple[list[ModelMessage], str, str]:
    """A history with media, another provider's thinking, a tool retry and retry feedback; and the texts the
    model must read for the retry and the feedback."""
    call = ToolCallPart(tool_name='get_weather', args='{"city": ""}', tool_call_id='call_1')
    retry = RetryPromptPart(content='city must not be empty', tool_name='get_weather', tool_call_id='call_1')
    feedback = RetryFeedbackPart(content='Answer in one sentence.', cause='model_retry')
    history: list[ModelMessage] = [
        ModelRequest(
            parts=[
                UserPromptPart(
                    content=[
                        'Look:',
                        ImageUrl(url='https://x.test/a.png'),
                        BinaryContent(data=b'%PDF', media_type='application/pdf'),
                    ]
                )
            ],
            instructions='Use tools.',
        ),
        ModelResponse(parts=[ThinkingPart(content='hmm', signature='sig', provider_name='anthropic'), call]),
        ModelRequest(parts=[retry]),
        ModelResponse(parts=[TextPart(content='It is sunny.')]),
        ModelRequest(parts=[feedback]),
    ]
    return history, retry.model_response(), render_retry_feedback(feedback)


def test_history_to_chat_completions_shows_retries_as_the_model_should_see_them() -> None:
    history, retry_text, feedback_text = retry_history()
    messages = to_chat_completions_messages(history)
    assert messages == [
        {'role': 'system', 'content': 'Use tools.'},
        {
            'role': 'user',
            'content': [
                {'type': 'text', 'text': 'Look:'},
                {'type': 'image_url', 'image_url': {'url': 'https://x.test/a.png'}},
                {
                    'type': 'file',
                    'file': {'file_data': 'data:application/pdf;base64,JVBERg==', 'filename': 'document.pdf'},
                },
            ],
        },
        {
            'role': 'assistant',
            'content': None,
            'tool_calls': [
                {'id': 'call_1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": ""}'}}
            ],
        },
        {'role': 'tool', 'tool_call_id': 'call_1', 'content': retry_text},
        {'role': 'assistant', 'content': 'It is sunny.'},
        {'role': 'user', 'content': feedback_text},
    ]
    assert chat_conforms(list(messages))


def test_history_to_responses_input_drops_other_providers_thinking() -> None:
    history, retry_text, feedback_text = retry_history()
    items = to_responses_input(history)
    assert items == [
        {'type': 'message', 'role': 'system', 'content': 'Use tools.'},
        {
            'type': 'message',
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': 'Look:'},
                {'type': 'input_image', 'image_url': 'https://x.test/a.png', 'detail': 'auto'},
                {'type': 'input_file', 'file_data': 'data:application/pdf;base64,JVBERg==', 'filename': 'document.pdf'},
            ],
        },
        {'type': 'function_call', 'call_id': 'call_1', 'name': 'get_weather', 'arguments': '{"city": ""}'},
        {'type': 'function_call_output', 'call_id': 'call_1', 'output': retry_text},
        {'type': 'message', 'role': 'assistant', 'content': 'It is sunny.'},
        {'type': 'message', 'role': 'user', 'content': feedback_text},
    ]
    assert responses_conform(list(items))


def test_a_tool_less_retry_prompt_is_a_user_message_and_a_video_link_is_refused() -> None:
    retry = RetryPromptPart(content='No usable answer.')
    assert to_chat_completions_messages([ModelRequest(parts=[retry])]) == [
        {'role': 'user', 'content': retry.model_response()}
    ]
    from uibridge.core.messages import VideoUrl

    with pytest.raises(ValueError, match='video-url'):
        to_responses_input([ModelRequest(parts=[UserPromptPart(content=[VideoUrl(url='https://x.test/v.mp4')])])])
