"""`AGUIEndpoint`: an agent served to AG-UI 1.0 clients (`@ag-ui/client`'s `HttpAgent`, CopilotKit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ag_ui.core import EventType, MessagesSnapshotEvent
from typing_extensions import Unpack

from ..adapters.ag_ui import AGUIEventStream, AGUIRunRequest, dump_messages, parse_request
from ..adapters.ag_ui._snapshot import snapshots_for
from ..adapters.ag_ui.request import ReadBefore, parse_unread
from ..adapters.ag_ui.stream import CONTENT_TYPE, sdk_frame
from ..core.events import AgentEvent, StateDelta, StateSnapshot
from ..core.messages import ModelMessage
from ..core.provenance import Keyring
from ..core.run import RunInput
from ..core.stream import EventStreamEncoder
from .endpoint import ChatEndpoint
from .managed import CheckRead, ManagedInput, agui_holds, agui_input
from .offload import json_array
from .options import EndpointOptions
from .run import Agent


class AGUIBinding:
    name = 'ag-ui'
    stream_headers: Mapping[str, str] = {'content-type': CONTENT_TYPE}
    error_frame = b'data: {"type":"RUN_ERROR","message":"The run was interrupted."}\n\n'
    """What a resumed stream ends with when its producer ended it early or died."""
    chat_id_path = 'threadId'
    reads_messages_late = True

    def parse(self, body: Mapping[str, Any]) -> tuple[AGUIRunRequest, RunInput]:
        request = parse_request(body)
        return request, request.run_input()

    def encoder(self, request: AGUIRunRequest, run_input: RunInput, keyring: Keyring) -> EventStreamEncoder:
        """`run_input.state` is the server's state (the endpoint's, `run.state`); the client's is the request's."""
        encoder = AGUIEventStream(
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            parent_run_id=run_input.parent_run_id,
            client_protocol_version=request.protocol_version,
            keyring=keyring,
            state=run_input.state,
        )
        if request.input.state != run_input.state:
            return _ServerStateFirst(encoder, run_input.state)
        return encoder

    def parse_managed(
        self, body: Mapping[str, Any], before: ReadBefore | None = None
    ) -> tuple[AGUIRunRequest, RunInput]:
        """`@ag-ui/client` sends the whole history every run: of the messages the stored chat already has, only the
        ids and roles are read (`agui_input` reads the rest), and of those the thread's last body had (`before`),
        not even those."""
        request = parse_unread(body, before)
        return request, request.run_input()

    def managed_input(
        self,
        request: AGUIRunRequest,
        stored: Sequence[ModelMessage],
        keyring: Keyring,
        kept: object = None,
        check: CheckRead | None = None,
    ) -> ManagedInput:
        return agui_input(request, stored, keyring, kept, check)

    def holds(
        self, kept: object, stored: Sequence[ModelMessage], sizes: Sequence[int], keyring: Keyring, message_id: str
    ) -> bool:
        return agui_holds(kept, stored, sizes, keyring, message_id)

    def with_snapshot(
        self, request: AGUIRunRequest, encoder: EventStreamEncoder, messages: Sequence[ModelMessage], keyring: Keyring
    ) -> EventStreamEncoder:
        client_ids = [message.id for message in request.input.messages]
        return _Snapshotting(encoder, messages, keyring, client_ids)

    def stamp(
        self, request: AGUIRunRequest, encoder: EventStreamEncoder, messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        return messages  # the AG-UI dump keeps the streamed message ids already

    def dump_json(self, messages: Sequence[ModelMessage], keyring: Keyring) -> bytes:
        dumped = dump_messages(messages, keyring=keyring)
        return json_array(m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in dumped)


class _Wrapped:
    """An encoder passed through, for the wrappers below to add to."""

    def __init__(self, encoder: EventStreamEncoder) -> None:
        self._encoder = encoder

    @property
    def headers(self) -> Mapping[str, str]:
        return self._encoder.headers

    def start(self) -> bytes:
        return self._encoder.start()

    def encode(self, event: AgentEvent) -> bytes:
        return self._encoder.encode(event)

    def close(self) -> bytes:
        return self._encoder.close()

    @property
    def new_messages(self) -> list[ModelMessage]:
        return self._encoder.new_messages


class _Snapshotting(_Wrapped):
    """The encoder, with a `MESSAGES_SNAPSHOT` of the run's history right after `RUN_STARTED`: a client whose
    view is behind the stored history (a reload, another tab) ends holding the server's messages, in the server's
    order, before the run's own messages arrive. `@ag-ui/client` keeps the messages it knows in its own order, so a
    client holding them in another order first gets a snapshot of the prefix both agree on (`snapshots_for`;
    `client_ids` are the ids of the messages its request listed, in its order). The snapshots are written here,
    when the run is prepared (in a worker thread for a large history), not when it starts."""

    def __init__(
        self, encoder: EventStreamEncoder, messages: Sequence[ModelMessage], keyring: Keyring, client_ids: list[str]
    ) -> None:
        super().__init__(encoder)
        dumped = dump_messages(messages, keyring=keyring)
        self._frame = b''.join(
            sdk_frame(MessagesSnapshotEvent(type=EventType.MESSAGES_SNAPSHOT, messages=snapshot))
            for snapshot in snapshots_for(dumped, client_ids)
        )

    def start(self) -> bytes:
        return self._encoder.start() + self._frame


class _ServerStateFirst(_Wrapped):
    """The encoder, for a client whose `state` is not the server's: a `STATE_DELTA` patches the state it is
    applied to, so before the run's first delta (unless a `STATE_SNAPSHOT` came first) the client gets the
    server's state as a snapshot, and the two apply the delta to the same state. A run that yields no state
    event leaves the client's view as it is."""

    def __init__(self, encoder: EventStreamEncoder, state: Any) -> None:
        super().__init__(encoder)
        self._state = state
        self._synced = False

    def encode(self, event: AgentEvent) -> bytes:
        if not self._synced and isinstance(event, StateSnapshot | StateDelta):
            self._synced = True
            if isinstance(event, StateDelta):
                return self._encoder.encode(StateSnapshot(self._state)) + self._encoder.encode(event)
        return self._encoder.encode(event)


class AGUIEndpoint(ChatEndpoint[AGUIRunRequest]):
    """`POST` endpoint for an AG-UI `RunAgentInput`; see `ChatEndpoint` for the options. `run.request` is the
    `AGUIRunRequest` (`.input` is the SDK's `RunAgentInput`: `context`, `forwardedProps`, ...). With a store,
    `.input.messages` holds only the messages the server read: those after the last one the chat already has."""

    def __init__(self, agent: Agent, **options: Unpack[EndpointOptions]) -> None:
        super().__init__(agent, AGUIBinding(), **options)
