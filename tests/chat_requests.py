"""One user turn as each protocol's client posts it, and the parts of a streamed answer tests read back: shared
by the suites that drive the whole app in process (tests/server/test_agent_misuse.py,
tests/server/store/test_scoped_agents.py)."""

from __future__ import annotations

import json
from typing import Any

PATHS = {'vercel': '/api/chat', 'ag-ui': '/ag-ui'}


def turn(protocol: str, chat: str, text: str = 'go') -> dict[str, Any]:
    """The body of a POST starting a run on `chat` with one user message."""
    if protocol == 'vercel':
        return {'id': chat, 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}]}
    return {'threadId': chat, 'runId': 'r', 'messages': [{'id': 'u', 'role': 'user', 'content': text}]}


def chunks(stream: str) -> list[dict[str, Any]]:
    """Every JSON chunk of an SSE stream, in order."""
    return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith('data: {')]


def text_of(stream: str) -> str:
    """The streamed text, deltas joined."""
    return ''.join(c['delta'] for c in chunks(stream) if c['type'] in ('text-delta', 'TEXT_MESSAGE_CONTENT'))


def error_texts(stream: str) -> list[str]:
    """The text of every error event (Vercel `error` chunks, AG-UI `RUN_ERROR`)."""
    return [c.get('errorText', c.get('message')) for c in chunks(stream) if c['type'] in ('error', 'RUN_ERROR')]
