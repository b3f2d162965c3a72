"""`AGUIEndpoint`: an agent served to AG-UI 1.0 clients (`@ag-ui/client`'s `HttpAgent`, CopilotKit)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from ..adapters.ag_ui import AGUIEventStream, AGUIRunRequest, parse_request
from ..core.provenance import Keyring
from ..core.run import RunInput
from ..core.stream import EventStreamEncoder
from .endpoint import ChatEndpoint
from .options import EndpointOptions
from .run import Agent

__all__ = ['AGUIBinding', 'AGUIEndpoint']


class AGUIBinding:
    name = 'ag-ui'

    def parse(self, body: Mapping[str, Any]) -> tuple[AGUIRunRequest, RunInput]:
        request = parse_request(body)
        return request, request.run_input()

    def encoder(
        self, request: AGUIRunRequest, run_input: RunInput, keyring: Keyring
    ) -> EventStreamEncoder:
        return AGUIEventStream(
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            client_protocol_version=request.protocol_version,
            keyring=keyring,
        )


class AGUIEndpoint(ChatEndpoint[AGUIRunRequest]):
    """`POST` endpoint for an AG-UI `RunAgentInput`; see `ChatEndpoint` for the options. `run.request` is the
    `AGUIRunRequest` (`.input` is the SDK's `RunAgentInput`: `context`, `forwardedProps`, ...)."""

    def __init__(self, agent: Agent, **options: Unpack[EndpointOptions]) -> None:
        super().__init__(agent, AGUIBinding(), **options)
