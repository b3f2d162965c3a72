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
from ag_ui.core import RunAgentInput

from ...core.client_input import request_object
from ...core.errors import InputError
from ...core.run import ClientTool, RunInput, ToolApproval
from ...core.verification import SignatureClaims
from ._validation import client_numbered, prefilter_message, validation_error
from ._wire import message_adapter
from .load import load_messages


@dataclass(frozen=True)
class AGUIRunRequest:
    input: RunAgentInput
    """The validated body."""
    message_indexes: list[int] = field(default_factory=list[int])
    """For each message in `input.messages`, its index in the body the client sent."""

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


def parse_request(body: bytes | str | Mapping[str, Any]) -> AGUIRunRequest:
    payload = request_object(body, 'the request body')
    indexes: list[int] = []
    part_indexes: list[list[int] | None] = []
    messages = payload.get('messages')
    if isinstance(messages, list):
        kept: list[Any] = []
        for index, message in enumerate(cast('list[Any]', messages)):
            filtered = prefilter_message(message, f'messages.{index}')
            if filtered is not None:
                kept.append(filtered[0])
                indexes.append(index)
                part_indexes.append(filtered[1])
        payload['messages'] = kept
    # The envelope first, then each message by itself: a body of thousands of messages is then validated in
    # thousands of short calls, not one long one that would hold the GIL (and a server's event loop, when
    # this runs in a worker thread) for as long as the whole body takes.
    kept_messages: list[Any] = payload.get('messages', []) if isinstance(payload.get('messages'), list) else []
    if kept_messages:
        payload['messages'] = []
    try:
        run_input = RunAgentInput.model_validate(payload)
    except pydantic.ValidationError as e:
        error = validation_error(e)
        head, below = error.split()
        if head == 'messages':
            error = client_numbered(below, indexes, part_indexes).at('messages')
        raise error from None
    validated: list[Any] = []
    for position, message in enumerate(kept_messages):
        try:
            validated.append(message_adapter.validate_python(message))
        except pydantic.ValidationError as e:
            error = validation_error(e)
            located = InputError(error.message, f'{position}.{error.path}' if error.path else str(position))
            raise client_numbered(located, indexes, part_indexes).at('messages') from None
    if kept_messages:
        run_input.messages = validated
    return AGUIRunRequest(run_input, indexes)
