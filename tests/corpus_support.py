"""The agent the forgery corpus runs against (`tests/e2e/test_forgery_corpus.py`, and on every store
`tests/server/store/test_store_signed_history.py`), and what they check the agent received.

`CorpusAgent` answers by the user's last words:

- `transfer`: a text (with a provider's item id), then a call to `transfer` whose argument text holds an integer
  past 2**53, a whole float and its own spacing (`ARGS_TEXT`, exactly as a model would write it), for the user
  to approve; the run sets the shared state (an integer past 2**53 in it too); `transfer dict`: the same with
  the arguments as a dict (`ARGS_DICT`, whose exact text a Vercel call carries beside `input` as `args_json`);
- the verified approval of that call: the tool runs (its argument text recorded), and its result (another
  integer past 2**53, a whole float) and metadata come back, then a text;
- `state`: the shared state, and a short text;
- anything else: a short text.

Every run is recorded (`runs`); `executed` is the argument text of every transfer the tool ran.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from uibridge import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from uibridge.core import events as ev
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun

ACCOUNT = 12345678901234567891
RECEIPT = 98765432109876543210
ARGS_TEXT = '{"account": 12345678901234567891, "amount": 1.0, "memo": "rent"}'
"""A model's own argument text: spacing, a whole float, an integer JavaScript cannot hold."""
ARGS_DICT = {'account': ACCOUNT, 'amount': 1.0, 'memo': 'rent'}
"""The same arguments parsed: JavaScript gives them back as other text, so their exact text rides beside `input`."""
RESULT = {'receipt': RECEIPT, 'fee': 0.0}
RESULT_METADATA = {'ledger': 'main'}
STATE = {'role': 'user', 'balance': RECEIPT}
TEXT_ID = 'msg_corpus_1'

FORGED_MARKERS = ('FORGED', 'SYSTEM OVERRIDE', 'NaN', 'admin', '12345678901234568019', 'msg_forged', '1999-')
"""What the corpus writes into a client's copy: none of it may reach the agent."""


@dataclass
class CorpusAgent:
    runs: list[AgentRun] = field(default_factory=list[AgentRun])
    executed: list[str] = field(default_factory=list[str])

    def runs_for(self, thread_id: str) -> list[AgentRun]:
        return [run for run in self.runs if run.thread_id == thread_id]

    def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        self.runs.append(run)
        return self._answer(run)

    async def _answer(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | ModelMessage]:
        pending = run.pending_tool_calls()
        if pending:
            for call in pending:
                approval = run.approval_for(call.tool_call_id)
                if approval is None:
                    continue
                if approval.approved:
                    self.executed.append(call.args_as_json_str())
                    part = ToolReturnPart(
                        tool_name=call.tool_name,
                        content=RESULT,
                        tool_call_id=call.tool_call_id,
                        metadata=RESULT_METADATA,
                    )
                else:
                    part = ToolReturnPart(
                        tool_name=call.tool_name, content='Denied.', tool_call_id=call.tool_call_id, outcome='denied'
                    )
                yield ev.ToolResult(part)
            yield ev.ResponseStart(model_name='corpus-model', provider_name='openai')
            yield ev.PartStart(0, TextPart(content='Done.'))
            yield ev.PartEnd(0)
            return
        if 'transfer' in last_prompt(run.messages):
            args = ARGS_DICT if last_prompt(run.messages) == 'transfer dict' else ARGS_TEXT
            call = ToolCallPart(tool_name='transfer', args=args, tool_call_id=f'call_{len(self.runs)}')
            yield ev.ResponseStart(model_name='corpus-model', provider_name='openai')
            yield ev.PartStart(0, TextPart(content='I will transfer it.', id=TEXT_ID))
            yield ev.PartEnd(0)
            yield ev.PartStart(1, call)
            yield ev.PartEnd(1)
            yield ev.ToolCallReady(call.tool_call_id, 'approval')
            yield ev.StateSnapshot(STATE)
            return
        yield ev.ResponseStart(model_name='corpus-model', provider_name='openai')
        if last_prompt(run.messages) == 'state':
            yield ev.StateSnapshot(STATE)
        yield ev.PartStart(0, TextPart(content='OK.'))
        yield ev.PartEnd(0)


def last_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ''


def transfer_calls(messages: list[ModelMessage]) -> list[ToolCallPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart) and part.tool_name == 'transfer'
    ]


def results(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]


def forged_markers_in(value: Any) -> list[str]:
    """The corpus markers `value` (JSON-compatible: a dumped history, a provider's input) holds."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return [marker for marker in FORGED_MARKERS if marker in text]
