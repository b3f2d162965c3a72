"""`parse_request`: the body `useChat` posts (`DefaultChatTransport`), as a `VercelChatRequest`.

The body is `{...extra body keys, id, messages, trigger, messageId?}` (`ai` 7 `http-chat-transport.ts`). The
client already truncates for regenerate and edit before it posts; the parser applies the same cut when a
`messageId` still names a message in the list (a client that sends the whole history), so the history handed
on is what the client means either way:

- `regenerate-message`: the history before the regenerated assistant message (`messageId`, else a trailing
  assistant message);
- `submit-message` with the `messageId` of a user message (an edit): the history up to and including it;
- `submit-message` ending with an assistant message (an approval answered, a client tool's output added):
  the run continues that message, whose id is `continuation_message_id`.

Every problem raises `InputError` with a JSON path (`messages.2.parts.0.type`) and a short message that
never repeats the input.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ...core.client_input import request_object
from ...core.errors import InputError
from ...core.run import RunInput, ToolApproval
from ...core.verification import SignatureClaims
from ._message_info import is_state_part
from ._validation import validate_ui_message
from .load import load_messages
from .types import DataUIPart, DynamicToolUIPart, ToolUIPart, UIMessage

Trigger = Literal['submit-message', 'regenerate-message']
_KNOWN_KEYS = frozenset({'id', 'messages', 'trigger', 'messageId'})


@dataclass
class VercelChatRequest:
    id: str
    """The chat id: the thread."""
    messages: list[UIMessage]
    """The history as the client means it (truncated for regenerate and edit)."""
    trigger: Trigger = 'submit-message'
    message_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Every other body key (`DefaultChatTransport({body})`, `sendMessage(..., {body})`), untouched."""

    @property
    def continuation_message_id(self) -> str | None:
        """The id of the assistant message this run continues, when the request answers it."""
        if self.trigger == 'submit-message' and self.messages and self.messages[-1].role == 'assistant':
            return self.messages[-1].id
        return None

    @property
    def continued_message(self) -> UIMessage | None:
        """The assistant message this run continues (`continuation_message_id`'s), as the client sent it: the
        stream encoder's `continued`, so that a denial of one of its calls reaches the client signed."""
        return self.messages[-1] if self.continuation_message_id is not None else None

    @property
    def approvals(self) -> list[ToolApproval]:
        """The client's answers to approval requests: tool parts in the `approval-responded` state."""
        answers: list[ToolApproval] = []
        for message in self.messages:
            for part in message.parts:
                if not isinstance(part, ToolUIPart | DynamicToolUIPart) or part.state != 'approval-responded':
                    continue
                approval = part.approval
                if approval is None or approval.approved is None:
                    continue
                answers.append(
                    ToolApproval(
                        approval_id=approval.id,
                        approved=approval.approved,
                        tool_call_id=part.tool_call_id,
                        reason=approval.reason,
                    )
                )
        return answers

    def run_input(self) -> RunInput:
        """What the run is asked to do; loading the history may raise `InputError` (at `messages.<i>...`). The
        signatures the client sent beside the history's parts are in `claims`, for the server to verify."""
        claims = SignatureClaims()
        try:
            history = load_messages(self.messages, claims=claims)
        except InputError as e:
            raise e.at('messages') from None
        return RunInput(
            history=history,
            claims=claims,
            thread_id=self.id,
            run_id=f'run_{uuid.uuid4().hex}',
            approvals=self.approvals,
            trigger='regenerate' if self.trigger == 'regenerate-message' else 'submit',
            extra=dict(self.extra),
            state=self.state,
        )

    @property
    def state(self) -> Any:
        """The shared state the client holds: the data of the latest `data-state` part (id `state`) of its
        assistant messages (the reducer `_message_info` describes), else `None`. Client data, never instructions."""
        for message in reversed(self.messages):
            if message.role != 'assistant':
                continue
            for part in reversed(message.parts):
                if is_state_part(part):
                    assert isinstance(part, DataUIPart)
                    return part.data
        return None


def parse_request(body: bytes | str | Mapping[str, Any]) -> VercelChatRequest:
    data = request_object(body, 'the body')
    chat_id = data.get('id')
    if not isinstance(chat_id, str):
        raise InputError('required, a string' if chat_id is None else 'must be a string', 'id')
    raw_messages = data.get('messages')
    if not isinstance(raw_messages, list):
        raise InputError('required, a list of messages' if raw_messages is None else 'must be a list', 'messages')
    if not raw_messages:
        raise InputError('needs at least one message', 'messages')
    messages = [
        validate_ui_message(message, 'messages', index) for index, message in enumerate(cast('list[Any]', raw_messages))
    ]
    trigger = data.get('trigger', 'submit-message')
    if trigger not in ('submit-message', 'regenerate-message'):
        raise InputError("must be 'submit-message' or 'regenerate-message'", 'trigger')
    message_id = data.get('messageId')
    if message_id is not None and not isinstance(message_id, str):
        raise InputError('must be a string', 'messageId')
    extra = {key: value for key, value in data.items() if key not in _KNOWN_KEYS}
    return VercelChatRequest(
        id=chat_id,
        messages=_truncate(messages, trigger, message_id),
        trigger=trigger,
        message_id=message_id,
        extra=extra,
    )


def _truncate(messages: list[UIMessage], trigger: Trigger, message_id: str | None) -> list[UIMessage]:
    index = next((i for i, m in enumerate(messages) if m.id == message_id), None) if message_id else None
    if trigger == 'regenerate-message':
        if index is not None:
            return messages[:index] if messages[index].role == 'assistant' else messages[: index + 1]
        if index is None and messages[-1].role == 'assistant':
            return messages[:-1]
        return messages
    if index is not None and messages[index].role == 'user':
        return messages[: index + 1]
    return messages
