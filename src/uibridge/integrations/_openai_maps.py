"""What OpenAI's stream mappings and history conversions share: usage, annotations, and built-in tool items.

A built-in tool (web search, file search, code interpreter, image generation, a remote MCP server) runs at
OpenAI and comes as one output item holding both the call and its outcome. uibridge splits the item in two:
the fields that say what was asked (`_ARGUMENTS`) are the `NativeToolCallPart`'s arguments, every other field
but `id` and `type` is its `NativeToolReturnPart`'s content, and the item's id is the call's id. Merged back,
the two parts are the item again, which is how `to_responses_input` sends it on the next request. A generated
image is the one exception: its base64 `result` is a `FilePart` of its own (a UI shows a file; a tool output
it would print), found again by the item's id when the item goes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ..core.citations import (
    Citation,
    ContentCitationAnchor,
    DocumentCitationSource,
    MarkerCitationAnchor,
    WebCitationSource,
)
from ..core.usage import Usage

if TYPE_CHECKING:
    from openai.types.completion_usage import CompletionUsage
    from openai.types.responses import ResponseUsage
    from openai.types.responses.response_output_text_annotation_added_event import Annotation

PROVIDER_NAME = 'openai'

RefusalMode = Literal['text', 'error']
"""How a refusal reaches the UI: as the answer's text (kept in the history), or as the run's error."""

NATIVE_TOOL_NAMES: dict[str, str] = {
    'web_search_call': 'web_search',
    'file_search_call': 'file_search',
    'code_interpreter_call': 'code_interpreter',
    'image_generation_call': 'image_generation',
    'mcp_call': 'mcp',
}
"""Output item type → the tool's name (as the request's `tools` spell its type)."""

NATIVE_ITEM_TYPES = {name: item_type for item_type, name in NATIVE_TOOL_NAMES.items()}

_ARGUMENTS: dict[str, tuple[str, ...]] = {
    'web_search_call': ('action',),
    'file_search_call': ('queries',),
    'code_interpreter_call': ('container_id', 'code'),
    'image_generation_call': ('action', 'background', 'output_format', 'quality', 'size'),
    'mcp_call': ('server_label', 'name', 'arguments', 'approval_request_id'),
}

IMAGE_RESULT = 'result'
"""The image generation item's field holding the image (base64), carried as a `FilePart` instead."""


def split_native_item(item_type: str, item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A built-in tool item (as the API sent it) as the call's arguments and the return's content."""
    arguments = _ARGUMENTS[item_type]
    args = {key: value for key, value in item.items() if key in arguments}
    outcome = {key: value for key, value in item.items() if key not in arguments and key not in ('id', 'type')}
    if item_type == 'image_generation_call':
        outcome.pop(IMAGE_RESULT, None)
    return args, outcome


def native_item(tool_name: str, item_id: str, args: dict[str, Any], outcome: Any) -> dict[str, Any] | None:
    """The output item `split_native_item` split, whole again; `None` for a tool that is no OpenAI built-in."""
    item_type = NATIVE_ITEM_TYPES.get(tool_name)
    if item_type is None:
        return None
    result: dict[str, Any] = outcome if isinstance(outcome, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    return {'type': item_type, 'id': item_id, **args, **result}


def annotation_citation(annotation: Annotation | None) -> Citation | None:
    """An output text annotation as a citation; `None` for a `file_path` (a link to a file the model wrote,
    which cites nothing) and for none."""
    if annotation is None:
        return None
    if annotation.type == 'url_citation':
        source = WebCitationSource(url=annotation.url, title=annotation.title or None)
        return Citation(
            sources=[source], anchor=ContentCitationAnchor(start=annotation.start_index, end=annotation.end_index)
        )
    if annotation.type == 'file_citation':
        # The API gives where the citation marker goes, not a span.
        document = _document(annotation.file_id, annotation.filename)
        return Citation(sources=[document], anchor=MarkerCitationAnchor(start=annotation.index, end=annotation.index))
    if annotation.type == 'container_file_citation':
        document = _document(annotation.file_id, annotation.filename)
        return Citation(
            sources=[document], anchor=ContentCitationAnchor(start=annotation.start_index, end=annotation.end_index)
        )
    return None


def _document(file_id: str, filename: str) -> DocumentCitationSource:
    return DocumentCitationSource(document_id=file_id, title=filename or None, filename=filename or None)


def chat_usage(usage: CompletionUsage) -> Usage:
    """Chat Completions usage, every count kept (those without a `Usage` field in `details`)."""
    prompt, completion = usage.prompt_tokens_details, usage.completion_tokens_details
    details: dict[str, int | None] = {}
    result = Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
    if prompt is not None:
        result.cache_read_tokens = prompt.cached_tokens or 0
        result.cache_write_tokens = prompt.cache_write_tokens or 0
        result.input_audio_tokens = prompt.audio_tokens or 0
        # Prefixed: prompt and completion details share their names.
        details.update(prompt_text_tokens=prompt.text_tokens, prompt_image_tokens=prompt.image_tokens)
    if completion is not None:
        result.output_reasoning_tokens = completion.reasoning_tokens or 0
        result.output_audio_tokens = completion.audio_tokens or 0
        details.update(
            completion_text_tokens=completion.text_tokens,
            accepted_prediction_tokens=completion.accepted_prediction_tokens,
            rejected_prediction_tokens=completion.rejected_prediction_tokens,
        )
    result.details = {key: value for key, value in details.items() if value}
    return result


def responses_usage(usage: ResponseUsage) -> Usage:
    """Responses API usage, every count kept (the cache writes by retention in `details`)."""
    inputs, outputs = usage.input_tokens_details, usage.output_tokens_details
    result = Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    if inputs is not None:  # pyright: ignore[reportUnnecessaryComparison]  (a compatible server may leave it out)
        result.cache_read_tokens = inputs.cached_tokens or 0
        result.cache_write_tokens = inputs.cache_write_tokens or 0
        if ttl := inputs.cache_write_tokens_details:
            details = {
                'cache_write_ttl_30m_tokens': ttl.ttl_30m_tokens,
                'cache_write_ttl_12h_tokens': ttl.ttl_12h_tokens,
            }
            result.details = {key: value for key, value in details.items() if value}
    if outputs is not None:  # pyright: ignore[reportUnnecessaryComparison]
        result.output_reasoning_tokens = outputs.reasoning_tokens or 0
    return result
