"""The README's conformance tables are the adapters' declarations as `docs/conformance.py` writes them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _script() -> Any:
    spec = importlib.util.spec_from_file_location('conformance_script', ROOT / 'docs' / 'conformance.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = _script()


def test_the_readme_holds_the_tables_the_declarations_give() -> None:
    held = script.current((ROOT / 'README.md').read_text(encoding='utf-8'))
    assert held is not None, 'README.md lost its conformance markers'
    assert held == script.render(), 'the conformance tables are stale: run `.venv/bin/python docs/conformance.py`'
