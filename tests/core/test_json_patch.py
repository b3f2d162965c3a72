"""RFC 6902 JSON Patch, as the collector applies a run's state deltas (the client applies the same ones)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uibridge.core.json_patch import JsonPatchError, apply_patch

DOC: dict[str, Any] = {'a': {'b': [1, 2, 3]}, 'c': 'x', 'k/~': 0}


@pytest.mark.parametrize(
    ('operations', 'expected'),
    [
        ([{'op': 'add', 'path': '/d', 'value': 1}], {**DOC, 'd': 1}),
        ([{'op': 'add', 'path': '/a/b/1', 'value': 9}], {**DOC, 'a': {'b': [1, 9, 2, 3]}}),
        ([{'op': 'add', 'path': '/a/b/-', 'value': 9}], {**DOC, 'a': {'b': [1, 2, 3, 9]}}),
        ([{'op': 'add', 'path': '', 'value': [1]}], [1]),
        ([{'op': 'replace', 'path': '/c', 'value': None}], {**DOC, 'c': None}),
        ([{'op': 'remove', 'path': '/a/b/0'}], {**DOC, 'a': {'b': [2, 3]}}),
        ([{'op': 'remove', 'path': '/k~1~0'}], {'a': {'b': [1, 2, 3]}, 'c': 'x'}),
        ([{'op': 'move', 'from': '/c', 'path': '/a/c'}], {'a': {'b': [1, 2, 3], 'c': 'x'}, 'k/~': 0}),
        ([{'op': 'copy', 'from': '/a/b', 'path': '/e'}], {**DOC, 'e': [1, 2, 3]}),
        (
            [{'op': 'test', 'path': '/a/b', 'value': [1, 2, 3]}, {'op': 'remove', 'path': '/c'}],
            {'a': DOC['a'], 'k/~': 0},
        ),
    ],
)
def test_each_operation_does_what_the_rfc_says_and_leaves_the_input_untouched(
    operations: list[dict[str, Any]], expected: Any
) -> None:
    before = copy.deepcopy(DOC)
    assert apply_patch(DOC, operations) == expected
    assert before == DOC


@pytest.mark.parametrize(
    'operation',
    [
        {'op': 'replace', 'path': '/missing', 'value': 1},
        {'op': 'remove', 'path': '/a/b/3'},
        {'op': 'add', 'path': '/a/b/5', 'value': 1},
        {'op': 'add', 'path': '/a/b/01', 'value': 1},
        {'op': 'add', 'path': '/nope/x', 'value': 1},
        {'op': 'add', 'path': '/c/x', 'value': 1},
        {'op': 'add', 'path': 'c', 'value': 1},
        {'op': 'add', 'path': '/c'},
        {'op': 'move', 'from': '/a', 'path': '/a/b/0'},
        {'op': 'move', 'from': '/missing', 'path': '/missing'},  # to its own place, but there is nothing there
        {'op': 'copy', 'from': '/c/x', 'path': '/d'},  # a string has no members
        {'op': 'remove', 'path': ''},
        {'op': 'add', 'path': 1, 'value': 1},
        {'op': 'test', 'path': '/c', 'value': 'y'},
        {'op': 'frobnicate', 'path': '/c'},
        {'path': '/c'},
        'add',
    ],
)
def test_an_operation_that_does_not_apply_fails_the_whole_patch(operation: Any) -> None:
    with pytest.raises(JsonPatchError, match='operation 1'):
        apply_patch(DOC, [{'op': 'add', 'path': '/ok', 'value': 1}, operation])


def test_a_move_into_its_own_member_says_so() -> None:
    with pytest.raises(JsonPatchError, match='cannot move a value into itself'):
        apply_patch(DOC, [{'op': 'move', 'from': '/a', 'path': '/a/b/0'}])


def test_test_compares_json_values_not_python_ones() -> None:
    assert apply_patch({'n': 1}, [{'op': 'test', 'path': '/n', 'value': 1.0}]) == {'n': 1}
    with pytest.raises(JsonPatchError):
        apply_patch({'n': 1}, [{'op': 'test', 'path': '/n', 'value': True}])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(json_values, json_values)
def test_a_snapshot_then_replace_of_the_root_is_the_new_value(before: Any, after: Any) -> None:
    assert apply_patch(before, [{'op': 'replace', 'path': '', 'value': after}]) == after


@given(st.dictionaries(st.text(max_size=4).filter(lambda k: '/' not in k and '~' not in k), json_values, max_size=5))
def test_adding_then_removing_a_member_gives_the_document_back(document: dict[str, Any]) -> None:
    key = 'new' + ''.join(sorted(document))
    added = apply_patch(document, [{'op': 'add', 'path': f'/{key}', 'value': [1]}])
    assert added[key] == [1]
    assert apply_patch(added, [{'op': 'remove', 'path': f'/{key}'}]) == document


@pytest.mark.parametrize(
    ('operations', 'expected'),
    [
        ([{'op': 'add', 'path': '/c', 'value': 'y'}], {**DOC, 'c': 'y'}),  # add to an existing member replaces it
        ([{'op': 'move', 'from': '/c', 'path': '/c'}], DOC),  # from its own path: no change
        ([{'op': 'move', 'from': '', 'path': ''}], DOC),  # the root too (only a *proper* prefix is refused)
        ([{'op': 'remove', 'path': '/~01'}], DOC),  # `~01` is `~1` (`~1` decoded before `~0`), not `/`
        ([{'op': 'add', 'path': '/~01', 'value': 2}], {**DOC, '~1': 2}),
    ],
)
def test_rfc_edge_cases(operations: list[dict[str, Any]], expected: Any) -> None:
    document = {**DOC, '~1': 1} if operations[0]['op'] == 'remove' else DOC
    assert apply_patch(document, operations) == expected


@pytest.mark.parametrize('token', ['-', '١', '²', '+1', ' 1'])
def test_an_array_index_is_ascii_digits_and_dash_is_only_for_adding(token: str) -> None:
    for operation in (
        {'op': 'replace', 'path': f'/a/b/{token}', 'value': 0},
        {'op': 'remove', 'path': f'/a/b/{token}'},
    ):
        with pytest.raises(JsonPatchError):
            apply_patch(DOC, [operation])


def test_a_copy_is_a_value_of_its_own() -> None:
    copied = apply_patch({'a': {'x': [1]}}, [{'op': 'copy', 'from': '/a', 'path': '/b'}])
    copied['b']['x'].append(2)  # a caller (or a later in-place change) mutating one must not change the other
    assert copied == {'a': {'x': [1]}, 'b': {'x': [1, 2]}}
