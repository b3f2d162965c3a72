"""What the vendor history conversions share: how each request part reads to the model, whatever the API.

A neutral history holds parts that no vendor API has a kind for (a retry prompt, the application's retry
feedback); each is sent as the text uibridge renders for it, the same words `RetryPromptPart.model_response`
and `render_retry_feedback` give every other consumer, so a model reads the same thing through any API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..core.feedback import render_retry_feedback
from ..core.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    ToolReturnPart,
    UserContent,
)

_Part = TypeVar('_Part')


def result_text(part: ToolReturnPart | RetryPromptPart | RetryFeedbackPart) -> str:
    """The text the model is shown for a tool result, a retry prompt or retry feedback."""
    if isinstance(part, ToolReturnPart):
        return part.model_response_str()
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    return render_retry_feedback(part)


def instructions(history: Sequence[ModelMessage]) -> str | None:
    """The latest request's `instructions`: they belong to the turn being answered, as pydantic-ai sends them."""
    for message in reversed(history):
        if isinstance(message, ModelRequest) and message.instructions:
            return message.instructions
    return None


def system_text(history: Sequence[ModelMessage]) -> str | None:
    """Every system prompt, then the latest instructions, joined: for an API with one `system` field."""
    texts = [
        part.content
        for message in history
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    ]
    latest = instructions(history)
    if latest:
        texts.append(latest)
    return '\n\n'.join(texts) if texts else None


def media_kind(content: BinaryContent) -> str:
    """`image`, `audio`, `pdf` or the media type itself: the cases the vendor APIs take inline."""
    media_type = content.media_type.lower()
    if media_type.startswith('image/'):
        return 'image'
    if media_type.startswith('audio/'):
        return 'audio'
    if media_type == 'application/pdf':
        return 'pdf'
    return media_type


def unsupported(api: str, what: str) -> ValueError:
    return ValueError(f'{api} takes no {what} in a user prompt; convert it before sending')


@dataclass(frozen=True, slots=True)
class UserContentSpelling(Generic[_Part]):
    """How one API spells each kind of user content it takes. What it has no spelling for is refused with a
    `ValueError` naming the API, never dropped: the model would answer a prompt it was not shown whole."""

    api: str
    text: Callable[[str], _Part]
    image_link: Callable[[str], _Part]
    inline: Mapping[str, Callable[[BinaryContent], _Part | None]]
    """Inline bytes by `media_kind`; a spelling that returns `None` refuses that item (an audio format the
    API does not take, say)."""


def user_content_parts(content: Sequence[UserContent], spelling: UserContentSpelling[_Part]) -> list[_Part]:
    """A user prompt's content list as `spelling`'s API content parts, in order."""
    parts: list[_Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(spelling.text(item))
        elif isinstance(item, ImageUrl):
            parts.append(spelling.image_link(item.url))
        elif isinstance(item, BinaryContent):
            spell = spelling.inline.get(media_kind(item))
            part = spell(item) if spell is not None else None
            if part is None:
                raise unsupported(spelling.api, f'{item.media_type} content')
            parts.append(part)
        else:
            raise unsupported(spelling.api, f'{item.kind} link')
    return parts
