"""Provider metadata a server-side integration wrote comes back to the provider on the next turn, through a UI.

An agent runs the Anthropic or OpenAI Responses tool loop (`uibridge.integrations`) with the vendor's own SDK
against a loopback server that answers with recorded SSE bodies. The real clients (`ai` 7's `Chat`,
`@ag-ui/client`'s `HttpAgent`) read the stream, hold the conversation and send the next turn; the agent builds
that turn's provider request from `run.messages`. What the provider wrote and only the provider reads (an
Anthropic thinking block's signature and a redacted block's data; an OpenAI reasoning item's id and encrypted
content) is in that request exactly as the server got it, because the part that holds it is signed. A client
that edits the value sends a part that no longer verifies: the request carries neither the edited value nor the
part.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic_support import MODEL, anthropic_client
from openai_support import client as openai_client
from vendor_replay import Answer, Received, ScriptedServer, fixture

from uibridge import ModelRequest, ToolCallPart, ToolResult, ToolReturnPart
from uibridge.core import events as ev
from uibridge.core import messages as m
from uibridge.integrations import anthropic as anthropic_bridge
from uibridge.integrations import openai as openai_bridge
from uibridge.server import AgentRun
from uibridge.server.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'e2e'))
from e2e_support import run_nodes, scenarios_spec, serve

ANTHROPIC_SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds'
ANTHROPIC_REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP'
OPENAI_ITEM_ID = 'rs_1'
OPENAI_ENCRYPTED = 'gAAAAB-encrypted-reasoning'
FORGED = 'forged-by-the-page'

# A page that rewrites what the server wrote: the value in the part the client holds, wherever its protocol keeps it.
EDIT_VERCEL = """
for (const m of messages) for (const p of m.parts) {
  const ours = p.providerMetadata?.uibridge;
  if (p.type === 'reasoning' && ours) { for (const k of ['signature', 'id']) if (k in ours) ours[k] = FORGED; }
}
return messages;
"""
EDIT_AGUI = """
for (const m of messages) if (m.role === 'reasoning' && m.encryptedValue) {
  for (const v of VALUES) m.encryptedValue = m.encryptedValue.split(v).join(FORGED);
}
return messages;
"""


def _script(request: Received) -> Answer:
    """The first request of a conversation gets the tool-calling answer; a request after tool results, or on a
    later turn, the final answer."""
    body = request.body
    if request.path == '/v1/messages':
        first = len(body['messages']) == 1
        return [(0, fixture('anthropic_tool_use.sse' if first else 'anthropic_final.sse'))]
    first = sum(1 for item in body['input'] if item.get('role') == 'user') == 1 and not any(
        item.get('type') == 'function_call_output' for item in body['input']
    )
    return [(0, fixture('responses_tool_call.sse' if first else 'responses_final.sse'))]


@pytest.fixture(scope='module')
def vendor() -> Iterator[ScriptedServer]:
    """The loopback vendor server, on an event loop of its own (the app's agent calls it from the app's loop)."""
    loop = asyncio.new_event_loop()
    server = ScriptedServer(_script)
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.__aenter__())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield server
    asyncio.run_coroutine_threadsafe(server.__aexit__(None, None, None), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def _answer(calls: list[ToolCallPart]) -> list[ToolReturnPart]:
    return [ToolReturnPart(tool_name=c.tool_name, content='18C, sunny', tool_call_id=c.tool_call_id) for c in calls]


def anthropic_agent(base_url: str) -> Callable[[AgentRun], AsyncIterator[Any]]:
    async def agent(run: AgentRun) -> AsyncIterator[ev.AgentEvent]:
        sdk = anthropic_client(base_url)
        history = list(run.messages)
        while True:
            stream = await sdk.messages.create(
                model=MODEL, max_tokens=1024, stream=True, **anthropic_bridge.to_messages_input(history)
            )
            events = anthropic_bridge.events_from_messages_stream(stream)
            async for event in events:
                yield event
            history.append(events.response)
            results = _answer([p for p in events.response.parts if isinstance(p, ToolCallPart)])
            if not results:
                return
            for result in results:
                yield ToolResult(result)
            history.append(ModelRequest(parts=list[m.ModelRequestPart](results)))

    return agent


def openai_agent(base_url: str) -> Callable[[AgentRun], AsyncIterator[Any]]:
    async def agent(run: AgentRun) -> AsyncIterator[ev.AgentEvent]:
        sdk = openai_client(base_url)
        history = list(run.messages)
        while True:
            stream = await sdk.responses.create(
                model='o4-mini',
                input=openai_bridge.to_responses_input(history),
                include=['reasoning.encrypted_content'],
                stream=True,
            )
            events = openai_bridge.events_from_responses(stream)
            async for event in events:
                yield event
            history.append(events.response)
            results = _answer([p for p in events.response.parts if isinstance(p, ToolCallPart)])
            if not results:
                return
            for result in results:
                yield ToolResult(result)
            history.append(ModelRequest(parts=list[m.ModelRequestPart](results)))

    return agent


VENDORS = {'anthropic': anthropic_agent, 'openai': openai_agent}
VALUES = {'anthropic': [ANTHROPIC_SIGNATURE, ANTHROPIC_REDACTED], 'openai': [OPENAI_ITEM_ID, OPENAI_ENCRYPTED]}
DRIVERS = {'vercel': 'e2e_vercel.mjs', 'agui': 'e2e_agui.mjs'}


NEXT = 'And tomorrow?'


def _thread(vendor: str, protocol: str, name: str) -> str:
    return f'{vendor}-{protocol}-{name}'


def _prompt(vendor: str, protocol: str, name: str) -> str:
    """The first prompt of a conversation, which tells its provider requests apart from every other's."""
    return f'Weather? ({vendor}, {protocol}, {name})'


@pytest.fixture(scope='module')
def played(vendor: ScriptedServer) -> dict[str, dict[str, Any]]:
    """Per vendor and protocol, two conversations of two turns: one as the server wrote it, one whose page edited
    the provider's values between the turns. Every driver runs side by side."""
    plays: dict[str, tuple[str, dict[str, Any]]] = {}
    with serve(_app(vendor.base_url)) as base_url:
        for name in VENDORS:
            for protocol, driver in DRIVERS.items():
                edit = (EDIT_VERCEL if protocol == 'vercel' else EDIT_AGUI).replace('FORGED', json.dumps(FORGED))
                edit = edit.replace('VALUES', json.dumps(VALUES[name]))
                scenarios = {
                    'kept': [
                        {'op': 'send', 'text': _prompt(name, protocol, 'kept')},
                        {'op': 'send', 'text': NEXT},
                    ],
                    'edited': [
                        {'op': 'send', 'text': _prompt(name, protocol, 'edited')},
                        {'op': 'mutate', 'js': edit},
                        {'op': 'send', 'text': NEXT},
                    ],
                }
                thread = lambda scenario, name=name, protocol=protocol: _thread(name, protocol, scenario)  # noqa: E731
                plays[f'{name}-{protocol}'] = (driver, scenarios_spec(protocol, base_url, scenarios, thread))
        return run_nodes(plays)


def _app(base_url: str) -> Any:
    agents = {name: make(base_url) for name, make in VENDORS.items()}

    def agent(run: AgentRun) -> AsyncIterator[Any]:
        return agents[run.thread_id.split('-', 1)[0]](run)

    return create_app(agent)


def _turns(vendor: ScriptedServer, name: str, protocol: str, scenario: str) -> tuple[list[Any], list[Any]]:
    """The provider requests of one conversation, in the order they came: the first turn's (its tool loop) and
    the second turn's."""
    path = '/v1/messages' if name == 'anthropic' else '/v1/responses'
    prompt = json.dumps(_prompt(name, protocol, scenario))[1:-1]
    bodies = [r.body for r in vendor.received if r.path == path and prompt in json.dumps(r.body)]
    later = [body for body in bodies if NEXT in json.dumps(body)]
    return [body for body in bodies if NEXT not in json.dumps(body)], later


def _provider_values(body: Any, name: str) -> list[Any]:
    """What the request carries of the values the provider wrote: Anthropic's thinking blocks, OpenAI's reasoning
    items (whole, as the provider reads them)."""
    if name == 'anthropic':
        return [
            block
            for message in body['messages']
            if message['role'] == 'assistant'
            for block in message['content']
            if block['type'] in ('thinking', 'redacted_thinking')
        ]
    return [item for item in body['input'] if item.get('type') == 'reasoning']


@pytest.mark.parametrize('protocol', list(DRIVERS))
@pytest.mark.parametrize('name', list(VENDORS))
def test_what_the_provider_wrote_reaches_its_next_request(
    played: dict[str, dict[str, Any]], vendor: ScriptedServer, name: str, protocol: str
) -> None:
    result = played[f'{name}-{protocol}']['kept']
    for step in result['steps']:
        assert step['error'] is None, step
    first_turn, next_turn = _turns(vendor, name, protocol, 'kept')
    assert len(first_turn) == 2 and len(next_turn) == 1
    # The tool loop's second request was built from the server's own history, never through a client.
    server_side = _provider_values(first_turn[-1], name)
    assert server_side, 'the recorded answer has the provider values this test is about'
    assert _provider_values(next_turn[0], name) == server_side
    assert all(value in json.dumps(next_turn[0]) for value in VALUES[name])


@pytest.mark.parametrize('protocol', list(DRIVERS))
@pytest.mark.parametrize('name', list(VENDORS))
def test_a_value_the_client_edited_never_reaches_the_provider(
    played: dict[str, dict[str, Any]], vendor: ScriptedServer, name: str, protocol: str
) -> None:
    result = played[f'{name}-{protocol}']['edited']
    edited = json.dumps(result['steps'][1]['messages'])
    assert FORGED in edited  # the page did hold the edited value when it sent the next turn
    assert all(step['error'] is None for step in result['steps'])
    first_turn, next_turn = _turns(vendor, name, protocol, 'edited')
    assert len(first_turn) == 2 and len(next_turn) == 1
    assert FORGED not in json.dumps(next_turn[0])
    # The page edited every such value: no edited part verifies, so none goes back. What it left alone still
    # does: the calls and their results, and the final answer.
    assert _provider_values(next_turn[0], name) == []
    sent = json.dumps(next_turn[0])
    assert all(piece in sent for piece in ('get_weather', '18C, sunny', 'Paris'))
