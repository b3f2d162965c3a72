"""The parts of a server-managed run that outlive one HTTP response: a producer that keeps running when its
client goes away, a stop that reaches it from any process, and the readers that replay its stream.

- `Detached` wraps a run's `receive` and `send`: a disconnect no longer cancels the run (the stream log and
  the stored history are what the client comes back to), it only stops the sending.
- `Stoppable` wraps the agent: a stop requested through the store (`DELETE {api}/{chatId}/stream`, from any
  process) cancels the agent where it awaits and ends the run as cancelled, in the protocol, like a
  `RunCancelled` it yielded itself.
- `serve_stream` answers `GET {api}/{chatId}/stream`: the active (or just ended) stream replayed from its first
  chunk and followed live to its end; 204 when there is none; the protocol's error event when the producer
  ended it early or died.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping

import anyio
from anyio import CancelScope

from ..core.events import AgentEvent, RunCancelled
from ..core.messages import ModelMessage
from .asgi import Message, Receive, Send
from .pump import agent_iterator, close_agent
from .run import Agent, AgentRun
from .store import ChatNotFound, ChatStore, StreamAborted

logger = logging.getLogger('uibridge.server')


class Detached:
    """A response whose run goes on without its client: after `http.disconnect` (or a failed send), sends
    are dropped and `receive` never returns again, so `stream_run` streams to the log alone to the end."""

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self.gone = False

    async def receive(self) -> Message:
        while not self.gone:
            message = await self._receive()
            if message['type'] != 'http.disconnect':
                return message
            self.gone = True
        await anyio.sleep_forever()
        raise AssertionError('unreachable')  # pragma: no cover

    async def send(self, message: Message) -> None:
        if self.gone:
            return
        try:
            await self._send(message)
        except OSError:
            self.gone = True


class Stoppable:
    """The agent, stoppable from outside (`stop()`): the agent is cancelled where it awaits (or, if it is
    between two steps, not asked for another), closed, and the run ends with `RunCancelled('stopped')`, so it
    is encoded and persisted as cancelled.

    One cancel scope spans the whole run, opened before the agent's first step and closed after its last,
    in the task that iterates it: the agent's own scopes and task groups, held across its `yield`, nest
    inside it as they would inside any caller's. (A scope per step would be closed while the agent's,
    opened during that step, is still open.) A stop that comes while the stream waits for room in a full
    outbox (a live client reading slowly) ends the run as soon as the sender has made room."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.stopped = False
        self._scope: CancelScope | None = None

    def stop(self) -> None:
        self.stopped = True
        if self._scope is not None:
            self._scope.cancel()

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        with CancelScope() as scope:
            self._scope = scope
            if self.stopped:
                scope.cancel()
            iterator = agent_iterator(self.agent, run)
            try:
                async for item in iterator:
                    yield item
                    if self.stopped:
                        break
            finally:
                self._scope = None
                await close_agent(iterator)
        if self.stopped:
            yield RunCancelled('stopped')


async def serve_stream(
    store: ChatStore,
    chat_id: str,
    principal: str,
    *,
    headers: Mapping[str, str],
    error_frame: bytes,
    receive: Receive,
    send: Send,
) -> int:
    """Replay then follow the chat's stream to `send`; the HTTP status answered (200, 204 or 404)."""
    try:
        reader = await store.read_stream(chat_id, principal)
    except ChatNotFound:
        return 404
    if reader is None:
        return 204
    response = [(k.lower().encode('latin-1'), v.encode('latin-1')) for k, v in headers.items()]
    response += [(b'cache-control', b'no-cache'), (b'x-accel-buffering', b'no')]
    try:
        await send({'type': 'http.response.start', 'status': 200, 'headers': response})
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
            tail = b''
            try:
                async for chunk in reader:
                    await send({'type': 'http.response.body', 'body': chunk, 'more_body': True})
            except StreamAborted as aborted:
                logger.info('resumed stream of chat %.64r: %s', chat_id, aborted)
                tail = error_frame
            await send({'type': 'http.response.body', 'body': tail, 'more_body': False})
            group.cancel_scope.cancel()
    except OSError:
        pass
    finally:
        with CancelScope(shield=True):
            await reader.aclose()
    return 200


async def _cancel_on_disconnect(receive: Receive, scope: CancelScope) -> None:
    while (await receive())['type'] != 'http.disconnect':
        pass
    scope.cancel()
