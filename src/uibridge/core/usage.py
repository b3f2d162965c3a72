"""Token usage of a model response, and a run's usage added up per provider and model.

Field names follow pydantic-ai's stored `RequestUsage`, so a stored history's usage loads as it is; a count a
provider reports that has no field here goes in `details` (pydantic-ai does the same).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ['ModelUsage', 'Usage']


class Usage(BaseModel):
    """What one model request cost, in tokens. Every count is 0 when the provider did not report it."""

    model_config = ConfigDict(extra='allow')

    input_tokens: int = 0
    """Every input token, cached ones included."""
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    """Every output token, reasoning ones included."""
    output_reasoning_tokens: int = 0
    input_audio_tokens: int = 0
    cache_audio_read_tokens: int = 0
    output_audio_tokens: int = 0
    details: dict[str, int] = Field(default_factory=dict[str, int])
    """Provider-specific counts, by the provider's own names."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def is_empty(self) -> bool:
        return not (self.input_tokens or self.output_tokens or self.cache_read_tokens or self.cache_write_tokens)


_COUNTS = tuple(name for name in Usage.model_fields if name != 'details')


def add_usage(left: Usage, right: Usage) -> Usage:
    """The two added count by count (`details` too)."""
    counts: dict[str, Any] = {name: getattr(left, name) + getattr(right, name) for name in _COUNTS}
    details = dict(left.details)
    for key, value in right.details.items():
        details[key] = details.get(key, 0) + value
    return Usage(**counts, details=details)


class ModelUsage(BaseModel):
    """A run's usage of one model: what AG-UI's `RUN_FINISHED.usage` lists one entry of."""

    provider_name: str | None
    model_name: str | None
    usage: Usage


def usage_by_model(entries: Iterable[tuple[str | None, str | None, Usage | None]]) -> list[ModelUsage]:
    """`(provider, model, usage)` entries added up per provider and model, in the order each first appears."""
    totals: dict[tuple[str | None, str | None], Usage] = {}
    for provider, model, usage in entries:
        if usage is None:
            continue
        key = (provider, model)
        totals[key] = add_usage(totals[key], usage) if key in totals else usage
    return [ModelUsage(provider_name=p, model_name=m, usage=u) for (p, m), u in totals.items()]
