"""A finish reason the parts do not show (cut short, filtered, failed) survives dump -> client -> load ->
`verify_history` in both protocols, signed over its response's parts; an edited, moved or unsigned one is reset.
(Live, through the real clients: tests/e2e/test_next_turn.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from uibridge import ModelMessage, ModelRequest, ModelResponse, TextPart, ThinkingPart, UserPromptPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core import events as ev
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import SignatureClaims, verify_history


def _history() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content='Tell me everything.')]),
        ModelResponse(
            parts=[
                ThinkingPart(content='A lot to say.', signature='sig-1', provider_name='anthropic'),
                TextPart(content='Everything begins wi'),
            ],
            finish_reason='length',
        ),
        ModelRequest(parts=[UserPromptPart(content='Go on.')]),
        ModelResponse(parts=[TextPart(content='I cannot say that.')], finish_reason='content_filter'),
        ModelRequest(parts=[UserPromptPart(content='Fine.')]),
        ModelResponse(parts=[TextPart(content='Bye.')], finish_reason='stop'),
    ]


def _dumped(protocol: str, history: list[ModelMessage]) -> list[dict[str, Any]]:
    if protocol == 'vercel':
        return [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in vercel_ai.dump_messages(history)]
    return [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ag_ui.dump_messages(history)]


def _verified(protocol: str, held: list[dict[str, Any]]) -> tuple[list[str | None], dict[str, int]]:
    claims = SignatureClaims()
    load: Callable[..., list[ModelMessage]] = vercel_ai.load_messages if protocol == 'vercel' else ag_ui.load_messages
    result = verify_history(load(held, claims=claims), claims, default_keyring())
    reasons = [m.finish_reason for m in result.messages if isinstance(m, ModelResponse)]
    return reasons, result.dropped


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_a_signed_finish_reason_comes_back(protocol: str) -> None:
    reasons, dropped = _verified(protocol, _dumped(protocol, _history()))
    assert reasons == ['length', 'content_filter', None]  # `stop` is what the parts say: reset as before
    assert dropped == {}


def _edit(protocol: str, held: list[dict[str, Any]], reason: str) -> None:
    """Rewrite the first response's finish reason where the protocol carries it, leaving its signature."""
    text = json.dumps(held)
    if protocol == 'vercel':
        text = text.replace('"finish_reason": "length"', f'"finish_reason": "{reason}"')
    else:
        text = text.replace('\\"finish_reason\\":\\"length\\"', f'\\"finish_reason\\":\\"{reason}\\"')
        text = text.replace('"finish_reason": "length"', f'"finish_reason": "{reason}"')
    held[:] = json.loads(text)


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_an_edited_or_moved_finish_reason_is_reset(protocol: str) -> None:
    held = _dumped(protocol, _history())
    _edit(protocol, held, 'error')
    reasons, dropped = _verified(protocol, held)
    assert reasons == [None, 'content_filter', None]
    assert dropped == {'finish reason': 1}
    # A client that cuts a part from the response keeps the part's loss and loses the reason with it.
    held = _dumped(protocol, _history())
    text = json.dumps(held).replace('Everything begins wi', 'Everything begins with a lie')
    reasons, dropped = _verified(protocol, json.loads(text))
    assert reasons == [None, 'content_filter', None]
    assert dropped == {'text': 1, 'finish reason': 1}


def test_the_agui_stream_sets_the_marker_on_the_response_s_first_message() -> None:
    """The reason comes at the response's end, after its first message's events: `REASONING_ENCRYPTED_VALUE`
    (subtype `message`) sets it, with the thinking marker that message already holds."""
    events: list[ev.AgentEvent] = [
        ev.ResponseStart(),
        ev.PartStart(0, ThinkingPart(content='', provider_name='anthropic')),
        ev.PartDelta(0, 'A lot to say.'),
        ev.PartEnd(0, signature='sig-1'),
        ev.PartStart(1, TextPart(content='')),
        ev.PartDelta(1, 'Everything begins wi'),
        ev.PartEnd(1),
        ev.ResponseInfo(finish_reason='length'),
    ]
    body = ag_ui.encode_events(events, thread_id='t', run_id='r').decode()
    frames = [json.loads(line[6:]) for line in body.split('\n\n') if line.startswith('data: ')]
    values = [f for f in frames if f['type'] == 'REASONING_ENCRYPTED_VALUE']
    thinking, finish = values
    assert finish['entityId'] == thinking['entityId']  # the response's first message, the reasoning one
    marker = json.loads(finish['encryptedValue'])['uibridge']
    assert marker['thinking'] == json.loads(thinking['encryptedValue'])['uibridge']['thinking']
    assert marker['finish']['finish_reason'] == 'length'
    assert marker['finish']['sig'] == default_keyring().sign_finish(
        ModelResponse(parts=_history()[1].parts, finish_reason='length')
    )
