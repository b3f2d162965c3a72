"""An endpoint's requests in server-managed mode (`store=`): one run on a stored chat, and the chat's reads.

A run, in order:
1. the body parsed and limited as always (in a worker thread when large);
2. the chat claimed for this run (`ChatBusy`: 409; another principal's chat: 404), with its history as of now;
3. the run's history: the stored one (cut for regenerate and edit) plus what the client adds (`managed`),
   verified and sanitized as client input always is;
4. the run streamed, each batch of frames appended to the store's stream log before it is sent; the claim
   kept alive beside it, and a stop requested through the store ending it. The run does not depend on its
   request: a client that goes away only stops receiving (it resumes from the log);
5. one atomic commit of what the client added and what the run produced, however the run ended (a cancelled
   or failed run's partial messages, as `on_complete` gets them); then `on_complete`.

A process that dies mid-run commits nothing: the claim's lease lapses, the history is as it was, and the
stream's readers end with the protocol's error.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ..core.errors import InputError
from ..core.messages import ModelMessage
from ..core.provenance import Keyring
from ..core.run import RunInput
from ..core.stream import EventStreamEncoder
from .asgi import Receive, Send
from .body import Rejected
from .managed import ManagedInput, kept_input, stored_claims
from .resume import Detached, Stoppable, serve_stream
from .store import ChatBusy, ChatNotFound, ChatStore, RunClaim, StoreError
from .streaming import stream_run
from .telemetry import observe_run

if TYPE_CHECKING:
    from .endpoint import ChatEndpoint

__all__ = ['StoredBinding', 'run_managed', 'serve_chat']

logger = logging.getLogger('uibridge.server')


_INLINE_BODY_BYTES = 64 * 1024
_COMMIT_TIMEOUT = 30.0


class StoredBinding:
    """What a protocol binding adds for server-managed history (`VercelAIBinding`, `AGUIBinding` have it)."""

    stream_headers: Mapping[str, str]
    error_frame: bytes

    def managed_input(self, request: Any, stored: Sequence[ModelMessage]) -> ManagedInput:
        raise NotImplementedError

    def with_snapshot(
        self, encoder: EventStreamEncoder, messages: Sequence[ModelMessage], keyring: Keyring
    ) -> EventStreamEncoder:
        raise NotImplementedError

    def dump_json(self, messages: Sequence[ModelMessage], keyring: Keyring) -> bytes:
        raise NotImplementedError

    def stamp(self, request: Any, encoder: EventStreamEncoder, messages: list[ModelMessage]) -> list[ModelMessage]:
        raise NotImplementedError


def _stored_binding(endpoint: ChatEndpoint[Any]) -> StoredBinding:
    binding: Any = endpoint.binding
    if not all(hasattr(binding, name) for name in ('managed_input', 'with_snapshot', 'dump_json', 'stamp')):
        raise TypeError(f'the {endpoint.binding.name} binding does not support server-managed history')
    return binding


def _store(endpoint: ChatEndpoint[Any]) -> ChatStore:
    assert endpoint.store is not None
    return endpoint.store


async def serve_chat(
    endpoint: ChatEndpoint[Any], chat_id: str, principal: str, scope: Mapping[str, Any], receive: Receive, send: Send
) -> None:
    """`GET {api}/{chatId}` (the stored messages, in the protocol), `GET {api}/{chatId}/stream` (resume) and
    `DELETE {api}/{chatId}/stream` (stop the running run, from any process)."""
    store = _store(endpoint)
    binding = _stored_binding(endpoint)
    method = scope['method']
    if str(scope.get('path', '')).rstrip('/').endswith('/stream'):
        if method == 'DELETE':
            try:
                await store.request_stop(chat_id, principal)
            except ChatNotFound:
                raise Rejected(404, 'no such chat') from None
            await _respond(send, 204, b'')
            return
        status = await serve_stream(
            store,
            chat_id,
            principal,
            headers=binding.stream_headers,
            error_frame=binding.error_frame,
            receive=receive,
            send=send,
        )
        if status == 404:
            raise Rejected(404, 'no such chat')
        if status == 204:
            await _respond(send, 204, b'')
        return
    if method != 'GET':
        raise Rejected(405, 'method not allowed', headers={'allow': 'GET'})
    try:
        messages = await store.load_messages(chat_id, principal)
    except ChatNotFound:
        raise Rejected(404, 'no such chat') from None
    await _respond(send, 200, binding.dump_json(messages, endpoint.keyring), 'application/json')


async def run_managed(
    endpoint: ChatEndpoint[Any],
    body: bytes,
    principal: str,
    headers: Mapping[str, str],
    receive: Receive,
    send: Send,
) -> None:
    store = _store(endpoint)
    binding = _stored_binding(endpoint)
    if len(body) < _INLINE_BODY_BYTES:
        request, run_input = endpoint.parse_body(body)
    else:
        request, run_input = await anyio.to_thread.run_sync(endpoint.parse_body, body)
    try:
        claim = await store.claim(run_input.thread_id, principal, create=True)
    except ChatBusy:
        raise Rejected(409, 'this chat has a run in progress') from None
    except ChatNotFound:
        raise Rejected(404, 'no such chat') from None
    committed = False
    try:
        try:
            managed = binding.managed_input(request, claim.messages)
            history = claim.messages[: managed.prefix]
            stored_claims(history, endpoint.keyring, managed.claims)
            merged = dataclasses.replace(run_input, history=history + managed.added, claims=managed.claims)
            run, verified = endpoint.prepare_verified(request, merged)
            encoder = binding_encoder(endpoint, binding, request, merged, managed, verified.messages)
        except InputError as error:
            raise Rejected(422, error.message, error.path) from None
        added = kept_input(managed.added, verified.messages)
        run.principal = principal
        run.headers = headers
        with observe_run(run, encoder):
            await _stream(endpoint, store, claim, run, encoder, receive, send)
        produced = binding.stamp(request, encoder, encoder.new_messages)
        committed = await _commit(store, claim, added + produced, managed.prefix, len(claim.messages))
        await endpoint.complete(encoder, run)
    finally:
        if not committed:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_COMMIT_TIMEOUT), suppress(StoreError):
                await store.release(claim)


def binding_encoder(
    endpoint: ChatEndpoint[Any],
    binding: StoredBinding,
    request: Any,
    run_input: RunInput,
    managed: ManagedInput,
    verified: list[ModelMessage],
) -> EventStreamEncoder:
    encoder = endpoint.binding.encoder(request, run_input, endpoint.keyring)
    return binding.with_snapshot(encoder, verified, endpoint.keyring) if managed.behind else encoder


async def _stream(
    endpoint: ChatEndpoint[Any],
    store: ChatStore,
    claim: RunClaim,
    run: Any,
    encoder: EventStreamEncoder,
    receive: Receive,
    send: Send,
) -> None:
    detached = Detached(receive, send)
    agent = Stoppable(endpoint.agent)
    logging_ok = True

    async def log(frames: Sequence[bytes]) -> None:
        nonlocal logging_ok
        if not logging_ok:
            return
        try:
            await store.append_stream(claim, frames)
        except (StoreError, RuntimeError) as error:
            # The live client still gets the stream; only a resume would miss the rest.
            logging_ok = False
            logger.warning('run %s: the stream log stopped: %s', claim.run_id, error)

    async def watch_stop() -> None:
        await store.wait_for_stop(claim)
        agent.stop()

    async def keep() -> None:
        try:
            await store.keep_claim(claim)
        except StoreError as error:
            logger.warning('run %s: %s; stopping it', claim.run_id, error)
            agent.stop()

    async with anyio.create_task_group() as group:
        group.start_soon(watch_stop)
        group.start_soon(keep)
        await stream_run(
            agent=agent,
            run=run,
            encoder=encoder,
            send=detached.send,
            receive=detached.receive,
            keep_alive=endpoint.keep_alive,
            expose_errors=endpoint.expose_errors,
            log=log,
        )
        group.cancel_scope.cancel()
    if agent.stopped and run.status == 'finished':
        run.status = 'cancelled'


async def _commit(store: ChatStore, claim: RunClaim, messages: list[ModelMessage], prefix: int, stored: int) -> bool:
    """Commit the run (shielded: a server shutting down still persists it); whether the store took it."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(_COMMIT_TIMEOUT):
        try:
            await store.commit(claim, messages, replace_from=prefix if prefix < stored else None)
            return True
        except StoreError as error:
            logger.error('run %s on chat %.64r was not stored: %s', claim.run_id, claim.chat_id, error)
            return True  # the claim is gone: nothing to release
    return False


async def _respond(send: Send, status: int, body: bytes, content_type: str | None = None) -> None:
    headers = [(b'content-length', str(len(body)).encode())]
    if content_type is not None:
        headers.append((b'content-type', content_type.encode()))
    try:
        await send({'type': 'http.response.start', 'status': status, 'headers': headers})
        await send({'type': 'http.response.body', 'body': body})
    except OSError:
        pass
