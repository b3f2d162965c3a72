"""Keyring: signatures over every field of the neutral content, in the form the model reads it: the argument text
exactly as written, JSON values as their exact text (`exact_json`), ids and timestamps."""

from __future__ import annotations

import json
import logging
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uibridge import (
    BinaryContent,
    FilePart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from uibridge.core import provenance
from uibridge.core.exact_json import carried_value, carry_exact, exact_text
from uibridge.core.provenance import Keyring, approval_matches, canonical_json, default_keyring

KEYRING = Keyring('secret')


def through_javascript(value: Any, *, reverse: bool = False) -> Any:
    """What a browser's JSON round trip gives back, read again by Python's `json`: integer-like keys moved first
    (JavaScript orders array-index keys before the others), one number type; with `reverse`, the other keys
    reversed (a client that rebuilds its objects: a forgery now, since the keys' order is text the model reads)."""

    def is_index(key: str) -> bool:
        return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1

    def js_number(x: Any) -> Any:
        if isinstance(x, bool) or x is None or isinstance(x, str):
            return x
        if isinstance(x, int | float):
            f = float(x) if not (isinstance(x, int) and abs(x) > 2**1023) else math.inf
            if not math.isfinite(f):
                return None
            return int(f) if f.is_integer() and abs(f) < 1e21 else f
        if isinstance(x, dict):
            items = [(str(k), js_number(v)) for k, v in x.items()]  # pyright: ignore[reportUnknownVariableType]
            index = [(int(k), k, v) for k, v in items if is_index(k)]
            rest = [(k, v) for k, v in items if not is_index(k)]
            return {**{k: v for _, k, v in sorted(index)}, **dict(reversed(rest) if reverse else rest)}
        return [js_number(v) for v in x]  # pyright: ignore[reportUnknownVariableType]

    return json.loads(json.dumps(js_number(value), ensure_ascii=True))


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 2**33).map(str), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values)
def test_the_canonical_form_survives_a_browser_round_trip(value: Any) -> None:
    assert canonical_json(through_javascript(value)) == canonical_json(value)


@given(args=st.dictionaries(st.text(max_size=4), json_values, max_size=4), content=json_values)
def test_a_server_part_verifies_after_a_browser_round_trip_of_what_an_adapter_carries(
    args: dict[str, Any], content: Any
) -> None:
    # An adapter sends a JSON value as a JavaScript object and, where JavaScript would give it back as other
    # text, its exact text beside it (`carry_exact`): read back, the part verifies. The neutral value as
    # JavaScript alone gives it back is another text, and verifies only when it is the same text.
    call = ToolCallPart(tool_name='t', args=args, tool_call_id='c1')
    result = ToolReturnPart(tool_name='t', content=content, tool_call_id='c1')
    call_fields = json.loads(json.dumps(carry_exact({}, 'args', args)))
    result_fields = json.loads(json.dumps(carry_exact({}, 'content', content)))
    echoed_call = call.model_copy(update={'args': carried_value(call_fields, 'args', through_javascript(args))})
    echoed_result = result.model_copy(
        update={'content': carried_value(result_fields, 'content', through_javascript(content))}
    )
    assert KEYRING.verify_part(echoed_result, KEYRING.sign_part(result))
    assert KEYRING.verify_part(echoed_call, KEYRING.sign_part(call))
    bare = call.model_copy(update={'args': through_javascript(args)})
    assert KEYRING.verify_part(bare, KEYRING.sign_part(call)) == (exact_text(bare.args) == exact_text(args))
    rebuilt = result.model_copy(update={'content': through_javascript(content, reverse=True)})
    assert KEYRING.verify_part(rebuilt, KEYRING.sign_part(result)) == (
        exact_text(rebuilt.content) == exact_text(content)
    )


SIGNED_PARTS: list[Any] = [
    TextPart(content='Hello'),
    TextPart(content='Hello', id='msg_1'),
    ThinkingPart(content='hmm', signature='sig-1'),
    ThinkingPart(content='hmm', signature='sig-1', id='rs_1', provider_name='openai'),
    ToolCallPart(tool_name='delete_file', args={'path': 'a.txt', 'n': 1}, tool_call_id='c1'),
    ToolReturnPart(tool_name='get_weather', content={'temp': 20, 'unit': 'C'}, tool_call_id='c1'),
    ToolReturnPart(tool_name='get_weather', content='denied', tool_call_id='c1', outcome='denied'),
    ToolReturnPart(tool_name='lookup', content={'n': 12345678901234567891}, tool_call_id='c1', metadata={'a': 1.0}),
    RetryPromptPart(content='bad city', tool_name='get_weather', tool_call_id='c1'),
    RetryPromptPart(content=[{'type': 'missing', 'loc': ('a',), 'msg': 'Field required', 'input': {}}], tool_name='t'),
    RetryFeedbackPart(content='must be positive', cause='model_retry'),
    FilePart(content=BinaryContent(data=b'\x89PNG', media_type='image/png')),
    FilePart(content=BinaryContent(data=b'\x89PNG', media_type='image/png'), id='file_1'),
]


def _edits(part: Any) -> list[Any]:
    """Every edit of what the model is shown of `part`, one field at a time."""
    edits: list[dict[str, Any]] = []
    if isinstance(part, TextPart | ThinkingPart):
        edits.append({'content': part.content + '!'})
    if isinstance(part, TextPart | FilePart):
        edits += [{'id': 'msg_chosen_by_the_client'}, {'id': None}] if part.id else [{'id': 'msg_chosen'}]
    if isinstance(part, ThinkingPart):
        # `id` and `provider_name` are not shown to the model, but a provider acts on them (the OpenAI input
        # sends `id` as its reasoning item's): a client may neither set nor change them.
        edits += [{'signature': 'sig-2'}, {'id': 'rs_someone_else'}, {'provider_name': 'anthropic'}]
        edits += [{'id': None, 'provider_name': None}] if part.id else []
    if isinstance(part, ToolCallPart):
        edits += [{'tool_name': 'format_disk'}, {'tool_call_id': 'c2'}, {'args': {**part.args_as_dict(), 'path': '/'}}]
        text = part.args_as_json_str()
        edits += [
            {'args': text[:-1] + ',"path":"/etc/passwd","path":"a.txt"}'},  # the same dict, other text
            {'args': dict(reversed(part.args_as_dict().items()))},
            {'args': text.replace(':', ': ')},
        ]
    if isinstance(part, ToolReturnPart):
        edits += [{'content': 'x'}, {'tool_name': 'x'}, {'tool_call_id': 'c2'}, {'outcome': 'success'}]
        edits += [{'metadata': {'role': 'admin'}}, {'timestamp': datetime(1999, 1, 1, tzinfo=UTC)}]
        if isinstance(part.content, dict):
            edits.append({'content': {k: v + 128 if isinstance(v, int) else v for k, v in part.content.items()}})
    if isinstance(part, RetryPromptPart | RetryFeedbackPart):
        edits.append({'timestamp': datetime(1999, 1, 1, tzinfo=UTC)})
    if isinstance(part, RetryPromptPart):
        edits += [{'content': 'other'}, {'tool_name': 'x'}, {'tool_call_id': 'c9'}]
    if isinstance(part, RetryFeedbackPart):
        edits += [{'content': 'other'}, {'cause': 'no_output'}]
    if isinstance(part, FilePart):
        edits.append({'content': BinaryContent(data=b'\x89PNH', media_type='image/png')})
    return [part.model_copy(update=edit) for edit in edits if edit != {'outcome': part.__dict__.get('outcome')}]


@pytest.mark.parametrize('part', SIGNED_PARTS, ids=lambda p: p.part_kind)
def test_each_server_part_verifies_as_signed_and_no_edit_of_it_does(part: Any) -> None:
    signature = KEYRING.sign_part(part)
    assert KEYRING.verify_part(part, signature)
    assert not Keyring('other').verify_part(part, signature)
    for edited in _edits(part):
        assert not KEYRING.verify_part(edited, signature), edited


@given(st.text(min_size=1, max_size=20), st.data())
def test_any_edit_of_a_text_or_a_tool_result_makes_it_fail(text: str, data: st.DataObject) -> None:
    position = data.draw(st.integers(0, len(text) - 1))
    replacement = data.draw(st.characters().filter(lambda c: c != text[position]))
    edited = text[:position] + replacement + text[position + 1 :]
    for make in (
        lambda s: TextPart(content=s),
        lambda s: ToolReturnPart(tool_name='t', content={'v': s}, tool_call_id='c'),
        lambda s: ToolCallPart(tool_name='t', args={'q': s}, tool_call_id='c'),
        lambda s: ToolCallPart(tool_name=s, args={}, tool_call_id='c'),
    ):
        assert not KEYRING.verify_part(make(edited), KEYRING.sign_part(make(text)))


def test_fields_a_model_does_not_read_are_covered_too() -> None:
    # The agent sees them, and a provider may act on them (a text's id is an OpenAI Responses item id).
    part = ToolReturnPart(tool_name='t', content='ok', tool_call_id='c', metadata={'a': 1})
    signature = KEYRING.sign_part(part)
    assert not KEYRING.verify_part(part.model_copy(update={'metadata': None}), signature)
    assert not KEYRING.verify_part(
        TextPart(content='x', id='other'), KEYRING.sign_part(TextPart(content='x', id='one'))
    )
    # An id-less text signs as it always has.
    assert KEYRING.sign_part(TextPart(content='x')) == KEYRING.sign('text', b'"x"')


def test_the_client_mark_is_part_of_the_signature() -> None:
    call = ToolCallPart(tool_name='get_local_time', args={}, tool_call_id='c')
    assert not KEYRING.verify_part(call, KEYRING.sign_part(call), client=True)
    assert not KEYRING.verify_part(call, KEYRING.sign_part(call, client=True))
    assert KEYRING.verify_part(call, KEYRING.sign_part(call, client=True), client=True)


def test_keys_rotate_the_first_signs_and_all_verify() -> None:
    part = TextPart(content='hi')
    old = Keyring('old').sign_part(part)
    rotated = Keyring(['new', 'old'])
    assert rotated.verify_part(part, old)
    assert rotated.sign_part(part) == Keyring('new').sign_part(part)
    assert not Keyring('new').verify_part(part, old)


@pytest.mark.parametrize('garbage', [None, 1, '', 'v1.', 'v2.abc', 'v1.' + 'A' * 500, '\ud800', b'v1.x'])
def test_garbage_signatures_never_verify_or_raise(garbage: Any) -> None:
    assert not KEYRING.verify_part(TextPart(content='hi'), garbage)
    assert not KEYRING.verify_approval(garbage, 't', ToolCallPart(tool_name='t', tool_call_id='c'))


def test_an_approval_id_names_one_call_in_one_thread() -> None:
    call = ToolCallPart(tool_name='delete_file', args={'path': 'a.txt', 'n': 1.0}, tool_call_id='c1')
    approval_id = KEYRING.approval_id('thread-1', call)
    assert approval_id.startswith('apr_')
    assert KEYRING.verify_approval(approval_id, 'thread-1', call)
    assert KEYRING.verify_approval(
        approval_id, 'thread-1', call.model_copy(update={'args': '{"path":"a.txt","n":1.0}'})
    )
    assert not KEYRING.verify_approval(approval_id, 'thread-2', call)
    for edit in (
        {'args': {'path': '/etc/passwd', 'n': 1}},
        {'args': {'path': 'a.txt', 'n': 1}},  # the number as JavaScript holds it: other text
        {'args': {'n': 1.0, 'path': 'a.txt'}},
        {'tool_name': 'x'},
        {'tool_call_id': 'c2'},
    ):
        assert not KEYRING.verify_approval(approval_id, 'thread-1', call.model_copy(update=edit))
    assert not Keyring('other').verify_approval(approval_id, 'thread-1', call)
    assert approval_matches(approval_id, Keyring(['new', 'secret']).approval_ids('thread-1', call))


def test_an_integer_past_2_53_is_signed_as_written() -> None:
    account = 12345678901234567891
    call = ToolCallPart(tool_name='transfer', args={'account': account}, tool_call_id='c1')
    signature, approval_id = KEYRING.sign_part(call), KEYRING.approval_id('t', call)
    for near in (account - 1, account + 128, float(account), 12345678901234567000):
        edited = call.model_copy(update={'args': {'account': near}})
        assert not KEYRING.verify_part(edited, signature)
        assert not KEYRING.verify_approval(approval_id, 't', edited)


def test_args_sign_as_the_text_the_model_reads() -> None:
    as_dict = ToolCallPart(tool_name='t', args={'b': 2, 'a': [1, {'c': None}]}, tool_call_id='c')
    as_its_text = as_dict.model_copy(update={'args': '{"b":2,"a":[1,{"c":null}]}'})
    spaced = as_dict.model_copy(update={'args': '{"b": 2, "a": [1, {"c": null}]}'})
    assert KEYRING.sign_part(as_dict) == KEYRING.sign_part(as_its_text)
    assert KEYRING.approval_id('t', as_dict) == KEYRING.approval_id('t', as_its_text)
    assert KEYRING.sign_part(spaced) != KEYRING.sign_part(as_dict)
    for forged in ('{"b":2,"a":[1,{"c":null}],"b":2}', '{"b":2,"a":[1,{"c":NaN}]}', '{"a":[1,{"c":null}],"b":2}'):
        assert not KEYRING.verify_part(as_dict.model_copy(update={'args': forged}), KEYRING.sign_part(as_dict))


def test_the_state_is_signed_as_its_exact_text() -> None:
    state = {'count': 1, 'big': 2**60 + 1}
    signature = KEYRING.sign_state(state)
    assert KEYRING.verify_state({'count': 1, 'big': 2**60 + 1}, signature)
    for forged in ({'count': 1, 'big': 2**60}, {'big': 2**60 + 1, 'count': 1}, {'count': 1.0, 'big': 2**60 + 1}, None):
        assert not KEYRING.verify_state(forged, signature)
    assert not KEYRING.verify_state(state, KEYRING.sign_part(TextPart(content='x')))


def test_the_default_keyring_reads_the_environment_or_warns_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    part = TextPart(content='hi')
    monkeypatch.setattr(provenance, '_default', None)
    monkeypatch.setenv('UIBRIDGE_SECRET', 'new, old')
    assert default_keyring().sign_part(part) == Keyring('new').sign_part(part)
    assert default_keyring().verify_part(part, Keyring('old').sign_part(part))

    monkeypatch.setattr(provenance, '_default', None)
    monkeypatch.delenv('UIBRIDGE_SECRET')
    with caplog.at_level(logging.WARNING, logger='uibridge'):
        first = default_keyring()
        assert default_keyring() is first
    assert caplog.text.count('UIBRIDGE_SECRET') >= 1 and len(caplog.records) == 1
    assert not first.verify_part(part, Keyring('new').sign_part(part))


def test_empty_secrets_are_refused() -> None:
    with pytest.raises(ValueError):
        Keyring('')
    with pytest.raises(ValueError):
        Keyring([])
