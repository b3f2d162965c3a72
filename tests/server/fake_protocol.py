"""A stand-in protocol for testing the endpoint machinery without either real adapter.

Body: `{"messages": [<history JSON, the neutral model>], "signatures": {"<message>.<part>": "<signature>"},
"approvals": [{"approval_id", "approved", "tool_call_id"?}], "run_id"?}`. The stream is one `data: <json>` line
per event, naming the event's class. `sign_body` adds the signatures a real adapter would have carried.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

import pydantic

from uibridge import ModelMessagesTypeAdapter, ModelResponse, ToolCallPart, UserPromptPart
from uibridge.core.collector import MessageCollector
from uibridge.core.errors import InputError
from uibridge.core.events import (
    ANSWERED_BY_METADATA_KEY,
    AgentEvent,
    RunCancelled,
    RunError,
    RunFinished,
    ToolCallReady,
)
from uibridge.core.messages import ModelMessage, SystemPromptPart
from uibridge.core.provenance import Keyring
from uibridge.core.run import RunInput, ToolApproval
from uibridge.core.verification import SignatureClaims


def sign_body(body: dict[str, Any], keyring: Keyring) -> dict[str, Any]:
    """`body` with the signature of every server-authored part of its messages, as an adapter would carry
    them (a call the response says a client answers is signed with the client mark)."""
    messages = ModelMessagesTypeAdapter.validate_python(body['messages'])
    signatures: dict[str, Any] = {}
    for i, message in enumerate(messages):
        answered = (message.metadata or {}).get(ANSWERED_BY_METADATA_KEY, {})
        for j, part in enumerate(message.parts):
            if isinstance(part, UserPromptPart | SystemPromptPart):
                continue
            client = isinstance(message, ModelResponse) and answered.get(getattr(part, 'tool_call_id', '')) == 'client'
            signatures[f'{i}.{j}'] = {'sig': keyring.sign_part(part, client=client), 'client': client}
    return {**body, 'signatures': signatures}


class FakeEncoder:
    def __init__(self, approval_id: Callable[[ToolCallPart], str]) -> None:
        self._collector = MessageCollector()
        self._approval_id = approval_id
        self._calls: dict[str, ToolCallPart] = {}
        self.ended = False
        self.events: list[AgentEvent] = []

    @property
    def headers(self) -> Mapping[str, str]:
        return {'content-type': 'text/event-stream', 'x-fake': 'yes'}

    def start(self) -> bytes:
        return b'data: {"type":"start"}\n\n'

    def encode(self, event: AgentEvent) -> bytes:
        if self.ended:
            return b''
        self._collector.feed(event)
        self.events.append(event)
        payload: dict[str, Any] = {'type': type(event).__name__}
        if isinstance(event, RunError):
            payload['message'] = event.message
        if isinstance(event, ToolCallReady) and event.answered_by == 'approval':
            call = next(
                part
                for message in self._collector.messages
                for part in getattr(message, 'parts', [])
                if isinstance(part, ToolCallPart) and part.tool_call_id == event.tool_call_id
            )
            payload['approval_id'] = self._approval_id(call)
        if isinstance(event, RunFinished | RunError | RunCancelled):
            self.ended = True
            self._collector.close()
        return f'data: {json.dumps(payload)}\n\n'.encode()

    def close(self) -> bytes:
        if self.ended:
            return b''
        return self.encode(RunFinished())

    @property
    def new_messages(self) -> list[ModelMessage]:
        return self._collector.messages


class FakeBinding:
    name = 'fake'

    def __init__(self) -> None:
        self.encoders: list[FakeEncoder] = []

    def parse(self, body: Mapping[str, Any]) -> tuple[Mapping[str, Any], RunInput]:
        messages = body.get('messages')
        if not isinstance(messages, list):
            raise InputError('messages must be a list', 'messages')
        try:
            history = ModelMessagesTypeAdapter.validate_python(messages)
        except pydantic.ValidationError:
            raise InputError('invalid message', 'messages') from None
        approvals = [
            ToolApproval(
                approval_id=str(item['approval_id']),
                approved=bool(item['approved']),
                tool_call_id=item.get('tool_call_id'),
            )
            for item in body.get('approvals', [])
        ]
        if body.get('crash'):
            raise KeyError('a parser bug')
        claims = SignatureClaims()
        for key, claim in body.get('signatures', {}).items():
            i, j = (int(n) for n in key.split('.'))
            claims.add(history[i].parts[j], claim['sig'], client=claim['client'])
        run_input = RunInput(
            history=history,
            thread_id=str(body.get('thread_id', 'thread')),
            run_id=str(body.get('run_id', 'run')),
            approvals=approvals,
            claims=claims,
        )
        return body, run_input

    def encoder(self, request: Mapping[str, Any], run_input: RunInput, keyring: Keyring) -> FakeEncoder:
        thread_id = run_input.thread_id
        encoder = FakeEncoder(lambda call: keyring.approval_id(thread_id, call))
        self.encoders.append(encoder)
        return encoder


def event_types(body: bytes) -> list[str]:
    return [json.loads(line[6:])['type'] for line in body.decode().split('\n') if line.startswith('data: ')]


def asdict(approval: ToolApproval) -> dict[str, Any]:
    return dataclasses.asdict(approval)
