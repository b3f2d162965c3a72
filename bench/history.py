"""The same conversation built twice: once in uibridge's message types, once in pydantic-ai's own.

A 10-message cycle holds every part kind both libraries have: system and user prompts (text, and a user
prompt with an image URL, inline image bytes, a document, audio and video URLs), thinking with a
signature, text, tool calls with their returns, a tool-bound `RetryPromptPart`, `RetryFeedbackPart`s
(validation errors and a validator's message) and a file the model produced. Ids and timestamps are
fixed, so both libraries see exactly the same history.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from typing import Any

from uibridge.core import messages as ub

TS = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
PNG = b'\x89PNG\r\n\x1a\n' + bytes(range(256)) * 4
ERRORS: list[Any] = [
    {'type': 'int_parsing', 'loc': ('days',), 'msg': 'Input should be a valid integer', 'input': 'two'},
]
OUTPUT_ERRORS: list[Any] = [
    {'type': 'missing', 'loc': ('temperature',), 'msg': 'Field required', 'input': {'sky': 'clear'}},
]
WEATHER = {'temp_c': 21, 'sky': 'clear', 'hourly': [{'h': h, 't': 18 + h % 5} for h in range(6)]}


def ours(count: int = 1000) -> list[ub.ModelMessage]:
    history: list[ub.ModelMessage] = []
    for cycle in range(count // 10):
        call = f'call_{cycle}'
        prompt: list[ub.ModelRequestPart] = []
        if cycle == 0:
            prompt.append(ub.SystemPromptPart(content='You are a weather assistant.', timestamp=TS))
        if cycle % 2:
            content: str | list[ub.UserContent] = [
                f'Question {cycle}: what is in these files?',
                ub.ImageUrl(url='https://example.com/cat.png'),
                ub.BinaryContent(data=PNG, media_type='image/png'),
                ub.DocumentUrl(url='https://example.com/report.pdf'),
                ub.AudioUrl(url='https://example.com/note.mp3'),
                ub.VideoUrl(url='https://example.com/clip.mp4'),
            ]
        else:
            content = f'Question {cycle}: what is the weather in Paris? </system> <tool_result>'
        prompt.append(ub.UserPromptPart(content=content, timestamp=TS))
        feedback = (
            ub.RetryFeedbackPart(content=OUTPUT_ERRORS, cause='validation_error', timestamp=TS)
            if cycle % 2
            else ub.RetryFeedbackPart(content='Mention the temperature.', cause='model_retry', timestamp=TS)
        )
        history += [
            ub.ModelRequest(parts=prompt),
            ub.ModelResponse(
                parts=[
                    ub.ThinkingPart(
                        content='Let me look that up.', signature=f'sig-{cycle}', provider_name='anthropic'
                    ),
                    ub.TextPart(content='I will check the weather.'),
                    ub.ToolCallPart(
                        tool_name='get_weather', args={'city': 'Paris', 'days': 3}, tool_call_id=f'{call}a'
                    ),
                ],
                model_name='claude',
                provider_name='anthropic',
                timestamp=TS,
            ),
            ub.ModelRequest(
                parts=[
                    ub.ToolReturnPart(tool_name='get_weather', content=WEATHER, tool_call_id=f'{call}a', timestamp=TS)
                ]
            ),
            ub.ModelResponse(
                parts=[ub.ToolCallPart(tool_name='get_forecast', args={'days': 'two'}, tool_call_id=f'{call}b')],
                timestamp=TS,
            ),
            ub.ModelRequest(
                parts=[
                    ub.RetryPromptPart(content=ERRORS, tool_name='get_forecast', tool_call_id=f'{call}b', timestamp=TS)
                ]
            ),
            ub.ModelResponse(
                parts=[ub.ToolCallPart(tool_name='get_forecast', args='{"days": 2}', tool_call_id=f'{call}c')],
                timestamp=TS,
            ),
            ub.ModelRequest(
                parts=[
                    ub.ToolReturnPart(
                        tool_name='get_forecast', content='Sunny, then rain.', tool_call_id=f'{call}c', timestamp=TS
                    )
                ]
            ),
            ub.ModelResponse(parts=[ub.TextPart(content='Sunny, then rain. <b>Enjoy</b>')], timestamp=TS),
            ub.ModelRequest(parts=[feedback]),
            ub.ModelResponse(
                parts=[
                    ub.TextPart(content='It is 21 °C and clear; here is a chart.'),
                    ub.FilePart(content=ub.BinaryContent(data=PNG, media_type='image/png')),
                ],
                timestamp=TS,
            ),
        ]
    return history


def peer(count: int = 1000) -> list[Any]:
    from pydantic_ai import messages as pa

    history: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # RetryPromptPart is deprecated in pydantic-ai, still a part kind it loads
        for cycle in range(count // 10):
            call = f'call_{cycle}'
            prompt: list[Any] = []
            if cycle == 0:
                prompt.append(pa.SystemPromptPart(content='You are a weather assistant.', timestamp=TS))
            if cycle % 2:
                content: Any = [
                    f'Question {cycle}: what is in these files?',
                    pa.ImageUrl(url='https://example.com/cat.png'),
                    pa.BinaryContent(data=PNG, media_type='image/png'),
                    pa.DocumentUrl(url='https://example.com/report.pdf'),
                    pa.AudioUrl(url='https://example.com/note.mp3'),
                    pa.VideoUrl(url='https://example.com/clip.mp4'),
                ]
            else:
                content = f'Question {cycle}: what is the weather in Paris? </system> <tool_result>'
            prompt.append(pa.UserPromptPart(content=content, timestamp=TS))
            feedback = (
                pa.RetryFeedbackPart(
                    content=OUTPUT_ERRORS,
                    retry=pa.RetryInfo('validation_error', attempt=1, max_retries=3),
                    timestamp=TS,
                )
                if cycle % 2
                else pa.RetryFeedbackPart(
                    content='Mention the temperature.',
                    retry=pa.RetryInfo('model_retry', attempt=1, max_retries=3),
                    timestamp=TS,
                )
            )
            history += [
                pa.ModelRequest(parts=prompt, timestamp=TS),
                pa.ModelResponse(
                    parts=[
                        pa.ThinkingPart(
                            content='Let me look that up.', signature=f'sig-{cycle}', provider_name='anthropic'
                        ),
                        pa.TextPart(content='I will check the weather.'),
                        pa.ToolCallPart(
                            tool_name='get_weather', args={'city': 'Paris', 'days': 3}, tool_call_id=f'{call}a'
                        ),
                    ],
                    model_name='claude',
                    provider_name='anthropic',
                    timestamp=TS,
                ),
                pa.ModelRequest(
                    parts=[
                        pa.ToolReturnPart(
                            tool_name='get_weather', content=WEATHER, tool_call_id=f'{call}a', timestamp=TS
                        )
                    ],
                    timestamp=TS,
                ),
                pa.ModelResponse(
                    parts=[pa.ToolCallPart(tool_name='get_forecast', args={'days': 'two'}, tool_call_id=f'{call}b')],
                    timestamp=TS,
                ),
                pa.ModelRequest(
                    parts=[
                        pa.RetryPromptPart(
                            content=ERRORS, tool_name='get_forecast', tool_call_id=f'{call}b', timestamp=TS
                        )
                    ],
                    timestamp=TS,
                ),
                pa.ModelResponse(
                    parts=[pa.ToolCallPart(tool_name='get_forecast', args='{"days": 2}', tool_call_id=f'{call}c')],
                    timestamp=TS,
                ),
                pa.ModelRequest(
                    parts=[
                        pa.ToolReturnPart(
                            tool_name='get_forecast', content='Sunny, then rain.', tool_call_id=f'{call}c', timestamp=TS
                        )
                    ],
                    timestamp=TS,
                ),
                pa.ModelResponse(parts=[pa.TextPart(content='Sunny, then rain. <b>Enjoy</b>')], timestamp=TS),
                pa.ModelRequest(parts=[feedback], timestamp=TS),
                pa.ModelResponse(
                    parts=[
                        pa.TextPart(content='It is 21 °C and clear; here is a chart.'),
                        pa.FilePart(content=pa.BinaryContent(data=PNG, media_type='image/png')),
                    ],
                    timestamp=TS,
                ),
            ]
    return history


def part_count(history: list[Any]) -> int:
    return sum(len(message.parts) for message in history)
