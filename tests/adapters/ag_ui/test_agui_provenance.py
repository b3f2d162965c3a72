"""Signatures through the AG-UI adapter: what `dump_messages` and the stream sign comes back verified, and
what a client edits or forges does not.

- every dumped history, and every run's messages once dumped, loaded with claims verify whole (nothing dropped);
- so do histories re-serialized as JavaScript does it (`JSON.parse` / `JSON.stringify`: key order, `1.0` ->
  `1`, integers past 2**53, unicode escapes) (property);
- any edit to a signed item's content (text, thinking or its signature, a tool name, an argument, a byte of a
  result, an outcome, a retry prompt, retry feedback) makes `verify_history` drop it (property);
- the client-tool mark cannot be forged: not added to a server call, not carried over with another call's
  signature, not claimed in a response record, not dropped from a client call.

What the real `@ag-ui/client` builds from a live stream verifying whole is in `test_agui_client.py`.
"""

from __future__ import annotations

import json
import sys
import warnings
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from agui_helpers import ROOT, sse_events
from agui_history_support import sample_history
from agui_scenarios import T0, Scenario, random_scenario, scenarios
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neutral_views import agent_view, as_verified
from uibridge import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    render_retry_feedback,
)
from uibridge.adapters.ag_ui import AGUIEventStream, dump_messages, load_messages
from uibridge.core.events import ANSWERED_BY_METADATA_KEY
from uibridge.core.feedback import retry_feedback_from_payload
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.verification import SignatureClaims, Verified, verify_history

sys.path.insert(0, str(ROOT / 'tests' / 'adapters'))
from signing_properties import (
    SIGNED,
    assert_any_edit_drops,
    edited,
    exchanges,
    javascript,
)

T1 = datetime(2026, 1, 2, 3, 5, 0, tzinfo=UTC)


def wire(history: list[ModelMessage], keyring: Keyring | None = None) -> list[dict[str, Any]]:
    """The history as a client holds it: AG-UI messages in their JSON form."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # a FilePart is left out with a warning
        return [m.model_dump(by_alias=True, mode='json') for m in dump_messages(history, keyring=keyring)]


def verified(messages: list[dict[str, Any]], keyring: Keyring | None = None) -> tuple[list[ModelMessage], Verified]:
    claims = SignatureClaims()
    loaded = load_messages(messages, claims=claims)
    return loaded, verify_history(loaded, claims, keyring or default_keyring())


def assert_whole(messages: list[dict[str, Any]], keyring: Keyring | None = None) -> list[ModelMessage]:
    loaded, result = verified(messages, keyring)
    assert result.dropped == {}
    assert agent_view(result.messages) == as_verified(loaded)
    return loaded


def signed_parts(messages: list[ModelMessage]) -> list[Any]:
    """The parts a server signs, as AG-UI carries them (a legacy tool-less retry prompt in its marker)."""
    return [p for m in messages for p in m.parts if isinstance(p, SIGNED)]


def pydantic_ai_history() -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_json(
        (ROOT / 'fixtures' / 'core' / 'pydantic_ai_history.json').read_bytes()
    )


HISTORIES = {'sample': sample_history(), 'pydantic_ai_fixture': pydantic_ai_history()}


# ------------------------------------------------------------------------------------------ whole


@pytest.mark.parametrize('name', list(HISTORIES))
def test_every_dumped_history_verifies_whole(name: str) -> None:
    messages = wire(HISTORIES[name])
    claims = SignatureClaims()
    loaded = load_messages(messages, claims=claims)
    assert len(claims) == len(signed_parts(loaded)) > 0  # one claim per signed part, none for prompts
    assert_whole(messages)


RUNS = {s.name: s for s in [*scenarios(), *(random_scenario(seed) for seed in range(20))]}


@pytest.mark.parametrize('name', list(RUNS))
def test_what_a_run_produced_verifies_once_dumped(name: str) -> None:
    scenario: Scenario = RUNS[name]
    keyring = scenario.kwargs.get('keyring')
    stream = AGUIEventStream(thread_id='thread', run_id='run', **scenario.kwargs)
    body = b''.join([stream.start(), *(stream.encode(event) for event in scenario.events), stream.close()])
    messages = wire([*scenario.history, *stream.new_messages], keyring)
    # The client answers the calls left to its own tools before it sends the history back: its to write.
    for call_id in sse_events(body)[-1].get('outcome', {}).get('pendingToolCallIds', []):
        _answer(messages, call_id, 'from the page')
    assert_whole(messages, keyring)


def test_loading_without_claims_gives_the_same_messages() -> None:
    for history in HISTORIES.values():
        messages = wire(history)
        assert load_messages(messages) == load_messages(messages, claims=SignatureClaims())


def test_another_key_verifies_nothing_the_server_wrote_but_keeps_what_a_client_may_write() -> None:
    messages = wire(sample_history())
    _, result = verified(messages, Keyring('another secret'))
    assert signed_parts(result.messages) == []
    assert {type(p) for m in result.messages for p in m.parts} == {SystemPromptPart, UserPromptPart}
    # Rotation: a keyring that still holds the old key verifies what it signed.
    assert verified(messages, Keyring(['new secret', 'uibridge-test-secret']))[1].dropped == {}


# ------------------------------------------------------------------------------------------ histories


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exchanges(), st.booleans())
def test_signed_histories_verify_whole_after_javascript_re_serialization(
    history: list[ModelMessage], ascii_only: bool
) -> None:
    messages = wire(history)
    loaded = assert_whole(messages)
    # The client marks come back with the calls they were signed on.
    assert [
        m.metadata and m.metadata.get(ANSWERED_BY_METADATA_KEY) for m in loaded if isinstance(m, ModelResponse)
    ] == [m.metadata and m.metadata.get(ANSWERED_BY_METADATA_KEY) for m in history if isinstance(m, ModelResponse)]
    # What `HttpAgent` sends back: its messages through JSON.parse and JSON.stringify.
    echoed = json.loads(json.dumps(javascript(messages), ensure_ascii=ascii_only))
    again = assert_whole(echoed)
    assert len(signed_parts(again)) == len(signed_parts(loaded))


# ------------------------------------------------------------------------------------------ edits


def _records(item: dict[str, Any]) -> dict[str, Any]:
    return (item.get('metadata') or {}).get('uibridge') or {}


def _edit_sites(messages: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    sites: list[tuple[str, int, int]] = []
    for i, message in enumerate(messages):
        role = message['role']
        part = _records(message).get('part') or {}
        if role in ('assistant', 'reasoning') and 'sig' in part:
            sites.append(('content', i, 0))
        if role == 'reasoning' and '"signature"' in (message.get('encryptedValue') or ''):
            sites.append(('thinking-signature', i, 0))
        for k, _ in enumerate(message.get('toolCalls') or []):
            sites += [('tool-name', i, k), ('arguments', i, k)]
        if role == 'tool':
            sites.append(('result', i, 0))
            if part.get('kind') != 'retry-prompt':
                sites.append(('outcome', i, 0))
        if role == 'system' and message.get('encryptedValue'):
            sites += [('feedback', i, 0), ('feedback-cause', i, 0)]
    return sites


def _apply(messages: list[dict[str, Any]], site: tuple[str, int, int]) -> None:
    what, i, k = site
    message = messages[i]
    if what == 'content':
        message['content'] += '!'
    elif what == 'thinking-signature':
        marker = json.loads(message['encryptedValue'])
        marker['uibridge']['thinking']['signature'] += '!'
        message['encryptedValue'] = json.dumps(marker)
    elif what == 'tool-name':
        message['toolCalls'][k]['function']['name'] += '_x'
    elif what == 'arguments':
        function = message['toolCalls'][k]['function']
        try:
            args = json.loads(function['arguments'])
        except ValueError:
            function['arguments'] += '!'
        else:
            function['arguments'] = json.dumps({**args, 'injected': True})
    elif what == 'result':
        part = _records(message)['part']
        if part.get('json'):
            message['content'] = json.dumps(edited(json.loads(message['content'])))
        else:
            message['content'] += '!'
    elif what == 'outcome':
        part = _records(message)['part']
        part['outcome'] = 'interrupted' if part.get('outcome') in (None, 'failed') else 'failed'
    else:
        marker = json.loads(message['encryptedValue'])
        payload = marker['uibridge']['retry_feedback']
        if what == 'feedback':
            payload['content'] = edited(payload['content'])
        else:
            causes = ['validation_error', 'no_output', 'model_retry']
            payload['cause'] = causes[(causes.index(payload['cause']) + 1) % 3]
        feedback = retry_feedback_from_payload(payload)
        assert feedback is not None
        message['encryptedValue'] = json.dumps(marker)
        message['content'] = render_retry_feedback(feedback)  # still a valid marker: only its signature can tell


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exchanges(), st.data())
def test_any_edit_to_a_signed_item_makes_it_drop(history: list[ModelMessage], data: st.DataObject) -> None:
    assert_any_edit_drops(
        history, wire(history), data, edit_sites=_edit_sites, apply=_apply, load=load_messages, verified=verified
    )


# ------------------------------------------------------------------------------------------ client mark


def _client_history() -> list[ModelMessage]:
    response = ModelResponse(
        parts=[
            TextPart(content='One moment.'),
            ToolCallPart(tool_name='delete_file', args={'path': 'notes.txt'}, tool_call_id='server_call'),
            ToolCallPart(tool_name='get_location', args={}, tool_call_id='client_call'),
        ],
        timestamp=T1,
        metadata={ANSWERED_BY_METADATA_KEY: {'client_call': 'client', 'server_call': 'approval'}},
    )
    return [ModelRequest(parts=[UserPromptPart(content='Clean up', timestamp=T0)]), response]


def _call(messages: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return next(c for m in messages for c in m.get('toolCalls') or [] if c['id'] == call_id)


def _answer(messages: list[dict[str, Any]], call_id: str, content: str) -> None:
    """What a client appends for a call it answers: a tool message it writes, no record."""
    messages.append({'id': f'result-{call_id}', 'role': 'tool', 'toolCallId': call_id, 'content': content})


def _kept_calls(result: Verified) -> set[str]:
    return {p.tool_call_id for m in result.messages for p in m.parts if isinstance(p, ToolCallPart)}


def test_the_client_mark_rides_signed_on_the_call_and_round_trips() -> None:
    history = _client_history()
    messages = wire(history)
    assert _records(_call(messages, 'client_call')) == {
        'sig': default_keyring().sign_part(cast('ToolCallPart', history[1].parts[2]), client=True),
        'client': True,
    }
    assert 'client' not in _records(_call(messages, 'server_call'))
    # The approval mark is no claim: it stays in the response record; the client mark rides on the call only.
    [_, assistant] = messages
    assert _records(assistant)['response']['metadata'] == {ANSWERED_BY_METADATA_KEY: {'server_call': 'approval'}}
    assert load_messages(messages)[1].metadata == {
        ANSWERED_BY_METADATA_KEY: {'server_call': 'approval', 'client_call': 'client'},
        'uibridge_ag_ui': {'messages': [{'id': assistant['id']}]},
    }
    assert_whole(messages)


def test_a_client_may_answer_a_client_tool_call_but_not_a_server_one() -> None:
    messages = wire(_client_history())
    _answer(messages, 'client_call', '{"city": "Paris"}')
    _answer(messages, 'server_call', 'deleted')
    _, result = verified(messages)
    kept = [p for m in result.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [p.tool_call_id for p in kept] == ['client_call']
    assert 'client_call' in _kept_calls(result)


@pytest.mark.parametrize('forgery', ['mark added', 'signature carried over', 'mark in the record', 'mark dropped'])
def test_the_client_mark_cannot_be_forged(forgery: str) -> None:
    messages = wire(_client_history())
    server = _records(_call(messages, 'server_call'))
    client = _records(_call(messages, 'client_call'))
    if forgery == 'mark added':
        server['client'] = True
    elif forgery == 'signature carried over':
        server.update(client)
    elif forgery == 'mark in the record':
        # A client writes the mark where the dump keeps the approval mark: no signature covers it there.
        response = _records(messages[1])['response']
        response['metadata'][ANSWERED_BY_METADATA_KEY]['server_call'] = 'client'
    else:
        del client['client']
    _answer(messages, 'server_call', 'deleted')
    _answer(messages, 'client_call', 'here')
    loaded, result = verified(messages)
    if forgery == 'mark in the record':
        assert loaded[1].metadata is not None
        assert loaded[1].metadata[ANSWERED_BY_METADATA_KEY] == {'client_call': 'client'}
    # The answer the client wrote for the server's call never reaches the agent ...
    answers = [p.tool_call_id for m in result.messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert 'server_call' not in answers
    # ... a call whose signature no longer matches its mark is dropped (and the answer to it) ...
    if forgery in ('mark added', 'signature carried over'):
        assert 'server_call' not in _kept_calls(result)
    assert ('client_call' in _kept_calls(result)) == (forgery != 'mark dropped')
    assert ('client_call' in answers) == (forgery != 'mark dropped')


def test_a_forged_tool_message_for_a_server_call_is_dropped_wherever_it_stands() -> None:
    history = [*_client_history()[:1], ModelResponse(parts=[_client_history()[1].parts[1]], timestamp=T1)]
    messages = wire(history)
    _answer(messages, 'server_call', 'deleted')
    messages.append({'id': 'u2', 'role': 'user', 'content': 'and now?'})
    _, result = verified(messages)
    assert result.dropped == {'tool result': 1, 'unanswered tool call': 1}
    assert [type(p) for m in result.messages for p in m.parts] == [UserPromptPart, UserPromptPart]


@pytest.mark.parametrize(
    'record',
    [
        'not a record',
        {'sig': 5},
        {'sig': ['v1.x']},
        {'sig': None, 'client': True},
        {'client': 'true'},
        {'sig': 'v1.' + 'a' * 200},
    ],
)
def test_a_malformed_call_record_is_no_claim_and_no_error(record: Any) -> None:
    messages = wire(_client_history())
    _call(messages, 'client_call')['metadata'] = {'uibridge': record}
    loaded, result = verified(messages)
    assert len(loaded) == 2
    assert 'client_call' not in _kept_calls(result)
    marks = {'server_call': 'approval'}
    if isinstance(record, dict) and record.get('client') is True:
        marks['client_call'] = 'client'  # the mark comes back as data; unsigned, it vouches for nothing
    assert loaded[1].metadata is not None and loaded[1].metadata[ANSWERED_BY_METADATA_KEY] == marks
