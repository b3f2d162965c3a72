"""The chunks of the events beyond text and tool calls through the real `ai@7` `Chat`
(tests/clients/vercel_chat_replay.mjs: `AbstractChat` with `DefaultChatTransport`, fed the recorded stream): no
error, no warning, no client tool run for a provider-executed call; the message the chat keeps loads as the run's
new messages and verifies whole."""

from __future__ import annotations

from typing import Any

import pytest
from vercel_ai_cases import MESSAGE_SCENARIOS, history_ui, model_view, run_client_check, scenario_stream

from neutral_views import agent_view, as_verified
from uibridge import ModelMessage, ModelResponse
from uibridge.adapters.vercel_ai import load_messages
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import SignatureClaims, verify_history


def _encoded(name: str) -> tuple[str, list[ModelMessage]]:
    scenario = MESSAGE_SCENARIOS[name]
    stream = scenario_stream(scenario)
    data = stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
    return data.decode(), stream.new_messages


ENCODED = {name: _encoded(name) for name in MESSAGE_SCENARIOS}


@pytest.fixture(scope='module')
def replayed() -> dict[str, Any]:
    cases: list[dict[str, Any]] = []
    for name, scenario in MESSAGE_SCENARIOS.items():
        case: dict[str, Any] = {'name': name, 'sse': ENCODED[name][0], 'messages': history_ui(scenario)}
        if scenario.continues:
            case['continue'] = True
        cases.append(case)
    return run_client_check({'cases': cases}, 'vercel_chat_replay.mjs')


def _parts(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [part for part in result['messages'][-1]['parts'] if part['type'] == kind]


@pytest.mark.parametrize('name', list(MESSAGE_SCENARIOS))
def test_the_chat_reads_every_stream_without_an_error_or_a_warning(replayed: dict[str, Any], name: str) -> None:
    result = replayed[name]
    assert (result['status'], result['error'], result['errors'], result['warnings']) == ('ready', None, [], [])
    assert result['valid'] is True
    # `onToolCall` runs for every call but a provider-executed one (a server tool's result simply follows).
    assert not {'web_search', 'code'} & set(result['onToolCall'])
    assert [finish['isError'] for finish in result['onFinish']] == [False]


@pytest.mark.parametrize('name', [name for name, scenario in MESSAGE_SCENARIOS.items() if not scenario.continues])
def test_the_chat_s_message_loads_as_the_run_s_messages(replayed: dict[str, Any], name: str) -> None:
    loaded = load_messages(replayed[name]['messages'][-1:])
    expected = [m for m in ENCODED[name][1] if not isinstance(m, ModelResponse) or m.parts or m.metadata]
    assert model_view(loaded, stream=True) == model_view(expected, stream=True)


@pytest.mark.parametrize('name', list(MESSAGE_SCENARIOS))
def test_the_chat_s_messages_verify_whole(replayed: dict[str, Any], name: str) -> None:
    claims = SignatureClaims()
    loaded = load_messages(replayed[name]['messages'], claims=claims)
    result = verify_history(loaded, claims, default_keyring())
    assert result.dropped == {}
    assert agent_view(result.messages) == as_verified(loaded)


def test_the_state_part_holds_the_latest_state_and_reaches_on_data(replayed: dict[str, Any]) -> None:
    result = replayed['state_in_steps']
    (state,) = _parts(result, 'data-state')
    assert state == {'type': 'data-state', 'id': 'state', 'data': {'plan': ['train'], 'city': 'Lyon'}}
    sent = [item['data'] for item in result['onData'] if item['type'] == 'data-state']
    assert sent == [{'plan': [], 'city': None}, {'plan': ['train'], 'city': None}, {'plan': ['train'], 'city': 'Lyon'}]
    continued = replayed['continued_state']
    assert [part['data'] for part in _parts(continued, 'data-state')] == [{'runs': 2}]  # replaced in place


def test_usage_and_message_metadata_merge_into_the_message_metadata(replayed: dict[str, Any]) -> None:
    metadata = replayed['usage_and_metadata']['messages'][-1]['metadata']
    assert {key: metadata[key] for key in ('conversation', 'rating', 'tags')} == {
        'conversation': 'c1',
        'rating': None,
        'tags': ['weather'],
    }
    ours = metadata['uibridge']
    assert ours['usage'] == {'input_tokens': 32, 'cache_read_tokens': 4, 'output_tokens': 8}
    assert ours['steps']['0']['usage'] == {'input_tokens': 12, 'output_tokens': 5}
    assert ours['steps']['1']['provider_details'] == {'tier': 'default'}
    assert ours['finish_reason'] == ours['steps']['1']['finish_reason'] == 'stop'
    # A continued message's steps are counted on: its one step is 0, the run's first is 1.
    continued = replayed['continued_state']['messages'][-1]['metadata']['uibridge']
    assert sorted(continued['steps']) == ['0', '1']
    assert continued['usage'] == {'input_tokens': 14, 'output_tokens': 6}


def test_sources_follow_their_text_and_a_late_one_is_signed(replayed: dict[str, Any]) -> None:
    parts = replayed['citations']['messages'][-1]['parts']
    assert [part['type'] for part in parts] == [
        'step-start',
        'text',
        'source-url',
        'source-document',
        'source-url',
        'text',
        'text',
        'source-document',
    ]
    late = _parts(replayed['late_citation'], 'source-url')
    assert [source['providerMetadata']['uibridge']['text'] for source in late] == [0]
    assert 'sig' in late[0]['providerMetadata']['uibridge']


def test_native_calls_are_provider_executed_tool_parts(replayed: dict[str, Any]) -> None:
    (search,) = _parts(replayed['native_search'], 'tool-web_search')
    assert search['providerExecuted'] is True
    assert (search['state'], search['input'], search['output']) == (
        'output-available',
        {'query': 'Paris'},
        [{'url': 'https://example.com/paris'}],
    )
    (code,) = _parts(replayed['native_result_later'], 'tool-code')
    assert code['resultProviderMetadata']['uibridge']['position'] == 2


def test_activity_is_shown_never_kept(replayed: dict[str, Any]) -> None:
    result = replayed['activity']
    activity = [item for item in result['onData'] if item['type'] == 'data-activity']
    assert [(item['id'], item['transient']) for item in activity] == [('act_1', True), ('act_1', True)]
    assert activity[1]['data'] == {'activityType': 'plan', 'patch': [{'op': 'add', 'path': '/steps/-', 'value': 'b'}]}
    assert _parts(result, 'data-activity') == []
