"""A deterministic stand-in for a model-driven agent, choosing what to show by keywords.

It exercises every part of the neutral model a real agent produces, so the demo page and the end-to-end
suites can see each one cross both protocols and come back: streamed text, thinking with a signature, a
server-side tool and its result, a tool retry (`RetryPromptPart`), retry feedback of each cause
(`RetryFeedbackPart`), a client-side tool and an approval, shared state with named steps, a provider-run
(native) search tool with cited sources, and usage for every answer. It keeps working across turns: it answers a
verified approval by running (or not running) the tool, and a client tool's result by using it.

Usage is counted, not measured: a word is a token (the prompt's words in, the answer's words out).

Keywords (case-insensitive, in the last user message; several may combine) are listed in `KEYWORDS`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio

from ...core import events as ev
from ...core import messages as m
from ...core.citations import Citation, WebCitationSource
from ...core.usage import Usage
from ..run import AgentRun

KEYWORDS: dict[str, str] = {
    'think': 'thinks first (a reasoning part with a signature), then answers',
    'weather': 'calls the server-side tool get_weather and answers with its result',
    'retry': 'calls get_weather with a bad argument, gets a tool retry (RetryPromptPart), calls it again',
    'feedback': 'answers badly three times (invalid JSON, nothing usable, rejected by a validator), each followed '
    'by retry feedback (RetryFeedbackPart), then answers properly',
    'client': 'asks the browser to run the client-side tool get_local_time and uses its answer',
    'delete': 'wants to run delete_file, which needs your approval; approve or deny it',
    'error': 'fails mid-answer, to show how an error reaches the UI',
    'slow': 'streams its answer over about five seconds: reload the page meanwhile, and the answer resumes',
    'state': 'plans a trip in three named steps, updating a shared state (shown beside the chat) as it works; '
    'the state comes back with your next message, and its run count goes up',
    'search': 'runs a provider-side web search (a native tool) and answers citing two sources',
}
"""Each keyword and what the demo agent does for it."""

CLIENT_TOOL = 'get_local_time'
APPROVAL_TOOL = 'delete_file'
SERVER_TOOL = 'get_weather'


_SLOW_WORDS = 50

_prompt_words: ContextVar[int] = ContextVar('_prompt_words', default=0)
"""The prompt's word count, for the usage of each answer: per run (one agent object serves every request)."""


class DemoError(RuntimeError):
    """What the `error` keyword raises."""


@dataclass
class DemoAgent:
    """The demo agent. `delay` paces streamed words (seconds; 0 in tests). `executed` records every tool the
    server actually ran, so a test can tell that no tool ran on a client's word."""

    delay: float = 0.02
    slow_seconds: float = 5.0
    """How long the `slow` keyword's answer takes to stream, whatever `delay` is."""
    executed: list[m.ToolCallPart] = field(default_factory=list[m.ToolCallPart])

    async def __call__(self, run: AgentRun) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        pending = run.pending_tool_calls()
        if pending:
            async for item in self._answer_approvals(run, pending):
                yield item
            return
        results = run.tool_results()
        if results:
            async for item in self._use_tool_results(results):
                yield item
            return
        text = _last_user_text(run.messages)
        _prompt_words.set(len(text.split()))
        lowered = text.lower()
        if 'state' in lowered:
            async for event in self._state(run.state):
                yield event
            return
        if 'search' in lowered:
            async for event in self._search(text):
                yield event
            return
        async for item in self._respond(text):
            yield item

    # ------------------------------------------------------------------------------------------- turns

    async def _respond(self, text: str) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        lowered = text.lower()
        thinking = 'think' in lowered
        if 'feedback' in lowered:
            async for item in self._feedback(text, thinking):
                yield item
            return
        if 'retry' in lowered or 'weather' in lowered:
            async for item in self._weather(retry='retry' in lowered, thinking=thinking):
                yield item
            return
        if 'client' in lowered:
            async for item in self._tool_call(CLIENT_TOOL, {'timezone': 'local'}, 'client', thinking):
                yield item
            return
        if 'delete' in lowered:
            async for item in self._tool_call(APPROVAL_TOOL, {'path': 'notes.txt'}, 'approval', thinking):
                yield item
            return
        if 'slow' in lowered:
            async for event in self._slow():
                yield event
            return
        async for event in self._open(thinking, f'The user wrote {len(text)} characters; an echo will do.'):
            yield event
        index = 1 if thinking else 0
        if 'error' in lowered:
            async for event in self._text(index, 'Let me start answering, and then'):
                yield event
            raise DemoError('the demo agent failed on purpose (keyword "error")')
        async for event in self._text(index, _echo(text)):
            yield event

    async def _weather(self, *, retry: bool, thinking: bool) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        async for event in self._open(thinking, 'A weather question: the get_weather tool knows.'):
            yield event
        index = 1 if thinking else 0
        if retry:
            bad = m.ToolCallPart(tool_name=SERVER_TOOL, args='', tool_call_id=m.generate_tool_call_id())
            async for event in self._call(index, bad, {'city': ''}):
                yield event
            yield ev.ToolResult(
                m.RetryPromptPart(
                    content='city must not be empty', tool_name=SERVER_TOOL, tool_call_id=bad.tool_call_id
                )
            )
            yield ev.ResponseStart(model_name='demo')
            index = 0
        call = m.ToolCallPart(tool_name=SERVER_TOOL, args='', tool_call_id=m.generate_tool_call_id())
        async for event in self._call(index, call, {'city': 'Paris'}):
            yield event
        self.executed.append(call.model_copy(update={'args': {'city': 'Paris'}}))
        weather = {'city': 'Paris', 'forecast': 'sunny', 'temperature_c': 21}
        yield _returned(call, weather)
        yield ev.ResponseStart(model_name='demo')
        async for event in self._text(0, 'It is sunny in Paris, 21 °C.'):
            yield event

    async def _feedback(self, text: str, thinking: bool) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        async for event in self._open(thinking, 'The application wants JSON with the answer in it.'):
            yield event
        index = 1 if thinking else 0
        async for event in self._text(index, '{"answer": forty-two}'):
            yield event
        invalid: m.ErrorDetails = {
            'type': 'json_invalid',
            'loc': (),
            'msg': 'Invalid JSON: expected value at line 1 column 12',
            'input': '{"answer": forty-two}',
        }
        yield m.ModelRequest(parts=[m.RetryFeedbackPart(content=[invalid], cause='validation_error')])
        yield ev.ResponseStart(model_name='demo')
        async for event in self._think(0, 'Nothing to say yet.'):
            yield event
        yield m.ModelRequest(parts=[m.RetryFeedbackPart(content='', cause='no_output')])
        yield ev.ResponseStart(model_name='demo')
        quoted = json.dumps({'answer': 41, 'question': text}, ensure_ascii=False)
        async for event in self._text(0, quoted):
            yield event
        # The validator quotes the user's question: text uibridge must frame when it renders the feedback.
        rejection = f'The answer must be 42, not 41. The question was: {text}'
        yield m.ModelRequest(parts=[m.RetryFeedbackPart(content=rejection, cause='model_retry')])
        yield ev.ResponseStart(model_name='demo')
        async for event in self._text(0, '{"answer": 42}'):
            yield event

    async def _tool_call(
        self, tool_name: str, args: dict[str, Any], answered_by: Literal['client', 'approval'], thinking: bool
    ) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        async for event in self._open(thinking, f'I need {tool_name} for this.'):
            yield event
        index = 1 if thinking else 0
        lead = 'Let me ask your browser.' if answered_by == 'client' else 'I would like to delete notes.txt.'
        async for event in self._text(index, lead):
            yield event
        call = m.ToolCallPart(tool_name=tool_name, args='', tool_call_id=m.generate_tool_call_id())
        async for event in self._call(index + 1, call, args):
            yield event
        yield ev.ToolCallReady(call.tool_call_id, answered_by)

    async def _answer_approvals(
        self, run: AgentRun, calls: list[m.ToolCallPart]
    ) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        done: list[str] = []
        for call in calls:
            approval = run.approval_for(call.tool_call_id)
            if approval is None:
                continue
            if approval.approved:
                self.executed.append(call)
                path = str(call.args_as_dict().get('path', ''))
                done.append(f'I deleted {path}.')
                yield _returned(call, {'deleted': path})
            else:
                reason = f': {approval.reason}' if approval.reason else ''
                done.append('Understood, I left it alone.')
                yield _returned(call, f'The user denied this call{reason}', outcome='denied')
        yield ev.ResponseStart(model_name='demo')
        async for event in self._text(0, ' '.join(done) or 'Nothing to do.'):
            yield event

    async def _use_tool_results(self, results: list[m.ToolReturnPart]) -> AsyncIterator[ev.AgentEvent | m.ModelMessage]:
        yield ev.ResponseStart(model_name='demo')
        answer = '; '.join(f'{result.tool_name} says {result.model_response_str()}' for result in results)
        async for event in self._text(0, f'Your browser answered: {answer}.'):
            yield event

    async def _state(self, server_state: Any) -> AsyncIterator[ev.AgentEvent]:
        """Counts on from the server's state (`run.state`: the store's, or the verified history's), never from
        what the client says it holds (`run.client_state`), so a page that edits its copy counts nothing."""
        runs: Any = cast('dict[str, Any]', server_state).get('runs', 0) if isinstance(server_state, dict) else 0
        steps = ['pick a city', 'book a train', 'find a hotel']
        state: dict[str, Any] = {
            'runs': (runs if isinstance(runs, int) else 0) + 1,
            'plan': [{'step': step, 'done': False} for step in steps],
            'city': None,
        }
        yield ev.ResponseStart(model_name='demo')
        yield ev.StateSnapshot(state)
        choices = {
            'pick a city': ('/city', 'Lyon'),
            'book a train': ('/train', '08:12'),
            'find a hotel': ('/hotel', 'Hôtel du Parc'),
        }
        for number, step in enumerate(steps):
            yield ev.StepStarted(step)
            await self._pause()
            path, value = choices[step]
            yield ev.StateDelta(
                [
                    {'op': 'replace' if path == '/city' else 'add', 'path': path, 'value': value},
                    {'op': 'replace', 'path': f'/plan/{number}/done', 'value': True},
                ]
            )
            yield ev.StepFinished(step)
        async for event in self._text(0, f'Planned run {state["runs"]}: Lyon, the 08:12 train, Hôtel du Parc.'):
            yield event

    async def _search(self, text: str) -> AsyncIterator[ev.AgentEvent]:
        yield ev.ResponseStart(model_name='demo', provider_name='demo')
        query = text.strip() or 'uibridge'
        call = m.NativeToolCallPart(
            tool_name='web_search', args='', tool_call_id=m.generate_tool_call_id(), provider_name='demo'
        )
        async for event in self._call(0, call, {'query': query}):
            yield event
        sources = [
            WebCitationSource(url='https://example.com/vercel-ai', title='Vercel AI SDK: the UI message stream'),
            WebCitationSource(url='https://example.com/ag-ui', title='AG-UI: events between agents and UIs'),
        ]
        hits = [{'url': source.url, 'title': source.title} for source in sources]
        yield ev.NativeToolResult(
            m.NativeToolReturnPart(
                tool_name='web_search', content=hits, tool_call_id=call.tool_call_id, provider_name='demo'
            )
        )
        answer = 'Both protocols stream an answer as typed events; one names them chunks, the other events.'
        async for event in self._text(1, answer, citations=[Citation(sources=[source]) for source in sources]):
            yield event

    # ----------------------------------------------------------------------------------------- streaming

    async def _open(self, thinking: bool, thought: str) -> AsyncIterator[ev.AgentEvent]:
        """A new response; when the user asked for thinking, it thinks `thought` first (as its part 0)."""
        yield ev.ResponseStart(model_name='demo')
        if thinking:
            async for event in self._think(0, thought):
                yield event

    async def _text(
        self, index: int, text: str, citations: list[Citation] | None = None
    ) -> AsyncIterator[ev.AgentEvent]:
        yield ev.PartStart(index, m.TextPart(content=''))
        async for event in self._deltas(index, _words(text)):
            yield event
        for citation in citations or ():
            yield ev.CitationAdded(index, citation)
        yield ev.PartEnd(index)
        usage = Usage(input_tokens=_prompt_words.get(), output_tokens=len(text.split()))
        yield ev.ResponseInfo(usage=usage, finish_reason='stop')

    async def _slow(self) -> AsyncIterator[ev.AgentEvent]:
        yield ev.ResponseStart(model_name='demo')
        yield ev.PartStart(0, m.TextPart(content=''))
        for count in range(1, _SLOW_WORDS + 1):
            await anyio.sleep(self.slow_seconds / _SLOW_WORDS)
            yield ev.PartDelta(0, f'{count}{"." if count == _SLOW_WORDS else ","} ')
        yield ev.PartEnd(0)

    async def _think(self, index: int, text: str) -> AsyncIterator[ev.AgentEvent]:
        yield ev.PartStart(index, m.ThinkingPart(content='', provider_name='demo'))
        async for event in self._deltas(index, _words(text)):
            yield event
        signature = 'demo-sig-' + hashlib.sha256(text.encode()).hexdigest()[:16]
        yield ev.PartEnd(index, signature=signature)

    async def _call(
        self, index: int, call: m.ToolCallPart | m.NativeToolCallPart, args: dict[str, Any]
    ) -> AsyncIterator[ev.AgentEvent]:
        yield ev.PartStart(index, call)
        encoded = json.dumps(args)
        middle = len(encoded) // 2
        async for event in self._deltas(index, [encoded[:middle], encoded[middle:]]):
            yield event
        yield ev.PartEnd(index)

    async def _deltas(self, index: int, pieces: list[str]) -> AsyncIterator[ev.PartDelta]:
        """The part at `index` streamed piece by piece, paced like a model."""
        for piece in pieces:
            await self._pause()
            yield ev.PartDelta(index, piece)

    async def _pause(self) -> None:
        if self.delay:
            await anyio.sleep(self.delay)
        else:
            await anyio.lowlevel.checkpoint()


def _returned(call: m.ToolCallPart, content: Any, outcome: m.ToolReturnOutcome = 'success') -> ev.ToolResult:
    return ev.ToolResult(
        m.ToolReturnPart(tool_name=call.tool_name, content=content, tool_call_id=call.tool_call_id, outcome=outcome)
    )


def _words(text: str) -> list[str]:
    words = text.split(' ')
    return [word if i == len(words) - 1 else word + ' ' for i, word in enumerate(words)]


def _last_user_text(messages: list[m.ModelMessage]) -> str:
    for message in reversed(messages):
        if not isinstance(message, m.ModelRequest):
            continue
        for part in reversed(message.parts):
            if isinstance(part, m.UserPromptPart):
                if isinstance(part.content, str):
                    return part.content
                return ' '.join(item for item in part.content if isinstance(item, str))
    return ''


def _echo(text: str) -> str:
    if not text.strip():
        return 'Say something! Keywords: ' + ', '.join(KEYWORDS) + '.'
    return f'You said: {text}\n\nTry a keyword: ' + ', '.join(KEYWORDS) + '.'
