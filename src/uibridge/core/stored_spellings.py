"""How pydantic-ai spells in its stored JSON two parts uibridge models its own way, read and written back.

- A retry that answers a tool call: pydantic-ai (2.68 and later) stores a `tool-return` with
  `outcome='retried'`; uibridge loads it as the `RetryPromptPart` that means exactly this, keeping every other
  key as an extra, and `outcome='retried'` makes it dump back as the tool return it was.
- Retry feedback's cause: pydantic-ai nests it as `retry: {cause, attempt, max_retries}`; uibridge keeps it
  flat (seed 003) and writes both spellings, so a history it saved loads in pydantic-ai too.
- A retry's validation errors: pydantic-ai requires each error's `input`, which uibridge may not have (a UI's
  marker leaves it out); one without is written with `"input": null`.

Plain functions over the JSON-shaped dicts; `uibridge.core.messages` calls them from its validators and
serializers, so the stored history is unchanged by a round trip through uibridge.
"""

from __future__ import annotations

from typing import Any, cast

_RETRY_KEYS = frozenset({'cause', 'attempt', 'max_retries'})


def read_retried_tool_return(part: Any) -> Any:
    """A request part as stored, with pydantic-ai's retried tool return turned into a `retry-prompt` (every
    other key, `outcome` included, stays for the part to keep as an extra key)."""
    if not isinstance(part, dict):
        return part
    data = cast('dict[str, Any]', part)
    if data.get('part_kind') != 'tool-return' or data.get('outcome') != 'retried':
        return data
    return {**data, 'part_kind': 'retry-prompt'}


def write_retried_tool_return(data: dict[str, Any]) -> dict[str, Any]:
    """A dumped `RetryPromptPart` that was loaded from a retried tool return, spelled as that tool return."""
    if data.get('outcome') == 'retried':
        data['part_kind'] = 'tool-return'
    return data


def read_nested_cause(data: Any) -> Any:
    """Retry feedback as stored, with pydantic-ai's nested `retry.cause` read as the flat `cause`; the `retry`
    record is kept as an extra key only when it holds more than what `write_nested_cause` writes."""
    if not isinstance(data, dict):
        return data
    nested = cast('dict[str, Any]', data)
    retry = nested.get('retry')
    if not isinstance(retry, dict):
        return nested
    retry = cast('dict[str, Any]', retry)
    if 'cause' not in nested and 'cause' in retry:
        nested = {**nested, 'cause': retry['cause']}
    if retry.get('attempt') is None and retry.get('max_retries') is None and set(retry) <= _RETRY_KEYS:
        nested = {key: value for key, value in nested.items() if key != 'retry'}
    return nested


def write_nested_cause(data: dict[str, Any], cause: str) -> dict[str, Any]:
    """Dumped retry feedback with pydantic-ai's `retry` record too (its own, kept as an extra key, when the part
    was loaded from it), which pydantic-ai requires."""
    kept = data.get('retry')
    retry = dict(cast('dict[str, Any]', kept)) if isinstance(kept, dict) else {'attempt': None, 'max_retries': None}
    data['retry'] = {**retry, 'cause': cause}
    return data


def write_error_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """A dumped retry (prompt or feedback) whose error list has an `input` on every error: `null` where the error
    had none. pydantic-ai requires the key; what uibridge shows the model of a `null` input is what pydantic-ai
    shows, and retry feedback shows no input at all."""
    content = data.get('content')
    if isinstance(content, list):
        data['content'] = [_with_input(error) for error in cast('list[Any]', content)]
    return data


def _with_input(error: Any) -> Any:
    if not isinstance(error, dict) or 'input' in error:
        return cast('Any', error)
    items = list(cast('dict[str, Any]', error).items())
    # Where pydantic writes it: after `msg` (the key order a history dumped by pydantic-ai has).
    at = next((i + 1 for i, (key, _) in enumerate(items) if key == 'msg'), len(items))
    return dict([*items[:at], ('input', None), *items[at:]])
