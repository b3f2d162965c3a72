"""Shared material for the Vercel AI adapter tests: histories, event scenarios, comparisons, the Node check.

Every history uses fixed timestamps so dumps are byte-stable (the golden files depend on it).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neutral_views import without_extras
from uibridge import (
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
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
    render_retry_feedback,
)
from uibridge.adapters.vercel_ai import UIMessage, VercelAIEventStream, dump_messages, load_messages
from uibridge.core.citations import (
    Citation,
    ContentCitationAnchor,
    DocumentCitationSource,
    WebCitationSource,
)
from uibridge.core.events import (
    ANSWERED_BY_METADATA_KEY,
    DYNAMIC_TOOLS_METADATA_KEY,
    STATE_METADATA_KEY,
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
from uibridge.core.messages import AudioUrl, NativeToolCallPart, NativeToolReturnPart, UploadedFile, VideoUrl
from uibridge.core.usage import Usage

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIXTURES = ROOT / 'fixtures' / 'vercel_ai'
CLIENTS = ROOT / 'tests' / 'clients'
CHECK_SCRIPT = CLIENTS / 'vercel_check.mjs'

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 4, 6, 500000, tzinfo=UTC)

ERRORS: list[Any] = [
    {'type': 'missing', 'loc': ('city',), 'msg': 'Field required', 'input': {'town': 'Paris'}},
    {
        'type': 'greater_than',
        'loc': ('days', 0),
        'msg': 'Input should be greater than 0',
        'input': -1,
        'ctx': {'gt': 0},
    },
]


THREAD_ID = 'chat_golden'
"""The chat id the scenarios' streams run in: approval ids are bound to it (and, with the test secret of
`tests/conftest.py`, the same on every run, so the golden streams hold them)."""


# ------------------------------------------------------------------------------------------ histories


def _histories() -> dict[str, list[ModelMessage]]:
    user = ModelRequest(
        parts=[
            SystemPromptPart(content='You are a weather bot.', timestamp=T0),
            UserPromptPart(content='Weather in Paris?', timestamp=T0),
        ]
    )
    return {
        'text_chat': [
            user,
            ModelResponse(
                parts=[TextPart(content='It is sunny.')],
                model_name='gpt-x',
                provider_name='openai',
                timestamp=T1,
                finish_reason='stop',
            ),
        ],
        'tool_calls': [
            user,
            ModelResponse(
                parts=[
                    TextPart(content='Let me check.', id='msg_1'),
                    ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_1'),
                    ToolCallPart(tool_name='get-forecast', args={'city': 'Paris', 'days': 2}, tool_call_id='call_2'),
                ],
                timestamp=T1,
                finish_reason='tool_call',
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name='get_weather',
                        content={'sky': 'sunny', 'temp_c': 21},
                        tool_call_id='call_1',
                        timestamp=T1,
                    ),
                    ToolReturnPart(
                        tool_name='get-forecast',
                        content='rain tomorrow',
                        tool_call_id='call_2',
                        timestamp=T1,
                        metadata={'source': 'met'},
                    ),
                ]
            ),
            ModelResponse(parts=[TextPart(content='Sunny today, rain tomorrow.')], timestamp=T1),
        ],
        'thinking': [
            user,
            ModelResponse(
                parts=[
                    ThinkingPart(
                        content='The user wants weather.',
                        id='rs_1',
                        signature='c2lnbmF0dXJl',
                        provider_name='anthropic',
                    ),
                    ThinkingPart(content='No signature here.'),
                    TextPart(content='Sunny.'),
                ],
                timestamp=T1,
            ),
        ],
        'tool_errors': [
            user,
            ModelResponse(
                parts=[
                    ToolCallPart(tool_name='get_weather', args={'town': 'Paris'}, tool_call_id='call_r1'),
                    ToolCallPart(tool_name='get_weather', args='{"city": "Paris"}', tool_call_id='call_r2'),
                    ToolCallPart(tool_name='explode', args=None, tool_call_id='call_f1'),
                    ToolCallPart(tool_name='explode', args='not json', tool_call_id='call_f2'),
                    ToolCallPart(tool_name='delete_all', args={}, tool_call_id='call_d1'),
                    ToolCallPart(tool_name='slow', args={'n': 1}, tool_call_id='call_i1'),
                ],
                timestamp=T1,
            ),
            ModelRequest(
                parts=[
                    RetryPromptPart(content=ERRORS, tool_name='get_weather', tool_call_id='call_r1', timestamp=T1),
                    RetryPromptPart(
                        content='Unknown city, try a capital.',
                        tool_name='get_weather',
                        tool_call_id='call_r2',
                        timestamp=T1,
                    ),
                    ToolReturnPart(
                        tool_name='explode', content='boom', tool_call_id='call_f1', outcome='failed', timestamp=T1
                    ),
                    ToolReturnPart(
                        tool_name='explode',
                        content={'error': 'boom'},
                        tool_call_id='call_f2',
                        outcome='failed',
                        timestamp=T1,
                    ),
                    ToolReturnPart(
                        tool_name='delete_all',
                        content='The user denied this.',
                        tool_call_id='call_d1',
                        outcome='denied',
                        timestamp=T1,
                    ),
                    ToolReturnPart(
                        tool_name='slow',
                        content='Interrupted.',
                        tool_call_id='call_i1',
                        outcome='interrupted',
                        timestamp=T1,
                    ),
                ]
            ),
            ModelResponse(parts=[TextPart(content='Done.')], timestamp=T1),
        ],
        'retry_feedback': [
            user,
            ModelResponse(parts=[TextPart(content='{"city": 1}')], timestamp=T1),
            ModelRequest(parts=[RetryFeedbackPart(content=ERRORS, cause='validation_error', timestamp=T1)]),
            ModelResponse(parts=[ThinkingPart(content='hmm')], timestamp=T1),
            ModelRequest(parts=[RetryFeedbackPart(content='', cause='no_output', timestamp=T1)]),
            ModelResponse(parts=[TextPart(content='Paris is <b>nice</b>')], timestamp=T1),
            ModelRequest(
                parts=[
                    RetryFeedbackPart(
                        content='Say it without </system> <system>tags</system>.', cause='model_retry', timestamp=T1
                    )
                ]
            ),
            ModelResponse(parts=[TextPart(content='Paris is nice.')], timestamp=T1),
        ],
        'legacy_retry_prompt': [
            user,
            ModelResponse(parts=[TextPart(content='oops')], timestamp=T1),
            ModelRequest(
                parts=[RetryPromptPart(content='Please answer in JSON.', tool_call_id='call_legacy', timestamp=T1)]
            ),
            ModelResponse(parts=[TextPart(content='{}')], timestamp=T1),
        ],
        'media': [
            ModelRequest(
                parts=[
                    UserPromptPart(
                        content=[
                            'What is in these?',
                            ImageUrl(url='https://example.com/a.png', media_type='image/png'),
                            ImageUrl(url='https://example.com/b'),
                            AudioUrl(url='https://example.com/a.mp3', media_type='audio/mpeg'),
                            VideoUrl(url='https://example.com/a.mp4'),
                            DocumentUrl(url='https://example.com/a.pdf', media_type='application/pdf'),
                            DocumentUrl(url='https://example.com/doc'),
                            ImageUrl(url='https://example.com/c', media_type='application/octet-stream'),
                            BinaryContent(data=b'\x89PNG\r\n', media_type='image/png'),
                        ],
                        timestamp=T0,
                    ),
                    UserPromptPart(content=['only one item'], timestamp=T0),
                ]
            ),
            ModelResponse(
                parts=[
                    TextPart(content='Here is a drawing.'),
                    FilePart(content=BinaryContent(data=b'GIF89a', media_type='image/gif'), id='f1'),
                ],
                timestamp=T1,
            ),
        ],
        'custom_data': [
            user,
            ModelResponse(
                parts=[TextPart(content='Looking.'), TextPart(content='Found it.')],
                timestamp=T1,
                metadata={
                    'uibridge_custom_data': [
                        {'name': 'status', 'data': {'phase': 'search'}, 'position': 0},
                        {'name': 'status', 'data': None, 'id': 's2', 'position': 1},
                        {'name': 'weather', 'data': [1, 2], 'position': 2},
                    ],
                    'trace_id': 'abc',
                },
            ),
        ],
        'pending_calls': [
            user,
            ModelResponse(
                parts=[ToolCallPart(tool_name='ask_user', args={'q': 'Which city?'}, tool_call_id='call_c1')],
                timestamp=T1,
                finish_reason='tool_call',
            ),
        ],
        'request_fields': [
            ModelRequest(
                parts=[SystemPromptPart(content='Be brief.', timestamp=T0, dynamic_ref='brief')],
                instructions='Use metric units.',
                metadata={'tenant': 't1'},
            ),
            ModelRequest(
                parts=[
                    UserPromptPart(content='Hi', timestamp=T0),
                    UserPromptPart(content='Anyone there?', timestamp=T1),
                ]
            ),
            ModelResponse(parts=[TextPart(content='Hello.')], timestamp=T1),
            ModelResponse(parts=[TextPart(content='Still here.')], timestamp=T1),
            ModelRequest(parts=[UserPromptPart(content='', timestamp=T1)]),
            ModelRequest(parts=[UserPromptPart(content=[], timestamp=T1)]),
        ],
        'unicode': [
            ModelRequest(parts=[UserPromptPart(content='Grüße 👋 </system> "quotes" \\ back', timestamp=T0)]),
            ModelResponse(parts=[TextPart(content='ünïcödé 😀\n\nline\u2028sep')], timestamp=T1),
        ],
        # Tools the UI does not know by name (an MCP server's): `dynamic-tool` parts, a provider-run one too, and
        # one still waiting for its approval (an `ai` 5 client keeps the approval's id in the call's metadata).
        'dynamic_tools': [
            user,
            ModelResponse(
                parts=[
                    TextPart(content='Asking the tools.'),
                    ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_s1'),
                    ToolCallPart(tool_name='mcp.search', args={'q': 'Paris'}, tool_call_id='call_d1'),
                    NativeToolCallPart(
                        tool_name='remote_mcp', args={'q': 'x'}, tool_call_id='ncall_d2', provider_name='openai'
                    ),
                    NativeToolReturnPart(
                        tool_name='remote_mcp',
                        content={'hits': 1},
                        tool_call_id='ncall_d2',
                        provider_name='openai',
                        timestamp=T1,
                    ),
                ],
                timestamp=T1,
                metadata={DYNAMIC_TOOLS_METADATA_KEY: ['call_d1', 'ncall_d2']},
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='call_s1', timestamp=T1),
                    ToolReturnPart(
                        tool_name='mcp.search', content={'results': ['a']}, tool_call_id='call_d1', timestamp=T1
                    ),
                ]
            ),
            ModelResponse(
                parts=[ToolCallPart(tool_name='mcp.delete', args={'id': 7}, tool_call_id='call_d3')],
                timestamp=T1,
                metadata={
                    DYNAMIC_TOOLS_METADATA_KEY: ['call_d3'],
                    ANSWERED_BY_METADATA_KEY: {'call_d3': 'approval'},
                    'uibridge_vercel_ai': {'approvals': {'call_d3': {'id': 'apr_call_d3'}}},
                },
            ),
        ],
        # What loading keeps of the fields only a client's UI reads (`_ui_fields`), and a user's provider file.
        'client_ui_fields': [
            ModelRequest(
                parts=[
                    UserPromptPart(
                        content=[
                            'Summarise the report.',
                            UploadedFile(
                                file_id='file-1',
                                provider_name='openai',
                                media_type='application/pdf',
                                filename='report.pdf',
                                url='https://example.com/report.pdf',
                            ),
                        ],
                        timestamp=T0,
                    )
                ]
            ),
            ModelResponse(
                parts=[
                    TextPart(content='It says hello.'),
                    FilePart(content=BinaryContent(data=b'GIF89a', media_type='image/gif', filename='chart.gif')),
                    ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_t1'),
                    ToolCallPart(tool_name='lookup', args={'q': 'x'}, tool_call_id='call_t2'),
                ],
                timestamp=T1,
                metadata={
                    DYNAMIC_TOOLS_METADATA_KEY: ['call_t2'],
                    'uibridge_vercel_ai': {
                        'ui_fields': {
                            '0': {
                                'citations': [
                                    {
                                        'source': {
                                            'type': 'source',
                                            'sourceType': 'url',
                                            'id': 's1',
                                            'url': 'https://example.com/report',
                                        },
                                        'startIndex': 0,
                                        'endIndex': 2,
                                    }
                                ]
                            },
                            '1': {'provider_reference': {'openai': 'file-9'}},
                            '2': {'title': 'Weather', 'tool_metadata': {'server': 'local'}, 'preliminary': True},
                            '3': {'dynamic': False},
                        }
                    },
                },
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name='get_weather', content='sunny so far', tool_call_id='call_t1', timestamp=T1
                    ),
                    ToolReturnPart(tool_name='lookup', content='found', tool_call_id='call_t2', timestamp=T1),
                ]
            ),
        ],
    }


HISTORIES: dict[str, list[ModelMessage]] = _histories()


def pydantic_ai_history() -> list[ModelMessage]:
    """The history pydantic-ai itself stored (`fixtures/core`), every part kind both libraries share."""
    return ModelMessagesTypeAdapter.validate_json(
        (ROOT / 'fixtures' / 'core' / 'pydantic_ai_history.json').read_bytes()
    )


# ------------------------------------------------------------------------------------------ comparison


def model_view(messages: Sequence[ModelMessage], *, stream: bool = False) -> list[dict[str, Any]]:
    """A history as the comparison sees it: everything the model sees, plus what uibridge carries exactly.

    Ignored, and why:
    - the keys pydantic-ai stores that uibridge has no field for (`neutral_views`);
    - a `RetryFeedbackPart`'s errors lose `ctx` and `input`: the marker discloses no more than the rendered
      text (`uibridge.core.feedback`), so the round trip is rendering-equivalent; compared as cause, rendered
      text and timestamp;
    - a retry prompt's errors lose `ctx` (never sent to a client, nor shown to the model);
    - the `uibridge_vercel_ai` sidecar (UI ids, UI-only parts): UI bookkeeping the model never sees;
    - with `stream=True`, `ModelResponse.finish_reason` (the stream ends a response before the run says why),
      and the timestamp, model and provider of a response with no parts: no part carries them to the client.
    """
    view: list[dict[str, Any]] = []
    for message in without_extras(list(messages)):
        data = message.model_dump(mode='json')
        if data.get('metadata'):
            data['metadata'] = {k: v for k, v in data['metadata'].items() if k != 'uibridge_vercel_ai'} or None
        if isinstance(message, ModelResponse) and stream:
            data['finish_reason'] = None
            if not message.parts:
                data.update(timestamp=None, model_name=None, provider_name=None)
        if isinstance(message, ModelRequest):
            parts: list[Any] = []
            for part, dumped in zip(message.parts, data['parts'], strict=True):
                if isinstance(part, RetryFeedbackPart):
                    dumped = {
                        'part_kind': 'retry-feedback',
                        'cause': part.cause,
                        'text': render_retry_feedback(part),
                        'timestamp': dumped['timestamp'],
                    }
                elif isinstance(part, RetryPromptPart) and isinstance(part.content, list):
                    dumped['content'] = [{k: v for k, v in e.items() if k != 'ctx'} for e in dumped['content']]
                parts.append(dumped)
            data['parts'] = parts
        view.append(data)
    return view


def ui_view(message: dict[str, Any]) -> dict[str, Any]:
    """A UI message as a client built it from the stream, for comparing with a dumped one.

    Ignored: the message `id` (the stream's is chosen per response), a `reasoning` part's `id` (a chunk id),
    `response.finish_reason` in part metadata (known only after the parts were sent), and keys whose value
    is `undefined` in the client (they never reach JSON).
    """
    parts: list[Any] = []
    for part in message['parts']:
        part = dict(part)
        if part['type'] == 'reasoning':
            part.pop('id', None)
        for key in ('providerMetadata', 'callProviderMetadata', 'resultProviderMetadata'):
            ours = part.get(key, {}).get('uibridge', {})
            if isinstance(ours.get('response'), dict):
                part[key] = json.loads(json.dumps(part[key]))
                part[key]['uibridge']['response'].pop('finish_reason', None)
        parts.append(part)
    return {'role': message['role'], 'metadata': message.get('metadata'), 'parts': parts}


def answer_client_tools(ui: list[dict[str, Any]], produced: Sequence[ModelMessage]) -> int:
    """Answer in `ui` each call `produced` addressed to a client tool, as `addToolOutput` does in the client (the
    output, no result metadata: the client writes it). Returns how many calls still wait for an approval after
    the server answered a sibling: followed by that answer's request, `verify_history` counts them unanswered."""
    waiting = 0
    for index, response in enumerate(produced):
        if not isinstance(response, ModelResponse):
            continue
        for call_id, who in ((response.metadata or {}).get(ANSWERED_BY_METADATA_KEY) or {}).items():
            if who == 'client':
                part = next(p for m in ui for p in m['parts'] if p.get('toolCallId') == call_id)
                part.update(state='output-available', output={'from': 'the browser'})
            elif index + 1 < len(produced):
                waiting += 1
    return waiting


# ------------------------------------------------------------------------------------------ streams


@dataclass
class Scenario:
    """A run's events, the history before it, and how the encoder is set up."""

    events: list[AgentEvent]
    history: list[ModelMessage] = field(default_factory=list[ModelMessage])
    continues: bool = False
    """The run continues the history's last assistant message (an approval or client tool answered)."""
    error: str | None = None
    """The error text the client must report, for a run that fails."""


def history_ui(scenario: Scenario) -> list[dict[str, Any]]:
    """The UI messages the client holds before the run (the last one is the one a continuing run continues)."""
    dumped = [m.model_dump(mode='json') for m in dump_messages(scenario.history)]
    if scenario.continues:
        dumped[-1]['id'] = 'msg_continued'
    return dumped


def scenario_stream(scenario: Scenario) -> VercelAIEventStream:
    """The encoder the server would build for the scenario's request (`VercelAIBinding.encoder`)."""
    continued = UIMessage.model_validate(history_ui(scenario)[-1]) if scenario.continues else None
    return VercelAIEventStream(continued=continued, thread_id=THREAD_ID)


def drop_trailing_empty_steps(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`readUIMessageStream` snapshots the message when a chunk changes what it shows, and `start-step` alone
    does not: a run that ends with responses holding no parts ends with a snapshot that lacks their
    `step-start`s (the `Chat` state has them). Those empty responses are dropped from what is expected."""
    messages = list(messages)
    while messages and isinstance(messages[-1], ModelResponse) and not messages[-1].parts and not messages[-1].metadata:
        messages.pop()
    return messages


def as_the_client_keeps_it(scenario: Scenario, new_messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history and the run's messages as loading the message a client built (any `ai` version) gives them
    back. The client keeps one `data-*` part per type and id in a message, the latest: a data part sent again with
    its id replaces the first, and a continued message's state part takes the run's state, which loading puts on
    the message's last response (the history kept the earlier state on its own). Both as a dump and load do."""
    produced = drop_trailing_empty_steps([*scenario.history, *new_messages])
    ids = [(e.name, e.id) for e in scenario.events if isinstance(e, CustomData) and e.id is not None]
    updates_data = len(ids) != len(set(ids))
    moves_state = scenario.continues and any(STATE_METADATA_KEY in (m.metadata or {}) for m in scenario.history)
    return load_messages(dump_messages(produced)) if updates_data or moves_state else produced


def _whole(*messages: ModelMessage) -> list[AgentEvent]:
    return [event for message in messages for event in events_from_message(message)]


def _scenarios() -> dict[str, Scenario]:
    h = HISTORIES
    call = ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_1')
    ask = ModelRequest(parts=[UserPromptPart(content='Delete everything', timestamp=T0)])
    danger = ModelResponse(
        parts=[ToolCallPart(tool_name='delete_all', args={'confirm': True}, tool_call_id='call_a1')], timestamp=T1
    )
    approved = danger.model_copy(
        update={'metadata': {'uibridge_vercel_ai': {'approvals': {'call_a1': {'id': 'apr_call_a1', 'approved': True}}}}}
    )
    refused = danger.model_copy(
        update={
            'metadata': {
                'uibridge_vercel_ai': {
                    'approvals': {'call_a1': {'id': 'apr_call_a1', 'approved': False, 'reason': 'Too risky'}}
                }
            }
        }
    )
    # The same flows for a tool the UI does not know by name: the continued part is a `dynamic-tool` one.
    dynamic = {DYNAMIC_TOOLS_METADATA_KEY: ['call_a1']}
    dynamic_approved = approved.model_copy(update={'metadata': {**(approved.metadata or {}), **dynamic}})
    dynamic_refused = refused.model_copy(update={'metadata': {**(refused.metadata or {}), **dynamic}})
    return {
        'text_deltas': Scenario(
            [
                ResponseStart(model_name='gpt-x', provider_name='openai'),
                PartStart(0, TextPart(content='')),
                *[PartDelta(0, piece) for piece in ('It ', 'is ', 'sunny', ' "today" \n', '😀')],
                PartEnd(0),
                RunFinished('stop'),
            ]
        ),
        # A provider may cut a surrogate pair between two deltas (text and arguments alike).
        'split_surrogate_pair': Scenario(
            [
                ResponseStart(),
                PartStart(0, TextPart(content='')),
                *[PartDelta(0, piece) for piece in ('a\ud83d', '\ude00b')],
                PartEnd(0),
                PartStart(1, ToolCallPart(tool_name='react', tool_call_id='call_emoji')),
                *[PartDelta(1, piece) for piece in ('{"emoji": "\ud83d', '\ude00"}')],
                PartEnd(1),
                RunFinished('stop'),
            ]
        ),
        'whole_messages': Scenario([*_whole(*h['tool_calls'][1:]), RunFinished('stop')]),
        'thinking_signature': Scenario([*_whole(*h['thinking'][1:]), RunFinished()]),
        'tool_errors': Scenario([*_whole(*h['tool_errors'][1:]), RunFinished('stop')]),
        'parallel_tool_deltas': Scenario(
            [
                ResponseStart(),
                PartStart(0, ToolCallPart(tool_name='a', args='', tool_call_id='c_a')),
                PartStart(1, ToolCallPart(tool_name='b', args='{"x"', tool_call_id='c_b')),
                PartDelta(0, '{"q": '),
                PartDelta(1, ': [1, 2]}'),
                PartDelta(0, '"hi"}'),
                PartEnd(1),
                PartEnd(0),
                ToolResult(ToolReturnPart(tool_name='b', content=[1, 2], tool_call_id='c_b', timestamp=T1)),
                ToolResult(ToolReturnPart(tool_name='a', content=None, tool_call_id='c_a', timestamp=T1)),
                ResponseStart(),
                PartStart(0, TextPart(content='Both done.')),
                PartEnd(0),
                RunFinished('stop'),
            ]
        ),
        'retry_feedback': Scenario([*_whole(*h['retry_feedback'][1:]), RunFinished('stop')]),
        'client_tool': Scenario(
            [
                ResponseStart(),
                PartStart(0, call),
                PartEnd(0),
                ToolCallReady('call_1', 'client'),
                RunFinished('stop'),
            ]
        ),
        'approval_request': Scenario(
            [*_whole(danger), ToolCallReady('call_a1', 'approval'), RunFinished()], history=[ask]
        ),
        'approval_granted': Scenario(
            [
                ToolResult(
                    ToolReturnPart(tool_name='delete_all', content='deleted', tool_call_id='call_a1', timestamp=T1)
                ),
                ResponseStart(),
                PartStart(0, TextPart(content='All gone.')),
                PartEnd(0),
                RunFinished('stop'),
            ],
            history=[ask, approved],
            continues=True,
        ),
        'approval_refused': Scenario(
            [
                ToolResult(
                    ToolReturnPart(
                        tool_name='delete_all',
                        content='The user denied this call: Too risky',  # not the client's reason: rides beside it
                        tool_call_id='call_a1',
                        outcome='denied',
                        timestamp=T1,
                    )
                ),
                ResponseStart(),
                PartStart(0, TextPart(content='I will not.')),
                PartEnd(0),
                RunFinished('stop'),
            ],
            history=[ask, refused],
            continues=True,
        ),
        'dynamic_approved': Scenario(
            [
                ToolResult(
                    ToolReturnPart(tool_name='delete_all', content='deleted', tool_call_id='call_a1', timestamp=T1)
                ),
                ResponseStart(),
                PartStart(0, TextPart(content='All gone.')),
                PartEnd(0),
                RunFinished('stop'),
            ],
            history=[ask, dynamic_approved],
            continues=True,
        ),
        'dynamic_refused': Scenario(
            [
                ToolResult(
                    ToolReturnPart(
                        tool_name='delete_all',
                        content='The user denied this call: Too risky',
                        tool_call_id='call_a1',
                        outcome='denied',
                        timestamp=T1,
                    )
                ),
                RunFinished('stop'),
            ],
            history=[ask, dynamic_refused],
            continues=True,
        ),
        'denied_by_server': Scenario(
            [
                *_whole(danger),
                ToolResult(
                    ToolReturnPart(
                        tool_name='delete_all',
                        content='Not allowed here.',
                        tool_call_id='call_a1',
                        outcome='denied',
                        timestamp=T1,
                    )
                ),
                *_whole(ModelResponse(parts=[TextPart(content='Sorry.')], timestamp=T1)),
                RunFinished('stop'),
            ],
            history=[ask],
        ),
        'files_and_data': Scenario(
            [
                CustomData('status', {'phase': 'start'}),
                CustomData('progress', 0.5, transient=True),
                ResponseStart(),
                PartStart(0, TextPart(content='A picture:')),
                PartEnd(0),
                FileOutput(FilePart(content=BinaryContent(data=b'GIF89a', media_type='image/gif'), id='f1')),
                CustomData('status', {'phase': 'done'}, id='s1'),
                RunFinished('length'),
            ]
        ),
        'data_updates': Scenario(
            [
                ResponseStart(),
                CustomData('status', {'phase': 'searching'}, id='s1'),
                PartStart(0, TextPart(content='Searching')),
                PartEnd(0),
                PartStart(1, ToolCallPart(tool_name='search', args={}, tool_call_id='call_s')),
                PartEnd(1),
                CustomData('status', {'phase': 'done'}, id='s1'),
                ToolResult(ToolReturnPart(tool_name='search', content=1, tool_call_id='call_s', timestamp=T1)),
                ResponseStart(),
                CustomData('status', {'phase': 'answered'}, id='s1'),
                CustomData('status', 'untouched'),
                PartStart(0, TextPart(content='Found.')),
                PartEnd(0),
                RunFinished(),
            ]
        ),
        'error_mid_text': Scenario(
            [
                ResponseStart(),
                PartStart(0, TextPart(content='Partial')),
                PartDelta(0, ' answer'),
                RunError('The model is unavailable.'),
                PartDelta(0, 'ignored'),
            ],
            error='The model is unavailable.',
        ),
        'cancelled': Scenario(
            [
                ResponseStart(),
                PartStart(0, ThinkingPart(content='Let me')),
                PartDelta(0, ' think'),
                RunCancelled('user stop'),
            ]
        ),
        'content_filter': Scenario(
            [*_whole(ModelResponse(parts=[TextPart(content='…')], timestamp=T1)), RunFinished('content_filter')]
        ),
        'no_events': Scenario([]),
        # Calls to tools the UI does not know by name: streamed, whole, provider-run, failed, and one for approval.
        'dynamic_tools': Scenario(
            [
                ResponseStart(),
                PartStart(0, ToolCallPart(tool_name='mcp.search', args='', tool_call_id='call_d1'), dynamic=True),
                PartDelta(0, '{"q": '),
                PartDelta(0, '"Paris"}'),
                PartEnd(0),
                PartStart(1, ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_s1')),
                PartEnd(1),
                PartStart(
                    2,
                    NativeToolCallPart(tool_name='remote_mcp', args={'q': 'x'}, tool_call_id='ncall_d2'),
                    dynamic=True,
                ),
                PartEnd(2),
                NativeToolResult(
                    NativeToolReturnPart(tool_name='remote_mcp', content=[1], tool_call_id='ncall_d2', timestamp=T1)
                ),
                PartStart(3, ToolCallPart(tool_name='mcp.fail', args={}, tool_call_id='call_d4'), dynamic=True),
                PartEnd(3),
                ToolResult(
                    ToolReturnPart(tool_name='mcp.search', content={'hits': 2}, tool_call_id='call_d1', timestamp=T1)
                ),
                ToolResult(
                    ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='call_s1', timestamp=T1)
                ),
                ToolResult(
                    ToolReturnPart(
                        tool_name='mcp.fail', content='down', tool_call_id='call_d4', outcome='failed', timestamp=T1
                    )
                ),
                ResponseStart(),
                PartStart(
                    0, ToolCallPart(tool_name='mcp.delete', args={'id': 7}, tool_call_id='call_d3'), dynamic=True
                ),
                PartEnd(0),
                ToolCallReady('call_d3', 'approval'),
                RunFinished('tool_call'),
            ]
        ),
    }


WEB = WebCitationSource(url='https://example.com/paris', title='Paris weather', excerpts=['sunny'])
DOC = DocumentCitationSource(document_id='doc_1', title='Forecast', media_type='application/pdf', filename='f.pdf')


def _message_scenarios() -> dict[str, Scenario]:
    """The carriers of the events beyond text and tool calls: shared state, message metadata and late response
    info, sources, native tools, activity; named steps and raw events, which the Vercel stream does not send."""
    call = ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_w')
    result = ToolReturnPart(tool_name='get_weather', content='sunny', tool_call_id='call_w', timestamp=T1)
    usage = Usage(input_tokens=12, output_tokens=5)
    native = NativeToolCallPart(tool_name='web_search', args='', tool_call_id='ws_1', provider_name='openai')
    hits = NativeToolReturnPart(
        tool_name='web_search', content=[{'url': WEB.url}], tool_call_id='ws_1', provider_name='openai', timestamp=T1
    )
    stateful = ModelResponse(
        parts=[ToolCallPart(tool_name='ask_user', args={'q': 'city?'}, tool_call_id='call_c1')],
        timestamp=T1,
        usage=Usage(input_tokens=2, output_tokens=1),
        metadata={'uibridge_state': {'runs': 1}, ANSWERED_BY_METADATA_KEY: {'call_c1': 'client'}},
    )
    return {
        'state_in_steps': Scenario(
            [
                StateSnapshot({'plan': [], 'city': None}),  # before any step: sent when the first one starts
                ResponseStart(model_name='gpt-x'),
                StepStarted('plan'),
                StateDelta([{'op': 'add', 'path': '/plan/-', 'value': 'train'}]),
                StepFinished('plan'),
                PartStart(0, TextPart(content='Planned.')),
                PartEnd(0),
                StateDelta([{'op': 'replace', 'path': '/city', 'value': 'Lyon'}]),
                RawEvent({'provider': 'event'}, source='openai'),
                RunFinished('stop'),
            ]
        ),
        'state_across_tools': Scenario(
            [
                ResponseStart(),
                PartStart(0, TextPart(content='Checking.')),
                PartEnd(0),
                CustomData('status', {'phase': 'calling'}),
                StateSnapshot({'calls': 0}),  # mid-step, after a text part and a data part
                PartStart(1, call),
                PartEnd(1),
                ToolResult(result),
                ResponseStart(),
                StateDelta([{'op': 'replace', 'path': '/calls', 'value': 1}]),
                PartStart(0, TextPart(content='Sunny.')),
                PartEnd(0),
                RunFinished('stop'),
            ]
        ),
        'usage_and_metadata': Scenario(
            [
                MessageMetadata({'conversation': 'c1'}),  # before any response: the first one takes it
                ResponseInfo(provider_response_id='resp_early'),
                ResponseStart(model_name='gpt-x', provider_name='openai'),
                PartStart(0, call),
                PartEnd(0),
                ResponseInfo(usage=usage, finish_reason='tool_call'),
                ToolResult(result),
                ResponseStart(model_name='gpt-x', provider_name='openai'),
                PartStart(0, TextPart(content='Sunny.')),
                PartEnd(0),
                MessageMetadata({'rating': None, 'tags': ['weather']}),
                ResponseInfo(
                    usage=Usage(input_tokens=20, output_tokens=3, cache_read_tokens=4),
                    provider_response_id='resp_2',
                    provider_details={'tier': 'default'},
                ),
                RunFinished('stop'),  # changes the last step's finish reason: its entry is sent again
            ]
        ),
        'citations': Scenario(
            [
                ResponseStart(),
                PartStart(0, TextPart(content='Sunny', citations=[Citation(sources=[WEB])])),
                PartDelta(0, ' in Paris.'),
                CitationAdded(0, Citation(sources=[DOC, WEB], anchor=ContentCitationAnchor(start=0, end=5))),
                PartEnd(0),
                PartStart(1, TextPart(content='Uncited.')),
                PartEnd(1),
                PartStart(2, TextPart(content='Cited too.')),
                CitationAdded(2, Citation(sources=[DocumentCitationSource(title=None, excerpts=['x'])])),
                PartEnd(2),
                RunFinished('stop'),
            ]
        ),
        'late_citation': Scenario(
            [
                ResponseStart(),
                PartStart(0, TextPart(content='Sunny.')),
                PartEnd(0),
                PartStart(1, TextPart(content='More.')),
                PartEnd(1),
                CitationAdded(0, Citation(sources=[WEB])),  # after its text-end: sent alone, signed
                RunFinished('stop'),
            ]
        ),
        'native_search': Scenario(
            [
                ResponseStart(model_name='gpt-x', provider_name='openai'),
                PartStart(0, native),
                PartDelta(0, '{"query": '),
                PartDelta(0, '"Paris"}'),
                PartEnd(0),
                NativeToolResult(hits),
                PartStart(1, TextPart(content='Sunny.', citations=[Citation(sources=[WEB])])),
                PartEnd(1),
                ResponseInfo(usage=usage, provider_response_id='resp_1'),
                RunFinished('stop'),
            ]
        ),
        'native_result_later': Scenario(
            [
                ResponseStart(),
                PartStart(0, NativeToolCallPart(tool_name='code', args={'src': '1+1'}, tool_call_id='ci_1')),
                PartEnd(0),
                PartStart(1, TextPart(content='Running.')),
                PartEnd(1),
                NativeToolResult(NativeToolReturnPart(tool_name='code', content=2, tool_call_id='ci_1', timestamp=T1)),
                RunFinished('stop'),
            ]
        ),
        'native_result_early': Scenario(
            [
                ResponseStart(),
                PartStart(0, NativeToolCallPart(tool_name='code', args='', tool_call_id='ci_2')),
                PartDelta(0, '{"src": "1+1"}'),
                # The provider's result before the call's end: the client must still end up holding both.
                NativeToolResult(NativeToolReturnPart(tool_name='code', content=2, tool_call_id='ci_2', timestamp=T1)),
                PartEnd(0),
                PartStart(1, TextPart(content='Two.')),
                PartEnd(1),
                RunFinished('stop'),
            ]
        ),
        'activity': Scenario(
            [
                ResponseStart(),
                ActivitySnapshot('act_1', 'plan', {'steps': ['a']}),
                PartStart(0, TextPart(content='Working.')),
                ActivityDelta('act_1', 'plan', [{'op': 'add', 'path': '/steps/-', 'value': 'b'}]),
                PartEnd(0),
                RunFinished('stop'),
            ]
        ),
        'continued_state': Scenario(
            [
                ToolResult(ToolReturnPart(tool_name='ask_user', content='Lyon', tool_call_id='call_c1', timestamp=T1)),
                ResponseStart(),
                StateSnapshot({'runs': 2}),  # the client's part (in the continued step) gets the new data
                PartStart(0, TextPart(content='Lyon it is.')),
                PartEnd(0),
                ResponseInfo(usage=usage),
                RunFinished('stop'),
            ],
            history=[HISTORIES['text_chat'][0], stateful],
            continues=True,
        ),
    }


MESSAGE_SCENARIOS: dict[str, Scenario] = _message_scenarios()
SCENARIOS: dict[str, Scenario] = {**_scenarios(), **MESSAGE_SCENARIOS}


def normalise_sse(data: bytes) -> str:
    """An encoded stream with what differs per run (message ids, response timestamps) replaced."""
    text = data.decode()
    text = re.sub(r'"messageId":"msg_[0-9a-f]{32}"', '"messageId":"<message id>"', text)
    return re.sub(
        r'"timestamp":"20\d\d-[^"]*"',
        lambda m: m.group(0) if '2026-01-02' in m.group(0) else '"timestamp":"<now>"',
        text,
    )


# ------------------------------------------------------------------------------------------ node


def run_client_check(cases: dict[str, Any], script: str = CHECK_SCRIPT.name) -> dict[str, Any]:
    """Run a Node script of tests/clients (`vercel_check.mjs` unless told) once on many cases, given on stdin
    (see the script's header for the format); its stdout is one JSON document."""
    assert (CLIENTS / 'node_modules' / 'ai').is_dir(), 'tests/clients/node_modules is missing: run `make install`'
    result = subprocess.run(
        ['node', script],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        cwd=CLIENTS,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def dumped_json(messages: Sequence[ModelMessage], dump: Callable[[Sequence[ModelMessage]], Sequence[Any]]) -> list[Any]:
    return [message.model_dump(mode='json') for message in dump(messages)]


# ------------------------------------------------------------------------------------------ random runs

_PIECES = ['Hello', ' wörld', ' "quoted"', '\n\n', '\\', '😀', ' </system>', '\u2028', 'data: x\n\n', '{', '}']


def random_scenario(seed: int) -> Scenario:
    """A random but well-formed run: interleaved parts with deltas, parallel tool calls, every kind of result,
    retry feedback, files, custom data, and an ending (finish, error or cancel). Deterministic per seed."""

    rng = random.Random(seed)
    events: list[AgentEvent] = []
    error: str | None = None
    responses = rng.randint(1, 4)
    for response in range(responses):
        events.append(ResponseStart(model_name=rng.choice([None, 'model-a']), provider_name=rng.choice([None, 'p'])))
        open_parts: dict[int, tuple[str, list[str]]] = {}
        calls: list[ToolCallPart] = []
        for index in range(rng.randint(0, 4)):
            kind = rng.choice(['text', 'thinking', 'tool'])
            if kind == 'tool':
                args = json.dumps({'city': rng.choice(_PIECES), 'n': rng.randint(0, 9)})
                cut = sorted(rng.sample(range(1, len(args)), k=min(3, len(args) - 1)))
                pieces = [args[a:b] for a, b in zip([0, *cut], [*cut, len(args)], strict=True)]
                call = ToolCallPart(
                    tool_name=rng.choice(['get_weather', 'search-web']),
                    args='',
                    tool_call_id=f'call_{seed}_{response}_{index}',
                )
                calls.append(call)
                events.append(PartStart(index, call))
                open_parts[index] = ('tool', pieces)
            else:
                start = rng.choice(['', 'Start '])
                part = (
                    TextPart(content=start)
                    if kind == 'text'
                    else ThinkingPart(content=start, provider_name=rng.choice([None, 'anthropic']))
                )
                events.append(PartStart(index, part))
                open_parts[index] = (kind, [rng.choice(_PIECES) for _ in range(rng.randint(0, 4))])
            if rng.random() < 0.2:
                events.append(CustomData('progress', {'at': index}, transient=rng.random() < 0.5))
        while open_parts:
            index = rng.choice(list(open_parts))
            kind, pieces = open_parts[index]
            if pieces:
                events.append(PartDelta(index, pieces.pop(0)))
            else:
                signature = 'sig' if kind == 'thinking' and rng.random() < 0.5 else None
                events.append(PartEnd(index, signature=signature))
                del open_parts[index]
        if rng.random() < 0.2:
            events.append(
                FileOutput(FilePart(content=BinaryContent(data=bytes([seed % 256, 1, 2]), media_type='image/png')))
            )
        last = response == responses - 1
        for call in rng.sample(calls, k=len(calls)):
            outcome = rng.choice(
                ['success', 'failed', 'denied', 'retry', 'client', 'approval']
                if last
                else ['success', 'failed', 'denied', 'retry']
            )
            if outcome in ('client', 'approval'):
                events.append(ToolCallReady(call.tool_call_id, outcome))  # type: ignore[arg-type]
            elif outcome == 'retry':
                events.append(
                    ToolResult(
                        RetryPromptPart(
                            content=ERRORS[:1], tool_name=call.tool_name, tool_call_id=call.tool_call_id, timestamp=T1
                        )
                    )
                )
            else:
                content = {'ok': True} if outcome == 'success' else 'It did not work.'
                events.append(
                    ToolResult(
                        ToolReturnPart(
                            tool_name=call.tool_name,
                            content=content,
                            tool_call_id=call.tool_call_id,
                            outcome=outcome,
                            timestamp=T1,
                        )
                    )
                )  # type: ignore[arg-type]
        if not last and rng.random() < 0.3:
            events.append(
                RetryFeedback(
                    RetryFeedbackPart(
                        content=ERRORS, cause=rng.choice(['validation_error', 'no_output', 'model_retry']), timestamp=T1
                    )
                )
            )
    ending = rng.random()
    if ending < 0.1:
        error = 'Something went wrong.'
        events.append(RunError(error))
    elif ending < 0.2:
        events.append(RunCancelled())
    else:
        events.append(RunFinished(rng.choice([None, 'stop', 'length', 'tool_call', 'content_filter'])))
    return Scenario(events, error=error)


RANDOM_SCENARIOS: dict[str, Scenario] = {f'random_{seed}': random_scenario(seed) for seed in range(60)}
