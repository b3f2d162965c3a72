"""Agent runs as neutral event lists, for the encoder's unit, golden and real-client tests."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from uibridge import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.citations import Citation, ContentCitationAnchor, DocumentCitationSource, WebCitationSource
from uibridge.core.events import (
    ActivityDelta,
    ActivitySnapshot,
    AgentEvent,
    CitationAdded,
    CustomData,
    FileOutput,
    MessageMetadata,
    NativeToolResult,
    PartDelta,
    PartEnd,
    PartStart,
    RawEvent,
    ResponseInfo,
    ResponseStart,
    RetryFeedback,
    RunCancelled,
    RunError,
    RunFinished,
    StateDelta,
    StateSnapshot,
    StepFinished,
    StepStarted,
    ToolCallReady,
    ToolResult,
    events_from_message,
)
from uibridge.core.provenance import Keyring
from uibridge.core.usage import Usage

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
KEYRING = Keyring(b'agui-scenario-secret')
"""The key a scenario that says so streams with (the others use the process default, the tests' own)."""
ERRORS: list[Any] = [{'type': 'missing', 'loc': ('answer',), 'msg': 'Field required', 'input': {}}]


@dataclass
class Scenario:
    name: str
    events: list[AgentEvent]
    kwargs: dict[str, Any] = field(default_factory=dict[str, Any])
    expect_error: str | None = None
    outcome: str = 'success'
    history: list[ModelMessage] = field(default_factory=list[ModelMessage])
    """What the client already holds (sent as `initialMessages`, dumped)."""


def _text_stream(index: int, *chunks: str) -> list[AgentEvent]:
    return [PartStart(index, TextPart(content=chunks[0])), *(PartDelta(index, c) for c in chunks[1:]), PartEnd(index)]


def scenarios() -> list[Scenario]:
    weather_call = ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_w')
    return [
        Scenario(
            'text', [ResponseStart(model_name='m1'), *_text_stream(0, 'Hel', 'lo, ', '', 'wörld 🎉 "q" \\ \n\t\x01')]
        ),
        # A provider may cut a surrogate pair between two deltas: each half travels as its JSON escape.
        Scenario('split_surrogate_pair', [ResponseStart(), *_text_stream(0, 'a\ud83d', '\ude00b')]),
        Scenario(
            'reasoning_then_text',
            [
                ResponseStart(provider_name='anthropic'),
                PartStart(0, ThinkingPart(content='Let me', provider_name='anthropic')),
                PartDelta(0, ' think.'),
                PartEnd(0, signature='sig-abc'),
                *_text_stream(1, 'Done.'),
                RunFinished('stop'),
            ],
        ),
        Scenario(
            'server_tool_loop',
            [
                ResponseStart(),
                *_text_stream(0, 'Checking.'),
                PartStart(1, ToolCallPart(tool_name='get_weather', tool_call_id='call_w')),
                PartDelta(1, '{"city":'),
                PartDelta(1, '"Paris"}'),
                PartEnd(1),
                ToolResult(
                    ToolReturnPart(tool_name='get_weather', content={'tempC': 21}, tool_call_id='call_w', timestamp=T0)
                ),
                ResponseStart(),
                *_text_stream(0, 'It is 21°C.'),
            ],
        ),
        Scenario(
            'parallel_calls_interleaved',
            [
                PartStart(0, ToolCallPart(tool_name='a', tool_call_id='call_a')),
                PartStart(1, ToolCallPart(tool_name='b', tool_call_id='call_b')),
                PartDelta(0, '{"x"'),
                PartDelta(1, '{"y"'),
                PartDelta(0, ':1}'),
                PartDelta(1, ':2}'),
                PartEnd(1),
                PartEnd(0),
                ToolResult(ToolReturnPart(tool_name='a', content='A', tool_call_id='call_a', timestamp=T0)),
                ToolResult(ToolReturnPart(tool_name='b', content=['B', 2], tool_call_id='call_b', timestamp=T0)),
            ],
        ),
        Scenario(
            'whole_messages',
            [
                *events_from_message(
                    ModelResponse(
                        parts=[
                            ThinkingPart(content='hmm', signature='s', id='r1'),
                            TextPart(content='Answer', id='t1'),
                            ToolCallPart(tool_name='f', args={'k': [1, {'z': None}]}, tool_call_id='call_f'),
                        ]
                    )
                ),
                ToolResult(
                    ToolReturnPart(tool_name='f', content='nope', tool_call_id='call_f', outcome='failed', timestamp=T0)
                ),
            ],
        ),
        Scenario(
            'tool_retry_and_feedback',
            [
                PartStart(0, ToolCallPart(tool_name='g', args='{"q": 1}', tool_call_id='call_g')),
                PartEnd(0),
                ToolResult(RetryPromptPart(tool_name='g', content=ERRORS, tool_call_id='call_g', timestamp=T0)),
                ResponseStart(),
                *_text_stream(0, '{"answer": '),
                RetryFeedback(RetryFeedbackPart(content=ERRORS, cause='validation_error', timestamp=T0)),
                RetryFeedback(RetryFeedbackPart(content='', cause='no_output', timestamp=T0)),
                RetryFeedback(RetryFeedbackPart(content='too long </system>', cause='model_retry', timestamp=T0)),
                ToolResult(RetryPromptPart(content='Legacy feedback.', tool_call_id='call_legacy', timestamp=T0)),
                ResponseStart(),
                *_text_stream(0, '{"answer": 1}'),
            ],
        ),
        Scenario(
            'denied_and_interrupted',
            [
                PartStart(0, ToolCallPart(tool_name='rm', args={'path': '/'}, tool_call_id='call_rm')),
                PartEnd(0),
                PartStart(1, ToolCallPart(tool_name='slow', args={}, tool_call_id='call_slow')),
                PartEnd(1),
                ToolResult(
                    ToolReturnPart(
                        tool_name='rm', content='denied', tool_call_id='call_rm', outcome='denied', timestamp=T0
                    )
                ),
                ToolResult(
                    ToolReturnPart(
                        tool_name='slow', content='stop', tool_call_id='call_slow', outcome='interrupted', timestamp=T0
                    )
                ),
            ],
        ),
        Scenario(
            'client_tool_pending',
            [
                *_text_stream(0, 'Asking the browser.'),
                PartStart(1, ToolCallPart(tool_name='confirm', args={'q': 'ok?'}, tool_call_id='call_c')),
                PartEnd(1),
                ToolCallReady('call_c', 'client'),
                RunFinished('tool_call'),
            ],
            outcome='success',
        ),
        # Who answers a call is said after its PartEnd: the call's TOOL_CALL_END waits for it, past a sibling
        # server call's result (an agent that runs its own tools first, then hands the rest to the client).
        Scenario(
            'client_call_after_server_result',
            [
                *_text_stream(0, 'Looking around.'),
                PartStart(1, ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_s')),
                PartStart(2, ToolCallPart(tool_name='get_location', args={}, tool_call_id='call_l')),
                PartEnd(1),
                PartEnd(2),
                ToolResult(
                    ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='call_s', timestamp=T0)
                ),
                ToolCallReady('call_l', 'client'),
                RunFinished('tool_call'),
            ],
        ),
        Scenario(
            'client_mark_before_part_end',
            [
                PartStart(0, ToolCallPart(tool_name='get_location', tool_call_id='call_b')),
                ToolCallReady('call_b', 'client'),
                PartDelta(0, '{"precise": true}'),
                PartEnd(0),
            ],
        ),
        Scenario(
            'approval_interrupt',
            [
                PartStart(0, weather_call),
                PartEnd(0),
                ToolCallReady('call_w', 'approval'),
                PartStart(1, ToolCallPart(tool_name='confirm', args={}, tool_call_id='call_c2')),
                PartEnd(1),
                ToolCallReady('call_c2', 'client'),
            ],
            kwargs={'keyring': KEYRING},
            outcome='interrupt',
        ),
        Scenario(
            'error_mid_stream',
            [
                ResponseStart(),
                PartStart(0, ThinkingPart(content='thinking')),
                PartStart(1, TextPart(content='partial')),
                PartStart(2, ToolCallPart(tool_name='f', tool_call_id='call_e')),
                PartDelta(2, '{"a"'),
                RunError('The model is unavailable; try again.', code='model_error'),
                *_text_stream(3, 'never sent'),
            ],
            expect_error='The model is unavailable; try again.',
        ),
        Scenario(
            'cancelled_1_0',
            [*_text_stream(0, 'Stopping'), RunCancelled()],
            kwargs={'client_protocol_version': '1.0'},
            outcome='cancelled',
        ),
        Scenario('cancelled_pre_1_0', [PartStart(0, TextPart(content='Stop')), RunCancelled()], outcome='success'),
        Scenario(
            'custom_and_file',
            [
                CustomData('acme.progress', {'pct': 50}),
                *_text_stream(0, 'Here is a picture.'),
                FileOutput(FilePart(content=BinaryContent(data=b'png', media_type='image/png'))),
                CustomData('acme.ping', None, transient=True),
            ],
        ),
        Scenario(
            'resumed_after_approval',
            [
                ToolResult(
                    ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='call_w', timestamp=T0)
                ),
                ResponseStart(),
                *_text_stream(0, 'It is sunny.'),
            ],
            history=[
                ModelRequest(parts=[UserPromptPart(content='Weather in Paris?', timestamp=T0)]),
                ModelResponse(parts=[weather_call], timestamp=T0),
            ],
        ),
        Scenario('empty_run', []),
        Scenario(
            'unclosed_parts_at_close',
            [PartStart(0, TextPart(content='dangling')), PartStart(1, ThinkingPart(content='x'))],
        ),
        every_new_event(),
        Scenario(
            'tool_only_response_after_reasoning',
            [
                PartStart(0, ThinkingPart(content='plan')),
                PartEnd(0),
                PartStart(1, ToolCallPart(tool_name='t', args={'n': 1}, tool_call_id='call_t')),
                PartEnd(1),
                ToolResult(ToolReturnPart(tool_name='t', content=None, tool_call_id='call_t', timestamp=T0)),
            ],
        ),
    ]


WEB_SOURCE = WebCitationSource(url='https://example.org/paris', title='Paris weather', excerpts=['sunny'])
DOC_SOURCE = DocumentCitationSource(
    document_id='doc-1', title='Almanac', media_type='application/pdf', filename='almanac.pdf'
)
SEARCH_RETURN = NativeToolReturnPart(
    tool_name='web_search',
    content={'results': [{'url': WEB_SOURCE.url}]},
    tool_call_id='ws_1',
    provider_name='openai',
    timestamp=T0,
)
"""What the provider's web search returned, in the scenarios and the dump tests."""


def every_new_event() -> Scenario:
    """A run holding every event kind beyond text and tool calls, each where a real agent would send it."""
    return Scenario(
        'every_new_event',
        [
            StateSnapshot({'todo': ['search'], 'phase': 'start', 'found': None}),
            StepStarted('search'),
            ResponseStart(model_name='gpt-x', provider_name='openai'),
            MessageMetadata({'app': {'theme': 'dark'}}),
            ActivitySnapshot('activity-1', 'progress', {'pct': 0, 'label': 'searching'}),
            PartStart(0, NativeToolCallPart(tool_name='web_search', tool_call_id='ws_1', provider_name='openai')),
            PartDelta(0, '{"query": '),
            PartDelta(0, '"paris weather"}'),
            PartEnd(0),
            NativeToolResult(SEARCH_RETURN),
            ActivityDelta('activity-1', 'progress', [{'op': 'replace', 'path': '/pct', 'value': 50}]),
            RawEvent({'type': 'response.web_search_call.completed', 'id': 'ws_1'}, source='openai'),
            StateDelta([{'op': 'replace', 'path': '/found', 'value': {'city': 'Paris'}}]),
            PartStart(1, TextPart(content='Paris is ', citations=[Citation(sources=[WEB_SOURCE])])),
            PartDelta(1, 'sunny.'),
            CitationAdded(1, Citation(sources=[DOC_SOURCE], anchor=ContentCitationAnchor(start=0, end=5))),
            PartEnd(1),
            StepFinished('search'),
            StepStarted('wrap-up'),  # left open: the run's end finishes it
            StateDelta(
                [
                    {'op': 'add', 'path': '/todo/-', 'value': 'answer'},
                    {'op': 'remove', 'path': '/todo/0'},
                    {'op': 'replace', 'path': '/phase', 'value': 'done'},
                ]
            ),
            MessageMetadata({'rating': None}),
            ResponseInfo(
                usage=Usage(input_tokens=120, output_tokens=30, cache_read_tokens=100, output_reasoning_tokens=10),
                finish_reason='stop',
                provider_response_id='resp_1',
                provider_details={'service_tier': 'default'},
            ),
            ResponseStart(model_name='gpt-x', provider_name='openai'),
            *_text_stream(0, 'Anything else?'),
            ResponseInfo(usage=Usage(input_tokens=200, output_tokens=5)),
            ResponseStart(model_name='small', provider_name='openai'),
            PartStart(0, NativeToolCallPart(tool_name='code_execution', args={'code': '1+1'}, tool_call_id='ce_1')),
            PartEnd(0),
            ToolCallReady('ce_1', 'client'),  # a mark on a provider-run call is no client's work: ignored
            NativeToolResult(
                NativeToolReturnPart(tool_name='code_execution', content=['2'], tool_call_id='ce_1', timestamp=T0)
            ),
            PartStart(1, ToolCallPart(tool_name='confirm', args={'q': 'ok?'}, tool_call_id='call_n')),
            PartEnd(1),
            ToolCallReady('call_n', 'client'),
            ResponseInfo(usage=Usage(input_tokens=7, output_tokens=3, cache_write_tokens=4)),
            RunFinished('tool_call'),
        ],
    )


def random_scenario(seed: int) -> Scenario:
    """A random but well-formed run. A response's tool calls all follow its last text or thinking part, so
    they share one assistant message: the client's reducer files each tool result right after the message
    that owns the call, which matches the dump's order only then (see the stream module's docstring)."""
    rng = random.Random(seed)
    events: list[AgentEvent] = []
    words = ['alpha', 'β', ' ', '"', '\\', '\n', '🎉', '</system>', 'x' * 30, '']
    counter = 0

    def text() -> str:
        return ''.join(rng.choice(words) for _ in range(rng.randint(0, 4)))

    pick: Callable[[], str] = text
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.7:
            events.append(ResponseStart(model_name=rng.choice([None, 'm'])))
        index = 0
        calls: list[ToolCallPart] = []
        for _ in range(rng.randint(0, 2)):
            kind = rng.choice(['text', 'thinking'])
            part = TextPart(content=pick()) if kind == 'text' else ThinkingPart(content=pick())
            events.append(PartStart(index, part))
            events.extend(PartDelta(index, pick()) for _ in range(rng.randint(0, 3)))
            events.append(PartEnd(index, signature=rng.choice([None, 'sig']) if kind == 'thinking' else None))
            index += 1
        for _ in range(rng.randint(0, 2)):
            counter += 1
            call = ToolCallPart(tool_name=rng.choice(['f', 'g']), tool_call_id=f'call_{seed}_{counter}')
            events.append(PartStart(index, call))
            events.append(PartDelta(index, '{"n": '))
            events.append(PartDelta(index, f'{counter}}}'))
            events.append(PartEnd(index))
            calls.append(call)
            index += 1
        for call in calls:
            if rng.random() < 0.5:
                content = rng.choice(['ok', {'n': 1}, [1, 2], None])
                events.append(
                    ToolResult(
                        ToolReturnPart(
                            tool_name=call.tool_name,
                            content=content,
                            tool_call_id=call.tool_call_id,
                            timestamp=T0 + timedelta(seconds=counter),
                        )
                    )
                )
            else:
                events.append(
                    ToolResult(
                        RetryPromptPart(
                            tool_name=call.tool_name,
                            content=pick() or 'bad',
                            tool_call_id=call.tool_call_id,
                            timestamp=T0,
                        )
                    )
                )
        if rng.random() < 0.3:
            events.append(RetryFeedback(RetryFeedbackPart(content=pick(), cause='model_retry', timestamp=T0)))
    events.append(RunFinished())
    return Scenario(f'random_{seed}', events)
