"""uibridge: carry an agent's conversation across the Vercel AI SDK and AG-UI chat protocols.

The public face: the neutral message model, the framing core, retry feedback and `sanitize_messages`.
Protocol adapters live in `uibridge.adapters.vercel_ai` and `uibridge.adapters.ag_ui`.
"""

from .core.feedback import render_retry_feedback, retry_feedback_from_payload, retry_feedback_payload
from .core.framing import (
    DataTag,
    RegisteredTag,
    UserError,
    close_tag,
    neutralize_tags,
    open_tag,
    register_tag,
    wrap,
)
from .core.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ErrorDetails,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)
from .core.provenance import Keyring
from .core.sanitize import sanitize_messages
from .core.verification import SignatureClaims, verify_history

__all__ = [
    'AudioUrl',
    'BinaryContent',
    'DataTag',
    'DocumentUrl',
    'ErrorDetails',
    'FilePart',
    'ImageUrl',
    'Keyring',
    'ModelMessage',
    'ModelMessagesTypeAdapter',
    'ModelRequest',
    'ModelResponse',
    'RegisteredTag',
    'RetryFeedbackPart',
    'RetryPromptPart',
    'SignatureClaims',
    'SystemPromptPart',
    'TextPart',
    'ThinkingPart',
    'ToolCallPart',
    'ToolReturnPart',
    'UserError',
    'UserPromptPart',
    'VideoUrl',
    'close_tag',
    'neutralize_tags',
    'open_tag',
    'register_tag',
    'render_retry_feedback',
    'retry_feedback_from_payload',
    'retry_feedback_payload',
    'sanitize_messages',
    'verify_history',
    'wrap',
]
