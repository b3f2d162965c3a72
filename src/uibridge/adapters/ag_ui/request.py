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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, cast

import pydantic
from ag_ui.core import Message, RunAgentInput

from ...core.client_input import request_object
from ...core.errors import InputError
from ...core.run import ClientTool, RunInput, ToolApproval
from ...core.verification import SignatureClaims
from ._validation import ROLES as _ROLES
from ._validation import client_part_numbered, known_role, prefilter_message, validation_error
from ._wire import message_adapter
from .load import load_messages


@dataclass(frozen=True, slots=True)
class UnreadMessages:
    """The body's messages as `parse_request(read_messages=False)` leaves them: of each, only that it is an object
    with a string id and a role this version knows is checked (a message of an unknown role is skipped, with a
    warning, as always). Parallel lists, one item per message kept."""

    raw: list[Any]
    """Each message as the client sent it."""
    ids: list[str]
    roles: list[str]
    indexes: list[int]
    """Each message's index in the body."""


@dataclass(frozen=True)
class AGUIRunRequest:
    input: RunAgentInput
    """The validated body."""
    message_indexes: list[int] = field(default_factory=list[int])
    """For each message in `input.messages`, its index in the body the client sent."""
    unread: UnreadMessages | None = None
    """With `parse_request(read_messages=False)`: the body's messages, of which only the id and role are checked
    (`input.messages` is empty until `read_messages`)."""

    def read_messages(self, start: int) -> list[Message]:
        """Validate the `unread` messages from `start` on, which become `input.messages` (`InputError` at the
        client's path for one that does not validate): a server that keeps the chat reads no more of the body
        than what it takes from it."""
        if self.unread is None:
            return self.input.messages[start:]
        indexes = self.unread.indexes[start:]
        read = [_read(raw, index) for raw, index in zip(self.unread.raw[start:], indexes, strict=True)]
        self.input.messages = read
        self.message_indexes[:] = indexes
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
            parent_run_id=self.input.parent_run_id,
            tools=[
                _client_tool(tool.name, tool.description, tool.parameters, tool.metadata)
                for tool in self.input.tools or []
            ],
            approvals=[_approval(entry.interrupt_id, entry.status, entry.payload) for entry in self.input.resume or []],
            state=self.input.state,
            extra={
                'context': [c.model_dump(by_alias=True, mode='json') for c in self.input.context]
                if self.input.context is not None
                else None,
                'forwarded_props': self.input.forwarded_props,
            },
        )


def _client_tool(name: str, description: str, parameters: Any, metadata: dict[str, Any] | None) -> ClientTool:
    return ClientTool(
        name=name,
        description=description,
        parameters=cast('dict[str, Any]', parameters) if isinstance(parameters, dict) else None,
        metadata=metadata,
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
    return _parse(body, read_messages, None)


def parse_unread(body: Mapping[str, Any], before: ReadBefore | None) -> AGUIRunRequest:
    """`parse_request(body, read_messages=False)`, the first of the body's messages taken as `before` found them:
    only the messages after those are looked at."""
    return _parse(body, False, before)


def _parse(body: bytes | str | Mapping[str, Any], read_messages: bool, before: ReadBefore | None) -> AGUIRunRequest:
    payload = request_object(body, 'the request body')
    messages = payload.get('messages')
    listed = cast('list[Any]', messages) if isinstance(messages, list) else None
    if listed is not None:
        # The envelope first, then each message by itself: a body of thousands of messages is then validated in
        # thousands of short calls, not one long one that would hold the GIL (and a server's event loop, when
        # this runs in a worker thread) for as long as the whole body takes.
        payload['messages'] = []
    try:
        run_input = RunAgentInput.model_validate(payload)
    except pydantic.ValidationError as e:
        raise validation_error(e) from None
    if listed is None:
        return AGUIRunRequest(run_input, [], None if read_messages else UnreadMessages([], [], [], []))
    if not read_messages:
        return AGUIRunRequest(run_input, [], _unread(listed, before))
    kept = [(message, index) for index, message in enumerate(listed) if known_role(message, f'messages.{index}')]
    run_input.messages = [_read(message, index) for message, index in kept]
    return AGUIRunRequest(run_input, [index for _, index in kept])


def _read(raw: Any, index: int) -> Message:
    """One message of the body validated (its content parts of a type this version does not know skipped)."""
    filtered = prefilter_message(raw, f'messages.{index}')
    message, part_indexes = filtered if filtered is not None else (raw, None)
    try:
        return message_adapter.validate_python(message)
    except pydantic.ValidationError as e:
        raise client_part_numbered(validation_error(e), part_indexes).at('messages', index) from None


_get: Callable[[Any, str], Any] = dict[Any, Any].get  # one C call a message, in `map`


@dataclass(frozen=True, slots=True)
class ReadBefore:
    """The first messages of a body as an earlier body had them (the same text: `server._body_memo`), each of them
    plain (`plain_ids_roles`): their ids and roles, for `parse_unread` to take as they are."""

    ids: list[str]
    roles: list[str]


def plain_ids_roles(messages: list[Any]) -> tuple[list[str], list[str]] | None:
    """The ids and roles of `messages` when every one is plain: an object with a string id and a role this version
    knows (`None` otherwise). In passes that each run in C, with no Python step per message."""
    if not set(map(type, messages)) <= {dict}:
        return None
    ids: list[Any] = list(map(_get, messages, repeat('id')))
    roles: list[Any] = list(map(_get, messages, repeat('role')))
    try:
        known = _ROLES.issuperset(roles)  # a role that is not a string is not one of them
    except TypeError:  # nor is one that cannot be hashed
        known = False
    return (ids, roles) if known and set(map(type, ids)) <= {str} else None


def _unread(messages: list[Any], before: ReadBefore | None = None) -> UnreadMessages:
    """The ids and roles of `messages`, each checked. Every message of every run of a kept chat comes through here:
    the common case (every message plain, `plain_ids_roles`) is checked in passes that each run in C, over the
    messages after those `before` holds (which are plain); anything else takes the per-message way, which skips
    what an unknown role marks with a warning and gives what no version allows the error validation gives it."""
    done = len(before.ids) if before is not None and len(before.ids) <= len(messages) else 0
    plain = plain_ids_roles(messages[done:] if done else messages)
    if plain is not None:
        ids, roles = plain
        if done:
            assert before is not None
            ids, roles = [*before.ids, *ids], [*before.roles, *roles]
        return UnreadMessages(messages, ids, roles, list(range(len(messages))))
    unread = UnreadMessages([], [], [], [])
    for index, raw in enumerate(messages):
        if not known_role(raw, f'messages.{index}'):
            continue
        message_id, role = (_get(raw, 'id'), _get(raw, 'role')) if type(raw) is dict else (None, None)
        if type(message_id) is not str or type(role) is not str:
            read = _read(raw, index)  # what no version allows gets the error validation gives it
            message_id, role = read.id, read.role
        unread.raw.append(raw)
        unread.ids.append(message_id)
        unread.roles.append(role)
        unread.indexes.append(index)
    return unread
