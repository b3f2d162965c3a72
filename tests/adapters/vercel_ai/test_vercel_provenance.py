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
import sys
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vercel_ai_cases import HISTORIES, RANDOM_SCENARIOS, ROOT, T0, T1, answer_client_tools, pydantic_ai_history

from neutral_views import agent_view, as_verified
from uibridge import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    render_retry_feedback,
)
from uibridge.adapters.vercel_ai import VercelAIEventStream, dump_messages, load_messages
from uibridge.core.events import ANSWERED_BY_METADATA_KEY
from uibridge.core.feedback import retry_feedback_from_payload
from uibridge.core.messages import NativeToolCallPart, NativeToolReturnPart
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.verification import SignatureClaims, Verified, pending_tool_calls, verify_history

sys.path.insert(0, str(ROOT / 'tests' / 'adapters'))
from signing_properties import (
    SIGNED,
    assert_any_edit_drops,
    edited,
    exchanges,
    javascript,
)

ALL = {**HISTORIES, 'pydantic_ai_fixture': pydantic_ai_history()}


def ui_json(history: list[ModelMessage], keyring: Keyring | None = None) -> list[dict[str, Any]]:
    return [m.model_dump(mode='json') for m in dump_messages(history, keyring=keyring)]


def verified(ui: list[dict[str, Any]], keyring: Keyring | None = None) -> tuple[list[ModelMessage], Verified]:
    claims = SignatureClaims()
    loaded = load_messages(ui, claims=claims)
    return loaded, verify_history(loaded, claims, keyring or default_keyring())


def assert_whole(ui: list[dict[str, Any]]) -> list[ModelMessage]:
    loaded, result = verified(ui)
    assert result.dropped == {}
    assert agent_view(result.messages) == as_verified(loaded)  # what holds no part at all is not kept
    return loaded


def signed_parts(messages: list[ModelMessage]) -> list[Any]:
    return [p for m in messages for p in m.parts if isinstance(p, (*SIGNED, NativeToolCallPart, NativeToolReturnPart))]


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
        assert agent_view(result.messages) == as_verified(loaded)


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

histories = exchanges(
    files=True, tool_names=('get_weather', 'search-web', 'ask_user'), thinking_providers=(None, 'anthropic')
)
"""Histories with files, a tool name with a hyphen (it rides in the part type) and thinking with no provider."""


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, st.booleans())
def test_signed_histories_verify_whole_after_javascript_re_serialization(
    history: list[ModelMessage], ascii_only: bool
) -> None:
    ui = ui_json(history)
    assert_whole(ui)
    # What a browser sends back: JSON.parse then JSON.stringify, as useChat does with its messages.
    echoed = json.loads(json.dumps(javascript(ui), ensure_ascii=ascii_only))
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
                ours_call = part['callProviderMetadata']['uibridge']
                text = ours_call.get('args_json', ours_call.get('args'))
                if isinstance(text, str) and not _input_gives_back(part['input'], text):
                    sites.append(('args text', i, j))  # the text the agent reads, where `input` cannot give it
                state = part['state']
                if state in ('output-available', 'output-error', 'output-denied'):
                    sites.append(('result', i, j))
                if state == 'output-error' and 'retry' not in part['resultProviderMetadata']['uibridge']:
                    sites.append(('outcome', i, j))
    return sites


def _input_gives_back(value: Any, text: str) -> bool:
    """Whether `input` as a browser holds it is already the carried text's value, number types included (as
    `{"":[1e+21]}` is): an edit of that text then meets an `input` that gives back the signed value, so the call
    loads unchanged and there is no edit to see drop."""
    try:
        carried = json.loads(text)
    except ValueError:
        return False
    return json.dumps(_as_javascript(value)) == json.dumps(carried)


def _as_javascript(value: Any) -> Any:
    """`value` after `JSON.parse`: JavaScript has one number type, so a whole float comes back an integer."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:  # JavaScript writes these as integers
        return int(value)
    if isinstance(value, list):
        return [_as_javascript(item) for item in cast('list[Any]', value)]
    if isinstance(value, dict):
        return {key: _as_javascript(item) for key, item in cast('dict[str, Any]', value).items()}
    return value


def _edited_text(text: str, edit: Any) -> str:
    """A carried exact text (`core.exact_json`) edited as its value: the value `edit` gives, written compact."""
    return json.dumps(edit(json.loads(text)), separators=(',', ':'), ensure_ascii=False)


def _apply(ui: list[dict[str, Any]], site: tuple[str, int, int]) -> None:
    what, i, j = site
    part = ui[i]['parts'][j]
    if what == 'text':
        part['text'] = edited(part['text'])
    elif what == 'signature':
        ours = part['providerMetadata']['uibridge']
        ours['signature'] = edited(ours['signature'])
    elif what == 'file':
        data = base64.b64decode(part['url'].split(',', 1)[1])
        part['url'] = 'data:image/png;base64,' + base64.b64encode(data + b'\x00').decode()
    elif what == 'tool-name':
        part['type'] += '_x'
    elif what == 'input':
        part['input'] = {**part['input'], 'injected': True}  # what the UI shows: it must show the signed text
    elif what == 'args text':
        # `input` as a browser holds it (whole floats are integers there): the copy a real client sends, so the call's
        # `input` alone never gives back the signed text the carried one stands for.
        part['input'] = _as_javascript(part['input'])
        ours = part['callProviderMetadata']['uibridge']
        key = 'args_json' if 'args_json' in ours else 'args'
        ours[key] = _edited_text(ours[key], lambda args: {**args, 'injected': True})
    elif what == 'outcome':
        ours = part['resultProviderMetadata']['uibridge']
        ours['outcome'] = 'interrupted' if ours.get('outcome', 'failed') == 'failed' else 'failed'
    elif what == 'feedback':
        marker = part['providerMetadata']['uibridge']['retry_feedback']
        marker['content'] = edited(marker['content'])
        feedback = retry_feedback_from_payload(marker)
        assert feedback is not None
        part['text'] = render_retry_feedback(feedback)  # still a valid marker: only its signature can tell
    elif part['state'] == 'output-available':
        ours = part['resultProviderMetadata']['uibridge']
        if 'content_json' in ours:
            ours['content_json'] = _edited_text(ours['content_json'], edited)
        else:
            part['output'] = edited(part['output'])
    elif part['state'] == 'output-error':
        ours = part['resultProviderMetadata']['uibridge']
        if 'retry' in ours and 'content_json' in ours['retry']:
            ours['retry']['content_json'] = _edited_text(ours['retry']['content_json'], edited)
        elif 'retry' in ours:
            ours['retry']['content'] = edited(ours['retry']['content'])
        elif 'content_json' in ours:
            ours['content_json'] = _edited_text(ours['content_json'], edited)
        elif 'content' in ours:
            ours['content'] = edited(ours['content'])
        else:
            part['errorText'] = edited(part['errorText'])
    else:  # a denial: its content rides in the result fields, or is the approval's reason
        result = part['callProviderMetadata']['uibridge']['result']
        if 'content_json' in result:
            result['content_json'] = _edited_text(result['content_json'], edited)
        elif 'content' in result:
            result['content'] = edited(result['content'])
        else:
            part['approval']['reason'] = edited(part['approval']['reason'])


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, st.data())
def test_any_edit_to_a_signed_item_makes_it_drop(history: list[ModelMessage], data: st.DataObject) -> None:
    assert_any_edit_drops(
        history, ui_json(history), data, edit_sites=_edit_sites, apply=_apply, load=load_messages, verified=verified
    )


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
