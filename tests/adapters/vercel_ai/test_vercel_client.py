"""The real client (`ai` 7, tests/clients/node_modules) against what this adapter writes.

One `node` run checks every case (tests/clients/vercel_check.mjs):
1. `safeValidateUIMessages` accepts every dumped history and every golden UI file, and strips nothing;
2. `parseJsonEventStream` + `readUIMessageStream` read every encoded stream without an error, and the message
   the client builds is what `dump_messages` gives for the same messages (compared through `load_messages`
   where the stream's layout legitimately differs: retry feedback stays inside the assistant message);
3. the SDK-built messages go back through `load_messages`: the model sees the history the run produced, and
   dumping them again gives the client's messages back;
4. loaded with claims, they verify whole (`verify_history` drops nothing): every signature reached the client in
   a chunk it keeps, and survived its JSON handling, client-tool calls and denials included.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pytest
from vercel_ai_cases import (
    FIXTURES,
    HISTORIES,
    RANDOM_SCENARIOS,
    SCENARIOS,
    Scenario,
    answer_client_tools,
    as_the_client_keeps_it,
    drop_trailing_empty_steps,
    history_ui,
    model_view,
    pydantic_ai_history,
    run_client_check,
    scenario_stream,
    ui_view,
)

from neutral_views import agent_view, as_verified
from uibridge import ModelMessage, ToolCallPart, ToolReturnPart
from uibridge.adapters.vercel_ai import dump_messages, load_messages
from uibridge.core.events import RetryFeedback, RunCancelled, RunError
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import SignatureClaims, pending_tool_calls, verify_history

ALL = {**HISTORIES, 'pydantic_ai_fixture': pydantic_ai_history()}
RUNS = {**SCENARIOS, **RANDOM_SCENARIOS}
"""The named scenarios, and random well-formed runs (`random_scenario`), all read by the real client."""
GOLDEN_UI = sorted(FIXTURES.glob('*.ui.json'))


@functools.cache
def encode_once(name: str) -> tuple[str, list[ModelMessage]]:
    """Each scenario encoded once: the stream the client reads and the messages it must match share timestamps."""
    scenario = RUNS[name]
    stream = scenario_stream(scenario)
    data = stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
    return data.decode(), stream.new_messages


@pytest.fixture(scope='module')
def client() -> dict[str, Any]:
    validate = [
        {'name': name, 'messages': [m.model_dump(mode='json') for m in dump_messages(h)]} for name, h in ALL.items()
    ]
    validate += [{'name': f'golden:{path.name}', 'messages': json.loads(path.read_text())} for path in GOLDEN_UI]
    for name in RUNS:
        dumped = dump_messages([*RUNS[name].history, *encode_once(name)[1]])
        if dumped:
            validate.append({'name': f'run:{name}', 'messages': [m.model_dump(mode='json') for m in dumped]})
    streams: list[dict[str, Any]] = []
    for name, scenario in RUNS.items():
        sse, _ = encode_once(name)
        case: dict[str, Any] = {'name': name, 'sse': sse}
        if scenario.continues:
            case['message'] = history_ui(scenario)[-1]
        streams.append(case)
    return run_client_check({'validate': validate, 'streams': streams})


def test_the_client_logs_no_warning(client: dict[str, Any]) -> None:
    # Over every stream read, and every history validated and converted (`convertToModelMessages`).
    assert client['warnings'] == []


@pytest.mark.parametrize('name', [*ALL, *(f'golden:{path.name}' for path in GOLDEN_UI)])
def test_the_client_accepts_every_dump_and_strips_nothing(client: dict[str, Any], name: str) -> None:
    result = client['validate'][name]
    assert result['success'], result.get('error')
    if name in ALL:
        assert result['data'] == [m.model_dump(mode='json') for m in dump_messages(ALL[name])]


@pytest.mark.parametrize('name', list(RUNS))
def test_the_client_accepts_the_dump_of_every_run(client: dict[str, Any], name: str) -> None:
    result = client['validate'].get(f'run:{name}', {'success': True, 'data': []})
    assert result['success'], result.get('error')


@pytest.mark.parametrize('name', list(RUNS))
def test_the_client_reads_every_stream(client: dict[str, Any], name: str) -> None:
    result = client['streams'][name]
    scenario = RUNS[name]
    assert result['errors'] == ([scenario.error] if scenario.error else [])
    assert result['valid'], result.get('validationError')
    assert 'reset-step' not in result['chunkTypes']


def _client_message(result: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    message = copy.deepcopy(result['message'])
    if scenario.error:
        # The client leaves a part open at an `error` chunk 'streaming' (reference, quirks); dump says 'done'.
        for part in message['parts']:
            if part.get('state') == 'streaming':
                part['state'] = 'done'
    return message


_LAYOUT_DIFFERS = {'retry_feedback', 'no_events', 'late_citation'}
"""Retry feedback: the stream keeps it inside the assistant message; the dump makes it a system message.
A run without events builds an empty assistant message, which no dump holds. A citation added after its text
ended comes after the parts sent meanwhile, signed (the dump writes each text's sources right after it)."""


def _has_feedback(scenario: Scenario) -> bool:
    return any(isinstance(event, RetryFeedback) for event in scenario.events) or not scenario.events


def _ui_exact(scenario: Scenario) -> bool:
    """Runs whose SDK-built message this adapter could have dumped: nothing left open by an error or cancel."""
    if _has_feedback(scenario) or any(isinstance(e, RunError | RunCancelled) for e in scenario.events):
        return False
    _, new_messages = encode_once(next(name for name, run in RUNS.items() if run is scenario))
    return drop_trailing_empty_steps(new_messages) == new_messages


@pytest.mark.parametrize('name', [n for n in RUNS if n not in _LAYOUT_DIFFERS and not _has_feedback(RUNS[n])])
def test_the_client_builds_the_dumped_message(client: dict[str, Any], name: str) -> None:
    scenario = RUNS[name]
    _, new_messages = encode_once(name)
    expected_messages = dump_messages(drop_trailing_empty_steps([*scenario.history, *new_messages]))
    message = _client_message(client['streams'][name], scenario)
    if not expected_messages:
        assert message['parts'] == []
        return
    expected = expected_messages[-1].model_dump(mode='json')
    # A denial answering the client's own approval included: `tool-output-denied` has no metadata field, so the
    # stream re-sends the client's approval answer with the call metadata it holds plus the signed result.
    assert ui_view(message) == ui_view(expected)


def _before(scenario: Scenario) -> list[dict[str, Any]]:
    """The client's messages before the one the stream built (which replaces the continued one)."""
    before = history_ui(scenario)
    return before[:-1] if scenario.continues else before


@pytest.mark.parametrize('name', list(RUNS))
def test_sdk_built_messages_load_as_the_run_s_messages(client: dict[str, Any], name: str) -> None:
    scenario = RUNS[name]
    _, new_messages = encode_once(name)
    loaded = load_messages([*_before(scenario), _client_message(client['streams'][name], scenario)])
    expected = model_view(as_the_client_keeps_it(scenario, new_messages), stream=True)
    got = model_view(loaded, stream=True)
    assert got == expected


_NOT_UI_EXACT = _LAYOUT_DIFFERS | {'no_events', 'error_mid_text', 'cancelled'}
"""Not written by this adapter's dump: an empty message, and parts a failed or cancelled run left open."""


@pytest.mark.parametrize('name', [n for n in RUNS if n not in _NOT_UI_EXACT and _ui_exact(RUNS[n])])
def test_sdk_built_messages_dump_back_unchanged(client: dict[str, Any], name: str) -> None:
    scenario = RUNS[name]
    ui = [*_before(scenario), client['streams'][name]['message']]
    assert [m.model_dump(mode='json') for m in dump_messages(load_messages(ui))] == ui


@pytest.mark.parametrize('name', list(RUNS))
def test_sdk_built_messages_verify_whole(client: dict[str, Any], name: str) -> None:
    scenario = RUNS[name]
    _, new_messages = encode_once(name)
    message = _client_message(client['streams'][name], scenario)
    waiting = answer_client_tools([message], new_messages)
    claims = SignatureClaims()
    loaded = load_messages([*_before(scenario), message], claims=claims)
    result = verify_history(loaded, claims, default_keyring())
    # A call still waiting (an approval, beside a sibling the server answered) is pending, not dropped.
    assert result.dropped == {}
    assert len(pending_tool_calls(result.messages)) >= waiting
    if not waiting:
        assert agent_view(result.messages) == as_verified(loaded)
    if name in ('client_tool', 'denied_by_server', 'approval_refused', 'approval_granted'):
        kept = [p for m in result.messages for p in m.parts]
        assert [p.tool_call_id for p in kept if isinstance(p, ToolCallPart)] == [
            'call_1' if name == 'client_tool' else 'call_a1'
        ]
        (answer,) = [p for p in kept if isinstance(p, ToolReturnPart)]
        expected = {'client_tool': 'success', 'approval_granted': 'success'}.get(name, 'denied')
        assert answer.outcome == expected
