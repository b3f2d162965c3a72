"""`core.records`: the neutral fields every adapter carries beside its messages, written and read back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from uibridge import ModelResponse, TextPart, ThinkingPart
from uibridge.core.records import read_response_fields, read_thinking_fields, response_fields, thinking_fields

T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def test_response_fields_round_trip() -> None:
    response = ModelResponse(
        parts=[TextPart(content='hi')], timestamp=T0, model_name='m', provider_name='p', finish_reason='length'
    )
    fields = response_fields(response)
    assert fields == {
        'timestamp': '2026-01-02T03:04:05.678000Z',
        'model_name': 'm',
        'provider_name': 'p',
        'finish_reason': 'length',
    }
    assert read_response_fields(fields) == {
        'timestamp': T0,
        'model_name': 'm',
        'provider_name': 'p',
        'finish_reason': 'length',
    }
    assert response_fields(response, finish_reason=False) == {k: v for k, v in fields.items() if k != 'finish_reason'}
    assert response_fields(ModelResponse(parts=[], timestamp=T0)) == {'timestamp': '2026-01-02T03:04:05.678000Z'}


@pytest.mark.parametrize(
    'record',
    [
        {'timestamp': 'garbage', 'model_name': 3, 'provider_name': None, 'finish_reason': 'nope'},
        {'timestamp': 1700000000, 'finish_reason': ['stop']},
        {},
    ],
)
def test_what_uibridge_would_not_write_is_ignored(record: dict[str, Any]) -> None:
    assert read_response_fields(record) == {}


def test_thinking_fields_round_trip() -> None:
    part = ThinkingPart(content='hmm', signature='sig', provider_name='anthropic', id='th1')
    assert thinking_fields(part) == {'signature': 'sig', 'provider_name': 'anthropic'}
    assert thinking_fields(ThinkingPart(content='hmm')) == {}
    assert read_thinking_fields({**thinking_fields(part), 'id': 'th1'}) == {
        'signature': 'sig',
        'provider_name': 'anthropic',
        'id': 'th1',
    }
    assert read_thinking_fields({'signature': 5, 'provider_name': None, 'id': ['x'], 'other': 'y'}) == {}
