"""`VercelAIEndpoint`: an agent served to the Vercel AI SDK's `useChat` / `Chat` (`DefaultChatTransport`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from typing_extensions import Unpack

from ..adapters.vercel_ai import (
    VERCEL_AI_HEADERS,
    SdkVersion,
    VercelAIEventStream,
    VercelChatRequest,
    dump_messages,
    parse_request,
)
from ..adapters.vercel_ai._provider_metadata import SIDECAR_KEY
from ..core.messages import ModelMessage, ModelResponse
from ..core.provenance import Keyring
from ..core.run import RunInput
from ..core.stream import EventStreamEncoder
from .endpoint import ChatEndpoint
from .managed import CheckRead, ManagedInput, vercel_input
from .offload import json_array
from .options import EndpointOptions, VercelAIOptions, check_sdk_version
from .run import Agent


class VercelAIBinding:
    name = 'vercel-ai'
    stream_headers: Mapping[str, str] = VERCEL_AI_HEADERS
    error_frame = b'data: {"type":"error","errorText":"The answer was interrupted."}\n\n'
    """What a resumed stream ends with when its producer ended it early or died."""
    chat_id_path = 'id'
    reads_messages_late = False

    def __init__(self, sdk_version: SdkVersion = 7) -> None:
        self.sdk_version: SdkVersion = sdk_version
        """The `ai` major version of the clients: what the stream and the stored messages are written for."""

    def parse(self, body: Mapping[str, Any]) -> tuple[VercelChatRequest, RunInput]:
        request = parse_request(body)
        return request, request.run_input()

    def encoder(self, request: VercelChatRequest, run_input: RunInput, keyring: Keyring) -> EventStreamEncoder:
        # An answered approval or client tool output continues the assistant message that asked for it.
        return VercelAIEventStream(
            message_id=request.continuation_message_id,
            continued=request.continued_message,
            keyring=keyring,
            thread_id=run_input.thread_id,
            sdk_version=self.sdk_version,
            state=run_input.state,
        )

    def parse_managed(self, body: Mapping[str, Any], before: object = None) -> tuple[VercelChatRequest, RunInput]:
        return self.parse(body)  # `useChat` with a store sends its new message only

    def holds(
        self, kept: object, stored: Sequence[ModelMessage], sizes: Sequence[int], keyring: Keyring, message_id: str
    ) -> bool:
        return False  # the body holds only the new message

    def managed_input(
        self,
        request: VercelChatRequest,
        stored: Sequence[ModelMessage],
        keyring: Keyring,
        kept: object = None,
        check: CheckRead | None = None,
    ) -> ManagedInput:
        return vercel_input(request, stored, keyring)

    def with_snapshot(
        self,
        request: VercelChatRequest,
        encoder: EventStreamEncoder,
        messages: Sequence[ModelMessage],
        keyring: Keyring,
    ) -> EventStreamEncoder:
        return encoder  # useChat has no snapshot event: a reloaded page loads `GET {api}/{chatId}` instead

    def stamp(
        self, request: VercelChatRequest, encoder: EventStreamEncoder, messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        """The run's new messages, with the streamed assistant message's id kept where `dump_messages` reads a
        UI message's own id: the stored message then has the id the client got in the stream's `start`, so a
        resumed replay replaces the message a reloaded `useChat` loaded instead of adding a second one."""
        if not isinstance(encoder, VercelAIEventStream) or request.continuation_message_id is not None:
            return messages
        for index, message in enumerate(messages):
            if isinstance(message, ModelResponse):
                metadata = dict(message.metadata or {})
                sidecar = dict(metadata.get(SIDECAR_KEY) or {})
                sidecar['message'] = {**(sidecar.get('message') or {}), 'id': encoder.message_id}
                metadata[SIDECAR_KEY] = sidecar
                return [*messages[:index], message.model_copy(update={'metadata': metadata}), *messages[index + 1 :]]
        return messages

    def dump_json(self, messages: Sequence[ModelMessage], keyring: Keyring) -> bytes:
        ui = dump_messages(messages, keyring=keyring, sdk_version=self.sdk_version)
        return json_array(m.model_dump(mode='json', exclude_none=True) for m in ui)


class VercelAIEndpoint(ChatEndpoint[VercelChatRequest]):
    """`POST` endpoint for `useChat`; see `ChatEndpoint` for the options. `run.request` is the
    `VercelChatRequest` (chat id, trigger, extra body keys).

    `sdk_version` (5, 6 or 7, the default): the major version of `ai` the clients run. The stream and the
    stored messages (`GET {api}/{chatId}`) hold only what that version takes, the approval flow degraded
    as it allows (`uibridge.adapters.vercel_ai._sdk_versions`); requests are read in any version's form."""

    def __init__(self, agent: Agent, **options: Unpack[VercelAIOptions]) -> None:
        sdk_version = check_sdk_version(options.pop('sdk_version', 7))
        super().__init__(agent, VercelAIBinding(sdk_version), **cast('EndpointOptions', options))
