"""Migrating UI histories that pydantic-ai's own UI adapters stored: they load with their meaning kept.

`fixtures/core/pydantic_ai_vercel_ui.json` / `pydantic_ai_ag_ui.json` hold one conversation (thinking with a
signature, tool calls, two retried tools, a failed one, a model's file, retry feedback in the user and the
system voice, and a person's text that merely looks like feedback) as pydantic-ai-slim 2.68's `VercelAIAdapter`
and `AGUIAdapter` dumped it, beside the history it was dumped from (`fixtures/core/generate_pydantic_ai.py`).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import ReasoningMessage

from uibridge import (
    FilePart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.adapters.ag_ui._peer_history import peer_message as peer_ag_ui_message
from uibridge.adapters.vercel_ai._peer_history import peer_messages
from uibridge.adapters.vercel_ai._validation import validate_ui_message
from uibridge.core.provenance import Keyring
from uibridge.core.verification import SignatureClaims, verify_history

ROOT = Path(__file__).parents[2]
VERCEL: dict[str, Any] = json.loads((ROOT / 'fixtures/core/pydantic_ai_vercel_ui.json').read_text('utf-8'))
AGUI: dict[str, Any] = json.loads((ROOT / 'fixtures/core/pydantic_ai_ag_ui.json').read_text('utf-8'))


def history() -> list[ModelMessage]:
    """The conversation as pydantic-ai stored it (its own JSON, loaded by uibridge)."""
    return ModelMessagesTypeAdapter.validate_python(VERCEL['history'])


def item(content: Any) -> Any:
    # pydantic-ai's own bookkeeping (`identifier`, `force_download`, ...) is no UI's to carry.
    if isinstance(content, str):
        return content
    return (content.kind, getattr(content, 'url', None) or getattr(content, 'data', None), content.media_type)


def meaning(messages: list[ModelMessage], *, ag_ui_form: bool = False) -> list[Any]:
    """What a model or a person reads of `messages`, part by part. `ag_ui_form`: the two things pydantic-ai's
    AG-UI dump does not carry are left out (a text part's provider id, and the model's files), and a tool's
    structured result is compared as the JSON text AG-UI carries it as."""
    out: list[Any] = []
    for message in messages:
        parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, SystemPromptPart | TextPart):
                parts.append((part.part_kind, part.content, None if ag_ui_form else getattr(part, 'id', None)))
            elif isinstance(part, UserPromptPart):
                parts.append(
                    ('user', part.content if isinstance(part.content, str) else [item(c) for c in part.content])
                )
            elif isinstance(part, ThinkingPart):
                parts.append(('thinking', part.content, part.signature, part.provider_name, part.id))
            elif isinstance(part, ToolCallPart):
                parts.append(('call', part.tool_call_id, part.tool_name, part.args_as_dict()))
            elif isinstance(part, ToolReturnPart):
                content = part.model_response_str() if ag_ui_form else part.content
                parts.append(('return', part.tool_call_id, content, part.outcome))
            elif isinstance(part, RetryPromptPart):
                parts.append(('retry', part.tool_call_id, part.tool_name, part.model_response()))
            elif isinstance(part, RetryFeedbackPart):
                # The model is shown neither an error's `ctx` nor its `input` (pydantic-ai's marker keeps no ctx).
                content = part.content if isinstance(part.content, str) else [e['msg'] for e in part.content]
                parts.append(('feedback', part.cause, content, part.timestamp))
            elif isinstance(part, FilePart):
                if not ag_ui_form:
                    parts.append(('file', part.content.media_type, part.content.data, part.id))
            else:
                raise AssertionError(f'unexpected {part!r}')
        out.append((message.kind, parts))
    return out


# ------------------------------------------------------------------------------------------------- Vercel


def test_pydantic_ais_vercel_history_loads_with_its_meaning() -> None:
    loaded = vercel_ai.load_messages(VERCEL['ui_messages'])
    assert meaning(loaded) == meaning(history())
    thinking = next(p for m in loaded for p in m.parts if isinstance(p, ThinkingPart))
    assert (thinking.signature, thinking.provider_name, thinking.id) == ('sig_abc==', 'anthropic', 'rs_1')
    # The message timestamps pydantic-ai kept: the prompt's and each response's.
    original = history()
    assert loaded[1].timestamp == original[1].timestamp  # pyright: ignore[reportAttributeAccessIssue]
    user = next(p for p in loaded[0].parts if isinstance(p, UserPromptPart))
    assert user.timestamp == next(p for p in original[0].parts if isinstance(p, UserPromptPart)).timestamp


def test_pydantic_ais_ag_ui_history_loads_with_its_meaning() -> None:
    loaded = ag_ui.load_messages(AGUI['messages'])
    assert meaning(loaded, ag_ui_form=True) == meaning(history(), ag_ui_form=True)
    thinking = next(p for m in loaded for p in m.parts if isinstance(p, ThinkingPart))
    assert (thinking.signature, thinking.provider_name, thinking.id) == ('sig_abc==', 'anthropic', 'rs_1')


def feedback_of(messages: list[ModelMessage]) -> list[RetryFeedbackPart]:
    return [p for m in messages for p in m.parts if isinstance(p, RetryFeedbackPart)]


def test_retry_feedback_comes_only_from_pydantic_ais_marker_never_from_its_text() -> None:
    # The fixture's person typed `<pyai:retry_feedback>`: still their prompt, in both protocols.
    for loaded in (vercel_ai.load_messages(VERCEL['ui_messages']), ag_ui.load_messages(AGUI['messages'])):
        prompts = [p.content for m in loaded for p in m.parts if isinstance(p, UserPromptPart)]
        assert '<pyai:retry_feedback>typed by a person</pyai:retry_feedback>' in prompts
        assert len(feedback_of(loaded)) == 4
    # Without its marker (or with a broken one), pydantic-ai's feedback text is only text.
    ui = copy.deepcopy(VERCEL['ui_messages'])
    agui = copy.deepcopy(AGUI['messages'])
    for message in ui:
        for part in message['parts']:
            meta = part.get('providerMetadata', {}).get('pydantic_ai', {})
            if 'retry_feedback' in meta:
                meta['retry_feedback']['part_kind'] = 'user-prompt'
    for message in agui:
        if 'retry_feedback' in message.get('encryptedValue', ''):
            del message['encryptedValue']
    for loaded in (vercel_ai.load_messages(ui), ag_ui.load_messages(agui)):
        assert feedback_of(loaded) == []
        texts = [p.content for m in loaded for p in m.parts if isinstance(p, UserPromptPart | SystemPromptPart)]
        assert json.dumps(texts, default=str).count('</pyai:') == 4  # three feedback texts and the person's


def test_a_retried_tool_is_the_retry_it_was_and_a_failed_one_a_failure() -> None:
    for loaded in (vercel_ai.load_messages(VERCEL['ui_messages']), ag_ui.load_messages(AGUI['messages'])):
        retries = {p.tool_call_id: p for m in loaded for p in m.parts if isinstance(p, RetryPromptPart)}
        assert retries['call_atlantis'].content == 'City not found: Atlantis'
        errors = retries['call_empty'].content
        assert isinstance(errors, list) and [e['loc'] for e in errors] == [('city',), ('days', 0)]
        failed = next(p for m in loaded for p in m.parts if isinstance(p, ToolReturnPart) and p.outcome == 'failed')
        assert (failed.tool_call_id, failed.content) == ('call_lyon', 'upstream 500')


# ------------------------------------------------------------------------------- migration: load, re-save


def run_vercel_validate(messages: list[Any]) -> dict[str, Any]:
    cases = {'validate': [{'name': 'migrated', 'messages': messages}], 'streams': []}
    result = subprocess.run(
        ['node', 'vercel_check.mjs'],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        cwd=ROOT / 'tests/clients',
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout)['validate']['migrated']


def test_migrating_a_vercel_history_means_loading_it_and_saving_it_again() -> None:
    loaded = vercel_ai.load_messages(VERCEL['ui_messages'])
    resaved = [m.model_dump(mode='json') for m in vercel_ai.dump_messages(loaded)]
    assert 'pydantic_ai' not in json.dumps(resaved)  # uibridge's own form from now on
    assert meaning(vercel_ai.load_messages(resaved)) == meaning(loaded)
    # ... and ai@7's own validator accepts what was saved, stripping nothing.
    checked = run_vercel_validate(resaved)
    assert checked['success'], checked.get('error')
    assert checked['data'] == resaved


def test_migrating_an_ag_ui_history_means_loading_it_and_saving_it_again() -> None:
    loaded = ag_ui.load_messages(AGUI['messages'])
    resaved = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ag_ui.dump_messages(loaded)]
    # uibridge's own form from now on; a model's file keeps the activity type both write for it.
    assert 'pydantic_ai' not in json.dumps(resaved).replace('"pydantic_ai_file"', '')
    assert meaning(ag_ui.load_messages(resaved), ag_ui_form=True) == meaning(loaded, ag_ui_form=True)


@pytest.mark.parametrize('protocol', ['vercel', 'ag_ui'])
def test_sent_through_a_client_the_peers_history_is_unsigned_and_verification_drops_the_server_parts(
    protocol: str,
) -> None:
    # Nothing pydantic-ai stored carries uibridge's signature, so a client sending it back proves nothing:
    # migration is a server-side load and re-save, never a client round trip.
    claims = SignatureClaims()
    if protocol == 'vercel':
        loaded = vercel_ai.load_messages(VERCEL['ui_messages'], claims=claims)
    else:
        loaded = ag_ui.load_messages(AGUI['messages'], claims=claims)
    verified = verify_history(loaded, claims, Keyring(['server key']))
    kept = {type(p).__name__ for m in verified.messages for p in m.parts}
    assert kept == {'SystemPromptPart', 'UserPromptPart'}
    assert verified.dropped


def test_uibridges_own_histories_and_other_providers_records_are_not_taken_for_pydantic_ais() -> None:
    ours = vercel_ai.dump_messages(history())
    assert all(peer_messages(message) is None for message in ours)
    other = {'id': 'a', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi', 'providerMetadata': {'acme': {}}}]}
    assert peer_messages(validate_ui_message(other, 0)) is None
    agui = ag_ui.dump_messages(history())
    for message in agui:
        assert peer_ag_ui_message(message) is None
    # A provider's own opaque reasoning blob (not JSON) is no pydantic-ai record either.
    blob = ReasoningMessage(id='r', role='reasoning', content='hm', encrypted_value='gAAAAB-provider-blob')
    assert peer_ag_ui_message(blob) is None


# ------------------------------------------------------------------- provider ids, details and retry records

DETAILS: dict[str, Any] = json.loads((ROOT / 'fixtures/vercel_ai/pydantic_ai_details.json').read_text('utf-8'))
"""A conversation whose parts carry pydantic-ai's provider records, as its `VercelAIAdapter` stored it
(`fixtures/vercel_ai/generate_pydantic_ai_details.py`)."""

_KEPT = ('id', 'provider_name', 'provider_details', 'signature', 'outcome', 'retry', 'tool_kind')


def records(messages: list[ModelMessage]) -> list[Any]:
    """Each part's kind and the provider records pydantic-ai keeps on it (a missing key and `null` alike, and a
    success, pydantic-ai's default outcome, alike with none)."""
    dumped = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    return [
        (
            part['part_kind'],
            part.get('tool_call_id'),
            {key: part.get(key) for key in _KEPT if part.get(key) not in (None, 'success')},
        )
        for message in dumped
        for part in message['parts']
    ]


def test_pydantic_ais_vercel_history_keeps_call_ids_provider_details_and_retry_records() -> None:
    stored = ModelMessagesTypeAdapter.validate_python(DETAILS['history'])
    loaded = vercel_ai.load_messages(DETAILS['ui_messages'])
    assert records(loaded) == records(stored)
    # The records are there to be kept: a call's provider item id and details, a retry's attempt counts.
    kept = {(kind, call_id): found for kind, call_id, found in records(loaded) if call_id}
    assert kept['tool-call', 'call_paris'] == {
        'id': 'fc_paris',
        'provider_name': 'openai',
        'provider_details': {'status': 'completed'},
    }
    assert kept['tool-return', 'call_atlantis'] == {  # a retry, stored as pydantic-ai stores one
        'outcome': 'retried',
        'retry': {'cause': 'model_retry', 'attempt': 2, 'max_retries': 3},
    }
    assert kept['builtin-tool-call', 'ws_1'] == {
        'id': 'ws_item_1',
        'provider_name': 'openai',
        'provider_details': {'action': 'search'},
    }
    assert kept['builtin-tool-return', 'ws_1'] == {'provider_name': 'openai', 'provider_details': {'sources': 3}}
    [feedback] = feedback_of(loaded)
    assert feedback.model_dump(mode='json')['retry'] == {'cause': 'model_retry', 'attempt': 1, 'max_retries': 2}
    # Saved again by pydantic-ai's own type adapter, the history is the one it stored, field for field.
    from pydantic_ai import messages as pai

    again = pai.ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(loaded, mode='json'))
    original = pai.ModelMessagesTypeAdapter.validate_python(DETAILS['history'])
    assert [type(p).__name__ for m in again for p in m.parts] == [type(p).__name__ for m in original for p in m.parts]
    calls = [p for m in again for p in m.parts if isinstance(p, pai.ToolCallPart | pai.NativeToolCallPart)]
    assert [(c.id, c.provider_details) for c in calls] == [
        ('fc_paris', {'status': 'completed'}),
        ('fc_atlantis', None),
        ('ws_item_1', {'action': 'search'}),
    ]


def test_a_pydantic_ai_record_on_a_signed_part_makes_it_verify_as_nothing() -> None:
    # A client copies uibridge's signed parts and adds pydantic-ai records, hoping the extra keys a record gives (a
    # provider item id, provider details: they reach the provider) ride on parts that still verify.
    keyring = Keyring(['server key'])
    signed = [m.model_dump(mode='json') for m in vercel_ai.dump_messages(history(), keyring=keyring)]
    forged = copy.deepcopy(signed)
    for message in forged:
        for part in message['parts']:
            for key in ('providerMetadata', 'callProviderMetadata'):
                if key in part or (part['type'].startswith('tool-') and key == 'callProviderMetadata'):
                    part.setdefault(key, {})['pydantic_ai'] = {'id': 'FORGED', 'provider_details': {'FORGED': True}}
    claims = SignatureClaims()
    loaded = vercel_ai.load_messages(forged, claims=claims)
    assert 'FORGED' in json.dumps(ModelMessagesTypeAdapter.dump_python(loaded, mode='json'))  # read as pydantic-ai's
    verified = verify_history(loaded, claims, keyring)
    assert 'FORGED' not in json.dumps(ModelMessagesTypeAdapter.dump_python(verified.messages, mode='json'))
    assert {type(p).__name__ for m in verified.messages for p in m.parts} <= {'SystemPromptPart', 'UserPromptPart'}
    # Untouched, the same history verifies whole.
    claims = SignatureClaims()
    assert verify_history(vercel_ai.load_messages(signed, claims=claims), claims, keyring).dropped == {}
