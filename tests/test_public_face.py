"""The top-level package exports what an application writes with, and every `__all__` tells the truth."""

from __future__ import annotations

import importlib
import pkgutil

import uibridge


def test_the_event_vocabulary_an_agent_writes_with_is_exported() -> None:
    from uibridge.core import events

    for name in events.__all__:
        if name[0].isupper() and name not in ('MessageCollector', 'StreamablePart') and not name.endswith('_KEY'):
            assert getattr(uibridge, name) is getattr(events, name), name
    assert uibridge.events_from_message is events.events_from_message


def test_every_all_names_only_what_the_module_has() -> None:
    for module_info in pkgutil.walk_packages(uibridge.__path__, 'uibridge.'):
        if module_info.name.endswith('__main__'):
            continue
        module = importlib.import_module(module_info.name)
        for name in getattr(module, '__all__', []):
            assert hasattr(module, name), f'{module_info.name}.__all__ names {name!r}, which it does not have'
