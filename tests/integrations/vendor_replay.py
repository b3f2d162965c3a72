"""A loopback HTTP server that answers each request with the next recorded SSE body (`ReplayServer`), or with the
body a script makes of the request (`ScriptedServer`), and keeps what it got.

The vendor SDKs are pointed at it with `base_url`, so their own HTTP client, SSE parser and typed models run
on bytes in each API's wire format; nothing of the SDK is mocked. One request per connection
(`connection: close`), which both SDKs' clients handle as any server that closes would.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

FIXTURES = Path(__file__).parent / 'fixtures'


@dataclass
class Received:
    method: str
    path: str
    body: Any


@dataclass
class ReplayServer:
    """Answers the n-th request with `bodies[n]` (`text/event-stream`, status 200)."""

    bodies: list[bytes]
    received: list[Received] = field(default_factory=list[Received])
    _server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f'http://{host}:{port}'

    async def __aenter__(self) -> ReplayServer:
        self._server = await asyncio.start_server(self._serve, '127.0.0.1', 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.received.append(await read_request(reader))
            if len(self.received) > len(self.bodies):
                body, status = b'{"error": {"message": "no recorded response left"}}', '500 Internal Server Error'
                content_type = 'application/json'
            else:
                body, status, content_type = self.bodies[len(self.received) - 1], '200 OK', 'text/event-stream'
            writer.write(
                f'HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n'
                'connection: close\r\n\r\n'.encode()
                + body
            )
            await writer.drain()
        finally:
            writer.close()


async def read_request(reader: asyncio.StreamReader) -> Received:
    """One HTTP/1.1 request with a `content-length` body (what both SDKs send), its body parsed as JSON."""
    head = (await reader.readuntil(b'\r\n\r\n')).decode('latin-1')
    request_line, *header_lines = head.split('\r\n')
    method, path, _ = request_line.split(' ', 2)
    headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(':') for h in header_lines if h)}
    raw = await reader.readexactly(int(headers.get('content-length', '0')))
    return Received(method, path, json.loads(raw) if raw else None)


Answer = list[tuple[float, bytes]]
"""A streamed answer: pieces of the SSE body, each sent after waiting its seconds."""


@dataclass
class ScriptedServer:
    """Answers each request with what `script(request)` says (a status-200 `text/event-stream` body, streamed in
    pieces as they come due, then the connection closed): for conversations whose next answer depends on what the
    SDK sent (the tool results, the last prompt), many at once. Keeps what it got."""

    script: Callable[[Received], Answer]
    received: list[Received] = field(default_factory=list[Received])
    _server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f'http://{host}:{port}'

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, '127.0.0.1', 0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await read_request(reader)
            self.received.append(request)
            answer = self.script(request)
            # No content-length: the body ends when the connection closes, so it can stream as it comes due.
            writer.write(b'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n')
            for delay, piece in answer:
                if delay:
                    await writer.drain()
                    await asyncio.sleep(delay)
                writer.write(piece)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the SDK went away (its run was stopped): nothing more to send
        finally:
            writer.close()


def without_timestamps(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages as dicts without their or their parts' `timestamp` (set when one is built, so never equal across
    runs)."""
    return [
        message.model_dump(exclude={'timestamp': True, 'parts': {'__all__': {'timestamp'}}}) for message in messages
    ]


async def consume(events: Any, history: list[Any], collector: Any) -> list[Any]:
    """Every event of one vendor response (an integration's `ResponseEvents`), fed to `collector`; the response
    appended to `history`, after checking it is the one the collector built."""
    seen = [event async for event in events]
    for event in seen:
        collector.feed(event)
    history.append(events.response)
    assert without_timestamps([events.response]) == without_timestamps([collector.messages[-1]])
    return seen


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def conforms(param_type: Any, value: Any) -> bool:
    """Whether `value` is exactly what the SDK's own request `TypedDict` describes: it validates, each of its
    lazily checked iterables too (dumping walks them, a mismatch then warns, here an error), and no key is
    dropped as unknown on the way."""
    adapter: TypeAdapter[Any] = TypeAdapter(param_type)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        return adapter.dump_python(adapter.validate_python(value), mode='json') == value
