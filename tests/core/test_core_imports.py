"""The core's imports, read from its source: it imports nothing above it, and no two of its modules import each
other, directly or round a longer circle.

Every import counts, wherever it sits (module level, inside a function, under `TYPE_CHECKING`): a lazy import
only hides a circle from the interpreter, not from the reader, who must still know both modules to change one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import uibridge.core

CORE = Path(uibridge.core.__file__).parent


def _imports(path: Path, package: str) -> set[str]:
    """The absolute names of what `path` imports: each module, and each name taken from one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split('.')
                base = '.'.join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ''
            found.add(base)
            found.update(f'{base}.{alias.name}' for alias in node.names)
    return found


def _core_graph() -> dict[str, set[str]]:
    """Each core module and the uibridge modules it imports (names that are no module are left out)."""
    modules = {f'uibridge.core.{path.stem}': path for path in CORE.glob('*.py') if path.stem != '__init__'}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = _imports(path, 'uibridge.core')
        graph[name] = {target for target in imported if target.startswith('uibridge') and target != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports among the graph's own modules, in order, if there is any."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 'open'
        path.append(module)
        for target in sorted(graph[module]):
            if target not in graph:
                continue
            if state.get(target) == 'open':
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 'done'
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_core_imports_nothing_above_it() -> None:
    outside = {
        f'{module} imports {target}'
        for module, targets in _core_graph().items()
        for target in targets
        if not target.startswith('uibridge.core')
    }
    assert not outside


def test_no_two_core_modules_import_each_other() -> None:
    assert _cycle(_core_graph()) is None


def test_a_circle_is_found_and_spelt_out() -> None:
    """The search itself: a circle three modules round is found, and one-way imports are none."""
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b', 'c'}, 'b': {'c'}, 'c': {'uibridge.adapters'}}) is None
