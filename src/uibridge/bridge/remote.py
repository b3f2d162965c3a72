"""`RemoteAgent`: an agent that runs somewhere else, behind a chat protocol, served as an ordinary uibridge agent.

Each run posts the verified, sanitized history (`run.messages`) to the remote in its own protocol and relays
what comes back as neutral events, which the endpoint streams in its frontend's protocol, signs, stores and
bounds as it does any agent's. The protocol's side is a client (`uibridge.client`): `RemoteAGUIAgent` and
`RemoteVercelAgent` say what a turn sends (`_exchange`); the relaying is this class's.

- Approvals, both ways. The remote asks with an id of its own; the frontend is asked with the endpoint's (only
  the endpoint can mint one, for that call in that thread). The remote's ids ride back to the frontend in the
  answer's message metadata (`uibridge_remote`), so the next turn, whose approvals the endpoint has verified,
  resumes the remote with the ids it asked with (read from the frontend's copy, `run.input`); where the frontend
  did not keep them (an AG-UI client keeps no metadata sent after a message began), the endpoint's own id is
  sent, which is the remote's too when the remote is a uibridge server sharing the secret, and which a Vercel AI
  SDK route takes whatever it is. A kept id is the frontend's copy, unsigned: the endpoint verified the answer
  itself for its own call, and the id names one of the remote's pending interrupts of the same turn, so an
  edited one can only answer another call the user could answer anyway.
- Client tools, both ways: the frontend's tools are the remote's client tools; a call the remote leaves to its
  client is a call the frontend answers, and the answer reaches the remote in the next turn's history.
- State: an AG-UI frontend's `state` is AG-UI input, editable by its user by design, and the remote is the agent
  that decides what to make of it: it is sent as the frontend sent it (`run.client_state`); from a Vercel frontend,
  which has no state of its own to send, the remote gets the server's (`run.state`).
- Headers: none of the frontend's request is forwarded unless named in `forward_headers` (an `authorization`,
  say); `headers` are sent with every request.
- Failures: a remote that cannot be asked, answers with an error status, or sends a stream that cannot be read
  or that passes `limits` raises `RemoteError` inside the run: the endpoint ends the stream with the protocol's
  error event (the text the endpoint's `expose_errors` allows), never a 500. The remote's own error event is
  relayed with its text. The frontend going away cancels the run, which closes the remote request.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable
from typing import Any, cast

from typing_extensions import Unpack

from ..client.stream import ClientOptions
from ..client.turn import Exchange
from ..core import events as ev
from ..core.events import MESSAGE_METADATA_KEY
from ..core.messages import ModelMessage, ModelResponse
from ..core.run import ToolApproval
from ..server.run import AgentRun

REMOTE_METADATA_KEY = 'uibridge_remote'
"""The key of the answer's message metadata where the remote's approval ids ride: `{"approvals": {call id: id}}`."""


class RemoteOptions(ClientOptions, total=False):
    """What both remote agents take beside their URL: a client's options (`ClientOptions`: `headers` sent with every
    request, `http`, `keyring`, `limits`, `timeout`), and `forward_headers`, the names of the frontend request's
    headers to pass on (none by default)."""

    forward_headers: Iterable[str]


class RemoteAgent(ABC):
    """What both remote agents share (see the module docstring). Its options are `RemoteOptions`."""

    def __init__(self, url: str, **options: Unpack[RemoteOptions]) -> None:
        forward_headers = options.pop('forward_headers', ())
        if isinstance(forward_headers, str):
            raise TypeError(f'forward_headers must be a list of header names, such as [{forward_headers!r}]')
        self.url = url
        self.forward_headers = tuple(name.lower() for name in forward_headers)
        self.options: ClientOptions = options
        """What the agent's protocol client is made with."""

    async def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent]:
        # The frontend's copy of its history (`run.input`): the agent's (`run.messages`) keeps no message metadata
        # from a client, which no signature covers. These ids need none (see the module docstring).
        remembered = remote_approval_ids(run.input.history if run.input is not None else run.messages)
        approvals = [
            ToolApproval(
                approval_id=remembered.get(approval.tool_call_id or '', approval.approval_id),
                approved=approval.approved,
                tool_call_id=approval.tool_call_id,
                reason=approval.reason,
                payload=approval.payload,
            )
            for approval in run.approvals
        ]
        headers = {name: run.headers[name] for name in self.forward_headers if name in run.headers}
        exchange = self._exchange(run, approvals, headers)
        try:
            async for events in exchange.events:
                if exchange.decoder.ended and (asked := exchange.decoder.approval_ids):
                    # The remote's approval ids go just before the run's end (its batch's last event).
                    *events, end = events
                    events += [ev.MessageMetadata({REMOTE_METADATA_KEY: {'approvals': asked}}), end]
                for event in events:
                    yield event
        finally:
            await exchange.events.aclose()

    @abstractmethod
    def _exchange(self, run: AgentRun, approvals: list[ToolApproval], headers: dict[str, str]) -> Exchange:
        """The request for this run, in the remote's protocol, under way."""


def forwarded_state(run: AgentRun) -> Any:
    """The state a remote gets for `run` (see the module docstring): an AG-UI frontend's own, else the server's."""
    if run.protocol == 'ag-ui' and run.client_state is not None:
        return run.client_state
    return run.state


def remote_approval_ids(history: Iterable[ModelMessage]) -> dict[str, str]:
    """The remote's approval ids the history's answers kept (tool call id -> id), the latest winning."""
    ids: dict[str, str] = {}
    for message in history:
        if not isinstance(message, ModelResponse) or not message.metadata:
            continue
        kept: Any = message.metadata.get(MESSAGE_METADATA_KEY)
        remote = cast('dict[str, Any]', kept).get(REMOTE_METADATA_KEY) if isinstance(kept, dict) else None
        approvals = cast('dict[str, Any]', remote).get('approvals') if isinstance(remote, dict) else None
        for call_id, approval_id in cast('dict[str, Any]', approvals).items() if isinstance(approvals, dict) else ():
            if isinstance(approval_id, str):
                ids[call_id] = approval_id
    return ids
