"""Retry feedback: how a `RetryFeedbackPart` reads to the model, and the marker that carries it through a UI.

A `RetryFeedbackPart` is the application's own feedback on an answer that answered no tool call: structured
output that failed validation, an answer with nothing usable in it, or a validator that raised `ModelRetry`.
The stored part carries no wording; its `cause` picks a template here, at render time, so one history stays
valid as the wording improves. Each template states the fact in the application's voice and adds no
directive of its own: the model is told what happened, not ordered about, since nobody wrote an order and the
system voice should carry only what the application said.

Anything in the text that the model itself wrote (validation error messages quote its output, a validator
may echo it) goes inside a data tag (`wrap`), so it cannot close the frame or forge a `<system>` block.

The UI marker (`retry_feedback_payload`) is what a protocol's metadata channel carries so a decoder can
rebuild the part. The client reads and echoes it back, so it discloses no more than the rendered text: each
error's `ctx` dropped and its `input` left out, exactly as the text renders them.

The older form of the same feedback, a tool-less `RetryPromptPart`, rides in the same channel, its marker's
`part_kind` saying `retry-prompt` (`legacy_retry_payload`): its content as a tool-bound retry's record carries
it (no `ctx`, each `input` kept, as its signature covers it; a root-level `input` is the model's own answer, which
the client holds already), its `tool_call_id` and `timestamp`, so it comes back as exactly the part the agent
yielded and the model reads the same `model_response()` on the next turn. It is not turned into a
`RetryFeedbackPart`: that would need a cause the part never had and would show the model other words.
"""

from __future__ import annotations

from typing import Any, cast

import pydantic

from .exact_json import carried_value, carry_exact
from .framing import wrap
from .json_text import compact_json, iso_utc, json_values
from .messages import ErrorDetails, RetryFeedbackPart, RetryPromptPart
from .provenance import retry_content

_VALIDATION_ERROR_LEAD = "The previous response did not pass the application's validation:"
_NO_OUTPUT_LEAD = 'The previous response contained no usable output.'
_MODEL_RETRY_LEAD = "The application's validator rejected the previous response:"


def _disclosed_errors(errors: list[ErrorDetails]) -> list[dict[str, Any]]:
    """The errors as the model and the UI may see them: no `ctx`, no `input` (include_input none)."""
    return [{key: value for key, value in error.items() if key not in ('ctx', 'input')} for error in errors]


def render_retry_feedback(part: RetryFeedbackPart) -> str:
    """The text the model is shown for `part`, chosen by its `cause`."""
    content = part.content
    body = content if isinstance(content, str) else compact_json(_disclosed_errors(content))
    if part.cause == 'validation_error':
        return f'{_VALIDATION_ERROR_LEAD}\n{wrap("validation_errors", body)}'
    if part.cause == 'model_retry':
        return f'{_MODEL_RETRY_LEAD}\n{wrap("retry_feedback", body)}'
    if not body:
        return _NO_OUTPUT_LEAD
    return f'{_NO_OUTPUT_LEAD}\n{wrap("retry_feedback", body)}'


def retry_feedback_payload(part: RetryFeedbackPart) -> dict[str, Any]:
    """The JSON marker a UI carries for `part`: the part, disclosing no more than its rendered text."""
    content: str | list[dict[str, Any]] = (
        part.content if isinstance(part.content, str) else _disclosed_errors(part.content)
    )
    return {
        'part_kind': part.part_kind,
        'cause': part.cause,
        'content': json_values.dump_python(content, mode='json'),
        'timestamp': iso_utc(part.timestamp),
    }


_MARKER_KEYS = ('part_kind', 'cause', 'content', 'timestamp')


def retry_feedback_from_payload(data: Any) -> RetryFeedbackPart | None:
    """The part a marker describes, or `None` for anything that does not validate.

    Strict on purpose: the marker comes back from a client, so an unknown cause, another `part_kind`,
    content of the wrong shape or a missing timestamp make it no marker at all.
    """
    if not isinstance(data, dict) or data.get('part_kind') != 'retry-feedback':  # pyright: ignore[reportUnknownMemberType]
        return None
    if 'timestamp' not in data or 'cause' not in data or 'content' not in data:
        return None
    try:
        # Only the marker's own keys: a client's extra key must not ride into the part (which keeps extras).
        return RetryFeedbackPart.model_validate({key: data[key] for key in _MARKER_KEYS})
    except pydantic.ValidationError:
        return None


def legacy_retry_payload(part: RetryPromptPart) -> dict[str, Any]:
    """The marker a UI carries for a tool-less `RetryPromptPart` (see the module docstring), beside the text its
    `model_response()` gives; `<key>_json` carries the content's exact text where JavaScript would change it."""
    content = retry_content(part.content)
    marker: dict[str, Any] = {
        'part_kind': part.part_kind,
        'content': json_values.dump_python(content, mode='json'),
        'tool_call_id': part.tool_call_id,
        'timestamp': iso_utc(part.timestamp),
    }
    return carry_exact(marker, 'content', content)


_LEGACY_KEYS = ('content', 'tool_call_id', 'timestamp')


def legacy_retry_from_payload(data: Any) -> RetryPromptPart | None:
    """The tool-less `RetryPromptPart` a `retry-prompt` marker describes, or `None` (as strict as
    `retry_feedback_from_payload`: a missing key or content of the wrong shape makes it no marker)."""
    if not isinstance(data, dict) or data.get('part_kind') != 'retry-prompt':  # pyright: ignore[reportUnknownMemberType]
        return None
    fields = cast('dict[str, Any]', data)
    if any(key not in fields for key in _LEGACY_KEYS) or not isinstance(fields['tool_call_id'], str):
        return None
    content = carried_value(fields, 'content', fields['content'])
    try:
        return RetryPromptPart.model_validate(
            {'content': content, 'tool_call_id': fields['tool_call_id'], 'timestamp': fields['timestamp']}
        )
    except pydantic.ValidationError:
        return None


def retry_marker_part(data: Any) -> RetryFeedbackPart | RetryPromptPart | None:
    """The part a marker of either form describes (its `part_kind` says which), or `None`."""
    return retry_feedback_from_payload(data) or legacy_retry_from_payload(data)


def retry_marker(part: RetryFeedbackPart | RetryPromptPart) -> dict[str, Any]:
    """The marker a UI carries for feedback of either form (`retry_feedback_payload`, `legacy_retry_payload`)."""
    return retry_feedback_payload(part) if isinstance(part, RetryFeedbackPart) else legacy_retry_payload(part)


def retry_text(part: RetryFeedbackPart | RetryPromptPart) -> str:
    """The text a UI shows beside the marker for feedback of either form, which is what the model reads."""
    return render_retry_feedback(part) if isinstance(part, RetryFeedbackPart) else part.model_response()


def retry_feedback_from_marker(data: Any, shown_text: str) -> RetryFeedbackPart | RetryPromptPart | None:
    """The part a system message's marker describes, when the message still shows what that part renders
    (`retry_text`).

    The marker and the visible text travel side by side and a client can edit either. If they no longer
    agree, the client shows one thing and would have the model read another; neither can be trusted as the
    application's feedback, so the message is not feedback at all (`None`: the decoder keeps it as the
    system message it visibly is, which `sanitize_messages` strips when the server owns the system voice).
    """
    part = retry_marker_part(data)
    return part if part is not None and retry_text(part) == shown_text else None
