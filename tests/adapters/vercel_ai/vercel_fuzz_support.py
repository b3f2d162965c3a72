"""The fuzzing the Vercel adapter's tests share: UI message parts of any shape (`any_part`), valid parts with
their uibridge metadata forged (`plausible_part`), and the check that whatever loads, verifies and round-trips."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from hypothesis import strategies as st
from vercel_ai_cases import model_view

from uibridge import ModelMessage
from uibridge.adapters.vercel_ai import dump_messages, load_messages
from uibridge.core.errors import InputError
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import SignatureClaims, verify_history

_MARKER_KEYS = [
    'timestamp',
    'retry_feedback',
    'response',
    'request',
    'args',
    'retry',
    'index',
    'result',
    'list',
    'empty',
    'kind',
    'media_type',
]
"""Keys uibridge writes in its `uibridge` provider metadata, which the strategies fill with arbitrary JSON."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_types = st.sampled_from(
    [
        'text',
        'reasoning',
        'file',
        'step-start',
        'tool-x',
        'dynamic-tool',
        'data-x',
        'data-retry-feedback',
        'source-url',
        'source-document',
        'custom',
        'reasoning-file',
        'steering-message',
        'mystery',
    ]
)
_states = st.sampled_from(
    [
        'input-streaming',
        'input-available',
        'approval-requested',
        'approval-responded',
        'output-available',
        'output-error',
        'output-denied',
    ]
)
_values = st.sampled_from(['x', 'data:image/png;base64,AAAA', 'data:,x', 'https://e.com/a.png', 'image/png', ''])


@st.composite
def any_part(draw: st.DrawFn) -> dict[str, Any]:
    part: dict[str, Any] = {'type': draw(_types)}
    for key in draw(
        st.lists(
            st.sampled_from(
                [
                    'text',
                    'url',
                    'mediaType',
                    'toolCallId',
                    'toolName',
                    'state',
                    'input',
                    'output',
                    'errorText',
                    'approval',
                    'data',
                    'providerMetadata',
                    'callProviderMetadata',
                    'resultProviderMetadata',
                    'id',
                    'sourceId',
                    'title',
                    'kind',
                    'parts',
                ]
            ),
            max_size=8,
        )
    ):
        if key == 'state':
            part[key] = draw(_states)
        elif key == 'approval':
            part[key] = draw(
                st.fixed_dictionaries(
                    {'id': st.text(max_size=3)}, optional={'approved': st.booleans(), 'reason': st.text(max_size=3)}
                )
            )
        elif key.endswith('rovider' + 'Metadata') or key.endswith('ProviderMetadata'):
            part[key] = {
                'uibridge': draw(
                    st.dictionaries(
                        st.sampled_from([*_MARKER_KEYS, 'sig', 'client', 'approval']),
                        json_values,
                        max_size=3,
                    )
                )
            }
        elif key in ('url', 'mediaType'):
            part[key] = draw(_values)
        else:
            part[key] = draw(json_values | st.text(max_size=5))
    return part


_TEMPLATES: list[dict[str, Any]] = [
    {'type': 'text', 'text': 'hi'},
    {'type': 'reasoning', 'text': 'hm'},
    {'type': 'file', 'mediaType': 'image/png', 'url': 'data:image/png;base64,AAAA'},
    {'type': 'file', 'mediaType': 'image', 'url': 'https://e.com/a'},
    {'type': 'step-start'},
    {
        'type': 'data-retry-feedback',
        'data': {
            'part_kind': 'retry-feedback',
            'cause': 'no_output',
            'content': '',
            'timestamp': '2026-01-01T00:00:00Z',
        },
    },
    {'type': 'data-x', 'data': None},
    {'type': 'source-url', 'sourceId': 's', 'url': 'https://e.com'},
    {'type': 'steering-message', 'id': 's', 'parts': [{'type': 'text', 'text': 'go'}]},
    *[
        {'type': 'tool-x', 'toolCallId': 'c', 'state': state, 'input': {}, **extra}
        for state, extra in [
            ('input-streaming', {}),
            ('input-available', {}),
            ('approval-requested', {'approval': {'id': 'a'}}),
            ('approval-responded', {'approval': {'id': 'a', 'approved': True}}),
            ('output-available', {'output': 1}),
            ('output-error', {'errorText': 'e'}),
            ('output-denied', {'approval': {'id': 'a', 'approved': False}}),
        ]
    ],
]


@st.composite
def plausible_part(draw: st.DrawFn) -> dict[str, Any]:
    """A valid part, then some of its uibridge metadata (or data) replaced by arbitrary JSON: forged markers,
    wrong types, half-written fields."""
    part = json.loads(json.dumps(draw(st.sampled_from(_TEMPLATES))))
    key = draw(
        st.sampled_from(
            ['providerMetadata', 'callProviderMetadata', 'resultProviderMetadata', 'data', 'input', 'output']
        )
    )
    if key in part or key.endswith('Metadata'):
        value = draw(
            st.dictionaries(
                st.sampled_from([*_MARKER_KEYS, 'id', 'signature', 'content', 'outcome']),
                json_values,
                max_size=4,
            )
        )
        part[key] = {'uibridge': value} if key.endswith('Metadata') else value
    return part


def without_timestamps(messages: list[ModelMessage]) -> Any:
    # A message a client wrote carries no timestamps, so each load stamps it anew.
    return json.loads(re.sub(r'"timestamp": "[^"]*"', '"timestamp": null', json.dumps(model_view(messages))))


def assert_loads_verifies_and_round_trips(messages: list[dict[str, Any]]) -> None:
    """`messages` load (else raise `InputError`), verify (a verdict, not a crash) and dump and load as
    themselves, once their tool call ids are made unique (as a history's are)."""
    calls = 0
    for message in messages:
        for part in message['parts']:
            if 'toolCallId' in part:
                calls += 1
                part['toolCallId'] = f'call_{calls}'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        claims = SignatureClaims()
        try:
            history = load_messages(messages, claims=claims)
        except InputError:
            return
        verify_history(history, claims, default_keyring())
        back = load_messages([m.model_dump(mode='json') for m in dump_messages(history)])
    assert without_timestamps(back) == without_timestamps(history)
