"""`parse_request`: an AG-UI `RunAgentInput` body as what the server needs to run the agent.

The body is validated with the SDK's own `RunAgentInput` model, after the forward-compatibility pass of
`validation.prefilter_message` (a message with an unknown role, or a content part / source of an unknown type,
is skipped with a warning rather than failing the request). Every failure is an `InputError` with a short
message and the JSON path in the body as the client sent it (indexes count skipped messages too).

`AGUIRunRequest.run_input()` hands over:
- `history`: the messages, loaded (not yet verified nor sanitized: the server does that), and `claims`, the
  signatures the client sent beside its parts (see `load`), for the server's `verify_history`.
- `tools`: the client's tools, as `ClientTool`s the agent may call and the client answers.
- `approvals`: one `ToolApproval` per `resume` entry. `approval_id` is the interrupt id the server minted;
  `approved` is true only for a `resolved` entry whose payload says `"approved": true` (a cancelled entry,
  an expired interrupt, or a payload without that flag is a refusal); `reason` is the payload's `reason`.
  The protocol's answer names no tool call, so `tool_call_id` is `None` and the server finds the call by
  its approval id.
- `state`, and `extra = {'context': ..., 'forwarded_props': ...}`: application data, handed over untouched
  in wire form (`None` when absent), never turned into instructions for the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pydantic
from ag_ui.core import Message, RunAgentInput

from ...core.client_input import request_object
from ...core.errors import InputError
from ...core.run import ClientTool, RunInput, ToolApproval
from ...core.verification import SignatureClaims
from ._validation import client_part_numbered, known_role, prefilter_message, validation_error
from ._wire import message_adapter
from .load import load_messages


@dataclass(slots=True)
class UnreadMessage:
    """A message of the body left unvalidated (`parse_request(read_messages=False)`): its id and role, checked."""

    id: str
    role: str
    raw: Any
    """The message as the client sent it."""
    index: int
    """Its index in the body."""


@dataclass(frozen=True)
class AGUIRunRequest:
    input: RunAgentInput
    """The validated body."""
    message_indexes: list[int] = field(default_factory=list[int])
    """For each message in `input.messages`, its index in the body the client sent."""
    unread: list[UnreadMessage] = field(default_factory=list[UnreadMessage])
    """With `parse_request(read_messages=False)`: the body's messages, of which only the id and role are checked
    (`input.messages` is empty until `read_messages`)."""

    def read_messages(self, start: int) -> list[Message]:
        """Validate the `unread` messages from `start` on, which become `input.messages` (`InputError` at the
        client's path for one that does not validate): a server that keeps the chat reads no more of the body
        than what it takes from it."""
        read = [_read(message.raw, message.index) for message in self.unread[start:]]
        self.input.messages = read
        self.message_indexes[:] = [message.index for message in self.unread[start:]]
        return read

    @property
    def protocol_version(self) -> str | None:
        """The protocol version the client declared (`None` for a pre-1.0 client)."""
        return self.input.protocol_version

    def run_input(self) -> RunInput:
        claims = SignatureClaims()
        try:
            history = load_messages(self.input.messages, claims=claims)
        except InputError as e:
            raise e.renumbered(self.message_indexes).at('messages') from None
        return RunInput(
            history=history,
            claims=claims,
            thread_id=self.input.thread_id,
            run_id=self.input.run_id,
            tools=[_client_tool(tool.name, tool.description, tool.parameters) for tool in self.input.tools or []],
            approvals=[_approval(entry.interrupt_id, entry.status, entry.payload) for entry in self.input.resume or []],
            state=self.input.state,
            extra={
                'context': [c.model_dump(by_alias=True, mode='json') for c in self.input.context]
                if self.input.context is not None
                else None,
                'forwarded_props': self.input.forwarded_props,
            },
        )


def _client_tool(name: str, description: str, parameters: Any) -> ClientTool:
    return ClientTool(
        name=name,
        description=description,
        parameters=cast('dict[str, Any]', parameters) if isinstance(parameters, dict) else None,
    )


def _approval(interrupt_id: str, status: str, payload: Any) -> ToolApproval:
    data = cast('dict[str, Any]', payload) if isinstance(payload, dict) else {}
    reason = data.get('reason')
    return ToolApproval(
        approval_id=interrupt_id,
        approved=status == 'resolved' and data.get('approved') is True,
        tool_call_id=None,
        reason=reason if isinstance(reason, str) else None,
        payload=payload,
    )


def parse_request(body: bytes | str | Mapping[str, Any], *, read_messages: bool = True) -> AGUIRunRequest:
    """The body validated as a `RunAgentInput`. With `read_messages=False`, of each message only its id and role
    are checked (`AGUIRunRequest.unread`), for a server whose stored chat is the authority on what it already has
    and that reads the rest (`AGUIRunRequest.read_messages`)."""
    payload = request_object(body, 'the request body')
    indexes: list[int] = []
    kept: list[Any] = []
    messages = payload.get('messages')
    if isinstance(messages, list):
        for index, message in enumerate(cast('list[Any]', messages)):
            if known_role(message, f'messages.{index}'):
                kept.append(message)
                indexes.append(index)
        # The envelope first, then each message by itself: a body of thousands of messages is then validated in
        # thousands of short calls, not one long one that would hold the GIL (and a server's event loop, when
        # this runs in a worker thread) for as long as the whole body takes.
        payload['messages'] = []
    try:
        run_input = RunAgentInput.model_validate(payload)
    except pydantic.ValidationError as e:
        raise validation_error(e) from None
    if not read_messages:
        unread = [_unread(message, index) for message, index in zip(kept, indexes, strict=True)]
        return AGUIRunRequest(run_input, [], unread)
    run_input.messages = [_read(message, index) for message, index in zip(kept, indexes, strict=True)]
    return AGUIRunRequest(run_input, indexes)


def _read(raw: Any, index: int) -> Message:
    """One message of the body validated (its content parts of a type this version does not know skipped)."""
    filtered = prefilter_message(raw, f'messages.{index}')
    message, part_indexes = filtered if filtered is not None else (raw, None)
    try:
        return message_adapter.validate_python(message)
    except pydantic.ValidationError as e:
        raise client_part_numbered(validation_error(e), part_indexes).at('messages', index) from None


def _unread(raw: Any, index: int) -> UnreadMessage:
    # Called for every message of every run of a kept chat: the common case first, in as few steps as it takes.
    if type(raw) is dict:
        message_id, role = cast('dict[str, Any]', raw).get('id'), cast('dict[str, Any]', raw).get('role')
        if type(message_id) is str and type(role) is str:
            return UnreadMessage(message_id, role, raw, index)
    # Whatever no version allows gets the error validation gives it.
    read = _read(raw, index)
    return UnreadMessage(read.id, read.role, raw, index)
