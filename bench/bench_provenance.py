"""What signing and verifying cost (issue 10): the same work with the real keyring and with one that signs nothing.

Bar: at most 15% on `load_messages` (load with claims, then `verify_history`, against a plain load) and on the
stream rows (the encoders with a real keyring against one whose `sign_part` returns a constant, so everything
else, the bookkeeping of where signatures ride included, is the same). `dump_messages` is reported beside
them. The history and the stream workloads are those of `bench_messages.py` and `bench_streams.py`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import history
from _harness import Row, compare, fmt_time, print_table
from bench_streams import ours_text, ours_tools

from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core import events as ev
from uibridge.core.provenance import Keyring, SignedPart
from uibridge.core.verification import SignatureClaims, verify_history

BAR = 0.15


class _Unsigned(Keyring):
    """A keyring that signs nothing: every part gets the same constant, no canonical form, no HMAC."""

    def sign_part(self, part: SignedPart, *, client: bool = False) -> str:
        return 'v1.00000000000000000000000000000000'


KEYRING = Keyring('bench secret')
UNSIGNED = _Unsigned('bench secret')


def _row(work: str, signed: Callable[[], object], unsigned: Callable[[], object]) -> Row:
    ours, floor = compare([signed, unsigned])
    overhead = ours / floor - 1
    return Row(
        work,
        fmt_time(ours),
        fmt_time(floor),
        f'+{overhead:.0%}',
        f'≤ +{BAR:.0%}',
        overhead <= BAR,
    )


def _encode(make: Callable[[Keyring], Any], keyring: Keyring, events: list[ev.AgentEvent]) -> Callable[[], object]:
    def run() -> bytes:
        stream = make(keyring)
        out = [stream.start()]
        out += [stream.encode(event) for event in events]
        out.append(stream.close())
        return b''.join(out)

    return run


def main() -> bool:
    warnings.simplefilter('ignore')
    messages = history.ours()
    rows: list[Row] = []
    streams: dict[str, Callable[[Keyring], Any]] = {
        'Vercel AI': lambda keyring: vercel_ai.VercelAIEventStream(keyring=keyring, thread_id='bench'),
        'AG-UI': lambda keyring: ag_ui.AGUIEventStream(thread_id='bench', run_id='run', keyring=keyring),
    }
    for protocol, module, dump_json in (
        ('Vercel AI', vercel_ai, lambda ms: [m.model_dump(mode='json') for m in ms]),
        ('AG-UI', ag_ui, lambda ms: [m.model_dump(mode='json', by_alias=True) for m in ms]),
    ):
        wire = dump_json(module.dump_messages(messages, keyring=KEYRING))

        def load_plain(module: Any = module, wire: Any = wire) -> object:
            return module.load_messages(wire)

        def load_verified(module: Any = module, wire: Any = wire) -> object:
            claims = SignatureClaims()
            loaded = module.load_messages(wire, claims=claims)
            return verify_history(loaded, claims, KEYRING)

        check = load_verified()
        assert not check.dropped, (protocol, check.dropped)  # pyright: ignore[reportAttributeAccessIssue]
        rows.append(_row(f'{protocol} `load_messages` + verify, {len(messages):,} messages', load_verified, load_plain))
        rows.append(
            _row(
                f'{protocol} `dump_messages`, {len(messages):,} messages',
                lambda module=module: module.dump_messages(messages, keyring=KEYRING),
                lambda module=module: module.dump_messages(messages, keyring=UNSIGNED),
            )
        )
        make = streams[protocol]
        for label, events in (('10,000 text deltas', ours_text()), ('1,000 tool calls', ours_tools())):
            rows.append(
                _row(
                    f'{protocol} stream, {label}',
                    _encode(make, KEYRING, events),
                    _encode(make, UNSIGNED, events),
                )
            )
    notes = [
        '"ours" is with the real keyring, "peer" the same work with a keyring that signs nothing; the ratio is '
        "the signing's share. One signature costs a canonical form (orjson, sorted keys) and an HMAC-SHA256.",
        f'history: {len(messages):,} messages, {history.part_count(messages):,} parts (`bench/history.py`).',
    ]
    return print_table('Signing and verifying (issue 10)', rows, notes)


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
