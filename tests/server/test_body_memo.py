"""`_body_memo.BodyMemo`: a managed AG-UI body decoded with the messages the principal's last body on the thread had
taken as decoded then, giving what `json_object(..., nesting_checked=False)` gives (the same value, the same
refusals), and decoding only what follows them."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uibridge.adapters.ag_ui import request as request_module
from uibridge.core.client_input import BodyError, json_object
from uibridge.core.diagnostics import collect_warnings
from uibridge.core.errors import InputError
from uibridge.server import _body_memo  # pyright: ignore[reportPrivateUsage]
from uibridge.server._body_memo import BodyMemo  # pyright: ignore[reportPrivateUsage]
from uibridge.server.body import Rejected
from uibridge.server.limits import PART_LISTS, RequestLimits, check_limits, part_lengths

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8,
)
_message = st.fixed_dictionaries({'id': st.text(max_size=6), 'role': st.sampled_from(['user', 'assistant'])}) | _json


def _body(thread: str, messages: list[Any], run: int, *, indent: int | None, state: Any = None) -> bytes:
    body = {'threadId': thread, 'runId': f'r{run}', 'state': state, 'messages': messages, 'tools': []}
    return json.dumps(body, indent=indent).encode()


def _decoded(memo: BodyMemo, body: bytes, principal: str) -> Any:
    try:
        return memo.decode(body, principal)
    except BodyError as error:
        return ('refused', error.fault, error.message)


def _expected(body: bytes) -> Any:
    try:
        return json_object(body, nesting_checked=False)
    except BodyError as error:
        return ('refused', error.fault, error.message)


@settings(max_examples=150, deadline=None)
@given(
    turns=st.lists(st.tuples(st.lists(_message, max_size=3), _json, st.sampled_from([None, 0, 2])), max_size=6),
    cut=st.integers(min_value=0, max_value=30),
)
def test_a_body_decodes_to_what_json_object_gives(turns: list[tuple[list[Any], Any, int | None]], cut: int) -> None:
    memo = BodyMemo()
    held: list[Any] = []
    for run, (added, state, indent) in enumerate(turns):
        held = [*held, *added]
        body = _body('t', held, run, indent=indent, state=state)
        assert _decoded(memo, body, 'p') == _expected(body)
        # The same body cut short, or with a byte changed: refused, or read, as `json_object` does.
        for broken in (body[: len(body) - cut], body.replace(b'"', b"'", 1 + cut % 3), body + b' x'):
            assert _decoded(memo, broken, 'p') == _expected(broken)


def test_only_what_follows_the_last_bodys_messages_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[Any] = []
    scan = _body_memo.scan_value

    def counted(text: str, index: int) -> tuple[Any, int]:
        value, end = scan(text, index)
        scanned.append(value)
        return value, end

    monkeypatch.setattr(_body_memo, 'scan_value', counted)
    memo = BodyMemo()
    held: list[dict[str, Any]] = []
    for turn in range(40):
        held.append({'id': f'u{turn}', 'role': 'user', 'content': f'hello {turn}'})
        body = _body('t', held, turn, indent=None)
        scanned.clear()
        assert memo.decode(body, 'p') == json.loads(body)
        messages = [value for value in scanned if isinstance(value, dict)]
        # The two new ones: every message of the last body is whole here, and another follows its final one.
        assert len(messages) == (1 if turn == 0 else 2), (turn, messages)
        held.append({'id': f'a{turn}', 'role': 'assistant', 'content': f'said {turn}'})
    # Another principal, or another thread, decodes the whole list: nothing of one is taken for another.
    scanned.clear()
    assert memo.decode(body, 'q') == json.loads(body)
    assert len([value for value in scanned if isinstance(value, dict)]) == len(held) - 1
    scanned.clear()
    other = _body('u', held[:-1], 0, indent=None)
    assert memo.decode(other, 'p') == json.loads(other)
    assert len([value for value in scanned if isinstance(value, dict)]) == len(held) - 1


def test_the_memo_is_bounded() -> None:
    memo = BodyMemo(max_chats=2, max_bytes=10_000)
    for thread in ('a', 'b', 'c'):
        memo.decode(_body(thread, [{'id': 'u', 'role': 'user', 'content': 'x' * 100}], 0, indent=None), 'p')
    assert memo.chats() == 2
    memo.decode(_body('d', [{'id': 'u', 'role': 'user', 'content': 'x' * 9_900}], 0, indent=None), 'p')
    assert memo.chats() == 1  # the bytes bound: the others went first
    memo.decode(_body('e', [{'id': 'u', 'role': 'user', 'content': 'x' * 20_000}], 0, indent=None), 'p')
    assert memo.chats() == 1  # an array past the bound alone is not kept


_part = st.fixed_dictionaries({'type': st.just('text'), 'text': st.text(max_size=3)})
_plain = st.fixed_dictionaries(
    {'id': st.text(max_size=4), 'role': st.sampled_from(['user', 'assistant', 'tool'])},
    optional={'content': st.lists(_part, max_size=4) | st.text(max_size=3), 'toolCalls': st.lists(_part, max_size=3)},
)
_odd = st.fixed_dictionaries(
    {'id': st.text(max_size=4) | st.integers(), 'role': st.sampled_from(['user', 'robot'])},
    optional={'content': st.lists(_part, max_size=4)},
)
_any_message = st.one_of(_plain, _plain, _plain, _plain, _odd, _json)  # mostly plain: plain prefixes are common


def _outcome(check: Callable[[], Any]) -> Any:
    try:
        with collect_warnings() as warned:
            return check(), warned
    except Rejected as rejected:
        return ('refused', rejected.status, rejected.error, rejected.path)
    except InputError as error:
        return ('invalid', error.message, error.path)


@settings(max_examples=150, deadline=None)
@given(
    turns=st.lists(st.lists(_any_message, max_size=3), max_size=6),
    cut=st.integers(min_value=0, max_value=8),
    most=st.integers(min_value=1, max_value=4),
    total=st.integers(min_value=1, max_value=12),
)
def test_what_a_reused_prefix_carries_is_what_the_passes_find(
    turns: list[list[Any]], cut: int, most: int, total: int
) -> None:
    """The ids, roles and part counts the memo keeps for the messages it reuses are what the server's passes find in
    them: `parse_unread` and the request limits give the same answers, and the same refusals, with them as without
    (a client that edits its history, `cut`, shares only the messages before the edit)."""
    memo = BodyMemo()
    limits = RequestLimits(max_parts_per_message=most, max_parts=total)
    held: list[Any] = []
    for run, added in enumerate(turns):
        held = [*held[: len(held) - cut % 3 if run % 2 else len(held)], *added]
        body = _body('t', held, run, indent=None)
        value, reused = memo.decode_reusing(body, 'p')
        assert value == json.loads(body)
        if reused is None:
            continue
        messages = value['messages']
        assert reused.array is messages and 0 < reused.count <= len(messages)
        plain = request_module.plain_ids_roles(messages[: reused.count])
        assert (reused.before is not None) == (plain is not None)
        if reused.before is not None and plain is not None:
            assert (reused.before.ids, reused.before.roles) == plain
            unread = request_module._unread  # pyright: ignore[reportPrivateUsage]
            assert _outcome(partial(unread, messages, reused.before)) == _outcome(partial(unread, messages))
        lengths = part_lengths(messages[: reused.count]) or [[] for _ in PART_LISTS]
        assert reused.counted.totals == tuple(sum(found) for found in lengths)
        assert reused.counted.most == tuple(max(found, default=0) for found in lengths)
        counted = _outcome(partial(check_limits, value, limits, later=True, counted=reused.counted))
        assert counted == _outcome(partial(check_limits, value, limits, later=True))
