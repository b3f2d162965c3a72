"""Signatures through the Vercel adapter: what `dump_messages` and the stream sign comes back verified, and
what a client edits or forges does not.

- every dumped history and every run's messages, loaded with claims, verify whole (nothing dropped);
- so do histories re-serialized the way JavaScript does it (key order, `1.0` -> `1`, integers past 2**53,
  unicode escapes) (property);
- any edit to a signed item's content (text, thinking signature, file bytes, tool name, an argument, a byte of
  a result, an outcome, a retry prompt, a denial, retry feedback) makes `verify_history` drop it (property);
- the client-tool mark cannot be forged: not added to a server call, not carried over with another signature.

The real client's side (what `ai@7` builds from the live stream verifies whole) is in `test_vercel_client.py`.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from vercel_ai_cases import HISTORIES, RANDOM_SCENARIOS, T0, T1, answer_client_tools, pydantic_ai_history

from uibridge import (
    BinaryContent,
    FilePart,
    ModelMessage,
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
from uibridge.adapters.vercel_ai import VercelAIEventStream, dump_messages, load_messages
from uibridge.core.events import ANSWERED_BY_METADATA_KEY
from uibridge.core.feedback import retry_feedback_from_payload
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.verification import SignatureClaims, Verified, pending_tool_calls, verify_history

ALL = {**HISTORIES, 'pydantic_ai_fixture': pydantic_ai_history()}
SIGNED = (TextPart, ThinkingPart, ToolCallPart, FilePart, ToolReturnPart, RetryPromptPart, RetryFeedbackPart)


def ui_json(history: list[ModelMessage], keyring: Keyring | None = None) -> list[dict[str, Any]]:
    return [m.model_dump(mode='json') for m in dump_messages(history, keyring=keyring)]


def verified(ui: list[dict[str, Any]], keyring: Keyring | None = None) -> tuple[list[ModelMessage], Verified]:
    claims = SignatureClaims()
    loaded = load_messages(ui, claims=claims)
    return loaded, verify_history(loaded, claims, keyring or default_keyring())


def assert_whole(ui: list[dict[str, Any]]) -> list[ModelMessage]:
    loaded, result = verified(ui)
    assert result.dropped == {}
    assert result.messages == [m for m in loaded if m.parts]  # what holds no part at all is not kept
    return loaded


def answered_by(message: ModelResponse) -> dict[str, str]:
    return dict((message.metadata or {}).get(ANSWERED_BY_METADATA_KEY) or {})


def signed_parts(messages: list[ModelMessage]) -> list[Any]:
    return [
        p
        for m in messages
        for p in m.parts
        if isinstance(p, SIGNED) and not (isinstance(p, RetryPromptPart) and p.tool_name is None)
    ]


# ------------------------------------------------------------------------------------------ whole


@pytest.mark.parametrize('name', list(ALL))
def test_every_dumped_history_verifies_whole(name: str) -> None:
    history = ALL[name]
    claims = SignatureClaims()
    loaded = load_messages(ui_json(history), claims=claims)
    assert len(claims) == len(signed_parts(loaded)) > 0  # one claim per signed part, none for prompts
    assert_whole(ui_json(history))


@pytest.mark.parametrize('name', list(RANDOM_SCENARIOS))
def test_what_a_run_produced_verifies_once_dumped_and_answered(name: str) -> None:
    stream = VercelAIEventStream(thread_id='chat')
    for event in RANDOM_SCENARIOS[name].events:
        stream.encode(event)
    produced = stream.new_messages
    ui = ui_json(produced)
    waiting = answer_client_tools(ui, produced)  # the client answers its own tools' calls: its to write
    loaded, result = verified(ui)
    # A call waiting for an approval while the server answered a sibling stays pending (core's rule).
    assert result.dropped == {}
    assert len(pending_tool_calls(result.messages)) >= waiting
    if not waiting:
        assert result.messages == [m for m in loaded if m.parts]


def test_loading_without_claims_gives_the_same_messages() -> None:
    for history in ALL.values():
        ui = ui_json(history)
        assert load_messages(ui) == load_messages(ui, claims=SignatureClaims())


def test_another_key_verifies_nothing_the_server_wrote_but_keeps_what_a_client_may_write() -> None:
    ui = ui_json(HISTORIES['tool_calls'])
    loaded, result = verified(ui, Keyring('another secret'))
    assert signed_parts(result.messages) == []
    assert [type(p) for m in result.messages for p in m.parts] == [SystemPromptPart, UserPromptPart]
    # Rotation: a keyring that still holds the old key verifies what it signed.
    assert verified(ui, Keyring(['new secret', 'uibridge-test-secret']))[1].dropped == {}
    assert loaded


# ------------------------------------------------------------------------------------------ histories

_text = st.text(max_size=12)
_nonempty = st.text(min_size=1, max_size=8)
_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, -0.0, 2.5e-8, 1e21])
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_errors = st.lists(
    st.fixed_dictionaries(
        {'type': _nonempty, 'loc': st.lists(_text | st.integers(0, 5), max_size=2).map(tuple), 'msg': _text},
        optional={'input': _json},
    ),
    min_size=1,
    max_size=2,
)
_outcomes = ['success', 'failed', 'denied', 'interrupted', 'retry', 'client']


@st.composite
def histories(draw: st.DrawFn) -> list[ModelMessage]:
    """Well-formed histories as a server produces them: every call answered by the request after its response
    (a client-tool call by the client), except the calls of a last response, which may all still wait."""
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=draw(_text), timestamp=T0)])]
    calls = 0
    turns = draw(st.integers(1, 4))
    for turn in range(turns):
        parts: list[Any] = []
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(['text', 'thinking', 'call', 'file']))
            if kind == 'text':
                parts.append(TextPart(content=draw(_nonempty)))
            elif kind == 'thinking':
                parts.append(
                    ThinkingPart(
                        content=draw(_text),
                        signature=draw(st.none() | _nonempty),
                        provider_name=draw(st.none() | st.just('anthropic')),
                    )
                )
            elif kind == 'file':
                data = draw(st.binary(min_size=1, max_size=8))
                parts.append(FilePart(content=BinaryContent(data=data, media_type='image/png')))
            else:
                calls += 1
                name = draw(st.sampled_from(['get_weather', 'search-web', 'ask_user']))
                args = draw(st.dictionaries(_text, _json, max_size=3))
                parts.append(ToolCallPart(tool_name=name, args=args, tool_call_id=f'call_{calls}'))
        response = ModelResponse(parts=parts, timestamp=T1)
        messages.append(response)
        pending = turn == turns - 1 and draw(st.booleans())
        marks: dict[str, str] = {}
        results: list[Any] = []
        for call in (p for p in parts if isinstance(p, ToolCallPart)):
            outcome = draw(st.sampled_from(_outcomes))
            if pending:
                if outcome == 'client':
                    marks[call.tool_call_id] = 'client'
                continue
            if outcome == 'retry':
                content = draw(_text | _errors)
                results.append(
                    RetryPromptPart(
                        content=content, tool_name=call.tool_name, tool_call_id=call.tool_call_id, timestamp=T1
                    )
                )
                continue
            if outcome == 'client':
                marks[call.tool_call_id] = 'client'
            results.append(
                ToolReturnPart(
                    tool_name=call.tool_name,
                    content=draw(_json),
                    tool_call_id=call.tool_call_id,
                    outcome='success' if outcome == 'client' else outcome,
                    timestamp=T1,
                )
            )
        if marks:
            response.metadata = {ANSWERED_BY_METADATA_KEY: marks}
        if pending:
            break
        if draw(st.booleans()):
            cause = draw(st.sampled_from(['validation_error', 'no_output', 'model_retry']))
            results.append(RetryFeedbackPart(content=draw(_text | _errors), cause=cause, timestamp=T1))
        if results:
            messages.append(ModelRequest(parts=results))
        if turn < turns - 1:
            messages.append(ModelRequest(parts=[UserPromptPart(content=draw(_text), timestamp=T1)]))
    return messages


def as_javascript(value: Any, *, reverse: bool) -> Any:
    """`value` as JSON.parse gives it back: one number type (`1.0` is `1`, integers past 2**53 lose digits);
    with `reverse`, objects with their keys in another order."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= 2**53 else value
    if isinstance(value, int):
        return value if abs(value) <= 2**53 else as_javascript(float(value), reverse=reverse)
    if isinstance(value, dict):
        items = list(cast('dict[str, Any]', value).items())
        return {k: as_javascript(v, reverse=reverse) for k, v in (reversed(items) if reverse else items)}
    return [as_javascript(item, reverse=reverse) for item in cast('list[Any]', value)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.booleans(), st.booleans())
def test_signed_histories_verify_whole_after_javascript_re_serialization(
    history: list[ModelMessage], reverse: bool, ascii_only: bool
) -> None:
    ui = ui_json(history)
    assert_whole(ui)
    # What a browser sends back: JSON.parse then JSON.stringify, as useChat does with its messages.
    echoed = json.loads(json.dumps(as_javascript(ui, reverse=reverse), ensure_ascii=ascii_only))
    loaded = assert_whole(echoed)
    assert len(signed_parts(loaded)) == len(signed_parts(load_messages(ui)))


# ------------------------------------------------------------------------------------------ edits


def _edit_sites(ui: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    sites: list[tuple[str, int, int]] = []
    for i, message in enumerate(ui):
        for j, part in enumerate(message['parts']):
            kind = part['type']
            ours = (part.get('providerMetadata') or {}).get('uibridge', {})
            if message['role'] == 'system' and 'retry_feedback' in ours:
                sites.append(('feedback', i, j))
            if message['role'] != 'assistant':
                continue
            if kind in ('text', 'reasoning'):
                sites.append(('text', i, j))
            if kind == 'reasoning' and 'signature' in ours:
                sites.append(('signature', i, j))
            if kind == 'file':
                sites.append(('file', i, j))
            if kind.startswith('tool-'):
                sites += [('tool-name', i, j), ('input', i, j)]
                state = part['state']
                if state in ('output-available', 'output-error', 'output-denied'):
                    sites.append(('result', i, j))
                if state == 'output-error' and 'retry' not in part['resultProviderMetadata']['uibridge']:
                    sites.append(('outcome', i, j))
    return sites


def _edited(value: Any) -> Any:
    """A JSON value that is surely another one."""
    if isinstance(value, str):
        return value + '!'
    if isinstance(value, list) and value and isinstance(value[0], dict) and 'msg' in value[0]:
        return [{**value[0], 'msg': value[0]['msg'] + '!'}, *value[1:]]
    return {'edited': value}


def _apply(ui: list[dict[str, Any]], site: tuple[str, int, int]) -> None:
    what, i, j = site
    part = ui[i]['parts'][j]
    if what == 'text':
        part['text'] = _edited(part['text'])
    elif what == 'signature':
        ours = part['providerMetadata']['uibridge']
        ours['signature'] = _edited(ours['signature'])
    elif what == 'file':
        data = base64.b64decode(part['url'].split(',', 1)[1])
        part['url'] = 'data:image/png;base64,' + base64.b64encode(data + b'\x00').decode()
    elif what == 'tool-name':
        part['type'] += '_x'
    elif what == 'input':
        part['input'] = {**part['input'], 'injected': True}
    elif what == 'outcome':
        ours = part['resultProviderMetadata']['uibridge']
        ours['outcome'] = 'interrupted' if ours.get('outcome', 'failed') == 'failed' else 'failed'
    elif what == 'feedback':
        marker = part['providerMetadata']['uibridge']['retry_feedback']
        marker['content'] = _edited(marker['content'])
        feedback = retry_feedback_from_payload(marker)
        assert feedback is not None
        part['text'] = render_retry_feedback(feedback)  # still a valid marker: only its signature can tell
    elif part['state'] == 'output-available':
        part['output'] = _edited(part['output'])
    elif part['state'] == 'output-error':
        ours = part['resultProviderMetadata']['uibridge']
        if 'retry' in ours:
            ours['retry']['content'] = _edited(ours['retry']['content'])
        elif 'content' in ours:
            ours['content'] = _edited(ours['content'])
        else:
            part['errorText'] = _edited(part['errorText'])
    else:  # a denial: its content rides in the result fields, or is the approval's reason
        result = part['callProviderMetadata']['uibridge']['result']
        if 'content' in result:
            result['content'] = _edited(result['content'])
        else:
            part['approval']['reason'] = _edited(part['approval']['reason'])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.data())
def test_any_edit_to_a_signed_item_makes_it_drop(history: list[ModelMessage], data: st.DataObject) -> None:
    ui = ui_json(history)
    sites = _edit_sites(ui)
    assume(sites)
    site = data.draw(st.sampled_from(sites))
    edited = copy.deepcopy(ui)
    _apply(edited, site)
    keyring = default_keyring()
    original = [p for m in load_messages(ui) for p in m.parts]
    loaded, result = verified(edited)
    parts = [p for m in loaded for p in m.parts]
    assert [type(p) for p in parts] == [type(p) for p in original]  # the edit changed content, not layout
    changed = [
        new
        for old, new in zip(original, parts, strict=True)
        if isinstance(new, SIGNED) and keyring.sign_part(old) != keyring.sign_part(new)
    ]
    assert changed, site
    # The answer to a call addressed to a client tool is the client's to write: edited, it is still its answer.
    client_calls = {
        c for m in history if isinstance(m, ModelResponse) for c, who in answered_by(m).items() if who == 'client'
    }
    kept = {id(p) for m in result.messages for p in m.parts}
    assert not [
        p for p in changed if id(p) in kept and not (isinstance(p, ToolReturnPart) and p.tool_call_id in client_calls)
    ]


# ------------------------------------------------------------------------------------------ client mark


def _client_history() -> list[ModelMessage]:
    response = ModelResponse(
        parts=[
            ToolCallPart(tool_name='delete_file', args={'path': 'notes.txt'}, tool_call_id='server_call'),
            ToolCallPart(tool_name='get_location', args={}, tool_call_id='client_call'),
        ],
        timestamp=T1,
        metadata={ANSWERED_BY_METADATA_KEY: {'client_call': 'client'}},
    )
    return [ModelRequest(parts=[UserPromptPart(content='Clean up', timestamp=T0)]), response]


def _tool(ui: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return next(p for m in ui for p in m['parts'] if p.get('toolCallId') == call_id)


def _answer(part: dict[str, Any], output: Any) -> None:
    """What `addToolOutput` does to the part in the client: the output, and no result metadata."""
    part['state'] = 'output-available'
    part['output'] = output


def test_the_client_mark_rides_signed_and_round_trips() -> None:
    history = _client_history()
    ui = ui_json(history)
    assert _tool(ui, 'client_call')['callProviderMetadata']['uibridge']['client'] is True
    assert 'client' not in _tool(ui, 'server_call')['callProviderMetadata']['uibridge']
    assert load_messages(ui)[1].metadata == {ANSWERED_BY_METADATA_KEY: {'client_call': 'client'}}
    assert_whole(ui)


def test_a_client_may_answer_a_client_tool_call_but_not_a_server_one() -> None:
    ui = ui_json(_client_history())
    _answer(_tool(ui, 'client_call'), {'city': 'Paris'})
    _answer(_tool(ui, 'server_call'), 'deleted')
    _, result = verified(ui)
    kept = [p for m in result.messages for p in m.parts]
    assert [p.tool_call_id for p in kept if isinstance(p, ToolReturnPart)] == ['client_call']
    # The server call lost its (forged) answer: it is pending again, for the server to resolve or drop.
    assert [c.tool_call_id for c in pending_tool_calls(result.messages)] == ['server_call']
    assert result.dropped == {'tool result': 1}


def test_the_client_mark_cannot_be_added_to_a_server_call() -> None:
    ui = ui_json(_client_history())
    server = _tool(ui, 'server_call')
    server['callProviderMetadata']['uibridge']['client'] = True
    _answer(server, 'deleted')
    _answer(_tool(ui, 'client_call'), {'city': 'Paris'})
    _, result = verified(ui)
    calls = [p.tool_call_id for m in result.messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert calls == ['client_call']


def test_a_client_marked_signature_cannot_be_moved_to_another_call() -> None:
    ui = ui_json(_client_history())
    server, client = _tool(ui, 'server_call'), _tool(ui, 'client_call')
    server['callProviderMetadata'] = copy.deepcopy(client['callProviderMetadata'])
    _answer(server, 'deleted')
    _, result = verified(ui)
    assert not [p for m in result.messages for p in m.parts if getattr(p, 'tool_call_id', None) == 'server_call']


def test_a_client_mark_removed_leaves_a_call_the_client_cannot_answer() -> None:
    ui = ui_json(_client_history())
    client = _tool(ui, 'client_call')
    del client['callProviderMetadata']['uibridge']['client']
    _, result = verified(ui)
    assert 'client_call' not in [
        p.tool_call_id for m in result.messages for p in m.parts if isinstance(p, ToolCallPart)
    ]


def test_a_pending_server_call_stays_pending_unanswered() -> None:
    ui = ui_json(_client_history())
    _, result = verified(ui)
    assert result.dropped == {}  # calls that end the history wait for their answers
