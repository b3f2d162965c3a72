"""Server-managed history: what a run works from when the server keeps the chat (`store=`).

The stored history is the authority. Of what the client posts, only what a client may author is taken, and
only where the client adds it:

- Vercel AI (`useChat`, whose `prepareSendMessagesRequest` may send the last message only): the last message.
  A user message is the new prompt (with the `messageId` of a stored user message, an edit: the history is cut
  before that message); an assistant message is the one the run continues, of which only the results of
  calls the stored history addressed to a client tool are taken (and approval answers, verified as always).
  `regenerate-message` cuts the stored history after the user turn it regenerates.
- AG-UI: the messages after the last one whose id the server stored (all of them when none is known), and of
  those only user prompts and tool results after the last message a client cannot author (assistant,
  reasoning, system, developer: what precedes such a message in a client's list is not its own input).
  The last user prompt is the new prompt. `resume` answers are verified as always.

Whatever else the client sends (an earlier history, edited answers, forged calls) is ignored. The merged
history then goes through the same verification as client-held history, with every stored part trusted as the
server's own (`stored_claims`: no signature is computed for it): the client's additions are checked exactly as
before (a tool result only for an open call to a client tool, an approval only for its own call, once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..adapters import ag_ui, vercel_ai
from ..adapters.ag_ui import AGUIRunRequest
from ..adapters.ag_ui._wire import METADATA_KEY as AGUI_BOOKKEEPING_KEY
from ..adapters.vercel_ai import VercelChatRequest
from ..adapters.vercel_ai._provider_metadata import SIDECAR_KEY as VERCEL_BOOKKEEPING_KEY
from ..core.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from ..core.metadata import answered_by
from ..core.provenance import Keyring
from ..core.trusted import replace
from ..core.verification import SignatureClaims

__all__ = ['ManagedInput', 'agui_input', 'for_the_agent', 'kept_input', 'stored_claims', 'vercel_input']


@dataclass
class ManagedInput:
    """The history a run works from in server-managed mode, and what of it is the client's."""

    prefix: int
    """How many stored messages the run keeps (fewer than stored for regenerate and edit)."""
    added: list[ModelMessage] = field(default_factory=list[ModelMessage])
    """The client's input, loaded (not yet verified): new prompt, client tool results."""
    claims: SignatureClaims = field(default_factory=SignatureClaims)
    """The client's signature claims on `added`."""
    behind: bool = False
    """AG-UI: the client does not hold the last stored message (a reload, another tab): it gets a snapshot."""


def stored_claims(messages: Sequence[ModelMessage], claims: SignatureClaims) -> None:
    """Trust every part of the stored history that verification checks, in `claims`: the stored history is the
    server's own, so all of it is kept as verified, with no signature computed (a call to a client tool marked
    as such, so that the client's answer to it is taken, as when the client held it)."""
    for message in messages:
        claims.vouch(message)
        if isinstance(message, ModelResponse):
            marks = answered_by(message.metadata)
            for part in message.parts:
                claims.trust(part, client=isinstance(part, ToolCallPart) and marks.get(part.tool_call_id) == 'client')
        else:
            for part in message.parts:
                if isinstance(part, ToolReturnPart | RetryPromptPart | RetryFeedbackPart):
                    claims.trust(part)


_BOOKKEEPING_KEYS = (AGUI_BOOKKEEPING_KEY, VERCEL_BOOKKEEPING_KEY)


def kept_input(added: Sequence[ModelMessage], verified: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The client's input as verification left it (parts compared by identity): what a run persists of it. Of a
    request's `metadata` only the adapters' bookkeeping is stored (the ids the client gave its messages and what
    only its UI reads: content-part ids and metadata, activity messages, Vercel's UI-only parts), so every tab
    gets it back; the rest (application metadata a client wrote) is the client's word, which verification resets
    on a client-held copy, and is not stored as the server's."""
    survived = {id(part) for message in verified for part in message.parts}
    kept: list[ModelMessage] = []
    for message in added:
        parts = [part for part in message.parts if id(part) in survived]
        if not parts:
            continue
        update: dict[str, Any] = {} if len(parts) == len(message.parts) else {'parts': parts}
        if isinstance(message, ModelRequest) and message.metadata:
            bookkeeping = {key: message.metadata[key] for key in _BOOKKEEPING_KEYS if key in message.metadata}
            if bookkeeping != message.metadata:
                update['metadata'] = bookkeeping or None
        kept.append(replace(message, update) if update else message)
    return kept


def for_the_agent(stored: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The stored history as an agent gets it: each request without the adapters' bookkeeping. A stored request's
    bookkeeping is what its client sent beside its input for its own UI (`kept_input`): the store keeps it for the
    UI, and the agent gets none of it, as verification gives it none from a client-held copy. (The server's own
    requests carry only message ids there.)"""
    result: list[ModelMessage] = []
    for message in stored:
        metadata = message.metadata
        if isinstance(message, ModelRequest) and metadata and any(key in metadata for key in _BOOKKEEPING_KEYS):
            rest = {key: value for key, value in metadata.items() if key not in _BOOKKEEPING_KEYS}
            message = replace(message, {'metadata': rest or None})
        result.append(message)
    return result


def _client_parts(
    loaded: Sequence[ModelMessage], *, prompts: bool, answered: set[str] | None = None
) -> list[ModelMessage]:
    """Of loaded client messages, the requests' user prompts (when `prompts`) and tool returns (for the calls
    in `answered`, when given); nothing else."""
    added: list[ModelMessage] = []
    for message in loaded:
        if not isinstance(message, ModelRequest):
            continue
        parts: list[ModelRequestPart] = [
            part
            for part in message.parts
            if (isinstance(part, ToolReturnPart) and (answered is None or part.tool_call_id in answered))
            or (prompts and isinstance(part, UserPromptPart))
        ]
        if parts:
            added.append(message if len(parts) == len(message.parts) else message.model_copy(update={'parts': parts}))
    return added


def _user_turns(messages: Sequence[ModelMessage]) -> list[int]:
    """The indexes of the stored requests that hold a user prompt: where each user turn starts."""
    return [
        index
        for index, message in enumerate(messages)
        if isinstance(message, ModelRequest) and any(isinstance(part, UserPromptPart) for part in message.parts)
    ]


def _user_ordinal(stored: Sequence[ModelMessage], message_id: str | None, keyring: Keyring) -> tuple[int, str] | None:
    """For the id of a stored UI message (as `GET {api}/{chatId}` dumps it with `keyring`): how many user messages
    precede it, and its role."""
    if message_id is None:
        return None
    users = 0
    for message in vercel_ai.dump_messages(stored, keyring=keyring):
        if message.id == message_id:
            return users, message.role
        if message.role == 'user':
            users += 1
    return None


def vercel_input(request: VercelChatRequest, stored: Sequence[ModelMessage], keyring: Keyring) -> ManagedInput:
    """The common turn (a new prompt, or the answers to the last response) looks at the stored history only where
    a regenerate or an edit cuts it."""
    if request.trigger == 'regenerate-message':
        turns = _user_turns(stored)
        # The answer to a user turn is regenerated: the stored history is kept up to that turn's prompt.
        found = _user_ordinal(stored, request.message_id, keyring)
        turn = found[0] - 1 if found is not None and found[1] == 'assistant' else len(turns) - 1
        if found is not None and found[1] == 'user':
            turn = found[0]
        return ManagedInput(prefix=turns[turn] + 1 if 0 <= turn < len(turns) else len(stored))
    last = request.messages[-1]
    result = ManagedInput(prefix=len(stored))
    loaded = vercel_ai.load_messages([last], claims=result.claims)
    if last.role == 'user':
        found = _user_ordinal(stored, request.message_id, keyring)
        if found is not None and found[1] == 'user' and found[0] < len(turns := _user_turns(stored)):
            result.prefix = turns[found[0]]  # an edit: the edited prompt and everything after it are replaced
        result.added = _client_parts(loaded, prompts=True)
    elif last.role == 'assistant':
        result.added = _client_parts(loaded, prompts=False)
    return result


_CLIENT_ROLES = frozenset({'user', 'tool'})


def agui_input(request: AGUIRunRequest, stored: Sequence[ModelMessage], keyring: Keyring) -> ManagedInput:
    """The stored messages' ids are the ones `GET {api}/{threadId}` gives them (dumped with `keyring`)."""
    dumped = ag_ui.dump_messages(stored, keyring=keyring)
    stored_ids = [message.id for message in dumped]
    known = set(stored_ids)
    messages = request.input.messages
    start = 0
    for index, message in enumerate(messages):
        if message.id in known or message.role not in _CLIENT_ROLES:
            start = index + 1
    candidates = list(messages[start:])
    # One new prompt a run: the last user message (earlier ones in the list are not the client's new input).
    users = [index for index, message in enumerate(candidates) if message.role == 'user']
    candidates = [m for i, m in enumerate(candidates) if m.role == 'tool' or (users and i == users[-1])]
    result = ManagedInput(prefix=len(stored))
    result.behind = bool(stored_ids) and stored_ids[-1] not in {message.id for message in messages}
    if candidates:
        # A tool message loads only after the assistant message with its call: the stored one (from the last
        # stored assistant message on) goes first, and of what loads only the candidates' parts are taken.
        context = next((i for i in range(len(dumped) - 1, -1, -1) if dumped[i].role == 'assistant'), len(dumped))
        answered = {m.tool_call_id for m in candidates if m.role == 'tool'}
        loaded = ag_ui.load_messages([*dumped[context:], *candidates], claims=result.claims)
        result.added = _client_parts(loaded, prompts=True, answered=answered)
    return result
