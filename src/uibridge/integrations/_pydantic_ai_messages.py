"""Messages both ways between uibridge's neutral model and pydantic-ai's, through their shared JSON.

uibridge's stored-message JSON is pydantic-ai's (`uibridge.core.messages`), so a history crosses by dumping it
with one side's `ModelMessagesTypeAdapter` and validating it with the other's; every key either side has no
field for rides along (uibridge keeps unknown keys, `extra='allow'`). One part needs a hand: a retry that
answers a tool call. pydantic-ai (2.68 on) stores it as a tool return with `outcome='retried'` and a `retry`
record (cause, attempt, budget); uibridge as a `RetryPromptPart`. Going to uibridge the retry record is kept as
an extra key of the `RetryPromptPart`; coming back, a `retry-prompt` part that has one is written as the
retried tool return it was, so nothing is lost either way. A `retry-prompt` part without one (written by
another agent) loads as pydantic-ai loads any legacy retry prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import messages as pai

from ..core.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequestPart, ModelResponsePart


@cache
def _pai_request_part() -> TypeAdapter[Any]:
    return TypeAdapter(pai.ModelRequestPart)


@cache
def _pai_response_part() -> TypeAdapter[Any]:
    return TypeAdapter(pai.ModelResponsePart)


_request_part: TypeAdapter[ModelRequestPart] = TypeAdapter(ModelRequestPart)
_response_part: TypeAdapter[ModelResponsePart] = TypeAdapter(ModelResponsePart)


def to_pydantic_ai(history: Sequence[ModelMessage]) -> list[pai.ModelMessage]:
    """A neutral history as pydantic-ai messages (for `message_history`)."""
    dumped = ModelMessagesTypeAdapter.dump_python(list(history), mode='json')
    for message in dumped:
        if message.get('kind') == 'request':
            message['parts'] = [_retried_tool_return(part) for part in message['parts']]
    return pai.ModelMessagesTypeAdapter.validate_python(dumped)


def from_pydantic_ai(messages: Sequence[pai.ModelMessage]) -> list[ModelMessage]:
    """pydantic-ai messages (a run's `new_messages()`, a stored history) as neutral ones."""
    dumped = pai.ModelMessagesTypeAdapter.dump_python(list(messages), mode='json')
    for message in dumped:
        if message.get('kind') == 'request':
            message['parts'] = [_retry_prompt(part) for part in message['parts']]
    return ModelMessagesTypeAdapter.validate_python(dumped)


def request_part(part: Any) -> ModelRequestPart:
    """One pydantic-ai request part (a tool return, retry feedback) as the neutral part."""
    return _request_part.validate_python(_retry_prompt(_pai_request_part().dump_python(part, mode='json')))


def response_part(part: Any) -> ModelResponsePart:
    """One pydantic-ai response part as the neutral part (an `OpaquePart` for a kind uibridge does not know)."""
    return _response_part.validate_python(_pai_response_part().dump_python(part, mode='json'))


def _retry_prompt(part: dict[str, Any]) -> dict[str, Any]:
    """A retried tool return as the `RetryPromptPart` it is here, its `retry` record kept as an extra key."""
    if part.get('part_kind') != 'tool-return' or part.get('outcome') != 'retried':
        return part
    kept = {key: value for key, value in part.items() if key not in ('outcome', 'part_kind')}
    return {**kept, 'part_kind': 'retry-prompt'}


def _retried_tool_return(part: dict[str, Any]) -> dict[str, Any]:
    """The reverse of `_retry_prompt`, for a retry prompt that came from pydantic-ai (it has a `retry` key)."""
    if part.get('part_kind') != 'retry-prompt' or part.get('tool_name') is None or 'retry' not in part:
        return part
    return {**part, 'part_kind': 'tool-return', 'outcome': 'retried'}
