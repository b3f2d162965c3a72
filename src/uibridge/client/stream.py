"""Reading a chat server's response stream over httpx: the request, its bounds, and its failures.

Both clients (and the remote agents built on them) send one request and read its body through a protocol's
stream decoder (`uibridge.adapters.<protocol>.decode`), chunk by chunk as the bytes arrive. What can go wrong
is one exception, `RemoteError`: an HTTP status that is not 2xx (with the start of the body), a transport
failure (refused, reset, a read timeout), a stream the decoder cannot read, or a bound passed (`StreamLimits`).
A run that ends with the protocol's own error event is no `RemoteError`: it is a run that failed, and its
events say so (`RunError`).

Closing the iterator (or cancelling the task reading it) closes the response, so the server sees its client
go away and stops the run.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import httpx
from typing_extensions import Unpack

from ..core.decoder import StreamDecoder
from ..core.events import AgentEvent
from ..core.provenance import Keyring
from ..core.sse import DEFAULT_MAX_BUFFER_BYTES, DEFAULT_MAX_FRAME_BYTES, StreamError, StreamLimitError

DEFAULT_TIMEOUT = httpx.Timeout(30.0, read=300.0)
"""Connecting and writing within 30 s; between two reads of the body at most 300 s (a model may think long)."""
_ERROR_BODY_CHARS = 500


class RemoteError(Exception):
    """The remote server could not be asked, or its answer could not be read (see the module docstring).

    `status` is the HTTP status when the server answered with one that is not 2xx, else `None`."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """How much of a remote stream is read before it is refused: every bound a `RemoteError` when passed."""

    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    """One SSE event's data (a file the model made rides inline in one)."""
    max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES
    """The bytes held for an event not yet ended."""
    max_stream_bytes: int | None = 256 * 1024 * 1024
    """The whole body (`None`: no bound)."""
    max_duration: float | None = 600.0
    """Seconds from the request to the stream's end (`None`: no bound); checked as bytes arrive, while the
    transport's read timeout bounds a silence."""

    def __post_init__(self) -> None:
        for name in ('max_frame_bytes', 'max_buffer_bytes', 'max_stream_bytes', 'max_duration'):
            value = getattr(self, name)
            if value is None and name in ('max_stream_bytes', 'max_duration'):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f'{name} must be a positive number, not {value!r}')


class ClientOptions(TypedDict, total=False):
    """What every client (and every remote agent) takes beside its URL."""

    headers: Mapping[str, str] | None
    """Sent with every request (an `authorization`, say); a turn may add its own."""
    http: httpx.AsyncClient | None
    """An `httpx.AsyncClient` to send with (its connection pool reused); else one per turn."""
    keyring: Keyring | None
    """Signs the server-authored parts of the history sent (`None`: the process's, `UIBRIDGE_SECRET`): a uibridge
    server without a store keeps only what verifies with its own secret."""
    limits: StreamLimits | None
    """How much of a stream is read (`StreamLimits`)."""
    timeout: httpx.Timeout
    """The transport's (`DEFAULT_TIMEOUT`)."""


class ChatClient:
    """What both protocols' clients share: their options (`ClientOptions`), and sending one request whose answer
    a stream decoder reads."""

    def __init__(self, url: str, **options: Unpack[ClientOptions]) -> None:
        self.url = url
        self.headers = dict(options.get('headers') or {})
        self.http = options.get('http')
        self.keyring = Keyring.of(options.get('keyring'))
        self.limits = options.get('limits') or StreamLimits()
        self.timeout = options.get('timeout', DEFAULT_TIMEOUT)

    async def _events(
        self,
        method: str,
        url: str,
        decoder: StreamDecoder,
        headers: Mapping[str, str],
        json: Any = None,
        empty_status: int | None = None,
    ) -> AsyncGenerator[list[AgentEvent]]:
        """`read_events` with the client's `http`, else with a client of its own for this one request."""
        if self.http is not None:
            async for events in read_events(
                self.http, method, url, decoder, self.limits, json=json, headers=headers, empty_status=empty_status
            ):
                yield events
            return
        async with httpx.AsyncClient(timeout=self.timeout, verify=_tls()) as http:
            async for events in read_events(
                http, method, url, decoder, self.limits, json=json, headers=headers, empty_status=empty_status
            ):
                yield events


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once: each `httpx.AsyncClient()` would build its own, loading the CA
    bundle again (tens of milliseconds, more than a whole bridged run of hundreds of events costs)."""
    return httpx.create_ssl_context()


async def read_events(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    decoder: StreamDecoder,
    limits: StreamLimits,
    *,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    empty_status: int | None = None,
) -> AsyncIterator[list[AgentEvent]]:
    """The events of the response to one request, as its body arrives: those of each chunk of the body together
    (one step of the iteration per chunk, not per event: a bridge relays hundreds of events a chunk). No empty
    list is yielded. `empty_status`: a status that means there is no stream to read (a resume answered 204):
    nothing is yielded for it."""
    deadline = None if limits.max_duration is None else time.monotonic() + limits.max_duration
    received = 0
    try:
        async with http.stream(method, url, json=json, headers=headers) as response:
            if response.status_code == empty_status:
                return
            if not response.is_success:
                raise await _status_error(response)
            async for chunk in response.aiter_bytes():
                received += len(chunk)
                if limits.max_stream_bytes is not None and received > limits.max_stream_bytes:
                    raise RemoteError(f'the remote stream passed {limits.max_stream_bytes} bytes')
                if deadline is not None and time.monotonic() > deadline:
                    raise RemoteError(f'the remote stream went on past {limits.max_duration:g} seconds')
                if events := decoder.feed(chunk):
                    yield events
                if decoder.ended:
                    break  # whatever follows the end of the run is not read
    except StreamLimitError as error:
        raise RemoteError(f'the remote stream was refused: {error}') from None
    except StreamError as error:
        raise RemoteError(f'the remote stream could not be read: {error}') from None
    except httpx.HTTPError as error:
        raise RemoteError(f'the remote could not be reached: {type(error).__name__}: {error}'.rstrip(': ')) from None
    if events := decoder.close():
        yield events


async def _status_error(response: httpx.Response) -> RemoteError:
    body = b''
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= _ERROR_BODY_CHARS:
            break
    text = body[:_ERROR_BODY_CHARS].decode('utf-8', 'replace').strip()
    detail = f': {text}' if text else ''
    return RemoteError(f'the remote answered HTTP {response.status_code}{detail}', status=response.status_code)
