"""The client-input toolkit: one rule for which validation error a client is told, one way to re-root an
error's path, and one strict JSON body decoder."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from uibridge.core.client_input import MAX_JSON_DEPTH, BodyError, input_error, json_object, request_object
from uibridge.core.errors import InputError


class Item(pydantic.BaseModel):
    text: str


class Message(pydantic.BaseModel):
    id: str
    content: str | list[Item]


def validation_error(data: Any) -> pydantic.ValidationError:
    with pytest.raises(pydantic.ValidationError) as info:
        Message.model_validate(data)
    return info.value


def test_the_deepest_error_is_the_one_reported() -> None:
    # Three errors: `id` (depth 1), the `str` member of `content` (depth 2), the list member's item (depth 4).
    error = validation_error({'id': 3, 'content': [{'text': 'fine'}, {'text': 5}]})
    assert error.errors()[0]['loc'] == ('id',)
    reported = input_error(error)
    assert reported.path == 'content.list[Item].1.text'
    assert reported.message == 'Input should be a valid string'


def test_among_equally_deep_errors_the_first_is_reported() -> None:
    error = validation_error({'content': 7})
    assert [e['loc'] for e in error.errors()] == [('id',), ('content', 'str'), ('content', 'list[Item]')]
    assert input_error(error).path == 'content.str'


def test_the_path_and_message_hooks_and_the_prefix() -> None:
    error = validation_error({'id': 'm', 'content': [{'text': 5}]})
    reported = input_error(
        error,
        'messages',
        3,
        json_path=lambda loc: '.'.join(str(item) for item in loc if item != 'list[Item]'),
        message=lambda details: f'bad {details["type"]}',
    )
    assert (reported.path, reported.message) == ('messages.3.content.0.text', 'bad string_type')


def test_a_reported_error_never_echoes_the_input() -> None:
    huge = 'A' * 100_000
    reported = input_error(validation_error({'id': [huge], 'content': huge}))
    assert 'AAAA' not in str(reported) and len(str(reported)) < 300


# ------------------------------------------------------------------------------------------ re-rooting


def test_at_re_roots_and_an_empty_prefix_changes_nothing() -> None:
    error = InputError('bad', 'parts.1')
    assert error.at('messages', 2).path == 'messages.2.parts.1'
    assert InputError('bad').at('messages', 2).path == 'messages.2'
    assert error.at() is error


def test_split_is_the_inverse_of_at() -> None:
    head, below = InputError('bad', '4.content.1').split()
    assert (head, below.path, below.message) == ('4', 'content.1', 'bad')
    assert below.at(head).path == '4.content.1'
    assert InputError('bad').split()[1].path == ''


@pytest.mark.parametrize(
    ('path', 'expected'),
    [('1.content', '5.content'), ('0', '2'), ('2.x', '2.x'), ('content.0', 'content.0'), ('', '')],
)
def test_renumbered_gives_the_client_its_own_index(path: str, expected: str) -> None:
    # The client sent five items and two were skipped: the kept ones were its 2nd and 5th (indexes 2 and 5).
    assert InputError('bad', path).renumbered([2, 5]).path == expected


# ------------------------------------------------------------------------------------------ JSON bodies


@pytest.mark.parametrize(
    ('body', 'fault', 'message'),
    [
        (b'\xff\xfe{}', 'encoding', 'the body is not valid UTF-8'),
        ('{}'.encode('utf-16'), 'encoding', 'the body is not valid UTF-8'),
        (b'\xef\xbb\xbf{}', 'syntax', 'invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)'),
        (b'{"a": ', 'syntax', 'invalid JSON: Expecting value'),
        (b'{"a": NaN}', 'syntax', 'invalid JSON: invalid JSON value'),
        (b'{"a": -Infinity}', 'syntax', 'invalid JSON: invalid JSON value'),
        (b'{"a": 1e999999}', 'syntax', 'invalid JSON: invalid JSON value'),
        (b'{"a": -1E400}', 'syntax', 'invalid JSON: invalid JSON value'),
        (b'{"a": ' + b'9' * 5000 + b'}', 'syntax', 'invalid JSON: invalid JSON value'),
        (b'[' * (MAX_JSON_DEPTH + 1) + b']' * (MAX_JSON_DEPTH + 1), 'depth', 'JSON nested deeper than 100 levels'),
        (b'[' * 100_000, 'depth', 'JSON nested deeper than 100 levels'),
        (b'[1, 2]', 'shape', 'the body must be a JSON object'),
        ('"text"', 'shape', 'the body must be a JSON object'),
    ],
)
def test_json_object_refuses_with_a_fault(body: bytes | str, fault: str, message: str) -> None:
    with pytest.raises(BodyError) as info:
        json_object(body)
    assert info.value.fault == fault
    assert info.value.message == message
    assert info.value.path == ''
    assert isinstance(info.value, InputError)


def test_json_object_leaves_nesting_to_its_caller_when_asked() -> None:
    # For a caller that bounds the nesting of what it reads itself: no pass over the text, and a body too deep
    # for the decoder is the same refusal.
    deep = b'{"a":' + b'[' * MAX_JSON_DEPTH + b']' * MAX_JSON_DEPTH + b'}'
    assert _depth(json_object(deep, nesting_checked=False)) == MAX_JSON_DEPTH + 1
    with pytest.raises(BodyError) as info:
        json_object(b'[' * 100_000, nesting_checked=False)
    assert (info.value.fault, info.value.message) == ('depth', 'JSON nested deeper than 100 levels')


def test_json_object_reads_objects_up_to_the_depth_limit() -> None:
    # The object and 99 lists inside it: 100 levels, the most a body may have.
    value = json_object(('{"a":' + '[' * (MAX_JSON_DEPTH - 1) + ']' * (MAX_JSON_DEPTH - 1) + '}').encode())
    assert _depth(value) == MAX_JSON_DEPTH
    # Brackets inside strings are text, not nesting.
    text = '[' * 1000
    assert json_object(f'{{"t": "{text}", "n": 1.5, "big": {"9" * 4000}}}'.encode()) == {
        't': text,
        'n': 1.5,
        'big': int('9' * 4000),
    }
    assert json_object('{"é": "\\ud83d\\ude00"}') == {'é': '😀'}


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)  # pyright: ignore[reportUnknownArgumentType]
    return 0


def test_request_object_answers_in_the_adapters_words() -> None:
    body = {'id': 'c'}
    decoded = request_object(body, 'the body')
    assert decoded == body and decoded is not body
    for raw, message in [
        (b'\xff', 'the body is not valid JSON'),
        (b'{"a": NaN}', 'the body is not valid JSON'),
        (b'[' * 1000, 'the body is not valid JSON'),
        (b'[]', 'the body must be a JSON object'),
        ([1], 'the body must be a JSON object'),
    ]:
        with pytest.raises(InputError) as info:
            request_object(raw, 'the body')  # pyright: ignore[reportArgumentType]: a caller's list too
        assert (info.value.message, info.value.path) == (message, '')
    assert request_object(b'{"a": [1]}', 'the request body') == {'a': [1]}
