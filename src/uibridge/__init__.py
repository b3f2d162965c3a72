"""uibridge: carry an agent's conversation across the Vercel AI SDK and AG-UI chat protocols.

The public face: the neutral message model, the events an agent streams with, the framing core, retry
feedback, signed history (`Keyring`, `verify_history`) and `sanitize_messages`. Protocol adapters live in
`uibridge.adapters.vercel_ai` and `uibridge.adapters.ag_ui`; the endpoints in `uibridge.server`.
"""

# The neutral vocabulary, whole: every name its modules list is public here too (so a new event or part kind
# is exported by being added to its module, and the two lists cannot disagree).
from .core import citations, content, events, messages, usage
from .core.citations import *  # noqa: F403
from .core.collector import MessageCollector
from .core.content import *  # noqa: F403
from .core.events import *  # noqa: F403
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
from .core.messages import *  # noqa: F403
from .core.provenance import Keyring
from .core.sanitize import sanitize_messages
from .core.usage import *  # noqa: F403
from .core.verification import SignatureClaims, verify_history

__all__ = [
    'DataTag',
    'Keyring',
    'MessageCollector',
    'RegisteredTag',
    'SignatureClaims',
    'UserError',
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
__all__ += citations.__all__
__all__ += content.__all__
__all__ += events.__all__
__all__ += messages.__all__
__all__ += usage.__all__
