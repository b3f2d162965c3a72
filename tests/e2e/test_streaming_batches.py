"""What each ASGI `send` becomes on a real socket, under every server of `e2e_support.SERVERS` (uvicorn,
hypercorn on asyncio and on trio): each writes one HTTP/1.1 chunk per `send`, so a raw client that reads the
chunked framing counts the sends. A fast agent's deltas leave in a few chunks; a slow agent's delta reaches
the client before the agent yields the next one (the agent waits for the client to have read it); the bytes
are the same under every server, none sent twice; and a client that stops reading holds the agent with a
bounded amount buffered.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio.lowlevel
import anyio.to_thread
import pytest
from e2e_support import SERVERS, serve

from uibridge import TextPart
from uibridge.core.events import AgentEvent, PartDelta, PartEnd, PartStart, ResponseStart
from uibridge.server import AgentRun, create_app

FAST_DELTAS = 500
SLOW_DELTAS = 5
ENDLESS_FRAME = 1024
SEND_BUFFER = 16 * 1024
"""The kernel's send buffer for the server's connections (and the receive buffer of the client that stops
reading): small and known, so what stays buffered when a client stops reading is mostly the server's own."""
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


class Agent:
    """Streams by the user's text: `fast` deltas, `slow` deltas each read before the next, or `endless` 1 KiB
    deltas until cancelled (counting the bytes it yielded)."""

    def __init__(self) -> None:
        self.pacing = Pacing()
        self.yielded = 0
        self.cleaned_up = threading.Event()

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield ResponseStart()
        yield PartStart(0, TextPart(content=''))
        text = _last_user_text(run)
        if text == 'fast':
            for i in range(FAST_DELTAS):
                yield PartDelta(0, f'<{i}>')
        elif text == 'endless':
            try:
                while True:
                    self.yielded += ENDLESS_FRAME
                    yield PartDelta(0, 'x' * ENDLESS_FRAME)
                    await anyio.lowlevel.checkpoint()  # every chance to run on, were nothing holding it back
            finally:
                self.cleaned_up.set()
        else:
            for i in range(SLOW_DELTAS):
                yield PartDelta(0, f'<{i}>')
                # The client must read this delta before the next is yielded: a server that waited to batch
                # would never send it, and the wait below would run out.
                read = await anyio.to_thread.run_sync(self.pacing.read[i].wait, WAIT)
                assert read, f'delta {i} never reached the client'
        yield PartEnd(0)


@pytest.fixture(scope='module', params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Agent]]:
    agent = Agent()
    with serve(create_app(agent, keep_alive=None), request.param, send_buffer=SEND_BUFFER) as base_url:
        yield base_url, agent


class ChunkedResponse:
    """A POST over a raw socket, read one HTTP/1.1 chunk at a time."""

    def __init__(self, base_url: str, path: str, text: str) -> None:
        host, port = base_url.removeprefix('http://').split(':')
        body = json.dumps(BODIES[path]).replace('{}', text).encode()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SEND_BUFFER)
        self.sock.settimeout(WAIT)
        self.sock.connect((host, int(port)))
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
def test_a_fast_agents_deltas_leave_in_a_few_sends_in_order(server: tuple[str, Agent], path: str) -> None:
    base_url, _ = server
    chunks = list(ChunkedResponse(base_url, path, 'fast').chunks())
    stream = b''.join(chunks)
    numbers = [int(n) for n in stream.split(b'<')[1:] for n in [n.split(b'>')[0]]]
    assert numbers == list(range(FAST_DELTAS))
    assert len(chunks) <= 5  # one send per event would be more than 500


@pytest.mark.parametrize('path', list(BODIES))
def test_a_slow_agents_delta_reaches_the_client_before_the_next_is_yielded(
    server: tuple[str, Agent], path: str
) -> None:
    base_url, agent = server
    pacing = agent.pacing
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


STREAMS: dict[tuple[str, str], bytes] = {}
"""Each server's stream of the fast run, per path, to compare with uvicorn's."""
VARYING = re.compile(rb'"(messageId|timestamp)":("[^"]*"|\d+)')
"""What differs between two runs of the same agent, whatever the server: the Vercel message id and the clocks."""


@pytest.mark.parametrize('path', list(BODIES))
def test_the_stream_is_the_same_bytes_under_every_server(server: tuple[str, Agent], path: str) -> None:
    base_url, _ = server
    stream = VARYING.sub(rb'"\1":-', b''.join(ChunkedResponse(base_url, path, 'fast').chunks()))
    STREAMS[base_url, path] = stream
    assert stream.count(b'"<') == FAST_DELTAS  # each delta once
    same_path = [other for (url, other_path), other in STREAMS.items() if other_path == path]
    assert all(other == stream for other in same_path)  # the servers of the module run so far


@pytest.mark.parametrize('path', list(BODIES))
def test_a_client_that_stops_reading_holds_the_agent_with_a_bounded_buffer(
    server: tuple[str, Agent], path: str
) -> None:
    base_url, agent = server
    agent.yielded = 0
    agent.cleaned_up.clear()
    response = ChunkedResponse(base_url, path, 'endless')
    received = len(response.chunk())  # then it reads no more
    # Wait for the agent to be held: its count of bytes yielded stops growing (a deadline, not a measure).
    deadline = time.monotonic() + WAIT
    last, still = -1, 0
    while still < 20:
        assert time.monotonic() < deadline, f'the agent never stopped: {agent.yielded} bytes yielded'
        still = still + 1 if agent.yielded == last else 0
        last = agent.yielded
        time.sleep(0.01)
    # Held between the agent and the client: the kernel's buffers (a few times SEND_BUFFER), the server's
    # write buffer (asyncio's 64 KiB high-water mark) and ours (at most two batches of 16 KiB and a frame).
    held = agent.yielded - received - len(response.buffer)
    assert held <= 256 * 1024, held
    response.sock.close()
    assert agent.cleaned_up.wait(WAIT), 'the agent kept running after the client left'
