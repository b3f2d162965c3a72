"""pydantic-ai's own retry-feedback marker, read for migrating the UI histories its adapters stored.

pydantic-ai's `VercelAIAdapter` and `AGUIAdapter` dump a `RetryFeedbackPart` as a text message in its own wording, with
the part itself beside it under a `pydantic_ai` key (`providerMetadata` / `encryptedValue`): `{"part_kind":
"retry-feedback", "content", "retry": {"cause", ...}, "timestamp"}`. Only that marker makes the message feedback again,
exactly as only uibridge's own marker does (`uibridge.core.feedback`): text that merely reads like feedback stays what
it is, so a client cannot make its own words pass for the application's. The message's text is pydantic-ai's rendering,
not ours; once loaded, the model is shown `render_retry_feedback`, as for any `RetryFeedbackPart`.
"""

from __future__ import annotations

from typing import Any, cast

import pydantic

from .feedback import retry_feedback_payload
from .json_text import json_values
from .messages import RetryFeedbackPart

PEER_KEY = 'pydantic_ai'
"""The key pydantic-ai's UI adapters write their records under."""


def peer_retry_feedback(payload: Any) -> RetryFeedbackPart | None:
    """The part pydantic-ai's marker describes, or `None` for anything that is not one (strictly)."""
    if not isinstance(payload, dict):
        return None
    data = cast('dict[str, Any]', payload)
    retry = data.get('retry')
    if data.get('part_kind') != 'retry-feedback' or not isinstance(retry, dict) or 'timestamp' not in data:
        return None
    try:
        # Only the marker's own keys: whatever else rides beside them is not the part.
        keys = ('part_kind', 'content', 'retry', 'timestamp')
        return RetryFeedbackPart.model_validate({key: data[key] for key in keys if key in data})
    except pydantic.ValidationError:
        return None


def our_marker(part: RetryFeedbackPart) -> dict[str, Any]:
    """uibridge's marker for `part`, with the content whole (errors keep their `input`: it is the store's own
    record being migrated, not a client's copy), so the part loads back as pydantic-ai stored it."""
    return {**retry_feedback_payload(part), 'content': json_values.dump_python(part.content, mode='json')}
