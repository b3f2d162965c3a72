"""`sanitize_messages`: make history that came from a client safe to hand to a model.

A browser holds the conversation between turns and sends it back, so anything in it may have been
written by the user rather than by the application: a system prompt, retry feedback (whose marker a
client can copy or invent), a media URL that makes the server fetch `s3://` or `file://` with its own
credentials, a provider's file handle (`UploadedFile`: any file in the server's provider account, which the
model provider would read with the server's key), or a tool call at the end of the history that would make
the server run a tool on the client's word. This pass removes each of those and warns once per kind of thing removed.

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
    RetryPromptPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from .provenance import Keyring
from .verification import RESERVED_METADATA_KEY, SignatureClaims, Verified, pending_tool_calls, verify_history

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
    allow_file_handles: bool = False,
) -> list[ModelMessage]:
    """Return a copy of `messages` with what a client must not decide removed; the input is left untouched.

    - With a `keyring` (opt-in), what claims the server's authorship is kept only when the signature the
      decoder read for it (`claims`) verifies (`verify_history`; no claims: nothing of the server's is kept).
      A tool call id used twice raises `InputError`.
    - With `strip_system_prompts` (the server owns the system prompt), every `SystemPromptPart` and every
      `RetryFeedbackPart` or tool-less `RetryPromptPart` (its older form) goes (but feedback whose signature
      verified: it is the application's own), and
      `ModelRequest.instructions` is reset.
    - Media URLs whose scheme is not in `allowed_file_url_schemes` are dropped from user prompts and from
      tool results, and so are provider file handles (`UploadedFile`) unless `allow_file_handles` (the
      application checks that the handles a client names are the client's own).
    - Pending tool calls (`pending_tool_calls`: unanswered calls of the last response) are dropped unless
      their id is in `resolved_tool_call_ids` (calls the server itself approved or is waiting on).
    - pydantic-ai's reserved metadata key (`__pydantic_ai__`) is dropped from every message's metadata.
    - A message left with no parts is dropped.
    """
    if keyring is not None:
        verified = verify_history(messages, claims if claims is not None else SignatureClaims(), keyring)
    else:
        verified = Verified(messages=[_without_reserved(message) for message in messages])
        verified.reserved = sum(
            message.metadata is not None and RESERVED_METADATA_KEY in message.metadata for message in messages
        )
    return _sanitize(
        verified, strip_system_prompts, allowed_file_url_schemes, resolved_tool_call_ids, allow_file_handles
    )


def sanitize_verified(
    verified: Verified,
    *,
    strip_system_prompts: bool = True,
    allowed_file_url_schemes: Iterable[str] = ('http', 'https'),
    resolved_tool_call_ids: Collection[str] = (),
    allow_file_handles: bool = False,
) -> list[ModelMessage]:
    """`sanitize_messages` for a history `verify_history` already checked (a server verifies first, to find
    the pending calls its approvals answer, then sanitizes): the verified feedback is kept."""
    return _sanitize(
        verified, strip_system_prompts, allowed_file_url_schemes, resolved_tool_call_ids, allow_file_handles
    )


def _sanitize(
    verified: Verified,
    strip_system_prompts: bool,
    allowed_file_url_schemes: Iterable[str],
    resolved_tool_call_ids: Collection[str],
    allow_file_handles: bool,
) -> list[ModelMessage]:
    allowed = _Allowed(frozenset(scheme.strip().lower() for scheme in allowed_file_url_schemes), allow_file_handles)
    removed: set[str] = {'unverified'} if verified.dropped else set()
    if verified.reserved:
        removed.add('reserved')
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
                and (
                    isinstance(part, SystemPromptPart | RetryFeedbackPart)
                    or (isinstance(part, RetryPromptPart) and part.tool_name is None)
                )
                and id(part) not in verified_feedback
            ):
                removed.add('system')
                continue
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                kept = [item for item in part.content if allowed(item, removed)]
                if len(kept) != len(part.content):
                    if not kept:
                        continue
                    part = part.model_copy(update={'content': kept})
            elif isinstance(part, ToolReturnPart) and _holds_media(part.content):
                content = _allowed_tool_content(part.content, allowed, removed)
                if content is not part.content:
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


def _without_reserved(message: ModelMessage) -> ModelMessage:
    """`message` without pydantic-ai's reserved metadata key (framework state, never a client's to set), its own
    keys kept and `metadata` reset to `None` when nothing else is left: what pydantic-ai does to untrusted history.
    (With a keyring, `verify_history` resets the whole metadata of client history instead.)"""
    metadata = message.metadata
    if not metadata or RESERVED_METADATA_KEY not in metadata:
        return message
    kept = {key: value for key, value in metadata.items() if key != RESERVED_METADATA_KEY}
    return message.model_copy(update={'metadata': kept or None})


class _Allowed:
    """Whether a media item of client history may stay (`removed` records why one may not)."""

    def __init__(self, schemes: frozenset[str], file_handles: bool) -> None:
        self.schemes = schemes
        self.file_handles = file_handles

    def __call__(self, item: UserContent | object, removed: set[str]) -> bool:
        if _is_file_handle(item) and not self.file_handles:
            removed.add('file_handles')
            return False
        url = _media_url(item)
        if url is not None and _scheme(url) not in self.schemes:
            removed.add('urls')
            return False
        return True


def _is_file_handle(item: object) -> bool:
    """A provider's file handle: the content item, or its JSON form (in a stored or client-sent tool result)."""
    if isinstance(item, UploadedFile):
        return True
    return isinstance(item, dict) and cast('dict[str, object]', item).get('kind') == 'uploaded-file'


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


def _is_media(item: object) -> bool:
    return _media_url(item) is not None or _is_file_handle(item)


def _holds_media(content: object) -> bool:
    if _is_media(content):
        return True
    return isinstance(content, list) and any(_is_media(item) for item in cast('list[object]', content))


def _allowed_tool_content(content: object, allowed: _Allowed, removed: set[str]) -> object:
    """A tool result's content with its disallowed media removed (the same object when none is)."""
    if not isinstance(content, list):
        return content if allowed(content, removed) else ''
    items = cast('list[object]', content)
    kept = [item for item in items if allowed(item, removed)]
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
    'file_handles': 'Provider file handles were removed from client history: a client may not name a file in the '
    "server's provider account (allow_file_handles=False).",
    'tool_calls': 'Tool calls at the end of client history that the server did not resolve were removed: '
    'a client cannot make the server run a tool by writing a call.',
    'reserved': "Client history carried metadata under pydantic-ai's reserved `__pydantic_ai__` key, where "
    'pydantic-ai keeps state it acts on: it was dropped (with the rest of the message metadata of client history, '
    'which no signature covers).',
}


def _warn(removed: set[str]) -> None:
    for category in ('unverified', 'reserved', 'system', 'urls', 'file_handles', 'tool_calls'):
        if category in removed:
            warn(_WARNINGS[category], stacklevel=4)
