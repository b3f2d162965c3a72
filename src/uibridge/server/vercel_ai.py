"""`VercelAIEndpoint`: an agent served to the Vercel AI SDK's `useChat` / `Chat` (`DefaultChatTransport`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from ..adapters.vercel_ai import VercelAIEventStream, VercelChatRequest, parse_request
from ..core.provenance import Keyring
from ..core.run import RunInput
from ..core.stream import EventStreamEncoder
from .endpoint import ChatEndpoint
from .options import EndpointOptions
from .run import Agent

__all__ = ['VercelAIBinding', 'VercelAIEndpoint']


class VercelAIBinding:
    name = 'vercel-ai'

    def parse(self, body: Mapping[str, Any]) -> tuple[VercelChatRequest, RunInput]:
        request = parse_request(body)
        return request, request.run_input()

    def encoder(
        self, request: VercelChatRequest, run_input: RunInput, keyring: Keyring
    ) -> EventStreamEncoder:
        # An answered approval or client tool output continues the assistant message that asked for it.
        return VercelAIEventStream(
            message_id=request.continuation_message_id,
            continued=request.continued_message,
            keyring=keyring,
            thread_id=run_input.thread_id,
        )


class VercelAIEndpoint(ChatEndpoint[VercelChatRequest]):
    """`POST` endpoint for `useChat`; see `ChatEndpoint` for the options. `run.request` is the
    `VercelChatRequest` (chat id, trigger, extra body keys)."""

    def __init__(self, agent: Agent, **options: Unpack[EndpointOptions]) -> None:
        super().__init__(agent, VercelAIBinding(), **options)
