"""`VercelAIStreamDecoder` on streams uibridge's encoder never writes: another server's chunk shapes (`ai` 5 to 7),
what it may leave out, and what no reader can go on from."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from uibridge import (
    Citation,
    ContentCitationAnchor,
    FilePart,
    ModelResponse,
    TextPart,
    ToolCallPart,
    WebCitationSource,
)
from uibridge.adapters.vercel_ai.decode import VercelAIStreamDecoder
from uibridge.core import events as ev
from uibridge.core.sse import StreamError, StreamLimitError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from stream_decoding import collected, read_whole


def sse(*chunks: dict[str, Any], done: bool = True, newline: str = '\n') -> bytes:
    frames = ''.join(f'data: {json.dumps(chunk)}{newline}{newline}' for chunk in chunks)
    return (frames + (f'data: [DONE]{newline}{newline}' if done else '')).encode()


def decode(body: bytes, decoder: VercelAIStreamDecoder | None = None) -> list[ev.AgentEvent]:
    return read_whole(decoder or VercelAIStreamDecoder(), body)


STEP = [{'type': 'start'}, {'type': 'start-step'}]
END = [{'type': 'finish-step'}, {'type': 'finish', 'finishReason': 'stop'}]


def text(part_id: str, *deltas: str) -> list[dict[str, Any]]:
    return [
        {'type': 'text-start', 'id': part_id},
        *({'type': 'text-delta', 'id': part_id, 'delta': d} for d in deltas),
        {'type': 'text-end', 'id': part_id},
    ]


def test_a_call_the_route_leaves_unanswered_is_the_clients_and_an_approval_request_asks_one() -> None:
    call = {'type': 'tool-input-available', 'toolCallId': 'c1', 'toolName': 'get_local_time', 'input': {}}
    ask = {'type': 'tool-input-available', 'toolCallId': 'c2', 'toolName': 'delete_file', 'input': {'path': 'x'}}
    approval = {'type': 'tool-approval-request', 'approvalId': 'aitxt-1', 'toolCallId': 'c2'}
    decoder = VercelAIStreamDecoder()
    events = decode(sse(*STEP, call, ask, approval, *END), decoder)
    ready = [(e.tool_call_id, e.answered_by) for e in events if isinstance(e, ev.ToolCallReady)]
    assert ready == [('c2', 'approval'), ('c1', 'client')]
    assert decoder.approval_ids == {'c2': 'aitxt-1'}
    [response] = collected(events)
    assert [(p.tool_name, p.args) for p in response.parts] == [('get_local_time', {}), ('delete_file', {'path': 'x'})]


def test_an_invalid_call_from_another_server_is_answered_with_its_error_and_a_preliminary_output_waits() -> None:
    bad = {'type': 'tool-input-error', 'toolCallId': 'c1', 'toolName': 't', 'input': 'oops', 'errorText': 'bad input'}
    start = {'type': 'tool-input-start', 'toolCallId': 'c2', 'toolName': 't'}
    delta = {'type': 'tool-input-delta', 'toolCallId': 'c2', 'inputTextDelta': '{"q": 1}'}
    done = {'type': 'tool-input-available', 'toolCallId': 'c2', 'toolName': 't', 'input': {'q': 1}}
    partial = {'type': 'tool-output-available', 'toolCallId': 'c2', 'output': 'half', 'preliminary': True}
    output = {'type': 'tool-output-available', 'toolCallId': 'c2', 'output': 'whole'}
    decoder = VercelAIStreamDecoder()
    events = decode(sse(*STEP, bad, start, delta, done, partial, output, *END), decoder)
    assert decoder.skipped == 1  # the preliminary output
    # The invalid call's answer came before the next call began: the model is shown one call, its error, the next.
    first, error, second, result = collected(events)
    assert first.parts == [ToolCallPart(tool_name='t', args='"oops"', tool_call_id='c1')]  # the input's JSON, as loaded
    assert second.parts == [ToolCallPart(tool_name='t', args='{"q": 1}', tool_call_id='c2')]  # the streamed text
    answers = [(p.tool_call_id, p.content, p.outcome) for m in (error, result) for p in m.parts]
    assert answers == [('c1', 'bad input', 'failed'), ('c2', 'whole', 'success')]
    assert not [e for e in events if isinstance(e, ev.ToolCallReady)]


def test_a_result_for_a_call_of_the_history_takes_its_name_and_a_denial_its_reason() -> None:
    from uibridge import ModelRequest, UserPromptPart
    from uibridge.core.run import ToolApproval

    history = [
        ModelRequest(parts=[UserPromptPart(content='delete x')]),
        ModelResponse(parts=[ToolCallPart(tool_name='delete_file', args={'path': 'x'}, tool_call_id='c1')]),
    ]
    answer = ToolApproval(approval_id='a1', approved=False, tool_call_id='c1', reason='keep it')
    decoder = VercelAIStreamDecoder(history=history, approvals=[answer])
    events = decode(
        sse({'type': 'start'}, {'type': 'tool-output-denied', 'toolCallId': 'c1'}, *STEP, *text('t', 'ok'), *END),
        decoder,
    )
    [result] = [e.part for e in events if isinstance(e, ev.ToolResult)]
    assert (result.tool_name, result.content, result.outcome) == ('delete_file', 'keep it', 'denied')


def test_another_servers_sources_cite_the_steps_text_and_ai_7_citations_keep_their_span() -> None:
    source = {'type': 'source-url', 'sourceId': 's1', 'url': 'https://e.com/a', 'title': 'A'}
    cited = {'type': 'source', 'sourceType': 'url', 'id': 's2', 'url': 'https://e.com/b'}
    end = {'type': 'text-end', 'id': 't', 'citations': [{'source': cited, 'startIndex': 0, 'endIndex': 2}]}
    events = decode(
        sse(
            *STEP,
            source,
            {'type': 'text-start', 'id': 't'},
            {'type': 'text-delta', 'id': 't', 'delta': 'Hi'},
            end,
            *END,
        )
    )
    [response] = collected(events)
    [part] = response.parts
    assert isinstance(part, TextPart) and part.content == 'Hi'
    assert part.citations == [
        Citation(sources=[WebCitationSource(url='https://e.com/a', title='A', id='s1')]),
        Citation(
            sources=[WebCitationSource(url='https://e.com/b', id='s2')], anchor=ContentCitationAnchor(start=0, end=2)
        ),
    ]


def test_files_data_state_and_metadata() -> None:
    events = decode(
        sse(
            *STEP,
            {'type': 'file', 'url': 'data:image/png;base64,AAEC', 'mediaType': 'image/png'},
            {'type': 'file', 'url': 'https://e.com/cat.png', 'mediaType': 'image/png'},
            {'type': 'data-weather', 'id': 'w', 'data': {'c': 21}},
            {'type': 'data-progress', 'data': 0.5, 'transient': True},
            {'type': 'data-state', 'id': 'state', 'data': {'n': 1}},
            {
                'type': 'message-metadata',
                'messageMetadata': {'model': 'm', 'uibridge': {'steps': {'0': {'usage': {'input_tokens': 3}}}}},
            },
            *END,
        )
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        'ResponseStart', 'FileOutput', 'CustomData', 'CustomData', 'StateSnapshot', 'ResponseInfo', 'MessageMetadata',
        'RunFinished',
    ]  # fmt: skip
    [file] = [e.part for e in events if isinstance(e, ev.FileOutput)]
    assert file == FilePart(content=file.content) and file.content.data == b'\x00\x01\x02'
    assert [e.transient for e in events if isinstance(e, ev.CustomData)] == [False, True]
    [response] = collected(events)
    assert response.usage is not None and response.usage.input_tokens == 3
    assert response.metadata['uibridge_message_metadata'] == {'model': 'm'}


@pytest.mark.parametrize(
    ('tail', 'end'),
    [
        ([{'type': 'error', 'errorText': 'boom'}, *END], ev.RunError('boom')),
        ([{'type': 'abort', 'reason': 'user'}], ev.RunCancelled('user')),
        ([{'type': 'finish', 'finishReason': 'length'}], ev.RunFinished('length')),
        ([], ev.RunError('The stream ended before the answer was complete.', 'incomplete')),
    ],
)
def test_how_a_stream_ends(tail: list[dict[str, Any]], end: ev.AgentEvent) -> None:
    events = decode(sse(*STEP, {'type': 'text-start', 'id': 't'}, *tail, done=False))
    assert events[-1] == end
    assert sum(isinstance(e, ev.RunFinished | ev.RunError | ev.RunCancelled) for e in events) == 1


def test_a_stream_without_finish_or_done_ends_finished_and_crlf_framing_reads_alike() -> None:
    events = decode(sse(*STEP, *text('t', 'Hi', ' there'), done=False, newline='\r\n'))
    assert events[-1] == ev.RunFinished()
    assert collected(events)[0].parts == [TextPart(content='Hi there')]


def test_deltas_read_together_join_and_an_unknown_chunk_is_skipped() -> None:
    decoder = VercelAIStreamDecoder()
    body = sse(*STEP, {'type': 'text-start', 'id': 't'}, {'type': 'text-delta', 'id': 't', 'delta': 'a'},
               {'type': 'mystery-chunk'}, {'type': 'text-delta', 'id': 't', 'delta': 'b'},
               {'type': 'text-delta', 'id': 't', 'delta': 'c'}, done=False)  # fmt: skip
    first = decoder.feed(body)
    assert [e.delta for e in first if isinstance(e, ev.PartDelta)] == ['abc']
    assert decoder.skipped == 1
    later = decoder.feed(sse({'type': 'text-delta', 'id': 't', 'delta': 'd'}, done=False))
    assert later == [ev.PartDelta(0, 'd')]  # not joined to what an earlier read returned


@pytest.mark.parametrize(
    ('body', 'error'),
    [
        (b'data: {"type":\n\n', 'not JSON'),
        (b'data: [1, 2]\n\n', 'not a JSON object'),
        (b'data: {"id": "t"}\n\n', 'without a string `type`'),
        (sse({'type': 'text-delta', 'id': 'never', 'delta': 'x'}), 'not streaming'),
        (sse({'type': 'tool-input-delta', 'toolCallId': 'never', 'inputTextDelta': 'x'}), 'not streaming'),
        (sse({'type': 'tool-input-start', 'toolCallId': 5, 'toolName': 't'}), 'string `toolCallId`'),
    ],
)
def test_what_no_reader_can_go_on_from_raises(body: bytes, error: str) -> None:
    with pytest.raises(StreamError, match=error):
        VercelAIStreamDecoder().feed(body)


def test_a_huge_frame_passes_the_bound() -> None:
    with pytest.raises(StreamLimitError):
        VercelAIStreamDecoder(max_frame_bytes=64).feed(sse({'type': 'data-x', 'data': 'x' * 100}))


def test_a_call_to_a_tool_the_ui_does_not_know_by_name_stays_dynamic() -> None:
    # Streamed, or whole; a provider-run one too: `dynamic: true` on the input chunks is `PartStart(dynamic=True)`.
    body = sse(
        *STEP,
        {'type': 'tool-input-start', 'toolCallId': 'c1', 'toolName': 'mcp.search', 'dynamic': True},
        {'type': 'tool-input-delta', 'toolCallId': 'c1', 'inputTextDelta': '{"q": "x"}'},
        {'type': 'tool-input-available', 'toolCallId': 'c1', 'toolName': 'mcp.search', 'input': {'q': 'x'},
         'dynamic': True},
        {'type': 'tool-input-available', 'toolCallId': 'c2', 'toolName': 'get_weather', 'input': {}},
        {'type': 'tool-input-available', 'toolCallId': 'c3', 'toolName': 'remote', 'input': {}, 'dynamic': True,
         'providerExecuted': True},
        {'type': 'tool-output-available', 'toolCallId': 'c3', 'output': 1, 'dynamic': True, 'providerExecuted': True},
        *END,
    )  # fmt: skip
    events = decode(body)
    starts = [(e.part.tool_call_id, e.dynamic) for e in events if isinstance(e, ev.PartStart)]  # type: ignore[union-attr]
    assert starts == [('c1', True), ('c2', False), ('c3', True)]
    [response] = [m for m in collected(events) if isinstance(m, ModelResponse)]
    assert (response.metadata or {})['uibridge_dynamic_tools'] == ['c1', 'c3']
