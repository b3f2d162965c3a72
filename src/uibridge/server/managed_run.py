"""An endpoint's requests in server-managed mode (`store=`): one run on a stored chat, and the chat's reads.

A run, in order:
1. the body parsed and limited as always (in a worker thread when large), its chat id checked
   (`CHAT_ID_RULE`: 422);
2. the chat claimed for this run (`ChatBusy`: 409; another principal's chat: 404), with its history, its
   state and their sizes as of now; then the `quota` hook asked. A binding that reads the client's messages
   once it has the stored history (AG-UI) reads and checks them before a chat that does not exist yet is
   created, so that a refused first turn leaves no chat behind;
3. the run's history: the stored one (cut for regenerate and edit) plus what the client adds (`managed`),
   checked against the chat limits (413, nothing stored), verified, its approvals checked against the
   store's ledger, and sanitized as client input always is. The agent's `run.state` is the chat's stored
   state, whatever the client says (`run.client_state`). Every step of this whose cost grows with the
   history runs in a worker thread (`offload`);
4. the run streamed, each batch of frames appended to the store's stream log before it is sent; the claim
   kept alive beside it, and a stop requested through the store ending it. The run does not depend on its
   request: a client that goes away only stops receiving (it resumes from the log);
5. one atomic commit of what the client added and what the run produced, however the run ended (a cancelled
   or failed run's partial messages, as `on_complete` gets them), with the state the run left when it set
   one, made before the stream's last bytes are sent: a client that sends its next turn as soon as it has
   read an answer to its end finds the chat free, never a 409; then `on_complete`.

A process that dies mid-run commits nothing: the claim's lease lapses, the history is as it was, and the
stream's readers end with the protocol's error.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import anyio

from ..adapters.ag_ui.request import ReadBefore
from ..core.diagnostics import collect_warnings
from ..core.messages import ModelMessage
from ..core.provenance import Keyring
from ..core.run import RunInput, ToolApproval
from ..core.sanitize import sanitize_verified
from ..core.stream import EventStreamEncoder
from ..core.verification import SignatureClaims, verify_history
from ._body_memo import Reused
from .approvals import ApprovalLedger, first_uses
from .asgi import Receive, Send
from .body import Rejected
from .limits import AttachmentLimits, ChatLimits, RequestLimits, check_message_limits
from .managed import CheckRead, ManagedInput, for_the_agent, kept_input, stored_claims
from .offload import in_worker, off_loop
from .resume import Detached, Stoppable, serve_stream
from .run import Agent, AgentRun, Checked, history_state
from .store import CHAT_ID_RULE, KEEP_STATE, ChatBusy, ChatNotFound, ChatStore, RunClaim, StoreError, is_chat_id
from .store._history_rows import encode_messages
from .stored_view import Settled, StoredViews, window_start
from .streaming import stream_run
from .telemetry import observe_run

logger = logging.getLogger('uibridge.server')


_COMMIT_TIMEOUT = 30.0
DECODE_INLINE_BYTES = 256 * 1024
"""A body up to this size that the thread's last body may share messages with is decoded on the event loop (C
passes over its text: a few milliseconds at most), so that what it shares is not sent to a worker thread."""
_RESPONSE_PIECE = 1024 * 1024


class Endpoint(Protocol):
    """What a managed run uses of the endpoint serving it (`ChatEndpoint`, which dispatches to this module)."""

    @property
    def binding(self) -> object: ...
    @property
    def store(self) -> ChatStore | None: ...
    @property
    def keyring(self) -> Keyring: ...
    @property
    def stored_views(self) -> StoredViews: ...
    @property
    def limits(self) -> RequestLimits: ...
    @property
    def chat_limits(self) -> ChatLimits: ...
    @property
    def attachment_limits(self) -> AttachmentLimits: ...
    @property
    def approval_ledger(self) -> ApprovalLedger: ...
    @property
    def agent(self) -> Agent: ...
    @property
    def keep_alive(self) -> float | None: ...
    @property
    def expose_errors(self) -> bool: ...
    @property
    def strip_system_prompts(self) -> bool: ...
    @property
    def allowed_file_url_schemes(self) -> tuple[str, ...]: ...

    def parse_body_with(
        self,
        body: bytes,
        parse: Callable[[Mapping[str, Any], ReadBefore | None], tuple[Any, RunInput]],
        *,
        later: bool = False,
        principal: str | None = None,
    ) -> tuple[Any, RunInput, int, Reused | None]: ...

    def decode_body(
        self, body: bytes, *, later: bool = False, principal: str | None = None
    ) -> tuple[dict[str, Any], Reused | None]: ...

    def parse_decoded(
        self,
        parsed: dict[str, Any],
        reused: Reused | None,
        parse: Callable[[Mapping[str, Any], ReadBefore | None], tuple[Any, RunInput]],
        *,
        later: bool = False,
    ) -> tuple[Any, RunInput, int]: ...

    async def check_quota(
        self,
        chat_id: str,
        principal: str | None,
        headers: Mapping[str, str],
        body_bytes: int,
        *,
        stored: Sequence[int] | None = None,
    ) -> None: ...

    def preparing(self) -> AbstractContextManager[None]: ...
    def check(self, request: Any, run_input: RunInput) -> Checked[Any]: ...
    def finish(self, checked: Checked[Any], approvals: list[ToolApproval]) -> tuple[AgentRun, EventStreamEncoder]: ...
    async def complete(self, encoder: EventStreamEncoder, run: AgentRun) -> None: ...


class StoredBinding:
    """What a protocol binding adds for server-managed history (`VercelAIBinding`, `AGUIBinding` have it)."""

    stream_headers: Mapping[str, str]
    error_frame: bytes
    chat_id_path: str
    """Where the chat id is in the protocol's request (Vercel `id`, AG-UI `threadId`)."""
    reads_messages_late: bool
    """Whether `parse_managed` leaves the messages for `managed_input` to read (and check against the request
    limits, with the `check` it is given), once it knows which of them the stored history already has."""

    def parse_managed(self, body: Mapping[str, Any], before: ReadBefore | None = None) -> tuple[Any, RunInput]:
        """`parse`, reading no more of the client's messages than `managed_input` needs of them before it has the
        stored history (`before`: the ids and roles of the first of them, as the thread's last body had them)."""
        raise NotImplementedError

    def managed_input(
        self,
        request: Any,
        stored: Sequence[ModelMessage],
        keyring: Keyring,
        kept: object = None,
        check: CheckRead | None = None,
    ) -> ManagedInput:
        """`kept`: the `ManagedInput.index` of the chat's last turn, when the claimed history is the one it left."""
        raise NotImplementedError

    def holds(
        self, kept: object, stored: Sequence[ModelMessage], sizes: Sequence[int], keyring: Keyring, message_id: str
    ) -> bool:
        """Whether `stored` (the claimed history, with each message's size) has a message of this id, as the client
        numbers its messages, known from `kept` (`ManagedInput.index`) and what little it does not cover yet (no
        when that is not little): `managed_input` then reads none of the client's messages up to that one."""
        raise NotImplementedError

    def with_snapshot(
        self, request: Any, encoder: EventStreamEncoder, messages: Sequence[ModelMessage], keyring: Keyring
    ) -> EventStreamEncoder:
        """`encoder`, bringing a client that is `behind` (`ManagedInput`) to `messages`, the server's history, where
        the protocol has a way to (`request`: the client's, for what it holds)."""
        raise NotImplementedError

    def dump_json(self, messages: Sequence[ModelMessage], keyring: Keyring) -> bytes:
        raise NotImplementedError

    def stamp(self, request: Any, encoder: EventStreamEncoder, messages: list[ModelMessage]) -> list[ModelMessage]:
        raise NotImplementedError


def _stored_binding(endpoint: Endpoint) -> StoredBinding:
    binding: Any = endpoint.binding
    needed = (
        'parse_managed',
        'reads_messages_late',
        'holds',
        'managed_input',
        'with_snapshot',
        'dump_json',
        'stamp',
        'chat_id_path',
    )
    if not all(hasattr(binding, name) for name in needed):
        raise TypeError(f'the {binding.name} binding does not support server-managed history')
    return binding


def _store(endpoint: Endpoint) -> ChatStore:
    assert endpoint.store is not None
    return endpoint.store


async def serve_chat(
    endpoint: Endpoint, chat_id: str, principal: str, scope: Mapping[str, Any], receive: Receive, send: Send
) -> None:
    """`GET {api}/{chatId}` (the stored messages, in the protocol), `GET {api}/{chatId}/stream` (resume) and
    `DELETE {api}/{chatId}/stream` (stop the running run, from any process)."""
    store = _store(endpoint)
    binding = _stored_binding(endpoint)
    method = scope['method']
    if not is_chat_id(chat_id):
        raise Rejected(404, 'no such chat')  # no chat could have this id: like an unknown one
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
    # Signing and writing a history costs in proportion to it, and the store does not say how large it is.
    body = await in_worker(binding.dump_json, messages, endpoint.keyring)
    await _respond(send, 200, body, 'application/json')


async def run_managed(
    endpoint: Endpoint,
    body: bytes,
    principal: str,
    headers: Mapping[str, str],
    receive: Receive,
    send: Send,
) -> None:
    store = _store(endpoint)
    binding = _stored_binding(endpoint)
    views = endpoint.stored_views
    late = binding.reads_messages_late
    if late and len(body) <= DECODE_INLINE_BYTES:
        # What the thread's last body had is taken as decoded then (`_body_memo`): the body is decoded here, in C
        # but for what it adds (compared, not decoded, where it is the last body's), and what is left to read of it
        # is what it does not share, which is what decides where the rest runs.
        parsed, reused = endpoint.decode_body(body, later=late, principal=principal)
        unshared = len(body) - (reused.chars if reused is not None else 0)
        parse = partial(endpoint.parse_decoded, parse=binding.parse_managed, later=late)
        request, run_input, budget = await off_loop(parse, parsed, reused, size=unshared)
    else:
        parse = partial(endpoint.parse_body_with, parse=binding.parse_managed, later=late, principal=principal)
        request, run_input, budget, reused = await off_loop(parse, body, size=len(body))
        unshared = len(body)
    if not is_chat_id(run_input.thread_id):
        raise Rejected(422, f'a chat id is {CHAT_ID_RULE}', binding.chat_id_path)
    first: ManagedInput | None = None
    try:
        try:
            # A binding that reads the client's messages once it has the stored history checks what they add
            # only then: on a chat that does not exist yet, before creating it, so that a refusal leaves none.
            claim = await store.claim(run_input.thread_id, principal, create=not binding.reads_messages_late)
        except ChatNotFound:
            if not binding.reads_messages_late:
                raise
            first = await off_loop(_check_first, endpoint, binding, request, budget, size=len(body))
            claim = await store.claim(run_input.thread_id, principal, create=True)
    except ChatBusy:
        raise Rejected(409, 'this chat has a run in progress') from None
    except ChatNotFound:
        raise Rejected(404, 'no such chat') from None
    committed = False
    try:
        await endpoint.check_quota(claim.chat_id, principal, headers, len(body), stored=claim.sizes)
        # Checking costs what the views kept for the chat do not already cover (all of it on a first turn), and the
        # body's messages it reads: of a body sharing messages with the last one, up to one the chat has stored,
        # only what it does not share (`managed_input` reads from the last message the chat has on).
        last = reused.before.ids[-1] if reused is not None and reused.before is not None else None
        with endpoint.preparing():
            kept = views.index(claim)
            holds = last is not None and binding.holds(kept, claim.messages, claim.sizes, endpoint.keyring, last)
        read = unshared if holds else len(body)
        size = sum(claim.sizes[views.settled_up_to(claim) :]) + read
        prepared = await off_loop(_prepare, endpoint, binding, request, run_input, claim, budget, first, size=size)
        approvals = await first_uses(prepared.checked.approvals, endpoint.approval_ledger)
        # A client that is behind gets the whole history, dumped for its snapshot.
        snapshot = sum(claim.sizes) if prepared.managed.behind else 0
        run, encoder = await off_loop(_finish, endpoint, binding, prepared, approvals, size=size + snapshot)
        run.principal = principal
        run.headers = headers
        ended = False

        async def commit_run() -> None:
            # Before the stream's last bytes go out: a client that sends its next turn the moment it has read
            # this answer to its end (`ai`'s `sendAutomaticallyWhen` does) finds the chat free.
            nonlocal committed, ended
            ended = True
            produced = binding.stamp(request, encoder, encoder.new_messages)
            found, state = history_state(produced)
            prefix = prepared.managed.prefix
            replace_from = prefix if prefix < len(claim.messages) else None
            messages = prepared.added + produced
            committed = await _commit(store, claim, messages, replace_from, state if found else KEEP_STATE)
            if committed:
                index = prepared.managed.index if prepared.managed.prefix == len(claim.messages) else None
                views.committed(claim, prepared.cut, prepared.settled, index)

        with observe_run(run, encoder):
            await _stream(endpoint, store, claim, run, encoder, receive, send, commit_run)
        if not ended:
            await commit_run()
        await endpoint.complete(encoder, run)
    finally:
        if not committed:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_COMMIT_TIMEOUT), suppress(StoreError):
                await store.release(claim)


@dataclass
class _Prepared:
    """A managed run checked, before the ledger has had its say."""

    managed: ManagedInput
    checked: Checked[Any]
    added: list[ModelMessage]
    """What the run keeps of the client's input (what verification left of it): stored with the run."""
    cut: int
    """Where the window the client's additions were checked with starts (`stored_view.window_start`): the
    stored history before it is `checked.settled`."""
    history: list[ModelMessage]
    """The stored history the run works from (cut for regenerate and edit)."""
    settled: Settled


def _check_first(endpoint: Endpoint, binding: StoredBinding, request: Any, budget: int) -> ManagedInput:
    """What the client adds to a chat with no stored history, read and checked against the request, attachment and
    chat limits (what `_prepare` checks of it)."""
    with endpoint.preparing():
        check = partial(check_message_limits, limits=endpoint.limits, budget=budget)
        managed = binding.managed_input(request, [], endpoint.keyring, None, check)
        endpoint.attachment_limits.check(managed.added)
        endpoint.chat_limits.check([], [len(item) for item in encode_messages(managed.added)])
    return managed


def _prepare(
    endpoint: Endpoint,
    binding: StoredBinding,
    request: Any,
    run_input: Any,
    claim: RunClaim,
    budget: int,
    first: ManagedInput | None = None,
) -> _Prepared:
    """The stored history (cut for regenerate and edit) and what the client adds, within the chat limits: the
    stored part before its last response as the endpoint settled it (`stored_view`; settled here, once, when it
    has not), the rest with the additions checked as client input always is, every stored part trusted as the
    server's own. In one call, so that it can run in a worker thread when it is large."""
    with endpoint.preparing():
        if first is not None and not claim.messages:
            managed = first  # read and checked before the claim, against the same (empty) history
        else:
            kept = endpoint.stored_views.index(claim)
            check = partial(check_message_limits, limits=endpoint.limits, budget=budget)
            managed = binding.managed_input(request, claim.messages, endpoint.keyring, kept, check)
        history = claim.messages[: managed.prefix]
        endpoint.attachment_limits.check(managed.added)
        endpoint.chat_limits.check(
            claim.sizes[: managed.prefix], [len(item) for item in encode_messages(managed.added)]
        )
        # A client that is behind gets the whole history as checked (a snapshot): nothing is settled apart then.
        cut = 0 if managed.behind else window_start(history)
        settled = endpoint.stored_views.settled(claim, history, cut, partial(_settle, endpoint))
        window = for_the_agent(history[cut:])
        stored_claims(window, managed.claims)
    merged = dataclasses.replace(run_input, history=window + managed.added, claims=managed.claims)
    checked = endpoint.check(request, merged)  # its state: the window's, if a response there holds one
    checked.settled = settled.messages
    if claim.state is not None:
        checked.state = claim.state
    elif not history_state(checked.verified.messages)[0]:
        checked.state = settled.state[1]  # a chat stored before there was a state column: its history's
    return _Prepared(managed, checked, kept_input(managed.added, checked.verified.messages), cut, history, settled)


def _settle(endpoint: Endpoint, stored: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Part of the stored history as the agent sees it: trusted (`stored_claims`), made well formed and sanitized
    as any history is, the open calls of its last response dropped (the next response leaves them behind)."""
    stored = for_the_agent(stored)
    claims = SignatureClaims()
    stored_claims(stored, claims)
    verified = verify_history(stored, claims, endpoint.keyring)
    with collect_warnings():  # what the stored history holds was reported when it came in
        return sanitize_verified(
            verified,
            strip_system_prompts=endpoint.strip_system_prompts,
            allowed_file_url_schemes=endpoint.allowed_file_url_schemes,
        )


def _finish(
    endpoint: Endpoint, binding: StoredBinding, prepared: _Prepared, approvals: list[ToolApproval]
) -> tuple[AgentRun, EventStreamEncoder]:
    run, encoder = endpoint.finish(prepared.checked, approvals)
    if run.input is not None:  # the request as loaded: the stored history and what the client added to it
        run.input = dataclasses.replace(run.input, history=[*prepared.history, *prepared.managed.added])
    if prepared.managed.behind:
        # The snapshot is what the store holds once the run commits, before the run's own messages: the stored
        # history and the client's input as it is kept, with the ids the client gave it (the verified copy the
        # agent gets carries none of the client's bookkeeping, so its prompt would come back under another id).
        with endpoint.preparing():
            held = [*prepared.history, *prepared.added]
            encoder = binding.with_snapshot(prepared.checked.request, encoder, held, endpoint.keyring)
    return run, encoder


async def _stream(
    endpoint: Endpoint,
    store: ChatStore,
    claim: RunClaim,
    run: AgentRun,
    encoder: EventStreamEncoder,
    receive: Receive,
    send: Send,
    commit: Callable[[], Awaitable[None]],
) -> None:
    """Stream the run to the client and the store's log, beside the claim's heartbeat and a watch for a stop;
    `commit` is awaited once the run is over, before the last bytes go out."""
    detached = Detached(receive, send)
    agent = Stoppable(endpoint.agent)
    logging_ok = True
    keeping = anyio.CancelScope()

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
        with keeping:
            try:
                await store.keep_claim(claim)
            except StoreError as error:
                logger.warning('run %s: %s; stopping it', claim.run_id, error)
                agent.stop()

    async def settle() -> None:
        keeping.cancel()  # the commit releases the claim: nothing left to keep alive
        _settle_status(agent, run)
        await commit()

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
            settle=settle,
        )
        group.cancel_scope.cancel()
    _settle_status(agent, run)


def _settle_status(agent: Stoppable, run: AgentRun) -> None:
    """A run a stop reached after its agent's last step ended as stopped all the same."""
    if agent.stopped and run.status == 'finished':
        run.status = 'cancelled'


async def _commit(
    store: ChatStore, claim: RunClaim, messages: list[ModelMessage], replace_from: int | None, state: Any
) -> bool:
    """Commit the run (shielded: a server shutting down still persists it); whether the store took it."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(_COMMIT_TIMEOUT):
        try:
            await store.commit(claim, messages, replace_from=replace_from, state=state)
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
        # A large history in pieces: the server copies what the socket cannot take yet into its buffer, and
        # waits for the client between pieces rather than copying the whole of it at once on the event loop.
        for start in range(0, len(body), _RESPONSE_PIECE):
            await send({'type': 'http.response.body', 'body': body[start : start + _RESPONSE_PIECE], 'more_body': True})
        await send({'type': 'http.response.body', 'body': b''})
    except OSError:
        pass
