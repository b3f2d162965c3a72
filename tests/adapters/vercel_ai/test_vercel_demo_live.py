"""The demo agent's `state` and `search` answers through the Vercel endpoint of the demo app, driven by the real
`ai@7` `Chat` (tests/clients/e2e_vercel.mjs): the message the client builds carries the state part, the source
parts, the provider-executed tool part and the usage, and the state comes back with the next request."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from vercel_ai_cases import ROOT

from uibridge import NativeToolCallPart, NativeToolReturnPart, TextPart

sys.path.insert(0, str(ROOT / 'tests' / 'e2e'))  # the end-to-end suites' server and driver helpers
pytest.register_assert_rewrite('e2e_support')  # as tests/e2e/conftest.py does, before the first import
from e2e_support import LiveServer, all_parts, assert_round_trip, drive_scenarios, live_demo  # noqa: E402


@pytest.fixture(scope='module')
def driven() -> Iterator[tuple[dict[str, Any], LiveServer]]:
    scenarios = {
        'state': [{'op': 'send', 'text': 'plan with state'}, {'op': 'send', 'text': 'state again'}],
        'search': [{'op': 'send', 'text': 'search the protocols'}, {'op': 'send', 'text': 'hello'}],
    }
    with live_demo() as server:
        yield drive_scenarios(server, 'vercel', scenarios, lambda name: f'vercel-demo-{name}'), server


def _answer(result: dict[str, Any], step: int = 0) -> dict[str, Any]:
    done = result['steps'][step]
    assert (done['error'], done['status'], done['valid']) == (None, 'ready', True)
    message = done['messages'][-1]
    assert message['role'] == 'assistant'
    return message


def test_the_state_answer_carries_the_state_part_and_its_usage(driven: tuple[dict[str, Any], LiveServer]) -> None:
    results, server = driven
    first = _answer(results['state'])
    (state,) = [part for part in first['parts'] if part['type'] == 'data-state']
    assert state['id'] == 'state'
    assert state['data'] == {
        'runs': 1,
        'plan': [{'step': step, 'done': True} for step in ('pick a city', 'book a train', 'find a hotel')],
        'city': 'Lyon',
        'train': '08:12',
        'hotel': 'Hôtel du Parc',
    }
    usage = first['metadata']['uibridge']['usage']
    assert usage == {'input_tokens': 3, 'output_tokens': 10}
    # The client's state went back with the next message: the agent counted the run on.
    second = _answer(results['state'], 1)
    assert [part['data']['runs'] for part in second['parts'] if part['type'] == 'data-state'] == [2]
    (_, again) = server.recorder.runs_for('vercel-demo-state')
    assert again.input.state['runs'] == 1


def test_the_search_answer_carries_sources_the_native_call_and_usage(driven: tuple[dict[str, Any], LiveServer]) -> None:
    message = _answer(driven[0]['search'])
    kinds = [part['type'] for part in message['parts']]
    assert kinds == ['step-start', 'tool-web_search', 'text', 'source-url', 'source-url']
    search = message['parts'][1]
    assert (search['providerExecuted'], search['state']) == (True, 'output-available')
    assert search['input'] == {'query': 'search the protocols'}
    assert [hit['url'] for hit in search['output']] == ['https://example.com/vercel-ai', 'https://example.com/ag-ui']
    assert [part['url'] for part in message['parts'][3:]] == [hit['url'] for hit in search['output']]
    assert message['metadata']['uibridge']['usage']['input_tokens'] == 3
    assert message['metadata']['uibridge']['steps']['0']['finish_reason'] == 'stop'


def test_both_answers_come_back_whole_and_verified(driven: tuple[dict[str, Any], LiveServer]) -> None:
    recorder = driven[1].recorder
    assert_round_trip(recorder, 'vercel-demo-state')
    (_, after_search) = assert_round_trip(recorder, 'vercel-demo-search')
    # Verified, not dropped: the signed native call and return and the cited text reach the agent.
    parts = all_parts(after_search.messages)
    assert [type(part) for part in parts if isinstance(part, NativeToolCallPart | NativeToolReturnPart)] == [
        NativeToolCallPart,
        NativeToolReturnPart,
    ]
    (cited,) = [part for part in parts if isinstance(part, TextPart) and part.citations]
    assert [source.url for citation in cited.citations or () for source in citation.sources] == [
        'https://example.com/vercel-ai',
        'https://example.com/ag-ui',
    ]
