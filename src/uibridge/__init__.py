"""uibridge: carry an agent's conversation across the Vercel AI SDK and AG-UI chat protocols.

What an agent author and an application author write with, whatever the protocol: the neutral message model
and its content, citations and usage; the events an agent streams (and `MessageCollector`, which folds them
back into messages); the framing core; retry feedback; signed history (`Keyring`, `verify_history`) and
`sanitize_messages`; what a parsed request asks of a run (`RunInput`); and the two errors (`InputError`, bad
client input, a 4xx; `UserError`, a misuse by the application). Protocol adapters live in
`uibridge.adapters.vercel_ai` and `uibridge.adapters.ag_ui`; the endpoints in `uibridge.server`; every public
name, module by module, in docs/api.md.
"""

# The neutral vocabulary, whole: every name its modules list is public here too (so a new event or part kind
# is exported by being added to its module, and the two lists cannot disagree). `messages` lists the content
# types of `core.content` too, since a message's parts hold them.
from .core import citations, events, messages, usage
from .core.citations import *  # noqa: F403
from .core.collector import MessageCollector
from .core.errors import InputError
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
from .core.run import ClientTool, RunInput, ToolApproval
from .core.sanitize import sanitize_messages
from .core.usage import *  # noqa: F403
from .core.verification import SignatureClaims, verify_history

__all__ = [
    'ClientTool',
    'DataTag',
    'InputError',
    'Keyring',
    'MessageCollector',
    'RegisteredTag',
    'RunInput',
    'SignatureClaims',
    'ToolApproval',
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
__all__ += events.__all__
__all__ += messages.__all__
__all__ += usage.__all__
