"""pydantic-ai's stored format, for real, both ways: every kind pydantic-ai-slim 2.68 writes loads, keeps every
field and dumps back as pydantic-ai wrote it; and the JSON uibridge writes, of every kind, loads in pydantic-ai's
own `ModelMessagesTypeAdapter` with every field read as uibridge wrote it (`tests/pydantic_ai_json.py` says
what may differ).

The fixtures were written by pydantic-ai itself (`fixtures/core/generate_pydantic_ai.py`):
`pydantic_ai_every_kind.json` is its own `ModelMessagesTypeAdapter` dump of a history holding every kind its
unions declare, and `pydantic_ai_kinds.json` what it declares and where the history holds each.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic_ai import messages as pai

from pydantic_ai_json import PYDANTIC_AI_EVERY_KIND, field_for_field, pydantic_ai_reading, uibridge_written
from uibridge import (
    RETRY_SUFFIX,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    OpaqueContent,
    OpaquePart,
    RetryFeedbackPart,
    RetryPromptPart,
    ToolCallPart,
    UploadedFile,
    UserPromptPart,
)
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.core.provenance import Keyring
from uibridge.core.verification import SignatureClaims, verify_history
from uibridge.integrations import anthropic
from uibridge.integrations._openai_input import to_chat_completions_messages, to_responses_input

FIXTURES = Path(__file__).parents[2] / 'fixtures' / 'core'
RAW = PYDANTIC_AI_EVERY_KIND
KINDS: dict[str, Any] = json.loads((FIXTURES / 'pydantic_ai_kinds.json').read_text('utf-8'))

# What pydantic-ai stores and uibridge has no part for: kept opaquely (and shown to no UI and no model).
OPAQUE_PART_KINDS = {
    'speech',
    'compaction',
    'instruction-baseline',
    'instruction-delta',
    'tool-availability-delta',
    'capability-load-delta',
    'model-settings-delta',
}
OPAQUE_CONTENT_KINDS = {'text-content', 'structured-content', 'cache-point'}
# Text that only opaque parts and content hold: none of it may reach a UI or a model.
OPAQUE_TEXTS = [
    'And tomorrow?',
    'Use metric units.',
    'Use imperial units.',
    'Earlier: asked about Paris.',
    'It is sunny.',
    'Summary of turns 1 to 4.',
    'typed text',
]


def load() -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_json(RAW)


def parts_of(messages: list[ModelMessage]) -> list[Any]:
    return [part for message in messages for part in message.parts]


# ------------------------------------------------------------------------------------- every kind, loaded


def test_the_fixture_holds_every_kind_pydantic_ai_declares() -> None:
    # Read from pydantic-ai's own unions when the fixture was written: a kind a newer pydantic-ai adds fails the
    # generator until the history holds it, and then this test until uibridge loads it.
    declared, held = KINDS['declared'], KINDS['in_the_history']
    wanted = {f'request:{tag}' for tag in declared['request_part_tags'] if tag != 'retry-prompt'}
    wanted |= {f'response:{tag}' for tag in declared['response_part_tags']}
    assert wanted <= set(held['tags'])
    assert set(declared['user_content_kinds']) == set(held['user_content_kinds'])
    stored = json.loads(RAW)
    outcomes = {p.get('outcome') for m in stored for p in m['parts'] if p['part_kind'] == 'tool-return'}
    assert set(declared['tool_return_outcomes']) <= outcomes
    for message in stored:
        fields = declared['request_fields' if message['kind'] == 'request' else 'response_fields']
        assert set(fields) <= set(message)


def test_each_kind_loads_as_the_part_that_means_it() -> None:
    messages = load()
    stored = json.loads(RAW)
    expected_class = {
        'system-prompt': 'SystemPromptPart',
        'user-prompt': 'UserPromptPart',
        'tool-return': 'ToolReturnPart',
        'retry-prompt': 'RetryPromptPart',
        'retry-feedback': 'RetryFeedbackPart',
        'text': 'TextPart',
        'thinking': 'ThinkingPart',
        'tool-call': 'ToolCallPart',
        'file': 'FilePart',
        'builtin-tool-call': 'NativeToolCallPart',
        'builtin-tool-return': 'NativeToolReturnPart',
        **dict.fromkeys(OPAQUE_PART_KINDS, 'OpaquePart'),
    }
    for message, raw in zip(messages, stored, strict=True):
        for part, raw_part in zip(message.parts, raw['parts'], strict=True):
            kind = raw_part['part_kind']
            if kind == 'tool-return' and raw_part['outcome'] == 'retried':
                kind = 'retry-prompt'  # the retry that answers a tool call (see below)
            assert type(part).__name__ == expected_class[kind], raw_part
    user = next(p for p in parts_of(messages) if isinstance(p, UserPromptPart))
    assert isinstance(user.content, list)
    opaque = {item.kind for item in user.content if isinstance(item, OpaqueContent)}
    assert opaque == OPAQUE_CONTENT_KINDS
    # A provider's file handle is content uibridge knows (AG-UI carries it as a `file` source).
    handles = [item for item in user.content if isinstance(item, UploadedFile)]
    assert [(h.file_id, h.provider_name, h.media_type) for h in handles] == [('file-123', 'openai', 'application/pdf')]
    # A typed tool part (tool search, capability load) is the plain call or return it is, its kind kept.
    calls = {p.tool_call_id: p for p in parts_of(messages) if isinstance(p, ToolCallPart | NativeToolCallPart)}
    assert type(calls['call_search']) is ToolCallPart and calls['call_search'].model_extra == {
        'tool_kind': 'tool-search',
        'id': None,
        'provider_name': None,
        'provider_details': None,
    }
    assert type(calls['srv_search']) is NativeToolCallPart
    assert calls['srv_search'].args == {'queries': ['forecast']}


def test_usage_provider_details_run_id_and_every_message_field_are_kept() -> None:
    response = cast('ModelResponse', load()[1])
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_reasoning_tokens) == (120, 12)
    assert response.usage.details == {'server_tool_use': 1}
    assert response.usage.model_extra is not None and response.usage.model_extra['cache_write_1h_tokens'] == 2
    assert response.provider_response_id == 'resp_1'
    assert response.provider_details == {'stop_sequence': None, 'container': {'id': 'c_1'}}
    extra = response.model_extra or {}
    assert extra['run_id'] == 'run_1' and extra['conversation_id'] == 'conv_1'
    assert extra['workspace_ref'] == {'provider': 'local', 'id': 'ws_1'}
    assert extra['failed_attempts'][0]['error'] == '429 Too Many Requests'
    request = cast('ModelRequest', load()[0])
    assert (request.model_extra or {})['run_id'] == 'run_1'


# ------------------------------------------------------------------------------------------ the round trip


def normalised(ours: Any, theirs: Any, path: str = '') -> Any:
    """`ours` (uibridge's dump) with what uibridge adds and pydantic-ai does not write taken out, for
    comparing with `theirs` (pydantic-ai's own dump). Two things only, each checked, not assumed:

    - a key pydantic-ai does not write whose value is `None`: a uibridge field at its default (a citation
      source's `id`, `media_type`, `filename`, the UI's own names for a source);
    - a retry feedback part's flat `cause`, which uibridge writes beside pydantic-ai's `retry.cause` (the
      flat spelling is uibridge's, see `uibridge.core.messages`) and which must equal it.

    Nothing pydantic-ai wrote may be missing or different: that is left for the equality to catch.
    """
    if isinstance(ours, dict) and isinstance(theirs, dict):
        ours_d, theirs_d = cast('dict[str, Any]', ours), cast('dict[str, Any]', theirs)
        kept: dict[str, Any] = {}
        for key, value in ours_d.items():
            if key in theirs_d:
                kept[key] = normalised(value, theirs_d[key], f'{path}/{key}')
            elif value is None:
                continue
            elif key == 'cause' and ours_d.get('part_kind') == 'retry-feedback':
                assert value == theirs_d['retry']['cause'], path
            else:
                kept[key] = value  # left in: the equality fails on it
        return kept
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):  # pyright: ignore[reportUnknownArgumentType]
        pairs = zip(cast('list[Any]', ours), cast('list[Any]', theirs), strict=True)
        return [normalised(a, b, f'{path}/{i}') for i, (a, b) in enumerate(pairs)]
    return ours


def test_uibridges_dump_is_pydantic_ais_own_json_after_normalising_defaults() -> None:
    theirs = json.loads(RAW)
    ours = json.loads(ModelMessagesTypeAdapter.dump_json(load()))
    assert normalised(ours, theirs) == theirs


def test_pydantic_ais_history_through_uibridge_is_the_history_pydantic_ai_loaded() -> None:
    # pydantic-ai -> uibridge -> pydantic-ai: pydantic-ai reads uibridge's JSON as the very messages it read from
    # its own, field for field (what it writes of them is the same JSON).
    through_uibridge = ModelMessagesTypeAdapter.dump_json(load())
    assert pydantic_ai_reading(through_uibridge) == pydantic_ai_reading(RAW)
    assert pai.ModelMessagesTypeAdapter.validate_json(through_uibridge) == pai.ModelMessagesTypeAdapter.validate_json(
        RAW
    )


def test_pydantic_ai_reads_every_field_of_every_kind_uibridge_writes() -> None:
    # uibridge -> pydantic-ai: the spellings only uibridge writes (unknown usage, errors without `input`, file
    # names, UI source ids, a legacy retry prompt) load in pydantic-ai, each field read as written.
    for history in (uibridge_written(), load()):
        ours = ModelMessagesTypeAdapter.dump_json(history)
        assert field_for_field(json.loads(ours), pydantic_ai_reading(ours)) == []


def test_the_comparison_catches_a_field_pydantic_ai_reads_otherwise() -> None:
    # The allowances of `field_for_field` are narrow: a changed value, a lost field or a field pydantic-ai
    # invents are each reported.
    written = ModelMessagesTypeAdapter.dump_json(uibridge_written())
    ours, theirs = json.loads(written), pydantic_ai_reading(written)
    theirs[1]['parts'][1]['content'] = 'something else'
    del theirs[1]['provider_details']
    theirs[3]['usage']['input_tokens'] = 11
    theirs[0]['parts'][1]['timestamp'] = '2026-01-02T03:04:06Z'
    problems = field_for_field(ours, theirs)
    assert [problem.split(':')[0] for problem in problems] == [
        '/0/parts/1/timestamp',
        '/1/parts/1/content',
        '/1/provider_details',
        '/3/usage/input_tokens',
    ]


@pytest.mark.parametrize(
    'fixture',
    sorted(
        str(path.relative_to(FIXTURES.parent))
        for path in [*FIXTURES.parent.glob('vercel_ai/*.ui.json'), *FIXTURES.parent.glob('ag_ui/*.dump.json')]
    ),
)
def test_every_ui_history_uibridge_loads_is_json_pydantic_ai_reads_field_for_field(fixture: str) -> None:
    data = json.loads((FIXTURES.parent / fixture).read_text('utf-8'))
    history = vercel_ai.load_messages(data) if fixture.startswith('vercel_ai') else ag_ui.load_messages(data)
    ours = ModelMessagesTypeAdapter.dump_json(history)
    assert field_for_field(json.loads(ours), pydantic_ai_reading(ours)) == []


def test_a_second_round_trip_changes_nothing() -> None:
    once = ModelMessagesTypeAdapter.dump_json(load())
    assert ModelMessagesTypeAdapter.dump_json(ModelMessagesTypeAdapter.validate_json(once)) == once


def test_a_retried_tool_return_is_a_retry_prompt_that_dumps_back_as_the_tool_return_it_was() -> None:
    # pydantic-ai 2.68 stores a retry answering a tool call as `tool-return` with `outcome: 'retried'`;
    # uibridge's part for that is `RetryPromptPart`. The original spelling rides along as the extra key
    # `outcome`, with every other key pydantic-ai wrote (`retry`, `tool_kind`, `metadata`, ...).
    retried = {p.tool_call_id: p for p in parts_of(load()) if isinstance(p, RetryPromptPart)}
    part = retried['call_retried']
    assert (part.content, part.tool_name) == ('City not found: Atlantis', 'get_weather')
    assert part.model_extra is not None
    assert part.model_extra['outcome'] == 'retried'
    assert part.model_extra['retry'] == {'cause': 'model_retry', 'attempt': 1, 'max_retries': 3}
    assert part.model_response() == '<retry_feedback>City not found: Atlantis</retry_feedback>' + RETRY_SUFFIX
    errors = retried['call_errors']
    assert isinstance(errors.content, list) and errors.content[0]['loc'] == ('city',)
    dumped = json.loads(ModelMessagesTypeAdapter.dump_json([ModelRequest(parts=[part])]))[0]['parts'][0]
    assert (dumped['part_kind'], dumped['outcome']) == ('tool-return', 'retried')
    # The legacy spelling pydantic-ai wrote before 2.68 stays itself, and a retry prompt uibridge builds too.
    assert retried['call_legacy'].model_extra == {}
    fresh = RetryPromptPart(content='x', tool_name='t', tool_call_id='c')
    assert json.loads(fresh.model_dump_json())['part_kind'] == 'retry-prompt'


# ------------------------------------------------------------------------- opaque: kept, shown to nobody


def shown_nowhere(text: str) -> None:
    for secret in OPAQUE_TEXTS:
        assert secret not in text, secret


def without_native(messages: list[ModelMessage]) -> list[ModelMessage]:
    # Carrying native tool parts to a UI is the adapters' native-tool tests' subject, not this test's.
    def keep(part: Any) -> bool:
        return not isinstance(part, NativeToolCallPart | NativeToolReturnPart)

    return [m.model_copy(update={'parts': [p for p in m.parts if keep(p)]}) for m in messages]


def test_an_opaque_part_or_content_never_reaches_a_ui_dump() -> None:
    messages = load()
    vercel = vercel_ai.dump_messages(messages)
    shown_nowhere(json.dumps([m.model_dump(mode='json') for m in vercel]))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # AG-UI has no place for the model's file; it says so
        agui = ag_ui.dump_messages(without_native(messages))
    shown_nowhere(json.dumps([m.model_dump(mode='json') for m in agui]))
    # ... while the history itself keeps every one of them.
    stored = ModelMessagesTypeAdapter.dump_json(messages).decode()
    assert all(secret in stored for secret in OPAQUE_TEXTS)


def test_an_opaque_part_never_reaches_a_model_and_opaque_content_is_refused_by_name() -> None:
    messages = load()
    builders = (anthropic.to_messages_input, to_chat_completions_messages, to_responses_input)
    for build in builders:
        with pytest.raises(ValueError, match='text-content'):
            build(messages)  # a typed content item the API has no form for: the application must convert it

    def plain(part: Any) -> Any:
        if isinstance(part, UserPromptPart) and isinstance(part.content, list):
            kept = [c for c in part.content if isinstance(c, str)]  # what every API takes
            return part.model_copy(update={'content': kept})
        return part

    converted = [m.model_copy(update={'parts': [plain(p) for p in m.parts]}) for m in without_native(messages)]
    for build in builders:
        shown_nowhere(json.dumps(build(converted), default=str))


def test_verify_history_drops_an_opaque_part_a_client_sends() -> None:
    # A client sending pydantic-ai's kinds back: none is anything a client may author.
    opaque = [p for p in parts_of(load()) if isinstance(p, OpaquePart)]
    request_kinds = [p for m in load() if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, OpaquePart)]
    assert {p.part_kind for p in opaque} == OPAQUE_PART_KINDS
    sent: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content='hi'), *request_kinds])]
    verified = verify_history(sent, SignatureClaims(), Keyring(['k']))
    assert [type(p).__name__ for m in verified.messages for p in m.parts] == ['UserPromptPart']
    assert sum(verified.dropped.values()) == len(request_kinds)


def test_retry_feedback_keeps_pydantic_ais_retry_record() -> None:
    feedback = [p for p in parts_of(load()) if isinstance(p, RetryFeedbackPart)]
    assert [p.cause for p in feedback] == ['validation_error', 'no_output']
    assert (feedback[1].model_extra or {})['retry'] == {'cause': 'no_output', 'attempt': 2, 'max_retries': 3}
