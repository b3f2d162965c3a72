"""uibridge.integrations.anthropic's native-tool mappings through the real `anthropic` SDK against the replay server:
server tools (web search, code execution) and their results, citations of every location kind, usage with
its cache and server tool counts, and the history that sends them back."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic_support import MODEL, anthropic_client, messages_conform
from vendor_replay import ReplayServer, consume, fixture, without_timestamps

from uibridge import (
    Citation,
    CitationAdded,
    DocumentCitationSource,
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
from uibridge.integrations.anthropic import events_from_messages_stream, to_messages_input

pytestmark = pytest.mark.anyio

SEARCH_RESULTS = [
    {
        'type': 'web_search_result',
        'title': 'Paris weather',
        'url': 'https://weather.example/paris',
        'encrypted_content': 'EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5',
        'page_age': 'April 30, 2025',
    },
    {
        'type': 'web_search_result',
        'title': 'Météo Paris',
        'url': 'https://meteo.example/paris',
        'encrypted_content': 'EpMgCioIARgBIiQ0ZDQ1NzM0Ni1iZGM0',
        'page_age': None,
    },
]
WEB_CITATION = {
    'type': 'web_search_result_location',
    'cited_text': 'Paris today: 18°C, sunny skies all afternoon.',
    'url': 'https://weather.example/paris',
    'title': 'Paris weather',
    'encrypted_index': 'Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm',
}


def anthropic_citation(source: Any, raw: dict[str, Any]) -> Citation:
    return Citation.model_validate({'sources': [source], 'provider_name': 'anthropic', 'provider_details': raw})


async def stream_once(server: ReplayServer, history: list[ModelMessage], collector: MessageCollector) -> list[Any]:
    sdk = anthropic_client(server.base_url)
    stream = await sdk.messages.create(model=MODEL, max_tokens=1024, stream=True, **to_messages_input(history))
    return await consume(events_from_messages_stream(stream), history, collector)


async def test_web_search_streams_the_server_tool_its_results_a_cited_answer_and_usage_then_goes_back() -> None:
    """The server tool call streams its query as partial JSON and its result block follows as a native result;
    the cited text block gets its web citation; usage maps the cache and server tool counts. Sent again, the
    assistant turn holds the server_tool_use and web_search_tool_result blocks as they came and the cited text
    with its citation (whose `encrypted_index` the API asks back)."""
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='Weather in Paris?')])]
    collector = MessageCollector()
    async with ReplayServer([fixture('anthropic_web_search.sse'), fixture('anthropic_final.sse')]) as server:
        seen = await stream_once(server, history, collector)
        history.append(ModelRequest(parts=[UserPromptPart(content='And Tokyo?')]))
        await stream_once(server, history, collector)

    citation = anthropic_citation(
        WebCitationSource(
            url='https://weather.example/paris', title='Paris weather', excerpts=[WEB_CITATION['cited_text']]
        ),
        WEB_CITATION,
    )
    usage = Usage(
        input_tokens=2679 + 1000 + 500,
        cache_write_tokens=1000,
        cache_read_tokens=500,
        output_tokens=120,
        output_reasoning_tokens=40,
        details={'ephemeral_5m_input_tokens': 1000, 'web_search_requests': 1},
    )
    call = NativeToolCallPart(tool_name='web_search', tool_call_id='srvtoolu_01', provider_name='anthropic')
    assert seen[:8] == [
        ResponseStart(model_name=MODEL, provider_name='anthropic'),
        PartStart(0, TextPart(content='')),
        PartDelta(0, "I'll search for that."),
        PartEnd(0),
        PartStart(1, call),
        PartDelta(1, '{"query": "weath'),
        PartDelta(1, 'er paris today"}'),
        PartEnd(1),
    ]
    assert isinstance(seen[8], NativeToolResult) and seen[8].part.content == SEARCH_RESULTS
    assert seen[9:] == [
        PartStart(2, TextPart(content='')),
        CitationAdded(2, citation),
        PartDelta(2, 'Paris is 18°C '),
        PartDelta(2, 'and sunny.'),
        PartEnd(2),
        PartStart(3, TextPart(content='')),
        PartDelta(3, ' Enjoy!'),
        PartEnd(3),
        ResponseInfo(
            usage=usage,
            finish_reason='stop',
            provider_response_id='msg_04',
            model_name=MODEL,
            provider_details={'service_tier': 'standard', 'finish_reason': 'end_turn'},
        ),
    ]
    searched = ModelResponse(
        parts=[
            TextPart(content="I'll search for that."),
            call.model_copy(update={'args': '{"query": "weather paris today"}'}),  # as streamed
            NativeToolReturnPart(
                tool_name='web_search', content=SEARCH_RESULTS, tool_call_id='srvtoolu_01', provider_name='anthropic'
            ),
            TextPart(content='Paris is 18°C and sunny.', citations=[citation]),
            TextPart(content=' Enjoy!'),
        ],
        model_name=MODEL,
        provider_name='anthropic',
        finish_reason='stop',
        usage=usage,
        provider_response_id='msg_04',
        provider_details={'service_tier': 'standard', 'finish_reason': 'end_turn'},
    )
    assert without_timestamps(collector.messages[:1]) == without_timestamps([searched])

    sent = server.received[1].body['messages']
    assert sent == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather in Paris?'}]},
        {
            'role': 'assistant',
            'content': [
                {'type': 'text', 'text': "I'll search for that."},
                {
                    'type': 'server_tool_use',
                    'id': 'srvtoolu_01',
                    'name': 'web_search',
                    'input': {'query': 'weather paris today'},
                },
                {'type': 'web_search_tool_result', 'tool_use_id': 'srvtoolu_01', 'content': SEARCH_RESULTS},
                {'type': 'text', 'text': 'Paris is 18°C and sunny.', 'citations': [WEB_CITATION]},
                {'type': 'text', 'text': ' Enjoy!'},
            ],
        },
        {'role': 'user', 'content': [{'type': 'text', 'text': 'And Tokyo?'}]},
    ]
    assert messages_conform(sent)


async def test_document_citations_and_code_execution() -> None:
    """Character, page, content block and search result locations cite their text parts (a citation given in
    the start block too); code execution streams its code and returns its result block. Sent back: the code
    execution blocks as they came, the text without its document citations (they point into blocks of a request
    whose citation settings the conversion does not set)."""
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='Summarize the report.')])]
    collector = MessageCollector()
    async with ReplayServer([fixture('anthropic_documents_code.sse')]) as server:
        seen = await stream_once(server, history, collector)

    char = {
        'type': 'char_location',
        'cited_text': 'Revenue grew 12%.',
        'document_index': 0,
        'document_title': 'Annual report',
        'start_char_index': 120,
        'end_char_index': 137,
    }
    page = {
        'type': 'page_location',
        'cited_text': 'Growth was driven by exports.',
        'document_index': 1,
        'document_title': 'Board minutes',
        'file_id': 'file_011',
        'start_page_number': 3,
        'end_page_number': 4,
    }
    block = {
        'type': 'content_block_location',
        'cited_text': 'Guidance: 10%.',
        'document_index': 2,
        'document_title': None,
        'start_block_index': 0,
        'end_block_index': 1,
    }
    search = {
        'type': 'search_result_location',
        'cited_text': 'Analysts expected 10%.',
        'source': 'https://news.example/q3',
        'title': 'Q3 preview',
        'search_result_index': 0,
        'start_block_index': 0,
        'end_block_index': 1,
    }
    cited = [
        CitationAdded(
            1,
            anthropic_citation(DocumentCitationSource(title='Annual report', excerpts=['Revenue grew 12%.']), char),
        ),
        CitationAdded(
            1,
            anthropic_citation(
                DocumentCitationSource(
                    document_id='file_011', title='Board minutes', excerpts=['Growth was driven by exports.']
                ),
                page,
            ),
        ),
        CitationAdded(3, anthropic_citation(DocumentCitationSource(excerpts=['Guidance: 10%.']), block)),
        CitationAdded(
            3,
            anthropic_citation(
                WebCitationSource(
                    url='https://news.example/q3', title='Q3 preview', excerpts=['Analysts expected 10%.']
                ),
                search,
            ),
        ),
    ]
    assert [event for event in seen if isinstance(event, CitationAdded)] == cited
    result = {'type': 'code_execution_result', 'stdout': '280.0\n', 'stderr': '', 'return_code': 0, 'content': []}
    response = history[-1]
    assert isinstance(response, ModelResponse)
    assert without_timestamps([response]) == without_timestamps(
        [
            ModelResponse(
                parts=[
                    TextPart(content='According to the report, '),
                    TextPart(
                        content='revenue grew 12%, driven by exports.', citations=[cited[0].citation, cited[1].citation]
                    ),
                    TextPart(content=' Earlier guidance '),
                    TextPart(content='said 10%', citations=[cited[2].citation, cited[3].citation]),
                    NativeToolCallPart(
                        tool_name='code_execution',
                        args='{"code": "print(round(1.12 * 250, 1))"}',
                        tool_call_id='srvtoolu_02',
                        provider_name='anthropic',
                    ),
                    NativeToolReturnPart(
                        tool_name='code_execution',
                        content=result,
                        tool_call_id='srvtoolu_02',
                        provider_name='anthropic',
                    ),
                    TextPart(content=' That is 280.0.'),
                ],
                model_name=MODEL,
                provider_name='anthropic',
                finish_reason='stop',
                usage=Usage(input_tokens=900, output_tokens=75),
                provider_response_id='msg_05',
                provider_details={'finish_reason': 'end_turn'},
            )
        ]
    )

    assistant = to_messages_input(history)['messages'][1]
    assert assistant == {
        'role': 'assistant',
        'content': [
            {'type': 'text', 'text': 'According to the report, '},
            {'type': 'text', 'text': 'revenue grew 12%, driven by exports.'},
            {'type': 'text', 'text': ' Earlier guidance '},
            {'type': 'text', 'text': 'said 10%'},
            {
                'type': 'server_tool_use',
                'id': 'srvtoolu_02',
                'name': 'code_execution',
                'input': {'code': 'print(round(1.12 * 250, 1))'},
            },
            {'type': 'code_execution_tool_result', 'tool_use_id': 'srvtoolu_02', 'content': result},
            {'type': 'text', 'text': ' That is 280.0.'},
        ],
    }
    assert messages_conform([assistant])


def test_native_parts_without_a_pair_or_from_another_provider_and_opaque_parts_are_not_sent() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content='hi')]),
        ModelResponse.model_validate(
            {
                'parts': [
                    {
                        'part_kind': 'builtin-tool-call',
                        'tool_name': 'web_search',
                        'tool_call_id': 'ws_1',
                        'provider_name': 'openai',
                        'args': {},
                    },
                    {
                        'part_kind': 'builtin-tool-return',
                        'tool_name': 'web_search',
                        'tool_call_id': 'ws_1',
                        'provider_name': 'openai',
                        'content': {},
                    },
                    {
                        'part_kind': 'builtin-tool-call',
                        'tool_name': 'web_search',
                        'tool_call_id': 'srv_lone',
                        'provider_name': 'anthropic',
                        'args': {},
                    },
                    {'part_kind': 'speech', 'audio': 'abc'},
                    {'part_kind': 'text', 'content': 'Hello.'},
                ]
            }
        ),
        ModelRequest.model_validate(
            {
                'parts': [
                    {'part_kind': 'compaction-note', 'content': 'x'},
                    {'part_kind': 'user-prompt', 'content': 'more'},
                ]
            }
        ),
    ]
    assert to_messages_input(history) == {
        'messages': [
            {'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]},
            {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Hello.'}]},
            {'role': 'user', 'content': [{'type': 'text', 'text': 'more'}]},
        ]
    }
