"""Whatever a client posts, parsing and loading either succeed or raise `InputError` (a 4xx), never anything else."""

from __future__ import annotations

import json
import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vercel_fuzz_support import (
    any_part,
    assert_loads_verifies_and_round_trips,
    json_values,
    plausible_part,
)

from uibridge.adapters.vercel_ai import dump_messages, parse_request
from uibridge.core.errors import InputError
from uibridge.core.provenance import default_keyring
from uibridge.core.verification import verify_history

_message = st.fixed_dictionaries(
    {
        'id': st.text(max_size=3),
        'role': st.sampled_from(['system', 'user', 'assistant']),
        'parts': st.lists(any_part(), max_size=4),
    },
    optional={'metadata': json_values},
)
_body = st.fixed_dictionaries(
    {'id': st.text(max_size=3), 'messages': st.lists(_message | json_values, min_size=1, max_size=4)},
    optional={
        'trigger': st.sampled_from(['submit-message', 'regenerate-message', 'x']),
        'messageId': st.text(max_size=2) | json_values,
    },
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_body | json_values)
def test_any_body_is_parsed_or_refused_with_an_input_error(body: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            run_input = parse_request(json.dumps(body)).run_input()
            history = run_input.history
            # Whatever a client claims, checking it is a verdict or a 4xx (two calls sharing an id).
            verify_history(history, run_input.claims, default_keyring())
        except InputError as e:
            assert len(e.message) <= 300
            return
        # What loaded is a history uibridge can write back out.
        dump_messages(history)


_assistant_or_prompt = st.fixed_dictionaries(
    {
        'id': st.text(max_size=2),
        'role': st.sampled_from(['system', 'user', 'assistant']),
        'parts': st.lists(plausible_part(), min_size=1, max_size=6),
    }
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_assistant_or_prompt, min_size=1, max_size=4))
def test_whatever_loads_round_trips(messages: list[dict[str, Any]]) -> None:
    assert_loads_verifies_and_round_trips(messages)
