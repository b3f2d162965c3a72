"""Fuzzing this round's carriers as a client can post them: provider-executed tool parts, `data-state` parts,
sources with `uibridge` metadata and message metadata with a `uibridge` key, their metadata replaced by arbitrary
JSON. Loading either succeeds or raises `InputError`; what loads verifies (a verdict, never a crash), dumps and
loads again as itself."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vercel_fuzz_support import assert_loads_verifies_and_round_trips, without_timestamps

from uibridge import ModelResponse
from uibridge.adapters.vercel_ai import dump_messages, load_messages

_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-3, max_value=5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_KEYS = [
    'text', 'citation', 'anchor', 'source', 'position', 'provider_name', 'timestamp', 'result', 'args', 'sig',
    'response', 'steps', 'usage', 'uibridge_state', 'id',
]  # fmt: skip
_uibridge = st.dictionaries(st.sampled_from(_KEYS), _json, max_size=4)

_TEMPLATES: list[dict[str, Any]] = [
    {'type': 'text', 'text': 'hi'},
    {'type': 'step-start'},
    {'type': 'data-state', 'id': 'state', 'data': {'a': 1}},
    {'type': 'source-url', 'sourceId': 's', 'url': 'https://e.com', 'providerMetadata': {'uibridge': {}}},
    {'type': 'source-document', 'sourceId': 'd', 'mediaType': 'x', 'title': 't', 'providerMetadata': {'uibridge': {}}},
    {'type': 'tool-x', 'toolCallId': 'c', 'state': 'input-available', 'input': {}},
    *[
        {'type': kind, 'toolCallId': 'c', 'state': state, 'input': {'q': 1}, 'providerExecuted': True, **extra}
        for kind in ('tool-web', 'dynamic-tool')
        for state, extra in [
            ('input-available', {}),
            ('output-available', {'output': [1]}),
            ('output-error', {'errorText': 'e'}),
            ('approval-requested', {'approval': {'id': 'a'}}),
            ('output-denied', {'approval': {'id': 'a', 'approved': False}}),
        ]
    ],
]


@st.composite
def _part(draw: st.DrawFn) -> dict[str, Any]:
    part = json.loads(json.dumps(draw(st.sampled_from(_TEMPLATES))))
    if part['type'] == 'dynamic-tool':
        part['toolName'] = 'web'
    for key in draw(
        st.lists(
            st.sampled_from(['providerMetadata', 'callProviderMetadata', 'resultProviderMetadata', 'data']), max_size=2
        )
    ):
        part[key] = draw(_json) if key == 'data' else {'uibridge': draw(_uibridge)}
    return part


_message = st.fixed_dictionaries(
    {
        'id': st.text(max_size=2),
        'role': st.sampled_from(['user', 'assistant', 'assistant']),
        'parts': st.lists(_part(), min_size=1, max_size=6),
    },
    optional={
        'metadata': _json
        | st.fixed_dictionaries(
            {
                'uibridge': _uibridge
                | st.fixed_dictionaries(
                    {'steps': st.dictionaries(st.sampled_from(['0', '1', '7', 'x']), _json | _uibridge, max_size=3)}
                )
            }
        )
    },
)


@settings(suppress_health_check=[HealthCheck.too_slow])  # examples and deadline: the profile's (tests/conftest.py)
@given(st.lists(_message, min_size=1, max_size=3))
def test_carriers_load_verify_and_round_trip_or_refuse(messages: list[dict[str, Any]]) -> None:
    assert_loads_verifies_and_round_trips(messages)


@pytest.mark.parametrize(
    'entry', [{'usage': {}}, {'model_name': 'gpt-x'}, {'provider_name': ''}, {'finish_reason': 'stop', 'usage': {}}]
)
def test_a_step_entry_a_dump_would_not_write_loads_as_nothing(entry: dict[str, Any]) -> None:
    # A dump writes a step entry only for a step with usage, a response id or details; the rest of a step's
    # fields ride on its first part. An entry with none of those is not read, so what loads dumps as it was.
    prompt = {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}
    answer = {
        'id': 'a',
        'role': 'assistant',
        'parts': [{'type': 'text', 'text': 'hi'}],
        'metadata': {'uibridge': {'steps': {'0': entry}}},
    }
    history = load_messages([prompt, answer])
    response = history[1]
    assert isinstance(response, ModelResponse)
    assert (response.usage, response.model_name, response.provider_name, response.finish_reason) == (None,) * 4
    back = load_messages([m.model_dump(mode='json') for m in dump_messages(history)])
    assert without_timestamps(back) == without_timestamps(history)
