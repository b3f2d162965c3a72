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
  The last user prompt is the new prompt. `resume` answers are verified as always. `@ag-ui/client` sends the
  whole history every run: of the messages before those, only the ids and roles are read (the store's copy is
  the one used, so what a client's copy holds is not validated, loaded or walked for the request limits), and
  the stored history's ids are kept per chat, dumped once per message (`AGUIStored`): a turn reads and dumps
  what it adds, not the chat.

Whatever else the client sends (an earlier history, edited answers, forged calls) is ignored. The merged
history then goes through the same verification as client-held history, with every stored part trusted as the
server's own (`stored_claims`: no signature is computed for it): the client's additions are checked exactly as
before (a tool result only for an open call to a client tool, an approval only for its own call, once).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ag_ui.core import Message, ToolMessage

from ..adapters import ag_ui, vercel_ai
from ..adapters.ag_ui import AGUIRunRequest
from ..adapters.ag_ui._wire import METADATA_KEY as AGUI_BOOKKEEPING_KEY
from ..adapters.ag_ui.dump import DumpCursor, dump_more
from ..adapters.vercel_ai import VercelChatRequest
from ..adapters.vercel_ai._provider_metadata import SIDECAR_KEY as VERCEL_BOOKKEEPING_KEY
from ..core.errors import InputError
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
from . import offload


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
    index: object = None
    """What the protocol keeps of the stored history for the chat's next turn (AG-UI: `AGUIStored`)."""


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

CheckRead: TypeAlias = Callable[[Sequence[tuple[int, Any]]], object]
"""What checks the messages a binding reads late against the request limits (each with its index in the body)."""


@dataclass
class AGUIStored:
    """What a managed AG-UI turn needs of the stored history as `GET {api}/{threadId}` dumps it: the ids (which of
    the client's messages the server already has), and the dumped messages from the last assistant one on (what a
    client's tool message loads after). Kept per chat with the settled view (`stored_view`), under the store's
    revision of the history, and moved on by dumping only what each turn added (`dump_more`: the same ids as a
    whole dump, the new parts signed once)."""

    cursor: DumpCursor = field(default_factory=DumpCursor)
    last_id: str | None = None
    tail: list[Message] = field(default_factory=list[Message])

    def cover(self, stored: Sequence[ModelMessage], keyring: Keyring) -> None:
        """Dump the stored messages past those covered (`stored` being the history those were the start of)."""
        added = dump_more(stored[self.cursor.count :], self.cursor, keyring=keyring)
        if not added:
            return
        self.last_id = added[-1].id
        assistant = next((i for i in range(len(added) - 1, -1, -1) if added[i].role == 'assistant'), None)
        self.tail = added[assistant:] if assistant is not None else [*self.tail, *added]


def agui_holds(
    kept: object, stored: Sequence[ModelMessage], sizes: Sequence[int], keyring: Keyring, message_id: str
) -> bool:
    """Whether `stored` (the history an `AGUIStored`, `kept`, is of the start of, with each message's size) has a
    message of this id as `GET {api}/{threadId}` dumps it with `keyring` (`agui_input` reads none of the client's
    messages up to it: it reads from after the last one the server has on). What `kept` does not cover yet is
    covered here, as `agui_input` would (the stored messages the last turn added), when it is small; else the
    answer is no."""
    if not isinstance(kept, AGUIStored) or kept.cursor.count > len(stored):
        return False
    if message_id not in kept.cursor.used and sum(sizes[kept.cursor.count :]) < offload.INLINE_BYTES:
        kept.cover(stored, keyring)
    return message_id in kept.cursor.used


def agui_input(
    request: AGUIRunRequest,
    stored: Sequence[ModelMessage],
    keyring: Keyring,
    kept: object = None,
    check: CheckRead | None = None,
) -> ManagedInput:
    """The stored messages' ids are the ones `GET {api}/{threadId}` gives them (dumped with `keyring`). `kept`: the
    `AGUIStored` the chat's last turn here left (`ManagedInput.index`), when the claim found the history it left.

    Of a request parsed with `read_messages=False`, only the messages from the last one the server has or the
    client could not author on are read (validated, loaded): what precedes them is the stored history's place,
    and the store's copy of it is the one used. `check` sees each message read, with its index in the body, first."""
    index = kept if isinstance(kept, AGUIStored) and kept.cursor.count <= len(stored) else AGUIStored()
    index.cover(stored, keyring)
    known = index.cursor.used
    unread = request.unread
    ids = unread.ids if unread is not None else [message.id for message in request.input.messages]
    roles = unread.roles if unread is not None else [message.role for message in request.input.messages]
    # What the client adds starts after the last message the server has or the client could not author: looked
    # for from the end, so that a turn looks at what it adds, not at the history before it.
    start = len(ids)
    while start and ids[start - 1] not in known and roles[start - 1] in _CLIENT_ROLES:
        start -= 1
    if unread is not None:
        if check is not None:
            check(list(zip(unread.indexes[start:], unread.raw[start:], strict=True)))
        read = request.read_messages(start)
    else:
        read = request.input.messages[start:]
    body_indexes = request.message_indexes[-len(read) :] if read else []
    # One new prompt a run: the last user message (earlier ones in the list are not the client's new input).
    users = [position for position, message in enumerate(read) if message.role == 'user']
    taken = [i for i, m in enumerate(read) if m.role == 'tool' or (users and i == users[-1])]
    result = ManagedInput(prefix=len(stored), index=index)
    # Looked for from the end, where the last stored message is in a client that holds it.
    result.behind = index.last_id is not None and index.last_id not in reversed(ids)
    if taken:
        # A tool message loads only after the assistant message with its call: the stored one (from the last
        # stored assistant message on) goes first, and of what loads only the candidates' parts are taken.
        context = index.tail
        candidates = [read[i] for i in taken]
        answered = {m.tool_call_id for m in candidates if isinstance(m, ToolMessage)}
        try:
            loaded = ag_ui.load_messages([*context, *candidates], claims=result.claims)
        except InputError as error:
            # Located at the candidate's index in the body, as the client numbered it.
            numbered = [-1] * len(context) + [body_indexes[i] for i in taken]
            raise error.renumbered(numbered).at('messages') from None
        result.added = _client_parts(loaded, prompts=True, answered=answered)
    return result
