"""Histories the AG-UI adapter's tests share: one sample holding every part kind (`sample_history`, golden in
fixtures/ag_ui/sample_history.dump.json) and Hypothesis histories of every kind the protocol carries
(`histories`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from uibridge import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)
from uibridge.core.content import is_data_url

T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
ERRORS: list[Any] = [
    {
        'type': 'greater_than',
        'loc': ('answer', 0),
        'msg': 'Input should be greater than 0',
        'input': -1,
        'ctx': {'gt': 0},
    }
]


def sample_history() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content='You are terse.', timestamp=T0),
                SystemPromptPart(content='Today is Friday.', timestamp=T0, dynamic_ref='today'),
                UserPromptPart(
                    content=[
                        'What is in these?',
                        ImageUrl(url='https://example.com/a.png', media_type='image/png'),
                        AudioUrl(url='https://example.com/a.mp3'),
                        VideoUrl(url='https://example.com/a.mp4'),
                        DocumentUrl(url='https://example.com/a.pdf', media_type='application/pdf'),
                        BinaryContent(data=b'\x89PNG\x00', media_type='image/png'),
                        BinaryContent(data=b'%PDF', media_type='application/pdf'),
                    ],
                    timestamp=T0,
                ),
            ],
            instructions='Be brief.',
            metadata={'source': 'test'},
        ),
        ModelResponse(
            parts=[
                ThinkingPart(
                    content='They want a weather check.', signature='sig-1', provider_name='anthropic', id='th1'
                ),
                TextPart(content='Let me check.', id='txt1'),
                ToolCallPart(tool_name='get_weather', args={'city': 'Paris', 'days': [1, 2]}, tool_call_id='call_1'),
                ToolCallPart(tool_name='lookup', args='{not json', tool_call_id='call_2'),
                ToolCallPart(tool_name='noop', args=None, tool_call_id='call_3'),
            ],
            model_name='model-x',
            provider_name='provider-y',
            timestamp=T0,
            finish_reason='tool_call',
            metadata={'usage': {'input_tokens': 3}},
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(tool_name='get_weather', content={'tempC': 21}, tool_call_id='call_1', timestamp=T0),
                RetryPromptPart(tool_name='lookup', content=ERRORS, tool_call_id='call_2', timestamp=T0),
                ToolReturnPart(
                    tool_name='noop',
                    content='boom',
                    tool_call_id='call_3',
                    outcome='failed',
                    timestamp=T0,
                    metadata={'x': 1},
                ),
                RetryFeedbackPart(content=ERRORS, cause='validation_error', timestamp=T0),
                RetryPromptPart(content='Please answer in JSON.', timestamp=T0, tool_call_id='legacy'),
            ]
        ),
        ModelResponse(parts=[TextPart(content='It is 21°C.')], timestamp=T0),
        ModelResponse(parts=[TextPart(content='A second response in a row.')], timestamp=T0),
        ModelRequest(parts=[UserPromptPart(content='thanks', timestamp=T0)]),
        ModelRequest(parts=[UserPromptPart(content='a second request in a row', timestamp=T0)]),
    ]


# ------------------------------------------------------------------------------------------------ hypothesis

_text = st.text(max_size=20)
_nonempty = st.text(min_size=1, max_size=20)
# A `data:` URL is not a link: it loads as the bytes it holds (`BinaryContent`, drawn on its own), and a malformed one
# is refused on load, so the URL parts draw every other URL.
_link = _nonempty.filter(lambda url: not is_data_url(url))
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_text, children, max_size=3),
    max_leaves=6,
)
_times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
_media = st.one_of(
    st.builds(ImageUrl, url=_link, media_type=st.none() | st.just('image/png')),
    st.builds(AudioUrl, url=_link),
    st.builds(VideoUrl, url=_link),
    st.builds(DocumentUrl, url=_link),
    st.builds(BinaryContent, data=st.binary(max_size=8), media_type=st.sampled_from(['image/png', 'application/pdf'])),
)
_errors = st.lists(
    st.fixed_dictionaries(
        {'type': _nonempty, 'loc': st.lists(_text | st.integers(0, 5), max_size=2).map(tuple), 'msg': _text}
    ),
    min_size=1,
    max_size=2,
)


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    calls: list[ToolCallPart] = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            parts: list[Any] = []
            for _ in range(draw(st.integers(1, 4))):
                kind = draw(st.sampled_from(['text', 'thinking', 'call']))
                if kind == 'text':
                    parts.append(TextPart(content=draw(_nonempty), id=draw(st.none() | _nonempty)))
                elif kind == 'thinking':
                    parts.append(
                        ThinkingPart(
                            content=draw(_text),
                            signature=draw(st.none() | _nonempty),
                            provider_name=draw(st.none() | _nonempty),
                        )
                    )
                else:
                    call = ToolCallPart(
                        tool_name=draw(_nonempty),
                        args=draw(st.dictionaries(_text, _json, max_size=3)),
                        tool_call_id=f'call_{len(calls)}',
                    )
                    calls.append(call)
                    parts.append(call)
            messages.append(
                ModelResponse(
                    parts=parts,
                    timestamp=draw(_times),
                    model_name=draw(st.none() | _nonempty),
                    finish_reason=draw(st.none() | st.just('stop')),
                )
            )
        else:
            parts = []
            for _ in range(draw(st.integers(1, 3))):
                kind = draw(st.sampled_from(['system', 'user', 'feedback', 'result', 'retry']))
                if kind in ('result', 'retry') and not calls:
                    kind = 'user'
                if kind == 'system':
                    parts.append(SystemPromptPart(content=draw(_text), timestamp=draw(_times)))
                elif kind == 'user':
                    content = draw(_text | st.lists(_text | _media, max_size=3))
                    parts.append(UserPromptPart(content=content, timestamp=draw(_times)))
                elif kind == 'feedback':
                    cause = draw(st.sampled_from(['validation_error', 'no_output', 'model_retry']))
                    parts.append(RetryFeedbackPart(content=draw(_text | _errors), cause=cause, timestamp=draw(_times)))
                elif kind == 'result':
                    call = draw(st.sampled_from(calls))
                    parts.append(
                        ToolReturnPart(
                            tool_name=call.tool_name,
                            content=draw(_json),
                            tool_call_id=call.tool_call_id,
                            outcome=draw(st.sampled_from(['success', 'failed', 'denied', 'interrupted'])),
                            timestamp=draw(_times),
                        )
                    )
                else:
                    call = draw(st.sampled_from(calls))
                    parts.append(
                        RetryPromptPart(
                            tool_name=call.tool_name,
                            content=draw(_text | _errors),
                            tool_call_id=call.tool_call_id,
                            timestamp=draw(_times),
                        )
                    )
            messages.append(ModelRequest(parts=parts, instructions=draw(st.none() | _text)))
    return messages
