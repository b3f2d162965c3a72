"""History mapping, `dump_messages` / `load_messages`, for both protocols: ours against the peer's.

Bar (issue 6): at least 3x faster than the peer per message, on the same 1,000-message history built in
each library's own types (`history.py`). Loading is timed from each library's own dumped objects (what
`load_messages` takes) and, separately, from the JSON-compatible dicts a request body holds, where
validating the UI messages is part of the work.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import history
from _harness import Row, compare, fmt_time, print_table

BAR = 3.0


def _row(work: str, count: int, ours: Callable[[], object], peer: Callable[[], object], bar: bool = True) -> Row:
    t_ours, t_peer = compare([ours, peer], repeat=7)
    speedup = t_peer / t_ours

    def cell(seconds: float) -> str:
        return f'{fmt_time(seconds)} ({seconds / count * 1e6:.1f} µs/msg)'

    return Row(
        work,
        cell(t_ours),
        cell(t_peer),
        f'{speedup:.1f}x faster',
        f'≥ {BAR:g}x faster' if bar else '—',
        speedup >= BAR if bar else None,
    )


def vercel(ours_history: list[Any], peer_history: list[Any]) -> tuple[list[Row], list[str]]:
    from pydantic import TypeAdapter
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter
    from pydantic_ai.ui.vercel_ai.request_types import UIMessage as PeerUIMessage

    from uibridge.adapters import vercel_ai

    def peer_dump() -> list[Any]:
        return VercelAIAdapter.dump_messages(peer_history, sdk_version=7)

    ours_ui = vercel_ai.dump_messages(ours_history)
    peer_ui = peer_dump()
    ours_dicts = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ours_ui]
    peer_dicts = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in peer_ui]
    peer_adapter = TypeAdapter(list[PeerUIMessage])
    assert len(vercel_ai.load_messages(ours_ui)) == len(VercelAIAdapter.load_messages(peer_ui)) == len(ours_history)

    count = len(ours_history)
    rows = [
        _row(
            f'Vercel `dump_messages`, {count:,} messages',
            count,
            lambda: vercel_ai.dump_messages(ours_history),
            peer_dump,
        ),
        _row(
            f'Vercel `load_messages`, {count:,} messages (UIMessage objects)',
            count,
            lambda: vercel_ai.load_messages(ours_ui),
            lambda: VercelAIAdapter.load_messages(peer_ui),
        ),
        _row(
            f'Vercel validate + load, {count:,} messages (JSON dicts)',
            count,
            lambda: vercel_ai.load_messages(ours_dicts),
            lambda: VercelAIAdapter.load_messages(peer_adapter.validate_python(peer_dicts)),
            bar=False,
        ),
    ]
    notes = [f'Vercel: {len(ours_ui)} UIMessages from ours, {len(peer_ui)} from the peer (`sdk_version=7`).']
    return rows, notes


def ag_ui(ours_history: list[Any], peer_history: list[Any]) -> tuple[list[Row], list[str]]:
    from ag_ui.core import Message
    from pydantic import TypeAdapter
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    from uibridge.adapters import ag_ui as agui

    ours_msgs = agui.dump_messages(ours_history)
    peer_msgs = AGUIAdapter.dump_messages(peer_history)
    ours_dicts = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ours_msgs]
    peer_dicts = [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in peer_msgs]
    messages_adapter = TypeAdapter(list[Message])
    assert len(agui.load_messages(ours_msgs)) == len(AGUIAdapter.load_messages(peer_msgs)) == len(ours_history)

    count = len(ours_history)
    rows = [
        _row(
            f'AG-UI `dump_messages`, {count:,} messages',
            count,
            lambda: agui.dump_messages(ours_history),
            lambda: AGUIAdapter.dump_messages(peer_history),
        ),
        _row(
            f'AG-UI `load_messages`, {count:,} messages (SDK objects)',
            count,
            lambda: agui.load_messages(ours_msgs),
            lambda: AGUIAdapter.load_messages(peer_msgs),
        ),
        _row(
            f'AG-UI validate + load, {count:,} messages (JSON dicts)',
            count,
            lambda: agui.load_messages(ours_dicts),
            lambda: AGUIAdapter.load_messages(messages_adapter.validate_python(peer_dicts)),
            bar=False,
        ),
    ]
    notes = [f'AG-UI: {len(ours_msgs)} messages from ours, {len(peer_msgs)} from the peer.']
    return rows, notes


def main() -> bool:
    # Both libraries warn about lossy spots (AG-UI has no place for a model's files); the warnings
    # machinery is not the work being compared.
    warnings.simplefilter('ignore')
    ours_history, peer_history = history.ours(), history.peer()
    notes = [
        f'history: {len(ours_history):,} messages, {history.part_count(ours_history):,} parts, '
        "the same in both libraries' types (`bench/history.py`)."
    ]
    rows: list[Row] = []
    for run in (vercel, ag_ui):
        more_rows, more_notes = run(ours_history, peer_history)
        rows += more_rows
        notes += more_notes
    return print_table('History mapping: `dump_messages` / `load_messages`', rows, notes)


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
