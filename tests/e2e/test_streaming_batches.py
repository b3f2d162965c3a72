"""What each ASGI `send` becomes on a real socket: uvicorn writes one HTTP/1.1 chunk per `send`, so a raw client
that reads the chunked framing counts the sends. A fast agent's deltas leave in a few chunks; a slow agent's
delta reaches the client before the agent yields the next one (the agent waits for the client to have read it).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio.to_thread
import pytest
from e2e_support import serve

from uibridge import TextPart
from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart
from uibridge.server import AgentRun, create_app

FAST_DELTAS = 500
SLOW_DELTAS = 5
WAIT = 10.0
"""Seconds a deadlock may last before the test fails (a safety net; nothing is timed)."""

BODIES: dict[str, dict[str, Any]] = {
    '/api/chat': {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': '{}'}]}]},
    '/ag-ui': {'threadId': 't', 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': '{}'}]},
}


class Pacing:
    """The slow agent's gates: delta `i` is yielded only once the client read delta `i - 1`."""

    def __init__(self) -> None:
        self.read = [threading.Event() for _ in range(SLOW_DELTAS)]

    def reset(self) -> None:
        for event in self.read:
            event.clear()


def _last_user_text(run: AgentRun) -> str:
    part = run.messages[-1].parts[-1]
    return part.content if isinstance(part.content, str) else ''  # pyright: ignore[reportAttributeAccessIssue]


@pytest.fixture(scope='module')
def server() -> Iterator[tuple[str, Pacing]]:
    pacing = Pacing()

    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield ResponseStart()
        yield PartStart(0, TextPart(content=''))
        if _last_user_text(run) == 'fast':
            for i in range(FAST_DELTAS):
                yield PartDelta(0, f'<{i}>')
        else:
            for i in range(SLOW_DELTAS):
                yield PartDelta(0, f'<{i}>')
                # The client must read this delta before the next is yielded: a server that waited to batch
                # would never send it, and the wait below would run out.
                assert await anyio.to_thread.run_sync(pacing.read[i].wait, WAIT), f'delta {i} never reached the client'
        yield PartEnd(0)

    with serve(create_app(agent, keep_alive=None)) as base_url:
        yield base_url, pacing


class ChunkedResponse:
    """A POST over a raw socket, read one HTTP/1.1 chunk at a time."""

    def __init__(self, base_url: str, path: str, text: str) -> None:
        host, port = base_url.removeprefix('http://').split(':')
        body = json.dumps(BODIES[path]).replace('{}', text).encode()
        self.sock = socket.create_connection((host, int(port)), timeout=WAIT)
        self.sock.sendall(
            f'POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n'
            f'content-length: {len(body)}\r\nconnection: close\r\n\r\n'.encode()
            + body
        )
        self.buffer = b''
        head = self._until(b'\r\n\r\n')
        assert head.startswith(b'HTTP/1.1 200'), head
        assert b'transfer-encoding: chunked' in head.lower()

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            data = self.sock.recv(1 << 16)
            assert data, 'the connection closed mid-response'
            self.buffer += data
        found, self.buffer = self.buffer.split(marker, 1)
        return found

    def chunk(self) -> bytes:
        """The next chunk's payload; `b''` at the end of the body."""
        size = int(self._until(b'\r\n').split(b';')[0], 16)
        while len(self.buffer) < size + 2:
            data = self.sock.recv(1 << 16)
            assert data, 'the connection closed mid-chunk'
            self.buffer += data
        payload, self.buffer = self.buffer[:size], self.buffer[size + 2 :]
        return payload

    def chunks(self) -> Iterator[bytes]:
        try:
            while payload := self.chunk():
                yield payload
        finally:
            self.sock.close()


@pytest.mark.parametrize('path', list(BODIES))
def test_a_fast_agents_deltas_leave_in_a_few_sends_in_order(server: tuple[str, Pacing], path: str) -> None:
    base_url, _ = server
    chunks = list(ChunkedResponse(base_url, path, 'fast').chunks())
    stream = b''.join(chunks)
    numbers = [int(n) for n in stream.split(b'<')[1:] for n in [n.split(b'>')[0]]]
    assert numbers == list(range(FAST_DELTAS))
    assert len(chunks) <= 5  # one send per event would be more than 500


@pytest.mark.parametrize('path', list(BODIES))
def test_a_slow_agents_delta_reaches_the_client_before_the_next_is_yielded(
    server: tuple[str, Pacing], path: str
) -> None:
    base_url, pacing = server
    pacing.reset()
    response = ChunkedResponse(base_url, path, 'slow')
    received = b''
    for payload in response.chunks():
        received += payload
        for i, read in enumerate(pacing.read):
            if f'<{i}>'.encode() in received:
                read.set()
    assert all(read.is_set() for read in pacing.read)
    assert received.count(b'<') == SLOW_DELTAS
