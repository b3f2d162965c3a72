"""uibridge.integrations.openai's native-tool mappings through the real `openai` SDK against the replay server: the
Responses API's built-in tool items (web search, file search, code interpreter, image generation, remote MCP),
output text annotations as citations, usage with its cache counts, and the input that sends the items back."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from openai_support import client, responses_conform
from vendor_replay import ReplayServer, consume, fixture, without_timestamps

from uibridge import (
    BinaryContent,
    Citation,
    CitationAdded,
    ContentCitationAnchor,
    DocumentCitationSource,
    FileOutput,
    FilePart,
    MarkerCitationAnchor,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolResult,
    NativeToolReturnPart,
    PartDelta,
    PartEnd,
    PartStart,
    ResponseInfo,
    ResponseStart,
    TextPart,
    Usage,
    UserPromptPart,
    WebCitationSource,
)
from uibridge.core.collector import MessageCollector
from uibridge.core.json_text import compact_json
from uibridge.integrations.openai import events_from_responses, to_chat_completions_messages, to_responses_input

pytestmark = pytest.mark.anyio

MODEL = 'gpt-5-2025-08-07'
ACTION = {
    'type': 'search',
    'query': 'weather paris today',
    'sources': [{'type': 'url', 'url': 'https://weather.example/paris'}],
}


async def two_turns(name: str, question: str, follow_up: str) -> tuple[list[Any], list[ModelMessage], list[Any]]:
    """The events of the recorded response `name` to `question`, the history after a second request that
    follows up on it (answered by `responses_final.sse`), and the input that second request sent."""
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=question)])]
    collector = MessageCollector()
    async with ReplayServer([fixture(name), fixture('responses_final.sse')]) as server:
        sdk = client(server)
        stream = await sdk.responses.create(model='gpt-5', input=to_responses_input(history), stream=True)
        seen = await consume(events_from_responses(stream), history, collector)
        history.append(ModelRequest(parts=[UserPromptPart(content=follow_up)]))
        stream = await sdk.responses.create(model='gpt-5', input=to_responses_input(history), stream=True)
        await consume(events_from_responses(stream), history, collector)
    assert without_timestamps(collector.messages) == without_timestamps([history[1], history[3]])
    return seen, history, server.received[1].body['input']


def native(name: str, item_id: str, args: Any = None) -> NativeToolCallPart:
    return NativeToolCallPart(tool_name=name, args=args, tool_call_id=item_id, provider_name='openai')


def returned(name: str, item_id: str, content: Any) -> NativeToolReturnPart:
    return NativeToolReturnPart(tool_name=name, content=content, tool_call_id=item_id, provider_name='openai')


async def test_web_search_call_a_url_citation_and_usage_then_the_item_goes_back() -> None:
    """The web search item opens a native call when added; when done, its action is the call's arguments and
    its status the result. The `url_citation` annotation cites the text part, anchored at its offsets. Sent
    again, the item is whole in the input, before the assistant's text."""
    seen, history, sent = await two_turns('responses_web_search.sse', 'Weather in Paris?', 'And Tokyo?')

    text = 'Paris is 18°C and sunny ([weather.example](https://weather.example/paris)).'
    citation = Citation(
        sources=[WebCitationSource(url='https://weather.example/paris', title='Paris weather')],
        anchor=ContentCitationAnchor(start=25, end=73),
    )
    assert text[25:73] == '[weather.example](https://weather.example/paris)'
    usage = Usage(
        input_tokens=310,
        cache_read_tokens=128,
        cache_write_tokens=64,
        output_tokens=48,
        output_reasoning_tokens=16,
        details={'cache_write_ttl_30m_tokens': 64},
    )
    assert seen[:4] == [
        ResponseStart(model_name=MODEL, provider_name='openai'),
        PartStart(0, native('web_search', 'ws_1')),
        PartDelta(0, compact_json({'action': ACTION})),
        PartEnd(0),
    ]
    assert isinstance(seen[4], NativeToolResult) and seen[4].part.content == {'status': 'completed'}
    assert seen[5:] == [
        PartStart(1, TextPart(content='', id='msg_3')),
        PartDelta(1, 'Paris is 18°C and sunny '),
        PartDelta(1, '([weather.example](https://weather.example/paris)).'),
        CitationAdded(1, citation),
        PartEnd(1),
        ResponseInfo(
            usage=usage,
            finish_reason='stop',
            provider_response_id='resp_3',
            model_name=MODEL,
            provider_details={'service_tier': 'default', 'finish_reason': 'completed'},
        ),
    ]
    searched = ModelResponse(
        parts=[
            native('web_search', 'ws_1', {'action': ACTION}),
            returned('web_search', 'ws_1', {'status': 'completed'}),
            TextPart(content=text, id='msg_3', citations=[citation]),
        ],
        model_name=MODEL,
        provider_name='openai',
        finish_reason='stop',
        usage=usage,
        provider_response_id='resp_3',
        provider_details={'service_tier': 'default', 'finish_reason': 'completed'},
    )
    assert without_timestamps(history[1:2]) == without_timestamps([searched])

    assert sent == [
        {'type': 'message', 'role': 'user', 'content': 'Weather in Paris?'},
        {'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed', 'action': ACTION},
        {'type': 'message', 'role': 'assistant', 'content': text},
        {'type': 'message', 'role': 'user', 'content': 'And Tokyo?'},
    ]
    assert responses_conform(sent)


async def test_file_search_code_interpreter_image_generation_and_mcp_items_with_file_citations() -> None:
    """Each built-in item is a native call and its result (the generated image a file part too); a
    `file_citation` is anchored as a marker, a `container_file_citation` as a span, a `file_path` cites
    nothing. Sent back, each item is whole again (the image's bytes from its file part); Chat Completions,
    which has no built-in tools, gets the text alone."""
    seen, history, sent = await two_turns('responses_builtin_tools.sse', 'Chart Q3 revenue.', 'Thanks.')

    text = 'Revenue grew 12% (chart: sandbox:/mnt/data/chart.png, data: out.csv).'
    file_search = (
        {'queries': ['q3 revenue']},
        {
            'status': 'completed',
            'results': [
                {
                    'file_id': 'file-abc',
                    'filename': 'report.pdf',
                    'score': 0.92,
                    'text': 'Revenue grew 12%.',
                    'attributes': {},
                }
            ],
        },
    )
    code = (
        {'container_id': 'cntr_1', 'code': 'print(1.12 * 250)'},
        {
            'status': 'completed',
            'outputs': [{'type': 'logs', 'logs': '280.0\n'}],
        },
    )
    image = (
        {'output_format': 'png', 'size': '1024x1024', 'quality': 'low', 'background': 'opaque'},
        {
            'status': 'completed',
            'revised_prompt': 'A bar chart of revenue',
        },
    )
    mcp = (
        {'server_label': 'deepwiki', 'name': 'ask_question', 'arguments': '{"repo":"acme/report"}'},
        {
            'status': 'completed',
            'output': 'It is the annual report.',
            'error': None,
        },
    )
    png = BinaryContent(data=base64.b64decode('iVBORw0KGgpjaGFydA=='), media_type='image/png')
    citations = [
        Citation(
            sources=[DocumentCitationSource(document_id='file-abc', title='report.pdf', filename='report.pdf')],
            anchor=MarkerCitationAnchor(start=16, end=16),
        ),
        Citation(
            sources=[DocumentCitationSource(document_id='cfile_9', title='out.csv', filename='out.csv')],
            anchor=ContentCitationAnchor(start=60, end=67),
        ),
    ]
    assert [event for event in seen if isinstance(event, CitationAdded)] == [CitationAdded(4, c) for c in citations]
    assert [event for event in seen if isinstance(event, FileOutput)] == [FileOutput(FilePart(content=png, id='ig_1'))]
    tools = [
        ('file_search', 'fs_1', file_search),
        ('code_interpreter', 'ci_1', code),
        ('image_generation', 'ig_1', image),
        ('mcp', 'mcp_1', mcp),
    ]
    parts: list[Any] = []
    for name, item_id, (args, outcome) in tools:
        parts += [native(name, item_id, args), returned(name, item_id, outcome)]
        if name == 'image_generation':
            parts.append(FilePart(content=png, id='ig_1'))
    parts.append(TextPart(content=text, id='msg_4', citations=citations))
    assert without_timestamps(history[1:2]) == without_timestamps(
        [
            ModelResponse(
                parts=parts,
                model_name=MODEL,
                provider_name='openai',
                finish_reason='stop',
                usage=Usage(input_tokens=900, output_tokens=210),
                provider_response_id='resp_4',
                provider_details={'service_tier': 'default', 'finish_reason': 'completed'},
            )
        ]
    )

    assert sent[1:-2] == [
        {'type': 'file_search_call', 'id': 'fs_1', **file_search[0], **file_search[1]},
        {'type': 'code_interpreter_call', 'id': 'ci_1', **code[0], **code[1]},
        {'type': 'image_generation_call', 'id': 'ig_1', **image[0], **image[1], 'result': 'iVBORw0KGgpjaGFydA=='},
        {'type': 'mcp_call', 'id': 'mcp_1', **mcp[0], **mcp[1]},
    ]
    assert sent[-2] == {'type': 'message', 'role': 'assistant', 'content': text}
    assert responses_conform(sent)
    assert to_chat_completions_messages(history[:2])[1] == {'role': 'assistant', 'content': text}


def test_a_native_call_without_its_return_or_from_another_provider_is_not_sent() -> None:
    response = ModelResponse(
        parts=[
            native('web_search', 'ws_lone', {'action': ACTION}),
            NativeToolCallPart(tool_name='web_search', args={}, tool_call_id='srv_1', provider_name='anthropic'),
            NativeToolReturnPart(tool_name='web_search', content=[], tool_call_id='srv_1', provider_name='anthropic'),
            TextPart(content='Done.'),
        ]
    )
    assert to_responses_input([response]) == [{'type': 'message', 'role': 'assistant', 'content': 'Done.'}]
