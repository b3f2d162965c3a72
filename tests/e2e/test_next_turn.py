"""What a run ends with comes back on the next turn, through the real clients' own message building.

An agent produces, per scenario, one of the facts a next turn used to lose: retry feedback that answers no tool
call (between two answers, or ending the run), its older form (a tool-less `RetryPromptPart`), a response cut
short by its length limit, and a tool call a failing run cut off (mid-arguments, or finished with nothing yet
to answer it). Each scenario is played by `ai` 5, 6 and 7 (`AbstractChat` + `DefaultChatTransport`, each
against an app serving its version) and by `@ag-ui/client`'s `HttpAgent`, which read the stream, build their
messages and send the next turn; the assertions are on what the agent is given on that turn (`run.messages`:
after `verify_history` for client-held history, from the store for managed history). Client-held, each fact
comes back only as the server signed it: feedback (either form) in its marker, the finish reason in its step
entry (Vercel) or its response's `finish` marker (AG-UI), the cut-off call and its failure as any signed call
and result.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from e2e_support import Recorder, all_parts, completed_by_run, run_nodes, scenarios_spec, serve

from uibridge import RetryFeedbackPart, ToolCallPart, ToolReturnPart, render_retry_feedback
from uibridge.core import events as ev
from uibridge.core import messages as m
from uibridge.core.feedback import retry_feedback_payload
from uibridge.core.usage import Usage
from uibridge.server import AgentRun
from uibridge.server.app import create_app
from uibridge.server.pump import DEFAULT_ERROR
from uibridge.server.store import MemoryStore

FEEDBACK = 'Answer with a JSON object.'
SCENARIOS = ['feedback', 'feedback-last', 'legacy', 'length', 'cut', 'cut-whole']
LEGACY_ERRORS: list[m.ErrorDetails] = [
    # A whole float in `input` comes back from JavaScript as an integer: the marker carries its exact text.
    {'type': 'missing', 'loc': ('answer',), 'msg': 'Field required', 'input': {'answer': 42.0}},
    {'type': 'int_type', 'loc': ('answer', 'n'), 'msg': 'Input should be a valid integer', 'input': 'x'},
]
PLAYERS = {'ai5': ('vercel', 5), 'ai6': ('vercel', 6), 'ai7': ('vercel', 7), 'agui': ('agui', 7)}
"""Each client: its protocol and the `ai` version its app serves (AG-UI is played against the `ai` 7 app)."""


class Failed(RuntimeError):
    """What the `cut` scenarios raise."""


async def _text(index: int, text: str) -> AsyncIterator[ev.AgentEvent]:
    yield ev.PartStart(index, m.TextPart(content=''))
    yield ev.PartDelta(index, text)
    yield ev.PartEnd(index)


async def agent(run: AgentRun) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
    prompt = next(
        p.content for message in reversed(run.messages) for p in message.parts if isinstance(p, m.UserPromptPart)
    )
    yield ev.ResponseStart(model_name='next-turn')
    if prompt in ('feedback', 'feedback-last'):
        async for event in _text(0, 'forty-two'):
            yield event
        yield m.ModelRequest(parts=[m.RetryFeedbackPart(content=FEEDBACK, cause='model_retry')])
        if prompt == 'feedback':
            yield ev.ResponseStart(model_name='next-turn')
            async for event in _text(0, '{"answer": 42}'):
                yield event
    elif prompt == 'legacy':
        async for event in _text(0, '{"answer": 42.0}'):
            yield event
        yield m.ModelRequest(parts=[m.RetryPromptPart(content=LEGACY_ERRORS)])
        yield ev.ResponseStart(model_name='next-turn')
        async for event in _text(0, '{"answer": {"n": 42}}'):
            yield event
    elif prompt == 'length':
        async for event in _text(0, 'An answer the token limit cut sho'):
            yield event
        yield ev.ResponseInfo(usage=Usage(input_tokens=1, output_tokens=7), finish_reason='length')
    elif prompt == 'cut':
        async for event in _text(0, 'Let me look.'):
            yield event
        yield ev.PartStart(1, m.ToolCallPart(tool_name='get_weather', args='', tool_call_id='call_cut'))
        yield ev.PartDelta(1, '{"city": "Pa')
        raise Failed('the model connection dropped')
    elif prompt == 'cut-whole':
        yield ev.PartStart(0, m.ToolCallPart(tool_name='get_weather', args='', tool_call_id='call_whole'))
        yield ev.PartDelta(0, '{"city": "Paris"}')
        yield ev.PartEnd(0)
        raise Failed('the tool server is down')
    else:
        async for event in _text(0, 'ok'):
            yield event


Played = dict[tuple[str, str], tuple[dict[str, Any], Recorder]]
"""(mode, player) -> the driver's result and what that player's server recorded."""


@pytest.fixture(scope='module')
def played() -> Iterator[Played]:
    """Every scenario, by every client, client-held and managed, all drivers side by side."""
    steps = {name: [{'op': 'send', 'text': name}, {'op': 'send', 'text': 'next'}] for name in SCENARIOS}
    with ExitStack() as stack:
        servers: dict[tuple[str, int], tuple[str, Recorder]] = {}
        for mode in ('client', 'managed'):
            for version in (5, 6, 7):
                recorder = Recorder()

                def recorded(run: AgentRun, recorder: Recorder = recorder) -> AsyncIterator[Any]:
                    recorder.runs.append(run)
                    return agent(run)

                options: dict[str, Any] = {'vercel_sdk_version': version, 'on_complete': recorder.on_complete}
                if mode == 'managed':
                    options['store'] = MemoryStore()
                app = create_app(recorded, **options)
                servers[mode, version] = (stack.enter_context(serve(app)), recorder)
        plays: dict[str, tuple[str, dict[str, Any]]] = {}
        for (mode, version), (base_url, _) in servers.items():
            for player, (protocol, served) in PLAYERS.items():
                if served != version:
                    continue
                spec = scenarios_spec(protocol, base_url, steps, lambda name, player=player: f'{player}-{name}')
                if protocol == 'vercel':
                    plays[f'{mode}:{player}'] = (
                        'e2e_vercel_sdk.mjs',
                        {**spec, 'sdk': 'ai' if version == 7 else player},
                    )
                else:
                    plays[f'{mode}:{player}'] = ('e2e_agui.mjs', spec)
        results = run_nodes(plays)
        for _, recorder in servers.values():
            recorder.settle()
        yield {
            (mode, player): (results[f'{mode}:{player}'], servers[mode, PLAYERS[player][1]][1])
            for mode in ('client', 'managed')
            for player in PLAYERS
        }


Driven = tuple[str, str, dict[str, Any], Recorder]


@pytest.fixture(params=[(mode, player) for mode in ('client', 'managed') for player in PLAYERS], ids='-'.join)
def driven(request: pytest.FixtureRequest, played: Played) -> Driven:
    mode, player = request.param
    result, recorder = played[mode, player]
    return mode, player, result, recorder


def _turns(recorder: Recorder, player: str, name: str) -> tuple[list[m.ModelMessage], AgentRun]:
    """What the first run of scenario `name` produced, and the second run (the next turn)."""
    first, second = recorder.runs_for(f'{player}-{name}')
    return completed_by_run(recorder)[id(first)], second


@pytest.mark.parametrize('name', ['feedback', 'feedback-last'])
def test_retry_feedback_comes_back_from_its_marker(driven: Driven, name: str) -> None:
    _, player, result, recorder = driven
    protocol = PLAYERS[player][0]
    produced, second = _turns(recorder, player, name)
    [feedback] = [p for p in all_parts(produced) if isinstance(p, RetryFeedbackPart)]
    assert [p for p in all_parts(second.messages) if isinstance(p, RetryFeedbackPart)] == [feedback]
    # In the UI: the marker (no more than the rendering discloses, and the server's signature) in the protocol's
    # metadata channel. A UI message stream has one assistant message to write into, so the `ai` client holds
    # it as a `data-retry-feedback` part there (a dumped history writes the system message); the AG-UI client
    # holds the system message itself.
    held = result[name]['steps'][0]['messages']
    if protocol == 'vercel':
        [data] = [p['data'] for message in held for p in message['parts'] if p['type'] == 'data-retry-feedback']
        assert {k: v for k, v in data.items() if k != 'sig'} == retry_feedback_payload(feedback)
        assert data['sig'].startswith('v1.')
    else:
        [system] = [message for message in held if message['role'] == 'system']
        assert system['content'] == render_retry_feedback(feedback)
        marker = json.loads(system['encryptedValue'])['uibridge']['retry_feedback']
        assert {k: v for k, v in marker.items() if k != 'sig'} == retry_feedback_payload(feedback)


def test_a_legacy_retry_prompt_comes_back_as_it_was(driven: Driven) -> None:
    """The older, tool-less form of retry feedback comes back as exactly the part the agent yielded (its
    generated call id and timestamp included), so the model reads the same `model_response()` on the next turn."""
    _, player, result, recorder = driven
    protocol = PLAYERS[player][0]
    produced, second = _turns(recorder, player, 'legacy')
    [legacy] = [p for p in all_parts(produced) if isinstance(p, m.RetryPromptPart)]
    assert legacy.tool_name is None and legacy.content == LEGACY_ERRORS
    assert [p for p in all_parts(second.messages) if isinstance(p, m.RetryPromptPart)] == [legacy]
    # Between the two answers, as it was produced.
    kinds = [type(message).__name__ for message in second.messages]
    assert kinds[-4:] == ['ModelResponse', 'ModelRequest', 'ModelResponse', 'ModelRequest']
    assert second.messages[-3].parts == [legacy]
    held = result['legacy']['steps'][0]['messages']
    if protocol == 'vercel':
        [data] = [p['data'] for message in held for p in message['parts'] if p['type'] == 'data-retry-feedback']
    else:
        [system] = [message for message in held if message['role'] == 'system']
        assert system['content'] == legacy.model_response()
        data = json.loads(system['encryptedValue'])['uibridge']['retry_feedback']
    assert (data['part_kind'], data['tool_call_id'], data['sig'][:3]) == ('retry-prompt', legacy.tool_call_id, 'v1.')


@pytest.mark.parametrize(
    ('name', 'call_id', 'args'), [('cut', 'call_cut', '{"city": "Pa'), ('cut-whole', 'call_whole', '{"city": "Paris"}')]
)
def test_a_call_an_error_cut_off_comes_back_failed(driven: Driven, name: str, call_id: str, args: str) -> None:
    _, player, result, recorder = driven
    protocol = PLAYERS[player][0]
    produced, second = _turns(recorder, player, name)
    parts = all_parts(second.messages)
    [call] = [p for p in parts if isinstance(p, ToolCallPart)]
    assert (call.tool_call_id, call.tool_name, call.args_as_json_str()) == (call_id, 'get_weather', args)
    [failed] = [p for p in parts if isinstance(p, ToolReturnPart)]
    assert (failed.tool_call_id, failed.outcome, failed.content) == (call_id, 'failed', DEFAULT_ERROR)
    assert [p for p in all_parts(produced) if isinstance(p, ToolCallPart | ToolReturnPart)] == [call, failed]
    # The client reported the run's error and then sent the next turn.
    first_step, next_step = result[name]['steps']
    if protocol == 'vercel':
        assert first_step['errors'] and next_step['errors'] == [] and next_step['valid'] is True
    else:
        assert first_step['wireEvents'][-1] == 'RUN_ERROR' and next_step['wireEvents'][-1] == 'RUN_FINISHED'


def test_a_finish_reason_of_length_comes_back_on_its_response(driven: Driven) -> None:
    _, player, _, recorder = driven
    produced, second = _turns(recorder, player, 'length')
    [cut] = [message for message in produced if isinstance(message, m.ModelResponse)]
    assert cut.finish_reason == 'length'
    [response] = [message for message in second.messages if isinstance(message, m.ModelResponse)]
    assert response.parts == cut.parts
    assert response.finish_reason == 'length'
