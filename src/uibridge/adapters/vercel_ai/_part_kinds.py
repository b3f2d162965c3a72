"""Which branch of `load.py`'s assistant loop a UI part takes, told by its exact class first.

An `isinstance` that fails on a pydantic model class takes the slow ABCMeta path, and the loop's chain tried up
to five of them per part (and one more per part to see whether a message has steps). `KINDS` answers for each
part class `types.py` declares; any other class (a subclass) goes through `kind_of`, the same checks in the same
order as before, so every part still lands where the chain sent it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import types as t

STEP, TEXT, FILE, TOOL, OTHER = 'step', 'text', 'file', 'tool', 'other'
KINDS: dict[type[Any], str] = {
    t.StepStartUIPart: STEP,
    t.TextUIPart: TEXT,
    t.ReasoningUIPart: TEXT,
    t.FileUIPart: FILE,
    t.ToolUIPart: TOOL,
    t.DynamicToolUIPart: TOOL,
    t.DataUIPart: OTHER,
    t.SourceUrlUIPart: OTHER,
    t.SourceDocumentUIPart: OTHER,
    t.CustomUIPart: OTHER,
    t.ReasoningFileUIPart: OTHER,
    t.SteeringMessageUIPart: OTHER,
    t.UnknownUIPart: OTHER,
}


def kind_of(part: object) -> str:
    if isinstance(part, t.StepStartUIPart):
        return STEP
    if isinstance(part, t.TextUIPart | t.ReasoningUIPart):
        return TEXT
    if isinstance(part, t.FileUIPart):
        return FILE
    if isinstance(part, t.ToolUIPart | t.DynamicToolUIPart):
        return TOOL
    return OTHER


def has_step_start(parts: Sequence[object]) -> bool:
    classes = set(map(type, parts))
    if t.StepStartUIPart in classes:
        return True
    # Only a class outside `KINDS` (none of which is a step start) can be a subclass of one.
    return not classes <= KINDS.keys() and any(isinstance(part, t.StepStartUIPart) for part in parts)
