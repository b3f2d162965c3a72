"""Both adapters follow one rule for a message's metadata (`core.metadata`): every key starting with `uibridge`
is uibridge's own, never taken for the application's, and load(dump(h)) == h for what each adapter carries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from uibridge import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.metadata import ANSWERED_BY_METADATA_KEY, CUSTOM_DATA_METADATA_KEY, custom_data_item

T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
CUSTOM = custom_data_item('weather', {'t': 20}, 'w1', 1)


def history(extra: dict[str, Any] | None = None) -> list[ModelMessage]:
    """A request and a response with application metadata, an approval mark and custom data (and `extra`)."""
    call = ToolCallPart(tool_name='delete', args={'path': 'x'}, tool_call_id='c1')
    response_metadata = {
        'tenant': 't1',
        ANSWERED_BY_METADATA_KEY: {'c1': 'approval'},
        CUSTOM_DATA_METADATA_KEY: [CUSTOM],
    }
    return [
        ModelRequest(parts=[UserPromptPart(content='hi', timestamp=T0)], metadata={'tenant': 't1', **(extra or {})}),
        ModelResponse(
            parts=[TextPart(content='ok'), call], timestamp=T0, metadata={**response_metadata, **(extra or {})}
        ),
    ]


def without(key: str, messages: list[ModelMessage]) -> list[ModelMessage]:
    return [
        m.model_copy(update={'metadata': {k: v for k, v in (m.metadata or {}).items() if k != key}}) for m in messages
    ]


def vercel_wire(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(mode='json') for m in vercel_ai.dump_messages(messages)]


def ag_ui_wire(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    return [m.model_dump(by_alias=True, mode='json') for m in ag_ui.dump_messages(messages)]


def test_vercel_carries_only_the_applications_keys_as_metadata() -> None:
    ui = vercel_wire(history({'uibridge_ag_ui': {'messages': [{'id': 'm1'}]}}))
    assert ui[0]['parts'][0]['providerMetadata']['uibridge']['request'] == {'metadata': {'tenant': 't1'}}
    assert ui[1]['parts'][1]['providerMetadata']['uibridge']['response']['metadata'] == {'tenant': 't1'}
    # The approval mark and the custom data ride in channels of their own; the other adapter's ids stay behind.
    assert ui[1]['parts'][2] == {'type': 'data-weather', 'id': 'w1', 'data': {'t': 20}}
    assert ui[1]['parts'][3]['callProviderMetadata']['uibridge']['approval'] is True
    assert vercel_ai.load_messages(ui) == history()


def test_ag_ui_carries_the_applications_keys_and_those_it_has_no_other_place_for() -> None:
    messages = ag_ui_wire(history({'uibridge_vercel_ai': {'reasoning_ids': {'0': 'r1'}}}))
    assert messages[0]['metadata']['uibridge']['request']['metadata'] == {'tenant': 't1'}
    assert messages[1]['metadata']['uibridge']['response']['metadata'] == {
        'tenant': 't1',
        ANSWERED_BY_METADATA_KEY: {'c1': 'approval'},
        CUSTOM_DATA_METADATA_KEY: [CUSTOM],
    }
    loaded = ag_ui.load_messages(messages)
    assert without('uibridge_ag_ui', loaded) == history()
    assert ag_ui.load_messages(ag_ui.dump_messages(loaded)) == loaded


def test_a_uibridge_key_a_client_writes_as_the_applications_is_not_taken() -> None:
    forged = {'uibridge_vercel_ai': {'parts': []}, 'uibridge_ag_ui': {'messages': []}}
    ui = vercel_wire(history())
    ui[0]['parts'][0]['providerMetadata']['uibridge']['request']['metadata'].update(forged)
    ui[1]['parts'][1]['providerMetadata']['uibridge']['response']['metadata'][ANSWERED_BY_METADATA_KEY] = {
        'c9': 'client'
    }
    # The edited messages no longer hash to their ids, which the sidecar keeps: all else is the history.
    assert without('uibridge_vercel_ai', vercel_ai.load_messages(ui)) == history()
    messages = ag_ui_wire(history())
    messages[0]['metadata']['uibridge']['request']['metadata'].update(forged)
    messages[1]['metadata']['uibridge']['response']['metadata'].update(forged)
    assert without('uibridge_ag_ui', ag_ui.load_messages(messages)) == history()
