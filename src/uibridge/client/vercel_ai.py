"""`VercelAIClient`: drive any Vercel AI SDK chat route (`useChat`'s server) from Python, in the neutral model.

```python
client = VercelAIClient('http://127.0.0.1:3000/api/chat')
run = await client.run(history, chat_id='chat-1')
history += run.messages
if run.approval_ids:                       # answer the approvals the run asked for, in the next turn
    run = await client.run(history, chat_id='chat-1', approvals=[run.approval(c) for c in run.approval_ids])
again = await client.resume('chat-1')      # GET {api}/{chatId}/stream: None when there is nothing to resume
```

A turn is one POST as `DefaultChatTransport` sends it: `{...body, id, messages, trigger, messageId?}`, the
messages dumped with `vercel_ai.dump_messages` (server-authored parts signed with `keyring`: a uibridge server
without a store keeps only what verifies), an approval answered by setting its call's part to
`approval-responded` (the approval id the run asked with: `ClientRun.approval`), a client tool's result by the
`ToolReturnPart` in the history (the part becomes `output-available`). The answer is read with
`VercelAIStreamDecoder`: `stream()` gives its events as they arrive, `run()` what they add up to.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, cast
from urllib.parse import quote

import httpx
from typing_extensions import Unpack

from ..adapters.vercel_ai import SdkVersion, dump_messages
from ..adapters.vercel_ai.decode import VercelAIStreamDecoder
from ..core.messages import ModelMessage
from ..core.provenance import Keyring
from ..core.run import ToolApproval
from .stream import ChatClient, ClientOptions
from .turn import ClientRun, Exchange, Turn


class VercelTurn(TypedDict, total=False):
    """What one turn sends beside the history (every key optional)."""

    chat_id: str
    """The chat (`id` in the body; a fresh uuid when absent)."""
    approvals: Sequence[ToolApproval]
    """Answers to the approvals the last run asked for (`ClientRun.approval`), each naming its tool call."""
    trigger: Literal['submit-message', 'regenerate-message']
    message_id: str
    """`messageId`: the message a regenerate or an edit starts from."""
    body: Mapping[str, Any]
    """Extra body keys (`DefaultChatTransport({body})`), under the protocol's own."""
    headers: Mapping[str, str]
    """This turn's own headers, over the client's."""


class VercelAIClient(ChatClient):
    """A client of one Vercel AI chat route (`api`). `sdk_version`: the `ai` major version whose messages to send
    (5, 6 or 7: `dump_messages`); the other options are `ClientOptions`."""

    def __init__(self, api: str, *, sdk_version: SdkVersion = 7, **options: Unpack[ClientOptions]) -> None:
        super().__init__(api, **options)
        self.sdk_version: SdkVersion = sdk_version

    @property
    def api(self) -> str:
        return self.url

    def body(self, history: Sequence[ModelMessage], **options: Unpack[VercelTurn]) -> dict[str, Any]:
        """The body a turn posts, as `DefaultChatTransport` writes it."""
        messages = ui_messages(history, keyring=self.keyring, sdk_version=self.sdk_version)
        answer_approvals(messages, options.get('approvals', ()))
        body: dict[str, Any] = {
            **options.get('body', {}),
            'id': options.get('chat_id') or str(uuid.uuid4()),
            'messages': messages,
            'trigger': options.get('trigger', 'submit-message'),
        }
        if (message_id := options.get('message_id')) is not None:
            body['messageId'] = message_id
        return body

    def stream(self, history: Sequence[ModelMessage], **options: Unpack[VercelTurn]) -> Turn:
        """One turn, its events as they arrive (`async for event in turn`; `await turn.result()` at the end)."""
        return Turn(self.exchange(history, **options))

    def exchange(self, history: Sequence[ModelMessage], **options: Unpack[VercelTurn]) -> Exchange:
        """One turn's request under way, its events not collected (what a bridge relays)."""
        chat_id = options['chat_id'] = options.get('chat_id') or str(uuid.uuid4())
        headers = {**self.headers, **options.pop('headers', {})}
        decoder = self._decoder(history, options.get('approvals', ()))
        events = self._events('POST', self.api, decoder, headers, self.body(history, **options), empty_status=204)
        return Exchange(events, decoder, chat_id)

    async def run(self, history: Sequence[ModelMessage], **options: Unpack[VercelTurn]) -> ClientRun:
        """One turn, read to its end. Raises `RemoteError` when the server cannot be asked or its stream read."""
        return await self.stream(history, **options).result()

    def resume_stream(
        self, chat_id: str, *, history: Sequence[ModelMessage] = (), headers: Mapping[str, str] | None = None
    ) -> Turn:
        """`GET {api}/{chatId}/stream` (what `chat.resumeStream()` asks): the chat's running stream, replayed from its
        start by a uibridge server; a 204 (nothing to resume) is a turn without events."""
        decoder = self._decoder(history)
        url = stream_url(self.api, chat_id)
        events = self._events('GET', url, decoder, {**self.headers, **(headers or {})}, empty_status=204)
        return Turn(Exchange(events, decoder, chat_id))

    async def resume(
        self, chat_id: str, *, history: Sequence[ModelMessage] = (), headers: Mapping[str, str] | None = None
    ) -> ClientRun | None:
        """`resume_stream`, read to its end; `None` when the server had nothing to resume."""
        run = await self.resume_stream(chat_id, history=history, headers=headers).result()
        return run if run.events else None

    def _decoder(
        self, history: Sequence[ModelMessage], approvals: Sequence[ToolApproval] = ()
    ) -> VercelAIStreamDecoder:
        limits = self.limits
        return VercelAIStreamDecoder(
            history=history,
            approvals=approvals,
            max_frame_bytes=limits.max_frame_bytes,
            max_buffer_bytes=limits.max_buffer_bytes,
        )


def ui_messages(
    history: Sequence[ModelMessage], *, keyring: Keyring | None = None, sdk_version: SdkVersion = 7
) -> list[dict[str, Any]]:
    """`history` as the `UIMessage` JSON a client posts."""
    return [
        message.model_dump(mode='json') for message in dump_messages(history, keyring=keyring, sdk_version=sdk_version)
    ]


def answer_approvals(messages: list[dict[str, Any]], approvals: Sequence[ToolApproval]) -> None:
    """Each approved or denied call's tool part set to `approval-responded` with its answer, as
    `addToolApprovalResponse` leaves it."""
    answers = {approval.tool_call_id: approval for approval in approvals}
    if None in answers:
        raise ValueError('a Vercel approval answer names its tool call: ToolApproval(tool_call_id=...)')
    for message in messages:
        for part in cast('list[dict[str, Any]]', message.get('parts', [])):
            approval = answers.get(part.get('toolCallId'))
            if approval is None:
                continue
            answer: dict[str, Any] = {'id': approval.approval_id, 'approved': approval.approved}
            if approval.reason is not None:
                answer['reason'] = approval.reason
            part['state'] = 'approval-responded'
            part['approval'] = answer


def stream_url(api: str, chat_id: str) -> str:
    """`{api}/{chatId}/stream`, the chat id escaped and put before any query, as `DefaultChatTransport` does."""
    url = httpx.URL(api)
    return str(url.copy_with(path=f'{url.path.rstrip("/")}/{quote(chat_id, safe="")}/stream'))
