"""uibridge's imports read from its source, and the search for a circle among them (`tests/core/test_core_imports.py`,
`tests/test_import_circles.py`).

Every import counts, wherever it sits (module level, inside a function, under `TYPE_CHECKING`): a lazy import only
hides a circle from the interpreter, not from the reader, who must still know both modules to change one. What an
import names is the module it reads: `from . import limits` reads `limits`, `from .store import ChatStore` reads
the `store` package; the packages above a module (imported first by Python whatever names it) are no edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import uibridge

SOURCE = Path(uibridge.__file__).parent


def modules(root: Path = SOURCE, package: str = 'uibridge') -> dict[str, Path]:
    """Every module and package under `root` by its dotted name (a package by its `__init__.py`)."""
    found: dict[str, Path] = {}
    for path in root.rglob('*.py'):
        parts = [package, *path.relative_to(root).with_suffix('').parts]
        if parts[-1] == '__init__':
            parts.pop()
        found['.'.join(parts)] = path
    return found


def imports(path: Path, name: str, known: set[str] | dict[str, Path]) -> set[str]:
    """What the module `name` (its source at `path`) imports: each module it names, `known` deciding whether a
    name taken from a module is itself a module. Names that are no module of `known` are kept as they are."""
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
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
            for alias in node.names:
                found.add(f'{base}.{alias.name}' if f'{base}.{alias.name}' in known else base)
    found.discard(name)
    return found


def graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """Each module of `found` and the uibridge modules it imports (`imports`), outside ones kept by name."""
    return {
        name: {target for target in imports(path, name, found) if target.startswith('uibridge')}
        for name, path in found.items()
    }


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports among the graph's own modules, in order, if there is any."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 'open'
        path.append(module)
        for target in sorted(edges[module]):
            if target not in edges:
                continue
            if state.get(target) == 'open':
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 'done'
        return None

    for module in sorted(edges):
        if module not in state and (found := visit(module)):
            return found
    return None
