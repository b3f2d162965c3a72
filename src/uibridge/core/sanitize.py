"""`sanitize_messages`: make history that came from a client safe to hand to a model.

A browser holds the conversation between turns and sends it back, so anything in it may have been
written by the user rather than by the application: a system prompt, retry feedback (whose marker a
client can copy or invent), a media URL that makes the server fetch `s3://` or `file://` with its own
credentials, or a tool call at the end of the history that would make the server run a tool on the
client's word. This pass removes each of those and warns once per kind of thing removed.

Given a `keyring` (and the `claims` a decoder read), it first keeps only what the server can prove it wrote
or what a client may author (`uibridge.core.verification`): that is what the endpoints always do. Without
one it is the stateless last line it always was.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import cast
from urllib.parse import urlsplit

from .diagnostics import warn
from .messages import (
    AudioUrl,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from .provenance import Keyring
from .verification import SignatureClaims, Verified, pending_tool_calls, verify_history

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
    keyring: Keyring | None = None,
    claims: SignatureClaims | None = None,
) -> list[ModelMessage]:
    """Return a copy of `messages` with what a client must not decide removed; the input is left untouched.

    - With a `keyring` (opt-in), what claims the server's authorship is kept only when the signature the
      decoder read for it (`claims`) verifies (`verify_history`; no claims: nothing of the server's is kept).
      A tool call id used twice raises `InputError`.
    - With `strip_system_prompts` (the server owns the system prompt), every `SystemPromptPart` and every
      `RetryFeedbackPart` goes (but feedback whose signature verified: it is the application's own), and
      `ModelRequest.instructions` is reset.
    - Media URLs whose scheme is not in `allowed_file_url_schemes` are dropped from user prompts and from
      tool results.
    - Pending tool calls (`pending_tool_calls`: unanswered calls of the last response) are dropped unless
      their id is in `resolved_tool_call_ids` (calls the server itself approved or is waiting on).
    - A message left with no parts is dropped.
    """
    if keyring is not None:
        verified = verify_history(messages, claims if claims is not None else SignatureClaims(), keyring)
    else:
        verified = Verified(messages=list(messages))
    return _sanitize(verified, strip_system_prompts, allowed_file_url_schemes, resolved_tool_call_ids)


def sanitize_verified(
    verified: Verified,
    *,
    strip_system_prompts: bool = True,
    allowed_file_url_schemes: Iterable[str] = ('http', 'https'),
    resolved_tool_call_ids: Collection[str] = (),
) -> list[ModelMessage]:
    """`sanitize_messages` for a history `verify_history` already checked (a server verifies first, to find
    the pending calls its approvals answer, then sanitizes): the verified feedback is kept."""
    return _sanitize(verified, strip_system_prompts, allowed_file_url_schemes, resolved_tool_call_ids)


def _sanitize(
    verified: Verified,
    strip_system_prompts: bool,
    allowed_file_url_schemes: Iterable[str],
    resolved_tool_call_ids: Collection[str],
) -> list[ModelMessage]:
    allowed_schemes = frozenset(scheme.strip().lower() for scheme in allowed_file_url_schemes)
    removed: set[str] = {'unverified'} if verified.dropped else set()
    result: list[ModelMessage] = []
    verified_feedback = verified.feedback
    for message in verified.messages:
        if isinstance(message, ModelResponse):
            if message.parts:
                result.append(message)
            continue
        parts: list[ModelRequestPart] = []
        for part in message.parts:
            if (
                strip_system_prompts
                and isinstance(part, SystemPromptPart | RetryFeedbackPart)
                and id(part) not in verified_feedback
            ):
                removed.add('system')
                continue
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                kept = _allowed_content(part.content, allowed_schemes)
                if len(kept) != len(part.content):
                    removed.add('urls')
                    if not kept:
                        continue
                    part = part.model_copy(update={'content': kept})
            elif isinstance(part, ToolReturnPart) and _holds_media(part.content):
                content = _allowed_tool_content(part.content, allowed_schemes)
                if content is not part.content:
                    removed.add('urls')
                    part = part.model_copy(update={'content': content})
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


_MEDIA_KINDS = frozenset({'image-url', 'audio-url', 'video-url', 'document-url'})


def _media_url(item: object) -> str | None:
    """The URL of a media item in a tool result: a media part, or its JSON form (a stored or client-sent
    history holds dicts, which an integration may turn back into media the model provider fetches)."""
    if isinstance(item, _MediaUrl):
        return item.url
    if isinstance(item, dict):
        data = cast('dict[str, object]', item)
        url = data.get('url')
        if data.get('kind') in _MEDIA_KINDS and isinstance(url, str):
            return url
    return None


def _holds_media(content: object) -> bool:
    if _media_url(content) is not None:
        return True
    return isinstance(content, list) and any(_media_url(item) is not None for item in cast('list[object]', content))


def _allowed_tool_content(content: object, allowed_schemes: frozenset[str]) -> object:
    """A tool result's content with its disallowed media URLs removed (the same object when none is)."""

    def allowed(item: object) -> bool:
        url = _media_url(item)
        return url is None or _scheme(url) in allowed_schemes

    if not isinstance(content, list):
        return content if allowed(content) else ''
    items = cast('list[object]', content)
    kept = [item for item in items if allowed(item)]
    return items if len(kept) == len(items) else kept


def _strip_dangling_tool_calls(result: list[ModelMessage], resolved: frozenset[str], removed: set[str]) -> None:
    """Drop the pending calls (`pending_tool_calls`) the server did not resolve, and responses left empty."""
    dangling = {call.tool_call_id for call in pending_tool_calls(result)} - resolved
    if not dangling:
        return
    removed.add('tool_calls')
    index = len(result)
    while index and isinstance(result[index - 1], ModelRequest):
        index -= 1
    while index and isinstance(result[index - 1], ModelResponse):
        index -= 1
        message = result[index]
        kept = [p for p in message.parts if not (isinstance(p, ToolCallPart) and p.tool_call_id in dangling)]
        if len(kept) == len(message.parts):
            continue
        if kept:
            result[index] = message.model_copy(update={'parts': kept})
        else:
            del result[index]


_WARNINGS = {
    'unverified': 'History items that claim the server wrote them but whose signature does not verify were removed '
    '(with whatever they answered or left unanswered): a client can echo what the server wrote, not author it.',
    'system': 'System prompts, instructions and retry feedback sent by the client were removed: '
    'the server owns the system voice (strip_system_prompts=True).',
    'urls': 'Media URLs with a scheme outside allowed_file_url_schemes were removed from client history.',
    'tool_calls': 'Tool calls at the end of client history that the server did not resolve were removed: '
    'a client cannot make the server run a tool by writing a call.',
}


def _warn(removed: set[str]) -> None:
    for category in ('unverified', 'system', 'urls', 'tool_calls'):
        if category in removed:
            warn(_WARNINGS[category], stacklevel=4)
