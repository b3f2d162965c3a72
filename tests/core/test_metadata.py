"""`core.metadata`: the application's keys of a message's metadata and uibridge's, told apart by one rule."""

from __future__ import annotations

from typing import Any

import pytest

from uibridge.core.metadata import (
    ANSWERED_BY_METADATA_KEY,
    CUSTOM_DATA_METADATA_KEY,
    answered_by,
    app_metadata,
    custom_data_item,
    custom_data_items,
    is_own_key,
)


def test_every_key_starting_with_uibridge_is_uibridges() -> None:
    for key in (ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY, 'uibridge_vercel_ai', 'uibridge_ag_ui', 'uibridge'):
        assert is_own_key(key)
    for key in ('tenant', 'my_uibridge', 'UIBRIDGE_x', ''):
        assert not is_own_key(key)


def test_app_metadata_keeps_the_applications_keys_in_order() -> None:
    metadata = {
        'b': 1,
        ANSWERED_BY_METADATA_KEY: {'c1': 'approval'},
        'a': None,
        'uibridge_vercel_ai': {'parts': []},
        CUSTOM_DATA_METADATA_KEY: [],
    }
    assert list(app_metadata(metadata) or {}) == ['b', 'a']
    kept = app_metadata(metadata, keep={CUSTOM_DATA_METADATA_KEY, ANSWERED_BY_METADATA_KEY})
    assert list(kept or {}) == ['b', ANSWERED_BY_METADATA_KEY, 'a', CUSTOM_DATA_METADATA_KEY]
    assert kept is not metadata


@pytest.mark.parametrize('metadata', [None, {}, {'uibridge_ag_ui': {'messages': []}}])
def test_app_metadata_is_none_when_nothing_is_the_applications(metadata: dict[str, Any] | None) -> None:
    assert app_metadata(metadata) is None


def test_answered_by_reads_the_marks_or_nothing() -> None:
    assert answered_by({ANSWERED_BY_METADATA_KEY: {'c1': 'client'}}) == {'c1': 'client'}
    for metadata in (None, {}, {ANSWERED_BY_METADATA_KEY: ['c1']}):
        assert answered_by(metadata) == {}


def test_custom_data_items_have_one_shape() -> None:
    assert custom_data_item('weather', {'t': 20}, None, 2) == {'name': 'weather', 'data': {'t': 20}, 'position': 2}
    assert custom_data_item('w', None, 'd1', 0) == {'name': 'w', 'data': None, 'position': 0, 'id': 'd1'}
    items = [custom_data_item('a', 1, None, 0), 'junk', custom_data_item('b', 2, 'x', 1)]
    assert custom_data_items({CUSTOM_DATA_METADATA_KEY: items}) == [items[0], items[2]]
    for metadata in (None, {}, {CUSTOM_DATA_METADATA_KEY: {'name': 'a'}}):
        assert custom_data_items(metadata) == []
