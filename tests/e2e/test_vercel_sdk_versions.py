"""The approval flow through `ai@5`, `ai@6` and `ai@7` (tests/clients, side by side), each against the demo app
serving its version (`create_app(vercel_sdk_version=...)`, `serve --vercel-sdk-version`).

Per version, one chat approves the call and one denies it, then each sends one more message: the client reports no
error and its messages stay valid for its own validator at every step, the server runs the approved call once and
never the denied one, and the history the client sends back verifies whole, the call and its result (success, or
the denial) included, so the next turn's agent sees the flow as it happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import uvicorn
from e2e_support import (
    LiveServer,
    all_parts,
    assert_round_trip,
    completed_by_run,
    live_demo,
    run_nodes,
    scenarios_spec,
)

from uibridge import ToolCallPart, ToolReturnPart
from uibridge.adapters.vercel_ai import SDK_VERSIONS, SdkVersion
from uibridge.server import VercelAIEndpoint
from uibridge.server.app import create_app
from uibridge.server.cli import main
from uibridge.server.demo import DemoAgent
from uibridge.server.vercel_ai import VercelAIBinding

PACKAGE = {5: 'ai5', 6: 'ai6', 7: 'ai'}
SCENARIOS = {
    'approve': [{'op': 'send', 'text': 'delete'}, {'op': 'answer', 'approved': True}, {'op': 'send', 'text': 'thanks'}],
    'deny': [
        {'op': 'send', 'text': 'delete'},
        {'op': 'answer', 'approved': False, 'reason': 'keep it'},
        {'op': 'send', 'text': 'thanks'},
    ],
}
Driven = tuple[SdkVersion, dict[str, Any], LiveServer]


@pytest.fixture(scope='module')
def played() -> Iterator[dict[SdkVersion, tuple[dict[str, Any], LiveServer]]]:
    """Each version's client against a demo app of its own, the three drivers side by side: version -> the
    driver's result and the server."""
    with ExitStack() as stack:
        servers = {v: stack.enter_context(live_demo(vercel_sdk_version=v)) for v in SDK_VERSIONS}
        specs = {
            str(v): (
                'e2e_vercel_sdk.mjs',
                {**scenarios_spec('vercel', s.base_url, SCENARIOS, lambda name: name), 'sdk': PACKAGE[v]},
            )
            for v, s in servers.items()
        }
        results = run_nodes(specs)
        for server in servers.values():
            server.recorder.settle()
        yield {v: (results[str(v)], s) for v, s in servers.items()}


@pytest.fixture(scope='module', params=SDK_VERSIONS, ids=lambda v: f'ai{v}')
def driven(request: pytest.FixtureRequest, played: dict[SdkVersion, tuple[dict[str, Any], LiveServer]]) -> Driven:
    version: SdkVersion = request.param
    results, server = played[version]
    return version, results, server


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_the_client_reports_no_error_and_stays_valid(driven: Driven, name: str) -> None:
    _, results, _ = driven
    for step in results[name]['steps']:
        assert step['errors'] == [], step['op']
        assert step['status'] == 'ready'
        assert step['valid'] is True, step['valid']


@pytest.mark.parametrize('name', list(SCENARIOS))
def test_the_server_receives_exactly_what_it_produced(driven: Driven, name: str) -> None:
    _, _, server = driven
    assert_round_trip(server.recorder, name)


@pytest.mark.parametrize(('name', 'approved'), [('approve', True), ('deny', False)])
def test_the_answer_reaches_the_agent_and_the_outcome_comes_back_verified(
    driven: Driven, name: str, approved: bool
) -> None:
    version, results, server = driven
    first, second, third = server.recorder.runs_for(name)
    [call] = [p for p in all_parts(completed_by_run(server.recorder)[id(first)]) if isinstance(p, ToolCallPart)]
    [answer] = second.approvals
    assert (answer.tool_call_id, answer.approved) == (call.tool_call_id, approved)
    assert answer.reason == (None if approved else 'keep it')
    ran = call.tool_call_id in [c.tool_call_id for c in server.demo.executed]
    assert ran is approved
    # The next turn: what the client sent back verified whole, so the model sees the call and its outcome.
    [result] = [p for p in all_parts(third.messages) if isinstance(p, ToolReturnPart)]
    assert result.tool_call_id == call.tool_call_id
    assert result.outcome == ('success' if approved else 'denied')
    assert [p for p in all_parts(third.messages) if isinstance(p, ToolCallPart)] == [call]
    # What the client shows: ai 5 has no denied state, so a denial is an error there.
    tools = [p for m in results[name]['steps'][-1]['messages'] for p in m['parts'] if p['type'] == 'tool-delete_file']
    denied = 'output-error' if version == 5 else 'output-denied'
    assert [tool['state'] for tool in tools] == ['output-available' if approved else denied]
    # `onToolCall` sees the call when it is asked for, and again where an older client can take the outcome's
    # metadata only from the call repeated (ai 5: every outcome; ai 6: a denial): the app must ignore calls it
    # does not run, as it does for server tools.
    repeated = version == 5 or (version == 6 and not approved)
    assert results[name]['toolCalls'] == [call.tool_call_id] * (2 if repeated else 1)


def test_the_option_is_checked_where_it_is_given() -> None:
    with pytest.raises(ValueError, match='sdk_version'):
        create_app(DemoAgent(), vercel_sdk_version=4)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='sdk_version'):
        VercelAIEndpoint(DemoAgent(), sdk_version='5')  # type: ignore[arg-type]
    app = create_app(DemoAgent(), vercel_sdk_version=5)
    assert isinstance(app.state.vercel_ai.binding, VercelAIBinding)
    assert app.state.vercel_ai.binding.sdk_version == 5
    assert create_app(DemoAgent()).state.vercel_ai.binding.sdk_version == 7


def test_serve_takes_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[Any] = []

    async def serve(server: uvicorn.Server) -> None:  # what the command would serve, instead of serving it
        served.append(server.config.app)

    monkeypatch.setattr(uvicorn.Server, 'serve', serve)
    assert main(['serve', '--vercel-sdk-version', '5']) == 0
    assert served[0].state.vercel_ai.binding.sdk_version == 5
    with pytest.raises(SystemExit):
        main(['serve', '--vercel-sdk-version', '4'])
