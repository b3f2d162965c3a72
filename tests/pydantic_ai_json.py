"""uibridge's stored JSON read by pydantic-ai itself, and what "field for field" allows to differ.

Both libraries write the same stored-message JSON. `pydantic_ai_reading` is what pydantic-ai-slim's own
`ModelMessagesTypeAdapter` makes of JSON uibridge wrote (validated, then dumped by pydantic-ai), and
`field_for_field` lists every way that reading departs from what uibridge wrote, but for these, each checked:

- a field only uibridge has, which pydantic-ai ignores: a file's `filename`, a citation source's UI `id`,
  `media_type` and `filename`, and retry feedback's flat `cause` (which must equal pydantic-ai's `retry.cause`);
- a field only pydantic-ai has, at its default (`None`, `False`, `0`, `[]`, `'complete'`, `'conversation'`,
  `'success'`), or
  computed from what both have: a file's `identifier` (from its bytes or URL), a URL's `media_type` where
  uibridge had none (from the URL), and a response's `usage` where uibridge had none (pydantic-ai's zero usage);
- a `retry-prompt` part, which pydantic-ai reads with its legacy reader as the part it means today: a tool retry
  as a `tool-return` with `outcome: 'retried'`, a tool-less one as `retry-feedback`, with the same tool, call id,
  timestamp and errors (their `ctx`, which neither library shows a model, left out: pydantic-ai's legacy reader
  drops it from a tool retry).

`uibridge_written` is a history of every part and content kind uibridge has, written with uibridge's own
classes, each field set (the spellings pydantic-ai has no writer for: unknown usage, errors without `input`,
named files, sources with UI ids, a provider file handle).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic_ai import messages as pai

from uibridge import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from uibridge.core.citations import Citation, ContentCitationAnchor, DocumentCitationSource, WebCitationSource
from uibridge.core.usage import Usage

FIXTURES = Path(__file__).parents[1] / 'fixtures'
PYDANTIC_AI_EVERY_KIND = (FIXTURES / 'core' / 'pydantic_ai_every_kind.json').read_bytes()
"""A history of every kind pydantic-ai-slim stores, written by pydantic-ai itself
(`fixtures/core/generate_pydantic_ai.py`)."""

T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
PNG = b'\x89PNG\r\n\x1a\n\x00\xff'


def pydantic_ai_reading(stored: bytes) -> list[dict[str, Any]]:
    """What pydantic-ai makes of stored JSON: its own messages, dumped by it (a `ValidationError` if it
    cannot load them)."""
    messages = pai.ModelMessagesTypeAdapter.validate_json(stored)
    return cast('list[dict[str, Any]]', pai.ModelMessagesTypeAdapter.dump_python(messages, mode='json'))


_ZERO_USAGE: Any = pai.ModelMessagesTypeAdapter.dump_python([pai.ModelResponse(parts=[])], mode='json')[0]['usage']
_DEFAULTS: tuple[Any, ...] = (None, False, 0, [], 'complete', 'conversation', 'success')
_MEDIA_KINDS = frozenset({'image-url', 'audio-url', 'video-url', 'document-url', 'binary', 'uploaded-file'})
_URL_KINDS = frozenset({'image-url', 'audio-url', 'video-url', 'document-url'})


def field_for_field(ours: Any, theirs: Any) -> list[str]:
    """Every difference between `ours` (uibridge's JSON, parsed) and `theirs` (`pydantic_ai_reading` of it) that
    is not one of the module's allowed ones: `[]` when pydantic-ai read every field as uibridge wrote it."""
    problems: list[str] = []
    _compare(ours, theirs, '', problems)
    return problems


def _compare(ours: Any, theirs: Any, path: str, problems: list[str]) -> None:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        ours_d, theirs_d = cast('dict[str, Any]', ours), cast('dict[str, Any]', theirs)
        if ours_d.get('part_kind') == 'retry-prompt':
            _compare_legacy_retry(ours_d, theirs_d, path, problems)
            return
        for key, value in ours_d.items():
            where = f'{path}/{key}'
            if key in theirs_d:
                if not (key == 'media_type' and value is None and ours_d.get('kind') in _URL_KINDS):
                    _compare(value, theirs_d[key], where, problems)
            elif not _uibridge_only(ours_d, theirs_d, key, path):
                problems.append(f'{where}: {value!r} is not in what pydantic-ai read')
        for key, value in theirs_d.items():
            if key not in ours_d and not _pydantic_ai_default(ours_d, key, value):
                problems.append(f'{path}/{key}: pydantic-ai read {value!r}, which uibridge did not write')
    elif isinstance(ours, list) and isinstance(theirs, list):
        ours_l, theirs_l = cast('list[Any]', ours), cast('list[Any]', theirs)
        if len(ours_l) != len(theirs_l):
            problems.append(f'{path}: {len(ours_l)} items became {len(theirs_l)}')
            return
        for index, (mine, read) in enumerate(zip(ours_l, theirs_l, strict=True)):
            _compare(mine, read, f'{path}/{index}', problems)
    elif ours != theirs:
        problems.append(f'{path}: {ours!r} became {theirs!r}')


def _uibridge_only(ours: dict[str, Any], theirs: dict[str, Any], key: str, path: str) -> bool:
    if key == 'filename' and ours.get('kind') in _MEDIA_KINDS:
        return True
    if key in ('url', 'provider_reference') and ours.get('kind') == 'uploaded-file':
        return True  # the UI file part a provider file came from (Vercel `url`, a `providerReference` of several)
    if key in ('id', 'media_type', 'filename') and ours.get('kind') in ('web', 'document') and '/citations/' in path:
        return True
    if key == 'cause' and ours.get('part_kind') == 'retry-feedback':
        return ours['cause'] == theirs.get('retry', {}).get('cause')
    return False


def _pydantic_ai_default(ours: dict[str, Any], key: str, value: Any) -> bool:
    if key == 'identifier' and ours.get('kind') in _MEDIA_KINDS:
        return isinstance(value, str)
    if key == 'usage' and ours.get('kind') == 'response':
        return value == _ZERO_USAGE
    return any(value == default and type(value) is type(default) for default in _DEFAULTS) or value == 0.0


def _compare_legacy_retry(ours: dict[str, Any], theirs: dict[str, Any], path: str, problems: list[str]) -> None:
    if ours.get('tool_name') is None:
        expected = {'part_kind': 'retry-feedback', 'timestamp': ours['timestamp']}
    else:
        expected = {
            'part_kind': 'tool-return',
            'outcome': 'retried',
            'tool_name': ours['tool_name'],
            'tool_call_id': ours['tool_call_id'],
            'timestamp': ours['timestamp'],
        }
    for key, value in expected.items():
        if theirs.get(key) != value:
            problems.append(f'{path}/{key}: a retry prompt read as {theirs.get(key)!r}, not {value!r}')
    _compare(_without_ctx(ours['content']), _without_ctx(theirs.get('content')), f'{path}/content', problems)


def _without_ctx(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    errors = cast('list[dict[str, Any]]', content)
    return [{key: value for key, value in error.items() if key != 'ctx'} for error in errors]


def uibridge_written() -> list[ModelMessage]:
    """A history of every part and content kind uibridge has, written with its own classes (see the module)."""
    named_png = BinaryContent(data=PNG, media_type='image/png', filename='chart.png')
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content='Be brief.', timestamp=T0, dynamic_ref='brief'),
                UserPromptPart(content='Hello', timestamp=T0),
                UserPromptPart(
                    content=[
                        'What are these?',
                        named_png,
                        BinaryContent(data=b'a,b\n1,2\n', media_type='text/csv;charset=utf-8'),
                        ImageUrl(url='https://example.com/a.png', filename='a.png'),
                        AudioUrl(url='https://example.com/a.mp3', media_type='audio/mpeg'),
                        VideoUrl(url='https://example.com/a.mp4'),
                        DocumentUrl(url='https://example.com/files/7', media_type='application/pdf'),
                        UploadedFile(
                            file_id='file-abc', provider_name='openai', media_type='application/pdf', filename='q3.pdf'
                        ),
                    ],
                    timestamp=T0,
                ),
            ],
            instructions='Answer in French.',
            metadata={'tenant': 't1'},
        ),
        ModelResponse(
            parts=[
                ThinkingPart(content='Two files.', id='th_1', signature='sig_1', provider_name='anthropic'),
                TextPart(
                    content='A chart [1] and a table.',
                    id='txt_1',
                    citations=[
                        Citation(
                            sources=[
                                WebCitationSource(url='https://example.com/s', title='S', excerpts=['e'], id='src_1'),
                                DocumentCitationSource(
                                    document_id='doc_1',
                                    title='Q3',
                                    media_type='application/pdf',
                                    filename='q3.pdf',
                                    id='src_2',
                                ),
                            ],
                            anchor=ContentCitationAnchor(start=0, end=7),
                        )
                    ],
                ),
                ToolCallPart(tool_name='get_weather', args={'city': 'Paris'}, tool_call_id='call_1'),
                ToolCallPart(tool_name='get_weather', args='{"city": "Lyon"}', tool_call_id='call_2'),
                ToolCallPart(tool_name='get_time', args=None, tool_call_id='call_3'),
                ToolCallPart(tool_name='delete_file', args={'path': 'notes/x.txt'}, tool_call_id='call_4'),
                ToolCallPart(tool_name='get_weather', args={'city': 'Nice'}, tool_call_id='call_5'),
                ToolCallPart(tool_name='get_weather', args={'city': 'Atlantis'}, tool_call_id='call_6'),
                ToolCallPart(tool_name='get_weather', args={'days': 'x'}, tool_call_id='call_7'),
                NativeToolCallPart(
                    tool_name='web_search', args={'query': 'forecast'}, tool_call_id='srv_1', provider_name='openai'
                ),
                NativeToolReturnPart(
                    tool_name='web_search',
                    content=[{'url': 'https://example.com/s'}],
                    tool_call_id='srv_1',
                    provider_name='openai',
                    timestamp=T0,
                ),
                FilePart(content=BinaryContent(data=PNG, media_type='image/png'), id='file_1'),
            ],
            model_name='gpt-5-mini',
            provider_name='openai',
            timestamp=T0,
            finish_reason='tool_call',
            usage=None,  # not reported: pydantic-ai reads its zero usage
            provider_response_id='resp_1',
            provider_details={'service_tier': 'default'},
            metadata={'uibridge_state': {'step': 1}},
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name='get_weather',
                    content={'temp': 21},
                    tool_call_id='call_1',
                    metadata={'cached': True},
                    timestamp=T0,
                ),
                ToolReturnPart(tool_name='get_weather', content='Rain.', tool_call_id='call_2', timestamp=T0),
                ToolReturnPart(
                    tool_name='get_time', content='12:00', tool_call_id='call_3', outcome='interrupted', timestamp=T0
                ),
                ToolReturnPart(
                    tool_name='delete_file', content='Denied.', tool_call_id='call_4', outcome='denied', timestamp=T0
                ),
                ToolReturnPart(
                    tool_name='get_weather', content='Timeout.', tool_call_id='call_5', outcome='failed', timestamp=T0
                ),
                RetryPromptPart(content='No such city.', tool_name='get_weather', tool_call_id='call_6', timestamp=T0),
                RetryPromptPart(
                    content=[
                        # As a UI marker carries an error back: no `input`.
                        {'type': 'int_parsing', 'loc': ('days',), 'msg': 'Input should be an integer', 'ctx': {}},
                        {'type': 'missing', 'loc': ('city',), 'msg': 'Field required', 'input': {'days': 'x'}},
                    ],
                    tool_name='get_weather',
                    tool_call_id='call_7',
                    timestamp=T0,
                ),
            ]
            + [
                part.model_copy(update={'timestamp': T0})
                for part in (
                    RetryFeedbackPart(
                        content=[{'type': 'missing', 'loc': ('answer',), 'msg': 'Field required'}],
                        cause='validation_error',
                    ),
                    RetryFeedbackPart(content='', cause='no_output'),
                    RetryFeedbackPart(content='Too long.', cause='model_retry'),
                    RetryPromptPart(content='Answer in one word.', tool_call_id='retry_1'),
                )
            ],
        ),
        ModelResponse(
            parts=[TextPart(content='Pluie.')],
            model_name='gpt-5-mini',
            timestamp=T0,
            finish_reason='stop',
            usage=Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4, details={'reasoning': 1}),
        ),
    ]
