"""uibridge.integrations.anthropic through the real `anthropic` SDK (AsyncAnthropic) against a loopback replay
server replaying hand-written Messages API SSE bodies."""

from __future__ import annotations

import pytest
from anthropic_support import MODEL, anthropic_client, messages_conform
from vendor_replay import ReplayServer, fixture, without_timestamps

from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
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
from uibridge.integrations.anthropic import events_from_messages_stream, to_messages, to_messages_input

pytestmark = pytest.mark.anyio

SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds'
REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP'


async def test_messages_tool_loop_keeps_thinking_signatures() -> None:
    """Thinking (signed and redacted), text and two tool_use blocks with partial JSON; the results go back as
    tool_result blocks after the assistant turn, its thinking blocks unchanged; the second answer is text."""
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart(content='Be brief.'), UserPromptPart(content='Weather?')])
    ]
    collector = MessageCollector()
    async with ReplayServer([fixture('anthropic_tool_use.sse'), fixture('anthropic_final.sse')]) as server:
        sdk = anthropic_client(server.base_url)
        for _ in range(2):
            stream = await sdk.messages.create(model=MODEL, max_tokens=1024, stream=True, **to_messages_input(history))
            events = events_from_messages_stream(stream)
            async for event in events:
                collector.feed(event)
            history.append(events.response)
            if events.finish_reason != 'tool_call':
                collector.feed(RunFinished(events.finish_reason))
                break
            assert events.usage is not None and events.usage.output_tokens == 96
            calls = [part for part in events.response.parts if isinstance(part, ToolCallPart)]
            results = [
                ToolResult(
                    ToolReturnPart(
                        tool_name=call.tool_name,
                        content=f'{call.args_as_dict()["city"]}: mild',
                        tool_call_id=call.tool_call_id,
                    )
                )
                for call in calls
            ]
            for result in results:
                collector.feed(result)
            history.append(ModelRequest(parts=[result.part for result in results]))

    first = ModelResponse(
        parts=[
            ThinkingPart(content='Two cities; call the tool for each.', signature=SIGNATURE, provider_name='anthropic'),
            ThinkingPart(content='', id='redacted_thinking', signature=REDACTED, provider_name='anthropic'),
            TextPart(content='Let me check both.'),
            ToolCallPart(tool_name='get_weather', args='{"city": "Paris"}', tool_call_id='toolu_paris'),  # as streamed
            ToolCallPart(tool_name='get_weather', args='{"city": "Tokyo"}', tool_call_id='toolu_tokyo'),
        ],
        model_name=MODEL,
        provider_name='anthropic',
        finish_reason='tool_call',
        usage=Usage(input_tokens=412, output_tokens=96),
        provider_response_id='msg_01',
        provider_details={'finish_reason': 'tool_use'},
    )
    final = ModelResponse(
        parts=[TextPart(content='Paris: 18C. Tokyo: 24C.')],
        model_name=MODEL,
        provider_name='anthropic',
        finish_reason='stop',
        usage=Usage(input_tokens=560, output_tokens=12),
        provider_response_id='msg_02',
        provider_details={'finish_reason': 'end_turn'},
    )
    assert without_timestamps(collector.messages) == without_timestamps([first, history[2], final])

    sent = server.received[1]
    assert sent.path == '/v1/messages'
    assert sent.body['system'] == 'Be brief.'
    assert sent.body['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather?'}]},
        {
            'role': 'assistant',
            'content': [
                {'type': 'thinking', 'thinking': 'Two cities; call the tool for each.', 'signature': SIGNATURE},
                {'type': 'redacted_thinking', 'data': REDACTED},
                {'type': 'text', 'text': 'Let me check both.'},
                {'type': 'tool_use', 'id': 'toolu_paris', 'name': 'get_weather', 'input': {'city': 'Paris'}},
                {'type': 'tool_use', 'id': 'toolu_tokyo', 'name': 'get_weather', 'input': {'city': 'Tokyo'}},
            ],
        },
        {
            'role': 'user',
            'content': [
                {'type': 'tool_result', 'tool_use_id': 'toolu_paris', 'content': 'Paris: mild', 'is_error': False},
                {'type': 'tool_result', 'tool_use_id': 'toolu_tokyo', 'content': 'Tokyo: mild', 'is_error': False},
            ],
        },
    ]
    assert messages_conform(sent.body['messages'])


async def test_an_error_event_mid_stream_raises_the_sdk_error_after_the_partial_answer() -> None:
    collector = MessageCollector()
    async with ReplayServer([fixture('anthropic_error_midstream.sse')]) as server:
        sdk = anthropic_client(server.base_url)
        events = events_from_messages_stream(
            await sdk.messages.create(
                model=MODEL, max_tokens=10, messages=[{'role': 'user', 'content': 'hi'}], stream=True
            )
        )
        from anthropic import APIStatusError

        with pytest.raises(APIStatusError, match='Overloaded'):
            async for event in events:
                collector.feed(event)
    assert without_timestamps(collector.messages) == without_timestamps(
        [ModelResponse(parts=[TextPart(content='Half')], model_name=MODEL, provider_name='anthropic')]
    )


def test_history_to_messages_retries_feedback_and_foreign_thinking() -> None:
    """A tool retry is an error tool_result with uibridge's words, retry feedback a user text block after the
    results, unsigned or other providers' thinking is left out, and consecutive user turns merge."""
    retry = RetryPromptPart(content='city must not be empty', tool_name='get_weather', tool_call_id='toolu_1')
    feedback = RetryFeedbackPart(content='Answer in one sentence.', cause='model_retry')
    failed = ToolReturnPart(tool_name='get_time', content='clock broke', tool_call_id='toolu_2', outcome='failed')
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content='Weather?')], instructions='Use tools.'),
        ModelResponse(
            parts=[
                ThinkingPart(content='unsigned'),
                ThinkingPart(content='from openai', id='rs_1', signature='enc', provider_name='openai'),
                ToolCallPart(tool_name='get_weather', args='{"city": ""}', tool_call_id='toolu_1'),
                ToolCallPart(tool_name='get_time', args=None, tool_call_id='toolu_2'),
            ]
        ),
        ModelRequest(parts=[feedback, retry, failed]),
        ModelRequest(parts=[UserPromptPart(content='and now?')]),
    ]
    result = to_messages_input(history)
    assert result == {
        'system': 'Use tools.',
        'messages': [
            {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather?'}]},
            {
                'role': 'assistant',
                'content': [
                    {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': ''}},
                    {'type': 'tool_use', 'id': 'toolu_2', 'name': 'get_time', 'input': {}},
                ],
            },
            {
                'role': 'user',
                'content': [
                    {
                        'type': 'tool_result',
                        'tool_use_id': 'toolu_1',
                        'content': retry.model_response(),
                        'is_error': True,
                    },
                    {'type': 'tool_result', 'tool_use_id': 'toolu_2', 'content': 'clock broke', 'is_error': True},
                    {'type': 'text', 'text': render_retry_feedback(feedback)},
                    {'type': 'text', 'text': 'and now?'},
                ],
            },
        ],
    }
    assert to_messages(history) == result['messages']
    assert messages_conform(result['messages'])
