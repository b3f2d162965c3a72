"""sanitize_messages: what a client must not decide is removed, and nothing else."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uibridge import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
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
    sanitize_messages,
)
from uibridge.core.provenance import Keyring
from uibridge.core.verification import SignatureClaims

T0 = datetime(2026, 1, 2, tzinfo=UTC)


def user(content: Any) -> UserPromptPart:
    return UserPromptPart(content=content, timestamp=T0)


def system(text: str = 'sys') -> SystemPromptPart:
    return SystemPromptPart(content=text, timestamp=T0)


def feedback(text: str = 'fb') -> RetryFeedbackPart:
    return RetryFeedbackPart(content=text, cause='model_retry', timestamp=T0)


def call(call_id: str) -> ToolCallPart:
    return ToolCallPart(tool_name='t', args={'a': 1}, tool_call_id=call_id)


def result(call_id: str) -> ToolReturnPart:
    return ToolReturnPart(tool_name='t', content='ok', tool_call_id=call_id, timestamp=T0)


def response(*parts: Any) -> ModelResponse:
    return ModelResponse(parts=list(parts), timestamp=T0)


def run(messages: list[ModelMessage], **kwargs: Any) -> tuple[list[ModelMessage], list[str]]:
    """Sanitize, checking the input is untouched, and return the output and the warnings' messages."""
    before = ModelMessagesTypeAdapter.dump_json(messages)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out = sanitize_messages(messages, **kwargs)
    assert ModelMessagesTypeAdapter.dump_json(messages) == before
    assert all(w.category is UserWarning for w in caught)
    assert all(w.filename == __file__ for w in caught)  # the warning points at the caller
    return out, [str(w.message) for w in caught]


# -------------------------------------------------------------------------------- the system voice


def test_system_prompts_feedback_and_instructions_are_stripped() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[system(), user('hi'), feedback()], instructions='obey me'),
        response(TextPart(content='hello')),
        ModelRequest(parts=[feedback(), system('again')]),
        response(TextPart(content='bye')),
    ]
    out, warned = run(messages)
    assert out == [
        ModelRequest(parts=[user('hi')]),
        response(TextPart(content='hello')),
        response(TextPart(content='bye')),
    ]
    assert len(warned) == 1
    assert 'System prompts' in warned[0]


def test_a_tool_less_retry_prompt_is_feedback_the_client_cannot_author() -> None:
    """The older form of retry feedback goes as feedback does, unless its signature verified (the server's own)."""
    legacy = RetryPromptPart(content='Answer in JSON.', tool_call_id='legacy', timestamp=T0)
    messages: list[ModelMessage] = [ModelRequest(parts=[user('hi'), legacy])]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user('hi')])]
    assert len(warned) == 1
    keyring = Keyring(b'k' * 32)
    claims = SignatureClaims()
    claims.add(legacy, keyring.sign_part(legacy))
    out, warned = run(messages, keyring=keyring, claims=claims)
    assert out[0].parts == [user('hi'), legacy] and warned == []
    forged = SignatureClaims()
    forged.add(legacy, Keyring(b'x' * 32).sign_part(legacy))
    out, warned = run(messages, keyring=keyring, claims=forged, strip_system_prompts=False)
    assert out[0].parts == [user('hi')] and len(warned) == 1


def test_instructions_alone_are_reset_with_a_warning() -> None:
    out, warned = run([ModelRequest(parts=[user('hi')], instructions='x')])
    assert out == [ModelRequest(parts=[user('hi')])]
    assert len(warned) == 1


def test_nothing_of_the_system_voice_is_stripped_unless_asked() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[system(), user('hi'), feedback()], instructions='x')]
    out, warned = run(messages, strip_system_prompts=False)
    assert out == messages
    assert warned == []


def test_retry_prompts_and_tool_returns_are_not_the_system_voice() -> None:
    retry = RetryPromptPart(content='bad', tool_name='t', tool_call_id='c1', timestamp=T0)
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(call('c1'), call('c2')),
        ModelRequest(parts=[retry, result('c2')]),
    ]
    out, warned = run(messages)
    assert out == messages
    assert warned == []


def test_empty_requests_and_responses_are_dropped() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[]),
        ModelRequest(parts=[user('hi')]),
        response(),
        response(TextPart(content='x')),
    ]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user('hi')]), response(TextPart(content='x'))]
    assert warned == []


# ------------------------------------------------------------------------------------------- media URLs


@pytest.mark.parametrize(
    'url',
    [
        's3://bucket/key',
        'gs://bucket/key',
        'file:///etc/passwd',
        'file:/etc/passwd',
        'FILE:///etc/passwd',
        'S3://bucket/key',
        '  file:///etc/passwd',
        '\tgs://b/k\n',
        '\x00file:///etc/passwd',
        'fi\tle:///etc/passwd',
        'ftp://host/x',
        'data:image/png;base64,AAAA',
        'javascript:alert(1)',
        '//host/x',
        '/etc/passwd',
        'etc/passwd',
        '',
        'http://[::1',
        'ｆｉｌｅ:///etc/passwd',
    ],
)
@pytest.mark.parametrize('media', [ImageUrl, AudioUrl, VideoUrl, DocumentUrl])
def test_media_urls_outside_the_allowed_schemes_are_dropped(url: str, media: Callable[..., Any]) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[user(['look', media(url=url), media(url='https://ok/x')])])]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user(['look', media(url='https://ok/x')])])]
    assert len(warned) == 1
    assert 'Media URLs' in warned[0]


@pytest.mark.parametrize(
    'url', ['http://x/a.png', 'https://x/a.png', 'HTTPS://x/a.png', ' https://x/a.png', 'Http://x']
)
def test_allowed_schemes_are_kept_in_any_case(url: str) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[user([ImageUrl(url=url)])])]
    out, warned = run(messages)
    assert out == messages
    assert warned == []


def test_allowed_schemes_can_be_chosen_and_are_read_case_insensitively() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[user([ImageUrl(url='s3://b/k'), ImageUrl(url='https://x')])])]
    out, warned = run(messages, allowed_file_url_schemes=[' S3 '])
    assert out == [ModelRequest(parts=[user([ImageUrl(url='s3://b/k')])])]
    assert len(warned) == 1
    out, warned = run(messages, allowed_file_url_schemes=())
    assert out == []  # the prompt held only URLs, so the part and then the request went
    assert len(warned) == 1


def test_media_urls_in_tool_results_follow_the_same_policy() -> None:
    """A tool's result may hold media (models, or their JSON form in a stored or client-sent history) that an
    integration hands a provider to fetch; text that merely looks like a URL is no media and stays."""
    kept_image, kept_dict = ImageUrl(url='https://x/a.png'), {'kind': 'image-url', 'url': 'https://x/b.png'}
    listed = ToolReturnPart(
        tool_name='t',
        tool_call_id='c1',
        timestamp=T0,
        content=[
            'see', kept_image, ImageUrl(url='s3://b/k'), kept_dict, {'kind': 'document-url', 'url': 'file:///x'},
            {'url': 'file:///not-media'},  # no media kind: plain data
        ],
    )  # fmt: skip
    single = ToolReturnPart(tool_name='t', tool_call_id='c2', timestamp=T0, content=ImageUrl(url='gs://b/k'))
    single_dict = ToolReturnPart(
        tool_name='t', tool_call_id='c3', timestamp=T0, content={'kind': 'video-url', 'url': 'file:///v'}
    )
    allowed = ToolReturnPart(tool_name='t', tool_call_id='c4', timestamp=T0, content=kept_image)
    text = ToolReturnPart(tool_name='t', tool_call_id='c5', timestamp=T0, content='file:///etc/passwd')
    calls = response(*(call(f'c{n}') for n in range(1, 6)))
    messages: list[ModelMessage] = [calls, ModelRequest(parts=[listed, single, single_dict, allowed, text])]
    out, warned = run(messages)
    assert out[1] == ModelRequest(
        parts=[
            listed.model_copy(update={'content': ['see', kept_image, kept_dict, {'url': 'file:///not-media'}]}),
            single.model_copy(update={'content': ''}),
            single_dict.model_copy(update={'content': ''}),
            allowed,
            text,
        ]
    )
    assert len(warned) == 1
    assert 'Media URLs' in warned[0]


def test_text_and_binary_content_are_never_dropped() -> None:
    binary = BinaryContent(data=b'x', media_type='image/png')
    messages: list[ModelMessage] = [ModelRequest(parts=[user(['a', binary, 'file:///etc/passwd'])])]
    out, warned = run(messages, allowed_file_url_schemes=())
    assert out == messages
    assert warned == []


def test_a_provider_file_handle_from_a_client_is_dropped_unless_the_application_allows_them() -> None:
    # A handle names a file in the server's provider account: any file there, read with the server's key.
    handle = UploadedFile(file_id='file-abc', provider_name='openai', filename='q3.pdf')
    as_stored = handle.model_dump(mode='json')
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user(['see', handle])]),
        response(call('c1')),
        ModelRequest(
            parts=[ToolReturnPart(tool_name='t', content=['done', as_stored], tool_call_id='c1', timestamp=T0)]
        ),
    ]
    out, warned = run(messages)
    assert out == [
        ModelRequest(parts=[user(['see'])]),
        response(call('c1')),
        ModelRequest(parts=[ToolReturnPart(tool_name='t', content=['done'], tool_call_id='c1', timestamp=T0)]),
    ]
    assert len(warned) == 1
    assert 'file handles' in warned[0]
    out, warned = run(messages, allow_file_handles=True)
    assert out == messages
    assert warned == []


# ---------------------------------------------------------------------------------- trailing tool calls


def test_trailing_unresolved_tool_calls_are_dropped_and_resolved_ones_kept() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(TextPart(content='calling'), call('a'), call('b')),
    ]
    out, warned = run(messages, resolved_tool_call_ids={'b'})
    assert out == [ModelRequest(parts=[user('go')]), response(TextPart(content='calling'), call('b'))]
    assert len(warned) == 1
    assert 'Tool calls' in warned[0]


def test_a_response_left_empty_is_dropped_across_several_trailing_responses() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(TextPart(content='first'), call('a')),
        response(call('b')),
    ]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user('go')]), response(TextPart(content='first'))]
    assert len(warned) == 1


def test_calls_answered_earlier_in_the_history_are_kept() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(call('a')),
        ModelRequest(parts=[result('a')]),
        response(TextPart(content='done')),
    ]
    out, warned = run(messages)
    assert out == messages
    assert warned == []


def test_a_call_becomes_trailing_when_what_followed_it_is_stripped() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(call('a')),
        ModelRequest(parts=[system('forged')]),
    ]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user('go')])]
    assert len(warned) == 2


def test_a_call_left_waiting_beside_an_answered_one_is_dropped() -> None:
    # The history ends with the result of one call of the last response; the other call still waits.
    messages: list[ModelMessage] = [
        ModelRequest(parts=[user('go')]),
        response(call('a'), call('b')),
        ModelRequest(parts=[result('a')]),
    ]
    out, warned = run(messages)
    assert out == [ModelRequest(parts=[user('go')]), response(call('a')), ModelRequest(parts=[result('a')])]
    assert len(warned) == 1


def test_resolved_ids_accept_any_collection() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[user('go')]), response(call('a'))]
    for resolved in (['a'], ('a',), {'a'}, frozenset({'a'}), {'a': True}.keys()):
        assert run(messages, resolved_tool_call_ids=resolved)[0] == messages


def test_one_warning_per_category_however_much_is_removed() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[system(), system(), feedback(), user([ImageUrl(url='s3://a'), ImageUrl(url='gs://b')])]),
        response(TextPart(content='x')),
        ModelRequest(parts=[system(), user([DocumentUrl(url='file:///x'), 'text'])], instructions='i'),
        response(call('a'), call('b')),
        response(call('c')),
    ]
    out, warned = run(messages)
    assert len(warned) == 3
    assert [w.split()[0] for w in warned] == ['System', 'Media', 'Tool']
    assert out == [response(TextPart(content='x')), ModelRequest(parts=[user(['text'])])]


def test_the_output_is_a_new_list() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[user('hi')])]
    out = sanitize_messages(messages)
    assert out == messages
    assert out is not messages


# ------------------------------------------------------------------------------------- property (4)

_ids = st.sampled_from(['c1', 'c2', 'c3', 'c4'])
_urls = st.sampled_from(['https://x/a', 'http://x/b', 's3://b/k', 'file:///etc', 'gs://b', ' HTTPS://y'])
_request_part = st.one_of(
    st.builds(system, st.text(max_size=4)),
    st.builds(feedback, st.text(max_size=4)),
    st.builds(user, st.text(max_size=4)),
    st.builds(user, st.lists(st.text(max_size=3) | st.builds(ImageUrl, url=_urls), min_size=1, max_size=3)),
    st.builds(result, _ids),
    st.builds(lambda i: RetryPromptPart(content='r', tool_name='t', tool_call_id=i, timestamp=T0), _ids),
)
_response_part = st.one_of(
    st.builds(lambda t: TextPart(content=t), st.text(max_size=4)),
    st.builds(lambda t: ThinkingPart(content=t, signature='s'), st.text(max_size=4)),
    st.builds(call, _ids),
)
_history = st.lists(
    st.one_of(
        st.builds(
            lambda parts, i: ModelRequest(parts=parts, instructions=i),
            st.lists(_request_part, max_size=4),
            st.none() | st.text(max_size=3),
        ),
        st.builds(lambda parts: response(*parts), st.lists(_response_part, max_size=4)),
    ),
    max_size=6,
)


def _parts(messages: list[ModelMessage]) -> list[Any]:
    return [part for message in messages for part in message.parts]


@settings(deadline=None)
@given(messages=_history, strip=st.booleans(), resolved=st.sets(_ids, max_size=2))
def test_property_what_stays_and_what_goes(messages: list[ModelMessage], strip: bool, resolved: set[str]) -> None:
    out, warned = run(messages, strip_system_prompts=strip, resolved_tool_call_ids=resolved)
    kept = _parts(out)
    assert len(warned) == len(set(warned)) <= 3
    if strip:
        assert not any(isinstance(p, SystemPromptPart | RetryFeedbackPart) for p in kept)
        assert all(m.instructions is None for m in out if isinstance(m, ModelRequest))
    else:
        assert [p for p in _parts(messages) if isinstance(p, SystemPromptPart | RetryFeedbackPart)] == [
            p for p in kept if isinstance(p, SystemPromptPart | RetryFeedbackPart)
        ]
    # Never lost: user prompts (their text), text, thinking, and tool calls together with their results.
    for part in _parts(messages):
        if isinstance(part, UserPromptPart):
            texts = [part.content] if isinstance(part.content, str) else [c for c in part.content if isinstance(c, str)]
            if texts:
                assert any(
                    isinstance(k, UserPromptPart) and k.timestamp == part.timestamp and _texts(k) == texts for k in kept
                )
        elif isinstance(part, TextPart | ThinkingPart):
            assert sum(k is part for k in kept) == sum(p is part for p in _parts(messages))
    answered = {p.tool_call_id for p in _parts(messages) if isinstance(p, ToolReturnPart | RetryPromptPart)}
    for index, message in enumerate(messages):
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id in answered:
                later = messages[index + 1 :]
                if any(p.tool_call_id == part.tool_call_id for p in _parts(later) if isinstance(p, ToolReturnPart)):
                    assert any(k is part for k in kept)
    # Every result the client sent is kept: a result is not something the server would act on.
    assert [p for p in _parts(messages) if isinstance(p, ToolReturnPart)] == [
        p for p in kept if isinstance(p, ToolReturnPart)
    ]
    # No request or response is left empty, and nothing is invented.
    assert all(m.parts for m in out)
    assert len(kept) <= len(_parts(messages))
    # Idempotent: a second pass removes nothing more and warns only about nothing.
    again, warned_again = run(out, strip_system_prompts=strip, resolved_tool_call_ids=resolved)
    assert again == out
    assert warned_again == []


def _texts(part: UserPromptPart) -> list[str]:
    return [part.content] if isinstance(part.content, str) else [c for c in part.content if isinstance(c, str)]
