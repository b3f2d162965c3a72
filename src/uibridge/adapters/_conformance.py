"""What uibridge does with each type of a protocol: the declaration the README's conformance table is made from.

Each adapter declares every type its protocol defines, once (`vercel_ai._conformance`, `ag_ui._conformance`),
each with its status: `emitted` (uibridge writes it from neutral events or messages), `loaded` (uibridge reads
it into neutral events or messages, or keeps it for the UI), `both`, or `n/a` (neither: the note says why). A
type uibridge does not write has a note saying why a server has nothing to write it from.

Tests hold the declaration to the protocol (every type of `ai` 7's `.d.ts` unions and of ag_ui's `EventType`,
no more) and to the code: what the stream encoders write for a corpus of neutral event streams, what their
modules can write at all, and what the decoders' dispatch tables and the loaders read. `docs/conformance.py`
writes the table into the README.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal['both', 'emitted', 'loaded', 'n/a']


@dataclass(frozen=True, slots=True)
class Support:
    status: Status
    note: str
    """What the type carries, as a neutral event or part; for a type not emitted, why."""

    @property
    def emitted(self) -> bool:
        return self.status in ('both', 'emitted')

    @property
    def loaded(self) -> bool:
        return self.status in ('both', 'loaded')


def both(note: str) -> Support:
    return Support('both', note)


def emitted(note: str) -> Support:
    return Support('emitted', note)


def loaded(note: str) -> Support:
    return Support('loaded', note)


def not_applicable(reason: str) -> Support:
    return Support('n/a', reason)
