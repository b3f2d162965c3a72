"""`ChatEndpoint`: the ASGI app that turns one protocol request into one streamed agent run.

Per request, in this order, so that the cheap refusals come first and nothing a client sends reaches the
agent unchecked:

1. method (405) and content type (415), before a byte of the body is read;
2. the body, at most `max_body_bytes` (413; a declared `Content-Length` is checked before reading), within
   `body_timeout` seconds (408: a trickled body holds nothing open for long);
3. strict JSON (400 for bytes that are not UTF-8, 422 for anything else, non-finite numbers included), the
   request limits (`RequestLimits`: 413 naming the limit, 422 for an id no encoder can write), then the
   protocol's own parsing and loading into neutral messages (422 with `{"error", "path"}`, never echoing
   the input), then each file it holds (`AttachmentLimits`: 413 past `max_file_bytes`, 415 for a media type
   outside `allowed_media_types`, naming the file);
4. the `quota` hook asked (its 413 or 429);
5. the history verified against the server's signatures (`verify_history`: what claims the server's
   authorship and does not verify is dropped; a tool call id used twice is a 422), approvals verified
   against the calls that end it, in this thread, then against the ledger (once, whichever endpoint or
   process saw them first); then `sanitize_verified`. The run's `state` is the server's: the verified
   history's (or, with a store, the chat's), never what the client says it holds (`client_state`);
6. the agent's run streamed in the protocol (`streaming.stream_run`), then `on_complete`.

Every step whose cost grows with the body runs in a worker thread once the body is large (`offload`); with a
store (`managed_run`) the same holds for the stored history.

The protocol is a `ProtocolBinding`: how to parse a body and which encoder to stream with. The Vercel AI and
AG-UI endpoints are this class with their binding (`uibridge.server.vercel_ai`, `uibridge.server.ag_ui`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

import anyio

from ..adapters.ag_ui.request import ReadBefore
from ..core.diagnostics import collect_warnings
from ..core.errors import InputError
from ..core.provenance import Keyring, Secret
from ..core.run import RunInput, ToolApproval
from ..core.sanitize import sanitize_verified
from ..core.stream import EventStreamEncoder
from ..core.verification import verify_history
from . import limits
from ._body_memo import BodyMemo, Reused
from .approvals import ApprovalLedger, StoreLedger, first_uses, process_ledger, verify_approvals
from .asgi import Receive, Scope, Send
from .auth import ANONYMOUS, Authorize, RequestInfo
from .body import Disconnected, Rejected, check_content_type, decoded, parse_json_object, read_body
from .deployment import check_workers, declared_workers, report_unverified
from .limits import AttachmentLimits, ChatLimits, Quota, QuotaRequest, RequestLimits, check_limits
from .managed_run import run_managed, serve_chat
from .offload import off_loop
from .options import check_agent, check_async_hook, check_bool, check_positive, check_strings
from .run import Agent, AgentRun, Checked, OnComplete, history_state
from .store import ChatStore, store_from_url
from .stored_view import StoredViews
from .streaming import stream_run
from .telemetry import Observer, Telemetry, note_rejection, observe_run

logger = logging.getLogger('uibridge.server')


DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0
_MAX_ERROR_CHARS = 300
_MAX_LOGGED_CHARS = 300
_ON_COMPLETE_TIMEOUT = 30.0
_MAX_LOGGED_WARNINGS = 20

RequestT = TypeVar('RequestT')


class ProtocolBinding(Protocol[RequestT]):
    """What an endpoint needs to know about one protocol."""

    name: str

    def parse(self, body: Mapping[str, Any]) -> tuple[RequestT, RunInput]:
        """The parsed request and its neutral run input; raises `InputError` for anything it cannot take."""
        ...

    def encoder(self, request: RequestT, run_input: RunInput, keyring: Keyring) -> EventStreamEncoder:
        """A fresh encoder for this request's response stream, signing what it streams with `keyring`."""
        ...


class ChatEndpoint(Generic[RequestT]):
    """An ASGI app serving one agent over one protocol. Mount it (`Mount('/api/chat', endpoint)`), route to it
    (`Route('/api/chat', endpoint, methods=['POST'])`) or `app.mount(...)` it in FastAPI.

    Options:
    - `strip_system_prompts` (default true): the server owns the system voice; client-sent system prompts,
      instructions and retry feedback are removed before the agent sees the history.
    - `allowed_file_url_schemes`: media URLs with other schemes (`s3://`, `file://`) are removed.
    - `max_file_bytes` (5 MiB), `allowed_media_types` (images, audio, video, text, PDF, JSON): what one file a
      client sends may be (`AttachmentLimits`); past either, a 413 or 415 naming the file.
    - `allow_file_handles` (default false): keep the provider file handles (AG-UI `file` sources) a client
      names; by default they are removed, since any file in the server's provider account could be named.
    - `max_body_bytes`, `allowed_content_types`: what a request may be.
    - `expose_errors` (default false): show the agent's exception text to the user; otherwise a generic line.
    - `on_complete(new_messages, run)`: awaited once per run however it ended (`run.status`), to persist.
    - `keep_alive`: seconds of silence after which an SSE comment is sent (`None` for never).
    - `secret`: the key (or keys: the first signs, all verify) that signs what the server authors, history
      and approval requests alike; a `Keyring`, a secret, a list of secrets, or `None` for the process
      default (`UIBRIDGE_SECRET`, else a random key with a warning). Share it between workers: with
      `WEB_CONCURRENCY` above 1, a random key (or a `memory:` store) is refused here (`uibridge.server.deployment`).
      `approval_secret` is its old name.
    - `approval_ledger`: the approvals already acted on, so a replayed request runs nothing twice. By default
      the store's (`StoreLedger`: every process sharing the store, across restarts) with a store, else this
      process's one ledger (`process_ledger()`), shared by every endpoint of the process.
    - `body_timeout` (30 s): the whole body must arrive within it, or the request gets a 408 and is closed.
    - `max_messages`, `max_parts_per_message`, `max_parts`, `max_id_length`, `max_string_length`,
      `max_json_values`: what one request may hold (`RequestLimits`, where the defaults are); past any of them,
      a 413 naming it.
    - `store` (a `ChatStore` or a store URL): server-managed history (`uibridge.server.managed_run`): the server
      keeps each chat, takes only what the client adds, streams to a resumable log, and also answers
      `GET {api}/{chat_id}` and `GET`/`DELETE {api}/{chat_id}/stream` on routes with a `{chat_id}` parameter.
    - `authorize(request) -> principal | None`: called first on every request (`None`: 401); the principal
      owns the chats it creates and reaches the agent as `run.principal`.
    - `max_chat_messages`, `max_chat_bytes` (with a store): what one stored chat may hold (`ChatLimits`, where
      the defaults are); a run that would take a chat past them is a 413 naming the limit, before anything
      is stored.
    - `quota(request) -> QuotaRefusal | None`: called once per run, after the body is read (and with a store
      the chat claimed), before the run is prepared; a refusal is its 413 or 429 and its message.
    - `telemetry` (`True`, a `Telemetry`, or `False`): OpenTelemetry spans and metrics, when `opentelemetry-api`
      is installed (`uibridge.server.telemetry`). Every answer carries an `x-request-id` header, and every run
      writes one log record at INFO on the `uibridge.server` logger, whatever this says.
    """

    def __init__(
        self,
        agent: Agent,
        binding: ProtocolBinding[RequestT],
        *,
        strip_system_prompts: bool = True,
        allowed_file_url_schemes: Iterable[str] = ('http', 'https'),
        max_file_bytes: int = limits.DEFAULT_MAX_FILE_BYTES,
        allowed_media_types: Iterable[str] = limits.DEFAULT_ALLOWED_MEDIA_TYPES,
        allow_file_handles: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        allowed_content_types: Iterable[str] = ('application/json',),
        expose_errors: bool = False,
        on_complete: OnComplete | None = None,
        keep_alive: float | None = 15.0,
        secret: Keyring | Secret | Sequence[Secret] | None = None,
        approval_secret: Secret | None = None,
        approval_ledger: ApprovalLedger | None = None,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        max_messages: int = limits.DEFAULT_MAX_MESSAGES,
        max_parts_per_message: int = limits.DEFAULT_MAX_PARTS_PER_MESSAGE,
        max_parts: int = limits.DEFAULT_MAX_PARTS,
        max_id_length: int = limits.DEFAULT_MAX_ID_LENGTH,
        max_string_length: int = limits.DEFAULT_MAX_STRING_LENGTH,
        max_json_values: int = limits.DEFAULT_MAX_JSON_VALUES,
        store: ChatStore | str | None = None,
        authorize: Authorize | None = None,
        max_chat_messages: int = limits.DEFAULT_MAX_CHAT_MESSAGES,
        max_chat_bytes: int = limits.DEFAULT_MAX_CHAT_BYTES,
        quota: Quota | None = None,
        telemetry: Telemetry | bool = True,
    ) -> None:
        check_agent(agent)
        self.agent = agent
        self.binding = binding
        self.strip_system_prompts = check_bool('strip_system_prompts', strip_system_prompts)
        self.allowed_file_url_schemes = check_strings('allowed_file_url_schemes', allowed_file_url_schemes)
        self.attachment_limits = AttachmentLimits(
            max_file_bytes=max_file_bytes,
            allowed_media_types=check_strings('allowed_media_types', allowed_media_types),
        )
        self.allow_file_handles = check_bool('allow_file_handles', allow_file_handles)
        self.max_body_bytes: int = check_positive('max_body_bytes', max_body_bytes, integer=True)
        self.allowed_content_types = frozenset(
            t.lower() for t in check_strings('allowed_content_types', allowed_content_types)
        )
        self.expose_errors = check_bool('expose_errors', expose_errors)
        check_async_hook('on_complete', on_complete, ('new_messages', 'run'))
        self.on_complete = on_complete
        self.keep_alive: float | None = check_positive('keep_alive', keep_alive, optional=True)
        self.keyring = Keyring.of(secret if secret is not None else approval_secret)
        self.body_timeout = float(check_positive('body_timeout', body_timeout))
        self.limits = RequestLimits(
            max_messages=max_messages,
            max_parts_per_message=max_parts_per_message,
            max_parts=max_parts,
            max_id_length=max_id_length,
            max_string_length=max_string_length,
            max_json_values=max_json_values,
        )
        self.store: ChatStore | None = store_from_url(store) if isinstance(store, str) else store
        if not isinstance(self.store, ChatStore | None):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'store must be a ChatStore or a store URL, not {store!r}')
        check_workers(self.store, self.keyring, declared_workers())
        check_async_hook('authorize', authorize, ('request',))
        self.authorize = authorize
        self.chat_limits = ChatLimits(max_chat_messages=max_chat_messages, max_chat_bytes=max_chat_bytes)
        check_async_hook('quota', quota, ('request',))
        self.quota = quota
        if approval_ledger is not None and not isinstance(approval_ledger, ApprovalLedger):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'approval_ledger must be an ApprovalLedger, not {approval_ledger!r}')
        self.approval_ledger: ApprovalLedger = (
            approval_ledger
            if approval_ledger is not None
            else process_ledger()
            if self.store is None
            else StoreLedger(self.store)
        )
        self.observer = Observer(telemetry, agent, binding.name)
        self.body_memo = BodyMemo()
        """With a store: per principal and thread, the last AG-UI body's messages, as decoded (`_body_memo`)."""
        self.stored_views = StoredViews()
        """With a store: each chat's history as the agent sees it, settled once per commit (`stored_view`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] == 'lifespan':
            await _lifespan(receive, send)
            return
        if scope['type'] == 'websocket':
            await _refuse_websocket(receive, send)
            return
        if scope['type'] != 'http':
            return
        headers = _headers(scope)
        with self.observer.request(scope, headers, send) as observed:
            await self._serve(scope, headers, receive, observed.send)

    async def _serve(self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        try:
            principal = await self._principal(scope, headers)
            chat_id = scope.get('path_params', {}).get('chat_id')
            if self.store is not None and isinstance(chat_id, str) and scope['method'] in ('GET', 'DELETE'):
                await serve_chat(self, chat_id, principal or ANONYMOUS, scope, receive, send)
                return
            if scope['method'] != 'POST':
                raise Rejected(405, 'method not allowed', headers={'allow': 'POST'})
            check_content_type(headers.get('content-type'), self.allowed_content_types)
            body = await self._read_body(receive, headers.get('content-length'))
            if self.store is not None:
                await run_managed(self, body, principal or ANONYMOUS, headers, receive, send)
                return
            # Parsing, loading and verifying a large body is CPU work in proportion to it: in a worker thread.
            request, run_input = await off_loop(self.parse_body, body, size=len(body))
            await self.check_quota(run_input.thread_id, principal, headers, len(body))
            checked = await off_loop(self.check, request, run_input, size=len(body))
            approvals = await first_uses(checked.approvals, self.approval_ledger)
            run, encoder = await off_loop(self.finish, checked, approvals, size=len(body))
        except Rejected as rejected:
            note_rejection(rejected.reason)
            await _send_error(send, rejected.status, rejected.error, rejected.path, rejected.headers)
            return
        except Disconnected:
            return
        run.principal = principal
        run.headers = headers
        try:
            with observe_run(run, encoder):
                await stream_run(
                    agent=self.agent,
                    run=run,
                    encoder=encoder,
                    send=send,
                    receive=receive,
                    keep_alive=self.keep_alive,
                    expose_errors=self.expose_errors,
                )
        finally:
            await self._complete(encoder, run)

    def parse_body(self, body: bytes) -> tuple[RequestT, RunInput]:
        """The body as the protocol's request and its run input (`Rejected` for anything it cannot take)."""
        request, run_input, _, _ = self.parse_body_with(body, lambda parsed, _: self.binding.parse(parsed))
        return request, run_input

    def parse_body_with(
        self,
        body: bytes,
        parse: Callable[[Mapping[str, Any], ReadBefore | None], tuple[RequestT, RunInput]],
        *,
        later: bool = False,
        principal: str | None = None,
    ) -> tuple[RequestT, RunInput, int, Reused | None]:
        """`parse_body` with another parser (given the ids and roles of the messages the body shares with the last
        one, `_body_memo`, when it has them). With `later`, what the messages hold is left for the caller to check
        (`limits.check_message_limits`) as it reads them, with the `max_json_values` budget returned, and with a
        `principal` too, the messages the principal's last body on the thread had are taken as decoded then, and as
        counted then for the request limits (`_body_memo`): what of the body was, is returned last."""
        parsed, reused = self.decode_body(body, later=later, principal=principal)
        request, run_input, budget = self.parse_decoded(parsed, reused, parse, later=later)
        return request, run_input, budget, reused

    def decode_body(
        self, body: bytes, *, later: bool = False, principal: str | None = None
    ) -> tuple[dict[str, Any], Reused | None]:
        """The first step of `parse_body_with`: the body's JSON."""
        # With `later`, the limits' walk bounds the nesting of what is read (`check_limits`): the body's text is not
        # scanned for it beforehand, since most of it is not read.
        if later and principal is not None:
            return decoded(lambda: self.body_memo.decode_reusing(body, principal))
        return parse_json_object(body, nesting_checked=not later), None

    def parse_decoded(
        self,
        parsed: dict[str, Any],
        reused: Reused | None,
        parse: Callable[[Mapping[str, Any], ReadBefore | None], tuple[RequestT, RunInput]],
        *,
        later: bool = False,
    ) -> tuple[RequestT, RunInput, int]:
        """The rest of `parse_body_with`, from the body's JSON (`decode_body`)."""
        counted = reused.counted if reused is not None else None
        budget = check_limits(parsed, self.limits, later=later, counted=counted)
        before = reused.before if reused is not None else None
        request, run_input = self._parse(parsed, lambda parsed: parse(parsed, before))
        self.attachment_limits.check(run_input.history)
        return request, run_input, budget

    async def _principal(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        """The principal `authorize` names (401 when it refuses), or `None` without a hook."""
        if self.authorize is None:
            return None
        info = RequestInfo(method=scope.get('method', ''), path=scope.get('path', ''), headers=headers, scope=scope)
        principal = await self.authorize(info)
        if principal is None:
            raise Rejected(401, 'not authorized')
        return principal

    async def _read_body(self, receive: Receive, content_length: str | None) -> bytes:
        try:
            with anyio.fail_after(self.body_timeout):
                return await read_body(receive, content_length, self.max_body_bytes)
        except TimeoutError:
            raise Rejected(408, f'the body did not arrive within {self.body_timeout:g} seconds') from None

    def _parse(
        self, body: Mapping[str, Any], parse: Callable[[Mapping[str, Any]], tuple[RequestT, RunInput]]
    ) -> tuple[RequestT, RunInput]:
        try:
            with _warnings_logged(self.binding.name):
                return parse(body)
        except InputError as error:
            raise Rejected(422, error.message, error.path) from None
        except RecursionError:
            raise Rejected(422, 'the request is nested too deeply') from None
        except Exception:
            # A parser must raise InputError for bad input; anything else is its bug, but the client still
            # gets a 4xx (its input triggered it) and the server log gets the traceback.
            logger.exception('The %s request parser failed on client input', self.binding.name)
            raise Rejected(422, 'the request could not be read') from None

    def check(self, request: RequestT, run_input: RunInput) -> Checked[RequestT]:
        """Verify the history and the approvals' ids. The server's state is the one the verified history's last
        response holding one carries (where a store keeps the chat's state, the caller puts that in its place)."""
        with self.preparing():
            verified = verify_history(run_input.history, run_input.claims, self.keyring)
            if verified.dropped:
                logger.warning(
                    "%s run %.64r: dropped from client history what does not verify as the server's own: %s",
                    self.binding.name,
                    run_input.run_id,
                    ', '.join(f'{count} {kind}' for kind, count in sorted(verified.dropped.items())),
                )
            approvals = verify_approvals(verified.messages, run_input.approvals, self.keyring, run_input.thread_id)
            if self.keyring.generated:
                signed = len(run_input.claims) > 0
                dropped = sum(n for kind, n in verified.dropped.items() if kind != 'unanswered tool call')
                unverified = len(run_input.approvals) - len(approvals)
                report_unverified(self.keyring, items=dropped if signed else 0, approvals=unverified)
            return Checked(request, run_input, verified, approvals, history_state(verified.messages)[1])

    async def check_quota(
        self,
        chat_id: str,
        principal: str | None,
        headers: Mapping[str, str],
        body_bytes: int,
        *,
        stored: Sequence[int] | None = None,
    ) -> None:
        """Ask the `quota` hook about this run (`stored`: with a store, the sizes of the chat's messages);
        `Rejected` with its answer when it refuses."""
        if self.quota is None:
            return
        request = QuotaRequest(
            principal=principal,
            chat_id=chat_id,
            protocol=self.binding.name,
            body_bytes=body_bytes,
            stored_messages=None if stored is None else len(stored),
            stored_bytes=None if stored is None else sum(stored),
            headers=headers,
        )
        refusal = await self.quota(request)
        if refusal is not None:
            raise refusal.rejected()

    def finish(self, checked: Checked[RequestT], approvals: list[ToolApproval]) -> tuple[AgentRun, EventStreamEncoder]:
        """Sanitize with the approvals the ledger let through: the `AgentRun` the agent will get, and its encoder
        (whose `StateDelta`s patch the server's state)."""
        run_input = checked.run_input
        with self.preparing():
            resolved = frozenset(a.tool_call_id for a in approvals if a.tool_call_id is not None)
            with _warnings_logged(f'{self.binding.name} run {run_input.run_id[:64]!r}'):
                messages = checked.settled + sanitize_verified(
                    checked.verified,
                    strip_system_prompts=self.strip_system_prompts,
                    allowed_file_url_schemes=self.allowed_file_url_schemes,
                    resolved_tool_call_ids=resolved,
                    allow_file_handles=self.allow_file_handles,
                )
            run = AgentRun(
                messages=messages,
                thread_id=run_input.thread_id,
                run_id=run_input.run_id,
                protocol=self.binding.name,
                parent_run_id=run_input.parent_run_id,
                client_tools=list(run_input.tools),
                approvals=approvals,
                resolved_tool_call_ids=resolved,
                state=checked.state,
                client_state=run_input.state,
                trigger=run_input.trigger,
                extra=run_input.extra,
                request=checked.request,
                input=run_input,
            )
            served = dataclasses.replace(run_input, state=checked.state)
            return run, self.binding.encoder(checked.request, served, self.keyring)

    @contextmanager
    def preparing(self) -> Generator[None]:
        """What preparing a run raises, as the client's answer: 422 for its input, 422 and a logged traceback
        for a bug its input triggered (never a 500)."""
        try:
            yield
        except (Rejected, InputError) as error:
            if isinstance(error, InputError):
                raise Rejected(422, error.message, error.path) from None
            raise
        except Exception:
            logger.exception('Preparing a %s run failed on client input', self.binding.name)
            raise Rejected(422, 'the request could not be prepared') from None

    async def complete(self, encoder: EventStreamEncoder, run: AgentRun) -> None:
        """The run's end: its status settled and `on_complete` awaited (shielded, bounded)."""
        await self._complete(encoder, run)

    async def _complete(self, encoder: EventStreamEncoder, run: AgentRun) -> None:
        if run.status == 'running':
            run.status = 'cancelled'
        if self.on_complete is None:
            return
        # Shielded: a run cancelled by a disconnect (or a server shutting down) is still persisted.
        with anyio.CancelScope(shield=True), anyio.move_on_after(_ON_COMPLETE_TIMEOUT):
            try:
                await self.on_complete(encoder.new_messages, run)
            except Exception:
                logger.exception('on_complete failed for run %s', run.run_id)


@contextmanager
def _warnings_logged(context: str) -> Generator[None]:
    """Route the warnings parsing and sanitizing raise (a skipped unknown part, a stripped system prompt)
    to the server's log, where every request's warnings show, instead of Python's once-per-place display.
    Collected per context (`core.diagnostics`), so requests parsed in worker threads keep theirs apart."""
    with collect_warnings() as caught:
        try:
            yield
        finally:
            for message in caught[:_MAX_LOGGED_WARNINGS]:
                # Warnings may quote client input (an unknown part type): a log line stays short.
                logger.warning('%s: %s', context, _clipped(message))


def _clipped(text: str) -> str:
    return text if len(text) <= _MAX_LOGGED_CHARS else f'{text[:_MAX_LOGGED_CHARS]}… ({len(text)} characters)'


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in scope.get('headers', ()):
        headers[key.decode('latin-1').lower()] = value.decode('latin-1')
    return headers


async def _send_error(send: Send, status: int, error: str, path: str, extra: Mapping[str, str]) -> None:
    payload = {'error': error[:_MAX_ERROR_CHARS], 'path': path[:_MAX_ERROR_CHARS]}
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b'content-type', b'application/json'), (b'content-length', str(len(body)).encode())]
    if status in (408, 413):
        # The rest of the body was never read: the connection cannot be reused.
        headers.append((b'connection', b'close'))
    headers += [(key.encode('latin-1'), value.encode('latin-1')) for key, value in extra.items()]
    try:
        await send({'type': 'http.response.start', 'status': status, 'headers': headers})
        await send({'type': 'http.response.body', 'body': body})
    except OSError:
        pass


async def _refuse_websocket(receive: Receive, send: Send) -> None:
    """A WebSocket upgrade to a chat endpoint: closed before it is accepted, which the server answers 403."""
    message = await receive()
    if message['type'] == 'websocket.connect':
        await send({'type': 'websocket.close', 'code': 1008, 'reason': 'this endpoint speaks HTTP POST only'})


async def _lifespan(receive: Receive, send: Send) -> None:
    """Served as the top-level app, the endpoint has nothing to start or stop."""
    while True:
        message = await receive()
        if message['type'] == 'lifespan.startup':
            await send({'type': 'lifespan.startup.complete'})
        elif message['type'] == 'lifespan.shutdown':
            await send({'type': 'lifespan.shutdown.complete'})
            return
