"""Write the README's conformance table from the adapters' declarations of every protocol type.

    .venv/bin/python docs/conformance.py

The declarations are `uibridge.adapters.vercel_ai._conformance` (`ai` 7 chunks and parts) and
`uibridge.adapters.ag_ui._conformance` (AG-UI events); tests hold them to the protocols' own type lists and to
what the code writes and reads. `tests/test_readme_conformance.py` renders the table again and fails when the
README differs: change a declaration, run this, commit both.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'src'))

from uibridge.adapters._conformance import Status, Support  # noqa: E402
from uibridge.adapters.ag_ui._conformance import EVENTS  # noqa: E402
from uibridge.adapters.vercel_ai._conformance import CHUNKS, PARTS  # noqa: E402

README = ROOT / 'README.md'
BEGIN = "<!-- conformance: written by docs/conformance.py from the adapters' declarations; a test checks it -->"
END = '<!-- /conformance -->'

STATUS: dict[Status, str] = {
    'both': 'emitted, loaded',
    'emitted': 'emitted',
    'loaded': 'loaded',
    'n/a': 'not applicable',
}


def _table(title: str, kind: str, rows: dict[str, Support]) -> str:
    lines = [f'**{title}**', '', f'| {kind} | status | carries / why not |', '|---|---|---|']
    for name, row in rows.items():
        note = row.note.replace('|', '\\|')
        lines.append(f'| `{name}` | {STATUS[row.status]} | {note} |')
    return '\n'.join(lines)


def render() -> str:
    """The generated block, markers included."""
    tables = (
        _table('`ai` 7 UI message stream chunks', 'chunk', CHUNKS),
        _table('`ai` 7 UI message parts', 'part', PARTS),
        _table('AG-UI events', 'event', EVENTS),
    )
    return '\n\n'.join((BEGIN, *tables, END))


def current(readme: str) -> str | None:
    """The generated block as the README holds it, or None when the markers are missing."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        return None
    return readme[start : end + len(END)]


def main() -> None:
    text = README.read_text(encoding='utf-8')
    held = current(text)
    if held is None:
        raise SystemExit(f'README.md has no {BEGIN!r} ... {END!r} block to fill')
    README.write_text(text.replace(held, render()), encoding='utf-8')


if __name__ == '__main__':
    main()
