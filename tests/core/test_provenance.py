"""Keyring: signatures over the neutral content, that survive a browser's JSON and nothing else."""

from __future__ import annotations

import json
import logging
import math
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
from uibridge.core.provenance import Keyring, approval_matches, canonical_json, default_keyring

KEYRING = Keyring('secret')


def through_javascript(value: Any) -> Any:
    """What a browser's JSON round trip gives back, read again by Python's `json`: integer-like keys moved first
    (JavaScript orders array-index keys before the others) and the rest reversed (a client that rebuilds its
    objects), one number type."""

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
            return {**{k: v for _, k, v in sorted(index)}, **dict(reversed(rest))}
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
def test_a_server_part_still_verifies_after_the_client_re_serializes_it(args: dict[str, Any], content: Any) -> None:
    call = ToolCallPart(tool_name='t', args=args, tool_call_id='c1')
    result = ToolReturnPart(tool_name='t', content=content, tool_call_id='c1')
    echoed_call = call.model_copy(update={'args': through_javascript(args)})
    echoed_result = result.model_copy(update={'content': through_javascript(content)})
    assert KEYRING.verify_part(echoed_call, KEYRING.sign_part(call))
    assert KEYRING.verify_part(echoed_result, KEYRING.sign_part(result))


SIGNED_PARTS: list[Any] = [
    TextPart(content='Hello'),
    ThinkingPart(content='hmm', signature='sig-1'),
    ThinkingPart(content='hmm', signature='sig-1', id='rs_1', provider_name='openai'),
    ToolCallPart(tool_name='delete_file', args={'path': 'a.txt', 'n': 1}, tool_call_id='c1'),
    ToolReturnPart(tool_name='get_weather', content={'temp': 20, 'unit': 'C'}, tool_call_id='c1'),
    ToolReturnPart(tool_name='get_weather', content='denied', tool_call_id='c1', outcome='denied'),
    RetryPromptPart(content='bad city', tool_name='get_weather', tool_call_id='c1'),
    RetryPromptPart(content=[{'type': 'missing', 'loc': ('a',), 'msg': 'Field required', 'input': {}}], tool_name='t'),
    RetryFeedbackPart(content='must be positive', cause='model_retry'),
    FilePart(content=BinaryContent(data=b'\x89PNG', media_type='image/png')),
]


def _edits(part: Any) -> list[Any]:
    """Every edit of what the model is shown of `part`, one field at a time."""
    edits: list[dict[str, Any]] = []
    if isinstance(part, TextPart | ThinkingPart):
        edits.append({'content': part.content + '!'})
    if isinstance(part, ThinkingPart):
        # `id` and `provider_name` are not shown to the model, but a provider acts on them (the OpenAI input
        # sends `id` as its reasoning item's): a client may neither set nor change them.
        edits += [{'signature': 'sig-2'}, {'id': 'rs_someone_else'}, {'provider_name': 'anthropic'}]
        edits += [{'id': None, 'provider_name': None}] if part.id else []
    if isinstance(part, ToolCallPart):
        edits += [{'tool_name': 'format_disk'}, {'tool_call_id': 'c2'}, {'args': {**part.args_as_dict(), 'path': '/'}}]
    if isinstance(part, ToolReturnPart):
        edits += [{'content': 'x'}, {'tool_name': 'x'}, {'tool_call_id': 'c2'}, {'outcome': 'success'}]
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


def test_metadata_the_model_does_not_see_is_not_covered() -> None:
    part = ToolReturnPart(tool_name='t', content='ok', tool_call_id='c', metadata={'a': 1})
    signature = KEYRING.sign_part(part)
    assert KEYRING.verify_part(part.model_copy(update={'metadata': None, 'timestamp': part.timestamp}), signature)
    assert KEYRING.verify_part(TextPart(content='x', id='other'), KEYRING.sign_part(TextPart(content='x', id='one')))


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
    assert KEYRING.verify_approval(approval_id, 'thread-1', call.model_copy(update={'args': {'path': 'a.txt', 'n': 1}}))
    assert not KEYRING.verify_approval(approval_id, 'thread-2', call)
    for edit in ({'args': {'path': '/etc/passwd', 'n': 1}}, {'tool_name': 'x'}, {'tool_call_id': 'c2'}):
        assert not KEYRING.verify_approval(approval_id, 'thread-1', call.model_copy(update=edit))
    assert not Keyring('other').verify_approval(approval_id, 'thread-1', call)
    assert approval_matches(approval_id, Keyring(['new', 'secret']).approval_ids('thread-1', call))


def test_args_as_a_json_string_or_a_dict_sign_the_same() -> None:
    as_dict = ToolCallPart(tool_name='t', args={'b': 2, 'a': [1, {'c': None}]}, tool_call_id='c')
    as_text = as_dict.model_copy(update={'args': '{"b": 2, "a": [1, {"c": null}]}'})
    assert KEYRING.sign_part(as_dict) == KEYRING.sign_part(as_text)
    assert KEYRING.approval_id('t', as_dict) == KEYRING.approval_id('t', as_text)


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
