"""The real clients against the demo app under hypercorn, on asyncio and on trio (uvicorn serves every other
end-to-end suite): text, a server tool with a retry, a client tool and an approval, through `ai@7` and
`@ag-ui/client`, each turn carried back exactly as the server produced it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2e_support import LiveServer, assert_round_trip, assert_steps_succeeded, drive_protocols, live_demo

ANSWER_OP = {'vercel': 'approve', 'agui': 'resume'}
CLIENT_OUTPUT = {'vercel': {'output': {'time': 'noon'}}, 'agui': {'content': '{"time":"noon"}'}}


def scenarios(protocol: str) -> dict[str, list[dict[str, Any]]]:
    return {
        'text': [{'op': 'send', 'text': 'hello'}, {'op': 'send', 'text': 'and again'}],
        'tools': [{'op': 'send', 'text': 'retry the weather'}, {'op': 'send', 'text': 'next'}],
        'client': [{'op': 'send', 'text': 'client'}, {'op': 'tool-output', **CLIENT_OUTPUT[protocol]}],
        'approve': [{'op': 'send', 'text': 'delete'}, {'op': ANSWER_OP[protocol], 'approved': True}],
    }


def thread(protocol: str, name: str) -> str:
    return f'{protocol}-servers-{name}'


@pytest.fixture(scope='module', params=['hypercorn', 'hypercorn-trio'])
def played(request: pytest.FixtureRequest) -> Iterator[tuple[dict[str, dict[str, Any]], LiveServer]]:
    with live_demo(request.param) as server:
        yield drive_protocols(server, {p: scenarios(p) for p in ANSWER_OP}, thread), server


@pytest.mark.parametrize('protocol', list(ANSWER_OP))
def test_every_turn_succeeds_and_comes_back_as_produced(
    played: tuple[dict[str, dict[str, Any]], LiveServer], protocol: str
) -> None:
    results, server = played
    for name in scenarios(protocol):
        assert_steps_succeeded(protocol, name, results[protocol][name])
        assert_round_trip(server.recorder, thread(protocol, name))
