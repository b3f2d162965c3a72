"""Both bridge directions through the real clients against real backends, turn after turn.

- `useChat` in front of an AG-UI backend: `ai@7`'s `Chat` (tests/clients/e2e_vercel.mjs) against
  `create_app(RemoteAGUIAgent(...))`, whose remote is pydantic-ai's own AG-UI app;
- `@ag-ui/client` in front of a Vercel backend: `HttpAgent` (tests/clients/e2e_agui.mjs) against
  `create_app(RemoteVercelAgent(...))`, whose remote is an `ai@7` route on the SDK's mock model.

Each scenario is also played by the backend's own client against the backend alone, and both conversations must
be the same (read into the neutral model, as each frontend holds it); every step ends without an error the
scenario did not ask for and without a warning from the client.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from remote_backends import CLIENT_TOOL, PydanticBackend, VercelBackend, pydantic_ai_backend, vercel_sdk_backend
from uibridge import ModelResponse, TextPart, ThinkingPart, ToolCallPart, ToolReturnPart, UserPromptPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.bridge import RemoteAGUIAgent, RemoteVercelAgent
from uibridge.core.messages import ModelMessage
from uibridge.server.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'e2e'))
from e2e_support import run_nodes, serve

VERCEL = 'e2e_vercel.mjs'
AGUI = 'e2e_agui.mjs'


def steps(frontend: str) -> dict[str, list[dict[str, Any]]]:
    """The scenarios, spelt for `frontend`'s driver (`vercel` or `agui`)."""
    answer = 'approve' if frontend == 'vercel' else 'resume'
    output = {'output': 'noon'} if frontend == 'vercel' else {'content': 'noon'}
    cancel = 'send-and-stop' if frontend == 'vercel' else 'send-and-abort'
    return {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'server-tool': [{'op': 'send', 'text': 'weather in Paris?'}, {'op': 'send', 'text': 'thanks'}],
        'client-tool': [{'op': 'send', 'text': 'what time is it?'}, {'op': 'tool-output', **output}],
        'approve': [{'op': 'send', 'text': 'delete notes.txt'}, {'op': answer, 'approved': True}],
        'deny': [{'op': 'send', 'text': 'delete notes.txt'}, {'op': answer, 'approved': False, 'reason': 'keep it'}],
        'state': [{'op': 'send', 'text': 'count the state'}, {'op': 'send', 'text': 'state again'}],
        'think': [{'op': 'send', 'text': 'think first'}],
        'error': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'error please'}],
        'cancel': [{'op': 'send', 'text': 'hello'}, {'op': cancel, 'text': 'slow please'}],
    }


def spec(frontend: str, url: str, prefix: str) -> tuple[str, dict[str, Any]]:
    id_key, url_key = ('chatId', 'api') if frontend == 'vercel' else ('threadId', 'url')
    scenarios = [{'name': name, id_key: f'{prefix}-{name}', 'steps': play} for name, play in steps(frontend).items()]
    return (VERCEL if frontend == 'vercel' else AGUI), {url_key: url, 'scenarios': scenarios}


@dataclass
class Played:
    pydantic: PydanticBackend
    vercel: VercelBackend
    results: dict[str, dict[str, Any]]
    """`agui-bridged` (HttpAgent in front of the Vercel route), `vercel-alone` (Chat against the route itself),
    `vercel-bridged` (Chat in front of pydantic-ai's app), `agui-alone` (HttpAgent against the app itself)."""
    stopped: int
    """How many runs pydantic-ai's slow answer saw stopped by the time every driver finished."""


@pytest.fixture(scope='module')
def played() -> Iterator[Played]:
    with pydantic_ai_backend() as pydantic, vercel_sdk_backend() as route:
        to_pydantic = create_app(RemoteAGUIAgent(pydantic.url, tools=[CLIENT_TOOL]), keep_alive=None)
        to_route = create_app(RemoteVercelAgent(route.url), keep_alive=None)
        with serve(to_pydantic) as pydantic_bridge, serve(to_route) as route_bridge:
            results = run_nodes(
                {
                    'vercel-bridged': spec('vercel', f'{pydantic_bridge}/api/chat', 'bridged'),
                    'agui-alone': spec('agui', pydantic.url, 'alone'),
                }
            )
            results |= run_nodes(
                {
                    'agui-bridged': spec('agui', f'{route_bridge}/ag-ui', 'bridged'),
                    'vercel-alone': spec('vercel', route.url, 'alone'),
                }
            )
            # The backend learns of a disconnect when it next writes: wait for both cancelled runs to stop.
            deadline = time.monotonic() + 10
            while pydantic.cancellations.stopped < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            yield Played(pydantic, route, results, pydantic.cancellations.stopped)


def conversation(frontend: str, messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a frontend holds, as the model would read it: user text, thinking, text, each call (tool, arguments)
    and each result (tool, content, outcome), in order. Ids, timestamps and bookkeeping are not the conversation."""
    loaded: list[ModelMessage] = (
        vercel_ai.load_messages(messages) if frontend == 'vercel' else ag_ui.load_messages(messages)
    )
    view: list[tuple[Any, ...]] = []
    for message in loaded:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                view.append(('user', part.content))
            elif isinstance(part, ThinkingPart):
                view.append(('thinking', part.content))
            elif isinstance(part, TextPart):
                if part.content:
                    view.append(('text', part.content))
            elif isinstance(part, ToolCallPart):
                view.append(('call', part.tool_name, part.args_as_dict()))
            elif isinstance(part, ToolReturnPart):
                view.append(('result', part.tool_name, _json(part.content), part.outcome))
            elif not isinstance(message, ModelResponse):
                view.append((part.part_kind,))
    return view


def _json(content: Any) -> Any:
    # AG-UI carries a tool's result as text: JSON text is the value it spells.
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def final(played: Played, key: str, name: str) -> dict[str, Any]:
    result = played.results[key][name]
    return result['steps'][-1]


PAIRS = [('vercel-bridged', 'agui-alone'), ('agui-bridged', 'vercel-alone')]
SCENARIOS = list(steps('vercel'))


@pytest.mark.parametrize('name', SCENARIOS)
@pytest.mark.parametrize(('bridged', 'alone'), PAIRS, ids=['useChat-to-ag-ui', 'ag-ui-client-to-vercel'])
def test_the_bridged_frontend_holds_the_conversation_the_backend_gives_its_own_client(
    played: Played, bridged: str, alone: str, name: str
) -> None:
    front, back = bridged.split('-')[0], alone.split('-')[0]
    got = conversation(front, final(played, bridged, name)['messages'])
    expected = conversation(back, final(played, alone, name)['messages'])
    if name == 'cancel':
        # Stopped at its first text: how much of it each client kept when it stopped is the race's.
        assert [entry for entry in got[len(expected) :] if entry[0] != 'text'] == []
        assert [entry for entry in expected[len(got) :] if entry[0] != 'text'] == []
        last_user = max(i for i, entry in enumerate(expected) if entry[0] == 'user')
        got, expected = got[: last_user + 1], expected[: last_user + 1]
    assert got == expected
    assert got  # the conversation holds what the backend said


@pytest.mark.parametrize('key', ['vercel-bridged', 'agui-bridged', 'agui-alone', 'vercel-alone'])
def test_every_step_ends_as_the_scenario_asks_with_no_client_warning(played: Played, key: str) -> None:
    frontend = key.split('-')[0]
    for name, result in played.results[key].items():
        for number, step in enumerate(result['steps']):
            assert step['warnings'] == [], (name, number, step['warnings'])
            failing = name == 'error' and number == 1
            if frontend == 'vercel':
                assert step['valid'] is True, (name, number, step['valid'])
                assert step['status'] == ('error' if failing else 'ready'), (name, number, step['error'])
                assert (step['error'] is not None) == failing, (name, number, step['error'])
            else:
                events = step['wireEvents']
                if failing:
                    assert events[-1] == 'RUN_ERROR'
                elif step['op'] == 'send-and-abort':
                    assert events[0] == 'RUN_STARTED'
                else:
                    assert (events[0], events[-1]) == ('RUN_STARTED', 'RUN_FINISHED'), (name, number, events)
                    assert step['error'] is None, (name, number, step['error'])


def test_a_remote_error_reaches_the_frontend_as_its_protocol_error(played: Played) -> None:
    vercel = final(played, 'vercel-bridged', 'error')
    assert vercel['error'] == 'the model broke'  # pydantic-ai's RUN_ERROR, relayed with its own text
    assert final(played, 'agui-alone', 'error')['runError'] == 'the model broke'
    agui = final(played, 'agui-bridged', 'error')
    assert agui['runError'] == 'An error occurred.'  # what the route's `error` chunk says
    assert final(played, 'vercel-alone', 'error')['error'] == 'An error occurred.'


def test_approvals_cross_both_ways(played: Played) -> None:
    # useChat asked with uibridge's approval id; the AG-UI backend was resumed with its own interrupt id.
    asked = [
        part
        for message in played.results['vercel-bridged']['approve']['steps'][0]['messages']
        for part in message['parts']
        if part.get('state') == 'approval-requested'
    ]
    [part] = asked
    assert part['approval']['id'].startswith('apr_')
    [resumed] = [r for r in played.pydantic.requests if r['threadId'] == 'bridged-approve' and r.get('resume')]
    interrupt = played.results['agui-alone']['approve']['steps'][0]['pendingInterrupts'][0]['id']
    assert resumed['resume'] == [{'interruptId': interrupt, 'status': 'resolved', 'payload': {'approved': True}}]
    # HttpAgent was asked with an interrupt; the route got the part answered as `addToolApprovalResponse` leaves it.
    [pending] = played.results['agui-bridged']['deny']['steps'][0]['pendingInterrupts']
    assert pending['id'].startswith('apr_') and pending['reason'] == 'tool_approval'
    assert 'Done: denied (keep it)' in str(final(played, 'agui-bridged', 'deny')['messages'])


def test_client_tools_cross_both_ways(played: Played) -> None:
    # The AG-UI backend was told of the frontend's tool, which useChat's requests never name.
    [first, *_] = [r for r in played.pydantic.requests if r['threadId'] == 'bridged-client-tool']
    assert [tool['name'] for tool in first['tools']] == ['get_local_time']
    for key in ('vercel-bridged', 'agui-bridged'):
        assert 'noon' in str(final(played, key, 'client-tool')['messages'])


def test_state_crosses_both_ways(played: Played) -> None:
    # The backend counted once per turn: the state the frontend held went back to it on the second.
    vercel = final(played, 'vercel-bridged', 'state')['messages']
    states = [p['data'] for m in vercel for p in m['parts'] if p['type'] == 'data-state']
    assert states[-1] == {'count': 2}
    assert final(played, 'agui-bridged', 'state')['state'] == {'count': 2}
    assert final(played, 'agui-alone', 'state')['state'] == {'count': 2}


def test_a_frontend_that_stops_cancels_the_remote_run(played: Played) -> None:
    # pydantic-ai's slow answer was stopped twice: once by HttpAgent's abort, once through the bridge.
    assert played.stopped == 2

    def slow(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [entry for entry in log if 'slow' in entry.get('text', '')]

    entries = slow(played.vercel.wait_for(lambda log: all(entry['aborted'] for entry in slow(log))))
    assert [entry['aborted'] for entry in entries] == [True, True]


def test_the_bridge_sends_the_remote_only_what_it_verified(played: Played) -> None:
    # The second turn's history, as the AG-UI backend received it, is the first turn's conversation.
    bodies = [r for r in played.pydantic.requests if r['threadId'] == 'bridged-server-tool']
    assert len(bodies) == 2
    history = ag_ui.load_messages(bodies[1]['messages'])
    assert conversation('agui', bodies[1]['messages'])[:4] == [
        ('user', 'weather in Paris?'),
        ('call', 'get_weather', {'city': 'Paris'}),
        ('result', 'get_weather', {'city': 'Paris', 'forecast': 'sunny', 'tempC': 21}, 'success'),
        ('text', 'Done: {"city":"Paris","forecast":"sunny","tempC":21}'),
    ]
    assert isinstance(history[-1].parts[-1], UserPromptPart)
