"""What the Anthropic stream mapping and history conversion share: names, server tool results, citations, usage.

A server tool's call (`server_tool_use`) and its result (a `*_tool_result` block of the tool's own type) are
a `NativeToolCallPart` and a `NativeToolReturnPart` holding the block's `input` and `content` as the API sent
them, so the blocks go back unchanged. A citation keeps the API's own citation object (`provider_details`,
with `provider_name='anthropic'`, extra keys of `Citation`): a web search citation's `encrypted_index` must
go back with the text that cites it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.citations import Citation, CitationSource, DocumentCitationSource, WebCitationSource
from ..core.usage import Usage

if TYPE_CHECKING:
    from anthropic.types import MessageDeltaUsage, TextCitation
    from anthropic.types import Usage as AnthropicUsage

PROVIDER_NAME = 'anthropic'
REDACTED_THINKING_ID = 'redacted_thinking'

RESULT_BLOCK_TYPES: dict[str, str] = {
    'web_search': 'web_search_tool_result',
    'web_fetch': 'web_fetch_tool_result',
    'code_execution': 'code_execution_tool_result',
    'bash_code_execution': 'bash_code_execution_tool_result',
    'text_editor_code_execution': 'text_editor_code_execution_tool_result',
    'tool_search_tool_regex': 'tool_search_tool_result',
    'tool_search_tool_bm25': 'tool_search_tool_result',
}
"""Server tool name → the type of the block that holds its result."""

RESULT_TOOL_NAMES = {
    'web_search_tool_result': 'web_search',
    'web_fetch_tool_result': 'web_fetch',
    'code_execution_tool_result': 'code_execution',
    'bash_code_execution_tool_result': 'bash_code_execution',
    'text_editor_code_execution_tool_result': 'text_editor_code_execution',
    'tool_search_tool_result': 'tool_search',
}
"""Result block type → a tool name, for a result whose call the stream did not show."""


def text_citation(citation: TextCitation) -> Citation:
    """A text block's citation. The API's locations point into the cited document, not into the text (the text
    block is itself the cited claim: the API splits text at citation boundaries), so there is no anchor."""
    excerpts = [citation.cited_text] if citation.cited_text else []
    source: CitationSource
    if citation.type == 'web_search_result_location':
        source = WebCitationSource(url=citation.url, title=citation.title, excerpts=excerpts)
    elif citation.type == 'search_result_location':
        # A search result block the application sent; its `source` is usually a URL.
        if citation.source.startswith(('https://', 'http://')):
            source = WebCitationSource(url=citation.source, title=citation.title, excerpts=excerpts)
        else:
            source = DocumentCitationSource(document_id=citation.source, title=citation.title, excerpts=excerpts)
    else:
        source = DocumentCitationSource(document_id=citation.file_id, title=citation.document_title, excerpts=excerpts)
    raw = citation.model_dump(mode='json', exclude_unset=True)
    return Citation.model_validate({'sources': [source], 'provider_name': PROVIDER_NAME, 'provider_details': raw})


def message_usage(start: AnthropicUsage | None, last: MessageDeltaUsage | None) -> Usage | None:
    """The message's usage: `message_start`'s, each count the last `message_delta` gives replacing it (the
    delta's counts are cumulative). `input_tokens` counts cache writes and reads too, as every provider's
    does here (the API's own `input_tokens` is the rest); cache writes by lifetime and server tool requests
    are in `details`."""
    if start is None and last is None:
        return None

    def pick(name: str) -> Any:
        later = getattr(last, name, None)
        return later if later is not None else getattr(start, name, None)

    uncached: int = pick('input_tokens') or 0
    cache_write: int = pick('cache_creation_input_tokens') or 0
    cache_read: int = pick('cache_read_input_tokens') or 0
    thinking = getattr(pick('output_tokens_details'), 'thinking_tokens', None)
    details: dict[str, Any] = {}
    if lifetimes := getattr(start, 'cache_creation', None):
        details['ephemeral_5m_input_tokens'] = lifetimes.ephemeral_5m_input_tokens
        details['ephemeral_1h_input_tokens'] = lifetimes.ephemeral_1h_input_tokens
    if server_tools := pick('server_tool_use'):
        details['web_search_requests'] = server_tools.web_search_requests
        details['web_fetch_requests'] = server_tools.web_fetch_requests
    return Usage(
        input_tokens=uncached + cache_write + cache_read,
        cache_write_tokens=cache_write,
        cache_read_tokens=cache_read,
        output_tokens=pick('output_tokens') or 0,
        output_reasoning_tokens=thinking or 0,
        details={key: value for key, value in details.items() if isinstance(value, int) and value},
    )
