"""The public surface: the top-level package exports what an application writes with, every `__all__` tells the
truth, only public modules have one, docs/api.md lists exactly what they export, and every import the README and
docs/ show works."""

from __future__ import annotations

import collections
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import uibridge

ROOT = Path(__file__).resolve().parents[1]


def _api_listing() -> Any:
    spec = importlib.util.spec_from_file_location('api_listing', ROOT / 'docs' / 'api_listing.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_listing = _api_listing()

PENDING = {
    'uibridge.adapters.ag_ui._extras',
    'uibridge.adapters.ag_ui._frames',
    'uibridge.adapters.ag_ui._outcome',
    'uibridge.adapters.ag_ui.stream',
    'uibridge.adapters.vercel_ai._frames',
    'uibridge.adapters.vercel_ai._stream_carriers',
    'uibridge.adapters.vercel_ai._stream_hooks',
    'uibridge.adapters.vercel_ai._stream_tools',
    'uibridge.adapters.vercel_ai.stream',
}
"""Internal modules that still have an `__all__`: the stream encoders and the managed endpoint, being reworked
on their own; each drops its `__all__` with that work. A module may leave this set, never join it."""


def _all_modules() -> list[ModuleType]:
    names = [info.name for info in pkgutil.walk_packages(uibridge.__path__, 'uibridge.')]
    return [uibridge, *(importlib.import_module(name) for name in names if not name.endswith('__main__'))]


def test_the_event_vocabulary_an_agent_writes_with_is_exported() -> None:
    from uibridge.core import events

    for name in events.__all__:
        assert getattr(uibridge, name) is getattr(events, name), name
    assert uibridge.events_from_message is events.events_from_message


def test_the_core_vocabulary_is_exported_whole_from_the_top_level() -> None:
    """Each public core module's names are the top level's, the same objects: `uibridge` is where to import them."""
    for module_name in api_listing.PUBLIC_MODULES:
        if module_name.startswith('uibridge.core.'):
            module = importlib.import_module(module_name)
            for name in module.__all__:
                assert name in uibridge.__all__, f'{module_name}.{name}'
                assert getattr(uibridge, name) is getattr(module, name), f'{module_name}.{name}'


def test_every_all_names_only_what_the_module_has_and_each_name_once() -> None:
    for module in _all_modules():
        listed = getattr(module, '__all__', [])
        for name in listed:
            assert hasattr(module, name), f'{module.__name__}.__all__ names {name!r}, which it does not have'
        twice = [name for name, count in collections.Counter(listed).items() if count > 1]
        assert not twice, f'{module.__name__}.__all__ names {twice} more than once'


def test_only_public_modules_have_an_all() -> None:
    public = set(api_listing.PUBLIC_MODULES)
    with_all = {module.__name__ for module in _all_modules() if hasattr(module, '__all__')}
    assert public <= with_all, f'public modules without __all__: {sorted(public - with_all)}'
    internal = with_all - public - PENDING
    assert not internal, f'internal modules with __all__ (drop it, or make the module public): {sorted(internal)}'


def test_the_api_listing_is_what_the_code_exports() -> None:
    committed = (ROOT / 'docs' / 'api.md').read_text(encoding='utf-8')
    assert committed == api_listing.render(), 'docs/api.md is stale: run `.venv/bin/python docs/api_listing.py`'


def _documented_imports() -> list[tuple[str, str, str]]:
    """`(file, module, name)` for each `from uibridge... import name` in a Python line of README.md or docs/."""
    found: list[tuple[str, str, str]] = []
    for path in [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]:
        text = path.read_text(encoding='utf-8')
        for match in re.finditer(r'^from (uibridge[\w.]*) import \(?([\w, \n]+?)\)?\s*(?:#.*)?$', text, re.MULTILINE):
            for name in re.split(r'[\s,]+', match.group(2).strip()):
                found.append((path.name, match.group(1), name))
    return found


def _documented_paths() -> list[tuple[str, str]]:
    """`(file, dotted path)` for each `uibridge.<subpackage>...` in backticks in README.md or docs/ (other
    `uibridge.x` names there are event, span and attribute names, not Python)."""
    found: list[tuple[str, str]] = []
    subpackages = '|'.join(info.name for info in pkgutil.iter_modules(uibridge.__path__) if info.ispkg)
    for path in [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]:
        for match in re.finditer(rf'`(uibridge\.(?:{subpackages})(?:\.\w+)*)`', path.read_text(encoding='utf-8')):
            found.append((path.name, match.group(1)))
    return found


def test_the_documentation_names_imports_to_check() -> None:
    """The two readers below find what the documents hold (an empty list would pass them vacuously)."""
    assert ('README.md', 'uibridge.server', 'create_app') in _documented_imports()
    assert ('bridge.md', 'uibridge.adapters.vercel_ai.decode', 'VercelAIStreamDecoder') in _documented_imports()
    assert ('README.md', 'uibridge.server.store.CHAT_ID_RULE') in _documented_paths()


@pytest.mark.parametrize(('document', 'module', 'name'), _documented_imports())
def test_every_documented_import_works(document: str, module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f'{document}: from {module} import {name}'


def test_every_documented_dotted_path_resolves() -> None:
    unresolved: list[str] = []
    for document, dotted in _documented_paths():
        parts = dotted.split('.')
        # The longest importable prefix, then attributes: `uibridge.core.run.ClientTool`, `uibridge.server.limits`.
        for cut in range(len(parts), 0, -1):
            try:
                value: Any = importlib.import_module('.'.join(parts[:cut]))
            except ImportError:
                continue
            for attribute in parts[cut:]:
                value = getattr(value, attribute, None)
            if value is None:
                unresolved.append(f'{document}: {dotted}')
            break
    assert not unresolved
