"""No two modules of uibridge import each other, directly or round a longer circle (`imports_support`: every
import counts, wherever it sits, so a lazy import or one under `TYPE_CHECKING` does not hide one)."""

from __future__ import annotations

from pathlib import Path

from imports_support import cycle, graph, imports, modules

KNOWN = {('uibridge.server.otel', 'uibridge.server.telemetry')}
"""Circles left for the work that is changing those modules (each one's types name the other's: the request's
observation and its span). An entry may leave this set, never join it."""


def _edges() -> dict[str, set[str]]:
    edges = graph(modules())
    for first, second in KNOWN:
        edges[first].discard(second)
        edges[second].discard(first)
    return edges


def test_no_two_uibridge_modules_import_each_other() -> None:
    assert cycle(_edges()) is None


def test_every_import_counts_and_names_the_module_it_reads(tmp_path: Path) -> None:
    """A function's import and one under `TYPE_CHECKING` are edges; `from . import x` reads `x`, not the package."""
    source = tmp_path / 'a.py'
    source.write_text(
        'from typing import TYPE_CHECKING\n'
        'from . import b\n'
        'from .c import Thing\n'
        'if TYPE_CHECKING:\n'
        '    from .d import Other\n'
        'def f():\n'
        '    from .e import late\n'
    )
    known = {f'pkg.{name}' for name in 'abcde'} | {'pkg'}
    assert imports(source, 'pkg.a', known) == {'typing', 'pkg.b', 'pkg.c', 'pkg.d', 'pkg.e'}
