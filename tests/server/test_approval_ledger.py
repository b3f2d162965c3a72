"""Each approval acts once across endpoints and processes: the README's two hand-mounted endpoints share this
process's ledger (an approval given over Vercel does not replay through AG-UI on the same thread), and with a
store the ledger is the store's, so another worker on the same store, or the same server restarted, does not
act on a replayed approval either, even while its call is still pending in the stored history."""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from uibridge import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.events import AgentEvent, PartEnd, PartStart, ToolCallReady
from uibridge.core.messages import TextPart, ToolCallPart, generate_tool_call_id
from uibridge.server import AgentRun, AGUIEndpoint, VercelAIEndpoint
from uibridge.server.approvals import ProcessLedger, StoreLedger
from uibridge.server.demo import DemoAgent
from uibridge.server.store import ChatStore, MemoryState, MemoryStore, SqliteStore

pytestmark = pytest.mark.anyio


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test')


def ui(messages: list[ModelMessage], endpoint: VercelAIEndpoint) -> list[dict[str, Any]]:
    return [
        m.model_dump(mode='json', exclude_none=True)
        for m in vercel_ai.dump_messages(messages, keyring=endpoint.keyring)
    ]


def approved(assistant: dict[str, Any]) -> dict[str, Any]:
    """The assistant message asking for approval, answered as `addToolApprovalResponse` does."""
    answered = copy.deepcopy(assistant)
    for part in answered['parts']:
        if part.get('state') == 'approval-requested':
            part['state'] = 'approval-responded'
            part['approval']['approved'] = True
    return answered


def approval_id_of(assistant: dict[str, Any]) -> str:
    return next(p['approval']['id'] for p in assistant['parts'] if p.get('state') == 'approval-requested')


async def readme_app(*, own_ledgers: bool) -> tuple[Starlette, DemoAgent, list[list[ModelMessage]]]:
    """The README's "Mount an endpoint": two endpoints, built by hand, one agent (`own_ledgers`: each given a
    ledger of its own)."""
    demo = DemoAgent(delay=0)
    completed: list[list[ModelMessage]] = []

    def options() -> dict[str, Any]:
        return {'approval_ledger': ProcessLedger()} if own_ledgers else {}

    async def save(new_messages: list[ModelMessage], run: AgentRun) -> None:
        completed.append(new_messages)

    app = Starlette(
        routes=[
            Route('/api/chat', VercelAIEndpoint(demo, on_complete=save, **options())),
            Route('/ag-ui', AGUIEndpoint(demo, on_complete=save, **options())),
        ]
    )
    return app, demo, completed


async def approve_over_vercel_then_replay_over_agui(*, own_ledgers: bool = False) -> DemoAgent:
    app, demo, completed = await readme_app(own_ledgers=own_ledgers)
    vercel: VercelAIEndpoint = app.routes[0].app  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    thread = f'chat-{uuid.uuid4().hex}'
    prompt = ModelRequest(parts=[UserPromptPart(content='delete')])
    async with client(app) as http:
        asked = await http.post('/api/chat', json={'id': thread, 'messages': ui([prompt], vercel)})
        assert asked.status_code == 200
        history = [prompt, *completed[-1]]
        [_, assistant] = ui(history, vercel)
        await http.post('/api/chat', json={'id': thread, 'messages': [ui([prompt], vercel)[0], approved(assistant)]})
        assert len(demo.executed) == 1  # approved once: the tool ran
        agui_history = [
            m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in ag_ui.dump_messages(history)
        ]
        replay = {
            'threadId': thread, 'runId': 'replay', 'messages': agui_history, 'tools': [], 'context': [],
            'state': None, 'forwardedProps': None,
            'resume': [{'interruptId': approval_id_of(assistant), 'status': 'resolved', 'payload': {'approved': True}}],
        }  # fmt: skip
        assert (await http.post('/ag-ui', json=replay)).status_code == 200
    return demo


async def test_an_approval_given_over_vercel_does_not_replay_through_agui_on_the_same_thread() -> None:
    demo = await approve_over_vercel_then_replay_over_agui()
    assert [call.tool_name for call in demo.executed] == ['delete_file']


async def test_endpoints_given_a_ledger_each_are_what_lets_a_replay_through() -> None:
    # The boundary the README states: two ledgers (here, one per endpoint) know nothing of each other.
    demo = await approve_over_vercel_then_replay_over_agui(own_ledgers=True)
    assert [call.tool_name for call in demo.executed] == ['delete_file', 'delete_file']


class ActsThenCrashes:
    """Asks approval for a call; runs it once approved, then dies before its result is yielded: the stored
    history keeps the call pending, which is exactly when only the ledger stands between a replay and a
    second run."""

    def __init__(self) -> None:
        self.executed: list[str] = []
        self.runs: list[AgentRun] = []

    async def __call__(self, run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        self.runs.append(run)
        for call in run.pending_tool_calls():
            approval = run.approval_for(call.tool_call_id)
            if approval is not None and approval.approved:
                self.executed.append(call.tool_name)
                raise RuntimeError('the process died after acting')
        if run.pending_tool_calls() or 'delete' not in str(run.messages[-1].parts[0].content):
            yield PartStart(0, TextPart(content='nothing to do'))
            yield PartEnd(0)
            return
        call = ToolCallPart(tool_name='delete_file', args={'path': 'notes.txt'}, tool_call_id=generate_tool_call_id())
        yield PartStart(0, call)
        yield PartEnd(0)
        yield ToolCallReady(call.tool_call_id, 'approval')


def worker(agent: ActsThenCrashes, store: ChatStore) -> Starlette:
    endpoint = VercelAIEndpoint(agent, store=store, secret='shared-secret')
    return Starlette(routes=[Route('/api/chat', endpoint), Route('/api/chat/{chat_id}', endpoint, methods=['GET'])])


@pytest.fixture(params=['memory', 'sqlite'])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Makes store objects over one backend: each a worker process of its own, or one restarted."""
    if request.param == 'memory':
        state = MemoryState()
        return lambda: MemoryStore(state=state)
    return lambda: SqliteStore(tmp_path / 'chats.db')


async def test_with_a_store_another_worker_and_a_restart_do_not_act_on_a_replayed_approval(stores: Any) -> None:
    agent = ActsThenCrashes()
    first, second, restarted = stores(), stores(), stores()
    user = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'delete'}]}
    async with client(worker(agent, first)) as http:
        await http.post('/api/chat', json={'id': 'chat', 'messages': [user]})
        [_, assistant] = (await http.get('/api/chat/chat')).json()
        answer = {'id': 'chat', 'messages': [approved(assistant)]}
        await http.post('/api/chat', json=answer)
    assert agent.executed == ['delete_file']
    assert agent.runs[-1].status == 'failed'
    # The approval is marked used in the store itself, not in this process's memory.
    assert await stores().use_approval(approval_id_of(assistant)) is False
    # The run died before the call's result: the stored history still waits on the call.
    stored = await first.load_messages('chat', 'anonymous')
    assert isinstance(stored[-1], ModelResponse) and isinstance(stored[-1].parts[0], ToolCallPart)
    for replayed_to in (second, restarted):
        async with client(worker(agent, replayed_to)) as http:
            response = await http.post('/api/chat', json=answer)
        assert response.status_code == 200, response.text
        # The call is stripped as unanswered: the agent, seeing the prompt again, asks again (a new call).
        assert agent.runs[-1].approvals == [] and agent.runs[-1].pending_tool_calls() == []
    assert agent.executed == ['delete_file']
    for store in (first, second, restarted):
        await store.aclose()


async def test_client_held_history_can_keep_its_ledger_in_a_store(tmp_path: Path) -> None:
    # Two workers without server-managed history, each its own process, one SQLite file for their ledger.
    demo = DemoAgent(delay=0)
    path = tmp_path / 'ledger.db'
    stores = [SqliteStore(path), SqliteStore(path)]
    workers = [VercelAIEndpoint(demo, approval_ledger=StoreLedger(store), secret='shared') for store in stores]
    prompt = ModelRequest(parts=[UserPromptPart(content='delete')])
    completed: list[ModelMessage] = []

    async def keep(new_messages: list[ModelMessage], run: AgentRun) -> None:
        completed.extend(new_messages)

    workers[0].on_complete = keep
    async with client(workers[0]) as http:
        await http.post('/', json={'id': 'chat', 'messages': ui([prompt], workers[0])})
        [user, assistant] = ui([prompt, *completed], workers[0])
        body = {'id': 'chat', 'messages': [user, approved(assistant)]}
        await http.post('/', json=body)
    async with client(workers[1]) as http:
        assert (await http.post('/', json=body)).status_code == 200
    assert [call.tool_name for call in demo.executed] == ['delete_file']
    for store in stores:
        await store.aclose()
