"""What every adapter's signature properties share: the well-formed histories and values they draw, the
re-serialization JavaScript clients perform, and the check that an edited signed item is dropped. Protocol-neutral
(neutral parts and plain JSON): each adapter's `test_*_provenance.py` dumps these histories and edits its own
wire form. (Imported by path: `sys.path.insert(0, <tests/adapters>)`, as the tests there have no package.)
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

from hypothesis import assume
from hypothesis import strategies as st

from uibridge import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.events import ANSWERED_BY_METADATA_KEY
from uibridge.core.provenance import Keyring, default_keyring
from uibridge.core.verification import Verified

__all__ = [
    'SIGNED',
    'assert_any_edit_drops',
    'assert_edited_items_drop',
    'client_calls',
    'edited',
    'error_lists',
    'exchanges',
    'javascript',
    'json_values',
    'nonempty_text',
    'short_text',
]

SIGNED = (TextPart, ThinkingPart, ToolCallPart, FilePart, ToolReturnPart, RetryPromptPart, RetryFeedbackPart)
"""The part types a server signs."""
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T1 = datetime(2026, 1, 2, 3, 5, 0, tzinfo=UTC)

short_text = st.text(max_size=12)
nonempty_text = st.text(min_size=1, max_size=8)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, -0.0, 2.5e-8, 1e21])
    | short_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short_text, inner, max_size=3),
    max_leaves=6,
)
"""JSON values with what JavaScript reads otherwise: floats that are integers, integers past 2**53."""
error_lists = st.lists(
    st.fixed_dictionaries(
        {
            'type': nonempty_text,
            'loc': st.lists(short_text | st.integers(0, 5), max_size=2).map(tuple),
            'msg': short_text,
        },
        optional={'input': json_values},
    ),
    min_size=1,
    max_size=2,
)
"""Validation errors as a retry prompt or retry feedback holds them."""


_ANSWERS = ['success', 'failed', 'denied', 'interrupted', 'retry', 'client', 'approval']


@st.composite
def exchanges(
    draw: st.DrawFn,
    *,
    files: bool = False,
    tool_names: Sequence[str] = ('get_weather', 'delete_file', 'ask_user'),
    thinking_providers: Sequence[str | None] = ('anthropic',),
) -> list[ModelMessage]:
    """Well-formed histories as a server writes them: each response's calls answered in the request after it
    (a client-tool call by the client), except a last response's, which may all still wait. Responses hold
    text, thinking and calls, and with `files` files the model produced; calls carry the client and approval
    marks (`uibridge_answered_by`), results every outcome, retries and retry feedback both content shapes.
    Calls are to `tool_names` (a protocol that writes the name into a part type wants one with a hyphen);
    thinking comes from one of `thinking_providers` (`None`: no provider name to carry)."""
    messages: list[ModelMessage] = []
    count = 0
    turns = draw(st.integers(1, 4))
    for turn in range(turns):
        prompts: list[Any] = [UserPromptPart(content=draw(short_text | st.lists(short_text, max_size=2)), timestamp=T0)]
        if draw(st.booleans()):
            prompts.insert(0, SystemPromptPart(content=draw(short_text), timestamp=T0))
        messages.append(ModelRequest(parts=prompts))
        parts: list[Any] = []
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(
                st.sampled_from(['text', 'thinking', 'call', 'file'] if files else ['text', 'thinking', 'call'])
            )
            if kind == 'text':
                parts.append(TextPart(content=draw(nonempty_text)))
            elif kind == 'thinking':
                signature = draw(st.none() | nonempty_text)
                provider = draw(st.sampled_from(thinking_providers))
                parts.append(ThinkingPart(content=draw(short_text), signature=signature, provider_name=provider))
            elif kind == 'file':
                data = draw(st.binary(min_size=1, max_size=8))
                parts.append(FilePart(content=BinaryContent(data=data, media_type='image/png')))
            else:
                count += 1
                name = draw(st.sampled_from(tool_names))
                args = draw(st.dictionaries(short_text, json_values, max_size=3))
                parts.append(ToolCallPart(tool_name=name, args=args, tool_call_id=f'call_{count}'))
        response = ModelResponse(parts=parts, timestamp=T1)
        messages.append(response)
        waiting = turn == turns - 1 and draw(st.booleans())
        marks: dict[str, str] = {}
        answers: list[Any] = []
        for call in (p for p in parts if isinstance(p, ToolCallPart)):
            answer = draw(st.sampled_from(_ANSWERS))
            if answer in ('client', 'approval'):
                marks[call.tool_call_id] = answer
            if waiting:
                continue
            if answer == 'retry':
                answers.append(
                    RetryPromptPart(
                        content=draw(short_text | error_lists),
                        tool_name=call.tool_name,
                        tool_call_id=call.tool_call_id,
                        timestamp=T1,
                    )
                )
                continue
            outcome = answer if answer in ('failed', 'denied', 'interrupted') else 'success'
            answers.append(
                ToolReturnPart(
                    tool_name=call.tool_name,
                    content=draw(json_values),
                    tool_call_id=call.tool_call_id,
                    outcome=outcome,
                    timestamp=T1,
                )
            )
        if marks:
            response.metadata = {ANSWERED_BY_METADATA_KEY: marks}
        if waiting:
            break
        if draw(st.booleans()):
            cause = draw(st.sampled_from(['validation_error', 'no_output', 'model_retry']))
            answers.append(RetryFeedbackPart(content=draw(short_text | error_lists), cause=cause, timestamp=T1))
        if answers:
            messages.append(ModelRequest(parts=answers))
    return messages


def javascript(value: Any) -> Any:
    """`value` as `JSON.parse` then `JSON.stringify` give it back: one number type (a whole float is an integer
    below 1e21, an integer past 2**53 the nearest double, written as JavaScript writes it), and an object's keys
    that read as array indexes first, in numeric order. Dump the result with or without `ensure_ascii` for
    `JSON.stringify`'s own escaping."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int) and abs(value) <= 2**53:
        return value
    if isinstance(value, int | float):
        number = float(value)
        # The shortest digits that give the double back, as JavaScript writes them (integers below 1e21).
        return int(Decimal(repr(number))) if number.is_integer() and abs(number) < 1e21 else number
    if isinstance(value, dict):
        items = [(k, javascript(v)) for k, v in cast('dict[str, Any]', value).items()]
        indexes = sorted((int(k), k, v) for k, v in items if _is_index(k))
        return {**{k: v for _, k, v in indexes}, **{k: v for k, v in items if not _is_index(k)}}
    return [javascript(item) for item in cast('list[Any]', value)]


def _is_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def edited(value: Any) -> Any:
    """A JSON value that is surely another one (an error list keeps its shape: only a message changes)."""
    if isinstance(value, str):
        return value + '!'
    if isinstance(value, list) and value and isinstance(value[0], dict) and 'msg' in value[0]:
        return [{**value[0], 'msg': value[0]['msg'] + '!'}, *value[1:]]
    return {'edited': value}


def assert_edited_items_drop(
    original: Sequence[Any],
    loaded: Sequence[ModelMessage],
    result: Verified,
    keyring: Keyring,
    *,
    client_calls: Collection[str],
    site: object,
) -> None:
    """`loaded` (what a decoder built from the edited wire, verified into `result`) holds the parts of
    `original` (built from the wire before the edit) in the same places; the edit changed at least one signed
    part's content, and no changed part was kept but the result of a call addressed to a client tool (the
    client's to write, edited or not)."""
    parts = [p for m in loaded for p in m.parts]
    assert [type(p) for p in parts] == [type(p) for p in original], site  # the edit changed content, not layout
    changed = [
        new
        for old, new in zip(original, parts, strict=True)
        if isinstance(new, SIGNED) and keyring.sign_part(old) != keyring.sign_part(new)
    ]
    assert changed, site
    kept = {id(p) for m in result.messages for p in m.parts}
    assert not [
        p for p in changed if id(p) in kept and not (isinstance(p, ToolReturnPart) and p.tool_call_id in client_calls)
    ], site


def client_calls(history: Sequence[ModelMessage]) -> set[str]:
    """The ids of the calls `history` addresses to a client tool."""
    return {
        call
        for m in history
        if isinstance(m, ModelResponse)
        for call, who in ((m.metadata or {}).get(ANSWERED_BY_METADATA_KEY) or {}).items()
        if who == 'client'
    }


Wire = list[dict[str, Any]]
Site = tuple[str, int, int]


def assert_any_edit_drops(
    history: Sequence[ModelMessage],
    wire: Wire,
    data: st.DataObject,
    *,
    edit_sites: Callable[[Wire], list[Site]],
    apply: Callable[[Wire, Site], None],
    load: Callable[[Wire], list[ModelMessage]],
    verified: Callable[[Wire], tuple[list[ModelMessage], Verified]],
) -> None:
    """Edits one signed item of `wire` (`history` as a protocol's client holds it): draws one of its
    `edit_sites`, `apply`s that edit to a copy, decodes both (`load`, and `verified` for the edited one) and
    checks `assert_edited_items_drop` with the default keyring. The answer to a call `history` addresses to a
    client tool is the client's to write: edited, it is still its answer."""
    sites = edit_sites(wire)
    assume(sites)
    site = data.draw(st.sampled_from(sites))
    edited_wire = copy.deepcopy(wire)
    apply(edited_wire, site)
    original = [p for m in load(wire) for p in m.parts]
    loaded, result = verified(edited_wire)
    assert_edited_items_drop(original, loaded, result, default_keyring(), client_calls=client_calls(history), site=site)
