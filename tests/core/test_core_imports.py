"""The core's imports, read from its source (`imports_support`: every import counts, wherever it sits): it imports
nothing above it, and no two of its modules import each other, directly or round a longer circle."""

from __future__ import annotations

from imports_support import cycle, graph, modules


def _core_graph() -> dict[str, set[str]]:
    """Each core module and the uibridge modules it imports."""
    everything = modules()
    core = {name: path for name, path in everything.items() if name.startswith('uibridge.core.')}
    edges = graph(everything)
    return {name: edges[name] for name in core}


def test_the_core_imports_nothing_above_it() -> None:
    outside = {
        f'{module} imports {target}'
        for module, targets in _core_graph().items()
        for target in targets
        if not target.startswith('uibridge.core')
    }
    assert not outside


def test_no_two_core_modules_import_each_other() -> None:
    assert cycle(_core_graph()) is None


def test_a_circle_is_found_and_spelt_out() -> None:
    """The search itself: a circle three modules round is found, and one-way imports are none."""
    assert cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert cycle({'a': {'b', 'c'}, 'b': {'c'}, 'c': {'uibridge.adapters'}}) is None
