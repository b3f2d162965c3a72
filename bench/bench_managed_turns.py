"""What a managed turn costs as its chat grows (issue 23). No peer: pydantic-ai's adapters keep no chat.

Two chats with the demo agent (an echo, no delays) and a SQLite store, each turn a POST through the endpoint called
as an ASGI app (no sockets), the client sending only its new message as `useChat` does with a store
(`prepareSendMessagesRequest`): one chat grown to turn 295 first, the other to turn 5, then their turns 5-15 and
295-305 taken in turn. Measured: the process's CPU time per turn (`time.process_time`, every thread: the store's
included); the medians. Bar: turn 300 within 1.2x of turn 10, the turn's cost being what its new message costs, not
what the history costs.

The AG-UI rows have the same bar, though `@ag-ui/client` sends the whole history with every run: the server decodes
only what follows the messages the thread's last body had (`server/_body_memo.py`), takes their ids, roles and part
counts as found then, and reads only what follows the last one it has stored; what still grows with the chat is
the body's text itself (its UTF-8 decoding, one comparison with the last body's, copies), all in C.
`managed_turn_instructions.py` counts the same turns in instructions.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import Row, fmt_time, print_table

from uibridge.server import AGUIEndpoint, VercelAIEndpoint
from uibridge.server.demo import DemoAgent
from uibridge.server.store import SqliteStore

EARLY = range(5, 16)
LATE = range(295, 306)
BAR = 1.2
SECRET = 'bench-managed-turns'


async def _post(endpoint: Any, path: str, raw: bytes) -> bytes:
    received = False
    done = asyncio.Event()
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {'type': 'http.request', 'body': raw, 'more_body': False}
        await done.wait()
        return {'type': 'http.disconnect'}

    async def send(message: dict[str, Any]) -> None:
        if message['type'] == 'http.response.body':
            sent.append(message.get('body', b''))

    headers = [(b'content-type', b'application/json'), (b'content-length', str(len(raw)).encode())]
    await endpoint({'type': 'http', 'method': 'POST', 'path': path, 'headers': headers}, receive, send)
    done.set()
    return b''.join(sent)


def _vercel_turn(chat: str, turn: int) -> tuple[str, dict[str, Any]]:
    message = {'id': f'{chat}-u{turn}', 'role': 'user', 'parts': [{'type': 'text', 'text': f'hello {turn}'}]}
    return '/api/chat', {'id': chat, 'messages': [message]}


class _AGUIChat:
    """What an `@ag-ui/client` holds of one thread, and the next run it sends."""

    def __init__(self, chat: str) -> None:
        self.chat = chat
        self.held: list[dict[str, Any]] = []

    def turn(self, turn: int) -> tuple[str, dict[str, Any]]:
        self.held.append({'id': f'{self.chat}-u{turn}', 'role': 'user', 'content': f'hello {turn}'})
        body = {'threadId': self.chat, 'runId': f'{self.chat}-r{turn}', 'messages': list(self.held), 'tools': [],
                'context': [], 'state': None, 'forwardedProps': None}  # fmt: skip
        return '/ag-ui', body

    def answered(self, answer: bytes) -> None:
        events = [json.loads(line[6:]) for line in answer.decode().splitlines() if line.startswith('data: {')]
        text = ''.join(e['delta'] for e in events if e['type'] == 'TEXT_MESSAGE_CONTENT')
        message_id = next(e['messageId'] for e in events if e['type'] == 'TEXT_MESSAGE_START')
        self.held.append({'id': message_id, 'role': 'assistant', 'content': text})


async def _chats(protocol: str, directory: str) -> tuple[list[float], list[float]]:
    """Two chats on one endpoint: the long one grown to `LATE.start` turns, the short one to `EARLY.start`, then
    their measured turns taken in turn, so that whatever else changes meanwhile (the machine, the database file)
    weighs on both alike. The CPU time of each measured turn, short chat's and long chat's."""
    store = SqliteStore(Path(directory) / f'{protocol}.db')
    endpoint_class = VercelAIEndpoint if protocol == 'vercel' else AGUIEndpoint
    endpoint = endpoint_class(DemoAgent(delay=0), store=store, secret=SECRET, keep_alive=None)
    agui = {'short': _AGUIChat('short'), 'long': _AGUIChat('long')}

    async def turn(chat: str, number: int) -> float:
        path, body = _vercel_turn(chat, number) if protocol == 'vercel' else agui[chat].turn(number)
        raw = json.dumps(body).encode()  # the client's work, not the server's
        start = time.process_time()
        answer = await _post(endpoint, path, raw)
        cost = time.process_time() - start
        assert (b'"type":"finish"' if protocol == 'vercel' else b'RUN_FINISHED') in answer, answer[-300:]
        if protocol == 'agui':
            agui[chat].answered(answer)
        return cost

    for number in range(LATE.start):
        await turn('long', number)
    for number in range(EARLY.start):
        await turn('short', number)
    early: list[float] = []
    late: list[float] = []
    for short, long in zip(EARLY, LATE, strict=True):
        early.append(await turn('short', short))
        late.append(await turn('long', long))
    await store.aclose()
    return early, late


def _rows(name: str, early: list[float], late: list[float], *, bar: bool) -> list[Row]:
    first, last = statistics.median(early), statistics.median(late)
    ratio = last / first
    verdict = ratio <= BAR if bar else None
    return [
        Row(
            f'{name}: CPU per turn, turns {EARLY.start}-{EARLY.stop - 1} (median)', fmt_time(first), '—', '—', '—', None
        ),
        Row(
            f'{name}: CPU per turn, turns {LATE.start}-{LATE.stop - 1} (median)',
            fmt_time(last),
            '—',
            f'{ratio:.2f}x turn 10',
            f'≤ {BAR}x' if bar else '—',
            verdict,
        ),
    ]


def main() -> bool:
    with tempfile.TemporaryDirectory() as directory:
        vercel = asyncio.run(_chats('vercel', directory))
        agui = asyncio.run(_chats('agui', directory))
    rows = _rows('Vercel AI (the new message only)', *vercel, bar=True)
    rows += _rows('AG-UI (the client sends its whole history)', *agui, bar=True)
    notes = [
        'The demo agent (an echo) and a SQLite store; the endpoint called as an ASGI app. CPU time of the whole '
        "process (the store's threads included) per turn, a short chat's and a long chat's turns taken in turn.",
    ]
    return print_table('Managed turns: server CPU per turn as the chat grows (SQLite, demo echo agent)', rows, notes)


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
