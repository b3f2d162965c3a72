"""`neutralize_tags`: ours against the peer's, on prose, on adversarial input, and with 1,000 registered tags.

Bars (issue 6): at least 5x faster than the peer on 1 MB of prose with frequent tag-like fragments and on
1 MB of adversarial input; linear (10 MB under 11x the time of 1 MB); with 1,000 registered tags, under
1.5x our own time with none. Registries are process-wide, so each registry size runs in a fresh subprocess.

`python bench_framing.py --ours` times only ours on the 1 MB prose and adversarial inputs, without the peer:
for measuring a change to `neutralize_tags` before and after (with the same command) where the peer is not
installed.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _harness import Row, compare, fmt_time, print_table, time_one

MB = 1_000_000

_SENTENCE = (
    'the model answered that a tool returned its result before the user asked again and then the assistant '
    'summarised what it found in the report while every step of the plan kept its own notes for later review'
)
_WORDS = _SENTENCE.split(' ')
# The tag-like fragments the issue names: two that must be escaped, two that must stay as written.
_FRAGMENTS = ('</system>', '< / tool_result >', '<div>', 'a < b')
# The same spelled with look-alikes of `<`, `>` and `/`, a blank and a mark: again two tags and two others.
_LOOKALIKE_FRAGMENTS = (
    '\u2039\u2215system\u203a',
    '<\u2800\u2044 tool_result\u0301 >',
    '\u3008div\u3009',
    'a \u2039 b',
)


# Words real prose has beyond ASCII: accents, typographic quotes, units.
_WIDE_WORDS = ['café', '“quoted”', 'it’s', '21 °C', 'naïve', 'über']


def prose(size: int, *, non_ascii: bool = False, lookalikes: bool = False) -> str:
    """Prose with a tag-like fragment about every eight words (one `<` per ~55 characters).

    With `non_ascii`, about one word in twenty is spelled beyond ASCII (`café`, `it’s`, `21 °C`). With
    `lookalikes` as well, one fragment in eight is spelled with look-alikes (`‹∕system›`).
    """
    rng = random.Random(6)
    words = _WORDS * 4 + _WIDE_WORDS if non_ascii else _WORDS
    fragments = _FRAGMENTS * 7 + _LOOKALIKE_FRAGMENTS if lookalikes else _FRAGMENTS
    out: list[str] = []
    length = 0
    while length < size:
        sentence = [rng.choice(words) for _ in range(rng.randint(6, 12))]
        sentence.insert(rng.randrange(len(sentence)), rng.choice(fragments))
        text = ' '.join(sentence).capitalize() + '. '
        out.append(text)
        length += len(text)
    return ''.join(out)[:size]


def lt_then_spaces(size: int) -> str:
    return '<' + ' ' * (size - 1)


def lt_space_pairs(size: int) -> str:
    return '< ' * (size // 2)


def syste_near_misses(size: int) -> str:
    return ('<syste' * (size // 6 + 1))[:size]


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    '`<` then spaces': lt_then_spaces,
    '`< ` repeated': lt_space_pairs,
    '`<syste` near misses': syste_near_misses,
}

REGISTERED = 1_000


def registered_names(count: int) -> list[str]:
    """Plausible extension tag names, sharing prefixes the way real ones do."""
    rng = random.Random(1000)
    words = ['judge', 'memory', 'note', 'plan', 'review', 'score', 'trace', 'policy', 'draft', 'claim', 'quote']
    return [f'{rng.choice(words)}_{rng.choice(words)}_{i}' for i in range(count)]


def _load(impl: str) -> tuple[Callable[[str], str], Callable[[str], object]]:
    if impl == 'ours':
        from uibridge.core.framing import neutralize_tags, register_tag
    else:
        from pydantic_ai.framing import neutralize_tags, register_tag
    return neutralize_tags, register_tag


def child(impl: str, count: int) -> None:
    """Run in a fresh process: register `count` tags, then time `neutralize_tags` on the 1 MB prose."""
    neutralize, register = _load(impl)
    start = time.perf_counter()
    for name in registered_names(count):
        register(name)
    register_s = time.perf_counter() - start
    text = prose(MB)
    median = time_one(lambda: neutralize(text), repeat=9)
    print(json.dumps({'median': median, 'register': register_s}))


def _run_child(impl: str, count: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), '--child', impl, str(count)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def _registry_rows() -> tuple[list[Row], list[str]]:
    # Ours alternates fresh processes with and without the registry, several times, so that a change in
    # the machine's load between two processes cannot pass for a cost of the registry; the median of
    # each process's median is reported. The peer's registration takes half a minute, so it runs once.
    rounds = 3
    ours_none: list[dict[str, float]] = []
    ours_many: list[dict[str, float]] = []
    for _ in range(rounds):
        ours_none.append(_run_child('ours', 0))
        ours_many.append(_run_child('ours', REGISTERED))
    peer_none, peer_many = _run_child('peer', 0), _run_child('peer', REGISTERED)
    none = statistics.median(r['median'] for r in ours_none)
    many = statistics.median(r['median'] for r in ours_many)
    register = statistics.median(r['register'] for r in ours_many)
    growth = many / none
    rows = [
        Row(
            f'1 MB prose, {REGISTERED:,} tags registered (vs none)',
            fmt_time(many),
            fmt_time(peer_many['median']),
            f'{growth:.2f}x ours with none',
            '< 1.5x',
            growth < 1.5,
        ),
        Row(
            '1 MB prose, none registered (fresh process)',
            fmt_time(none),
            fmt_time(peer_none['median']),
            '— (not side by side)',
            '—',
            None,
        ),
        Row(
            f'registering {REGISTERED:,} tags',
            fmt_time(register),
            fmt_time(peer_many['register']),
            f'{peer_many["register"] / register:.0f}x faster',
            '—',
            None,
        ),
    ]
    notes = [
        f'with {REGISTERED:,} registered the peer takes {peer_many["median"] / peer_none["median"]:.1f}x its own '
        f'time with none. Each registry size runs in its own fresh process (ours: {rounds} alternating rounds, '
        "the median of their medians), so the two libraries' times in these rows were not measured side by side "
        "and are not compared; the side-by-side ratio is the first row's."
    ]
    return rows, notes


def main() -> bool:
    ours, _ = _load('ours')
    peer, _ = _load('peer')
    rows: list[Row] = []
    notes: list[str] = []

    for label, text in (
        ('1 MB prose, tag-like fragments', prose(MB)),
        ('1 MB prose, tag-like fragments, some words beyond ASCII', prose(MB, non_ascii=True)),
    ):
        assert ours(text) == peer(text), 'the two libraries escape this prose differently: not like for like'
        t_ours, t_peer = compare([lambda text=text: ours(text), lambda text=text: peer(text)], repeat=9)
        speedup = t_peer / t_ours
        rows.append(
            Row(label, fmt_time(t_ours), fmt_time(t_peer), f'{speedup:.1f}x faster', '≥ 5x faster', speedup >= 5)
        )
    text = prose(MB)
    notes.append(
        f'prose: {text.count("<"):,} `<` per MB, {ours(text).count("&lt;"):,} of them escaped; identical output '
        'from both libraries (asserted).'
    )
    # Look-alike spellings only we escape, so the outputs differ: our cost of doing that work, beside the peer's
    # time on the same text for scale, with no bar.
    lookalike = prose(MB, non_ascii=True, lookalikes=True)
    t_ours, t_peer = compare([lambda: ours(lookalike), lambda: peer(lookalike)], repeat=9)
    rows.append(
        Row(
            '1 MB prose beyond ASCII, one fragment in eight spelled with look-alikes (only ours escapes them)',
            fmt_time(t_ours),
            fmt_time(t_peer),
            f'{t_peer / t_ours:.1f}x faster',
            '—',
            None,
        )
    )
    notes.append(
        f'look-alike prose: {ours(lookalike).count("&lt;") - peer(lookalike).count("&lt;"):,} more tags '
        'escaped by ours than by the peer (`‹∕system›`, `<⠀⁄ tool_result́ >`).'
    )

    # What no `neutralize_tags` can beat in CPython: touching every `<` with a builtin, deciding nothing.
    pattern = re.compile('<')
    t_sub, t_replace, t_peer = compare(
        [lambda: pattern.sub('&lt;', text), lambda: text.replace('<', '&lt;'), lambda: peer(text)], repeat=9
    )
    for label, seconds in (
        ("floor: `re.compile('<').sub('&lt;', prose)`, every `<` escaped", t_sub),
        ("floor: `prose.replace('<', '&lt;')`, every `<` escaped", t_replace),
    ):
        rows.append(Row(label, fmt_time(seconds), fmt_time(t_peer), f'{t_peer / seconds:.1f}x faster', '—', None))

    for label, make in ADVERSARIAL.items():
        one, ten = make(MB), make(10 * MB)
        assert ours(one) == peer(one)
        t_ours, t_peer = compare([lambda one=one: ours(one), lambda one=one: peer(one)], repeat=5)
        speedup = t_peer / t_ours
        rows.append(
            Row(
                f'1 MB {label}',
                fmt_time(t_ours),
                fmt_time(t_peer),
                f'{speedup:.1f}x faster',
                '≥ 5x faster',
                speedup >= 5,
            )
        )

        # 10 MB against ten 1 MB runs back to back, interleaved: each sample of either side spans about the
        # same time, so a change in the machine's load weighs on both alike.
        def ten_ones(one: str = one) -> None:
            for _ in range(10):
                ours(one)

        t_ones, t_ten = compare([ten_ones, lambda ten=ten: ours(ten)], repeat=5)
        t_one = t_ones / 10
        growth = t_ten / t_one
        rows.append(
            Row(
                f'10 MB {label} (ours vs ours at 1 MB)',
                fmt_time(t_ten),
                '—',
                f'{growth:.1f}x the 1 MB time ({fmt_time(t_one)}, ten runs averaged)',
                '< 11x',
                growth < 11,
            )
        )

    more_rows, more_notes = _registry_rows()
    return print_table('`neutralize_tags`', rows + more_rows, notes + more_notes)


def ours_only() -> None:
    """Our median on each 1 MB input, the inputs interleaved (no peer, no bars)."""
    ours, _ = _load('ours')
    texts = {
        '1 MB prose, tag-like fragments': prose(MB),
        '1 MB prose, tag-like fragments, some words beyond ASCII': prose(MB, non_ascii=True),
        '1 MB prose, beyond ASCII, one fragment in eight spelled with look-alikes': prose(
            MB, non_ascii=True, lookalikes=True
        ),
        **{f'1 MB {label}': make(MB) for label, make in ADVERSARIAL.items()},
    }
    times = compare([lambda text=text: ours(text) for text in texts.values()], repeat=15)
    rows = [Row(label, fmt_time(seconds), '—', '—', '—', None) for label, seconds in zip(texts, times, strict=True)]
    print_table('`neutralize_tags`, ours only', rows)


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == '--child':
        child(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:] == ['--ours']:
        ours_only()
    else:
        sys.exit(0 if main() else 1)
