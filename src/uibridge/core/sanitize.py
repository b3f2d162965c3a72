"""`sanitize_messages`: make history that came from a client safe to hand to a model.

A browser holds the conversation between turns and sends it back, so anything in it may have been
written by the user rather than by the application: a system prompt, retry feedback (whose marker a
client can copy or invent), a media URL that makes the server fetch `s3://` or `file://` with its own
credentials, or a tool call at the end of the history that would make the server run a tool on the
client's word. This pass removes each of those and warns once per kind of thing removed.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterable, Sequence
from urllib.parse import urlsplit

from .messages import (
    AudioUrl,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    SystemPromptPart,
    ToolCallPart,
    UserContent,
    UserPromptPart,
    VideoUrl,
)

__all__ = ['sanitize_messages']

_MediaUrl = ImageUrl | AudioUrl | VideoUrl | DocumentUrl


def _scheme(url: str) -> str:
    try:
        return urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return ''


def sanitize_messages(
    messages: Sequence[ModelMessage],
    *,
    strip_system_prompts: bool = True,
    allowed_file_url_schemes: Iterable[str] = ('http', 'https'),
    resolved_tool_call_ids: Collection[str] = (),
) -> list[ModelMessage]:
    """Return a copy of `messages` with what a client must not decide removed; the input is left untouched.

    - With `strip_system_prompts` (the server owns the system prompt), every `SystemPromptPart` and every
      `RetryFeedbackPart` goes, and `ModelRequest.instructions` is reset.
    - Media URLs whose scheme is not in `allowed_file_url_schemes` are dropped from user prompts.
    - Tool calls in the responses that end the history are dropped unless their id is in
      `resolved_tool_call_ids` (calls the server itself approved or is waiting on).
    - A message left with no parts is dropped.
    """
    allowed_schemes = frozenset(scheme.strip().lower() for scheme in allowed_file_url_schemes)
    removed: set[str] = set()
    result: list[ModelMessage] = []

    for message in messages:
        if isinstance(message, ModelResponse):
            if message.parts:
                result.append(message)
            continue
        parts: list[ModelRequestPart] = []
        for part in message.parts:
            if strip_system_prompts and isinstance(part, SystemPromptPart | RetryFeedbackPart):
                removed.add('system')
                continue
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                kept = _allowed_content(part.content, allowed_schemes)
                if len(kept) != len(part.content):
                    removed.add('urls')
                    if not kept:
                        continue
                    part = part.model_copy(update={'content': kept})
            parts.append(part)
        instructions = message.instructions
        if strip_system_prompts and instructions is not None:
            removed.add('system')
            instructions = None
        if not parts:
            continue
        if parts != message.parts or instructions != message.instructions:
            message = message.model_copy(update={'parts': parts, 'instructions': instructions})
        result.append(message)

    _strip_dangling_tool_calls(result, frozenset(resolved_tool_call_ids), removed)
    _warn(removed)
    return result


def _allowed_content(content: list[UserContent], allowed_schemes: frozenset[str]) -> list[UserContent]:
    return [item for item in content if not isinstance(item, _MediaUrl) or _scheme(item.url) in allowed_schemes]


def _strip_dangling_tool_calls(result: list[ModelMessage], resolved: frozenset[str], removed: set[str]) -> None:
    index = len(result) - 1
    while index >= 0:
        message = result[index]
        if not isinstance(message, ModelResponse):
            break
        kept = [p for p in message.parts if not isinstance(p, ToolCallPart) or p.tool_call_id in resolved]
        if len(kept) != len(message.parts):
            removed.add('tool_calls')
            if kept:
                result[index] = message.model_copy(update={'parts': kept})
            else:
                del result[index]
        index -= 1


_WARNINGS = {
    'system': 'System prompts, instructions and retry feedback sent by the client were removed: '
    'the server owns the system voice (strip_system_prompts=True).',
    'urls': 'Media URLs with a scheme outside allowed_file_url_schemes were removed from client history.',
    'tool_calls': 'Tool calls at the end of client history that the server did not resolve were removed: '
    'a client cannot make the server run a tool by writing a call.',
}


def _warn(removed: set[str]) -> None:
    for category in ('system', 'urls', 'tool_calls'):
        if category in removed:
            warnings.warn(_WARNINGS[category], UserWarning, stacklevel=3)
