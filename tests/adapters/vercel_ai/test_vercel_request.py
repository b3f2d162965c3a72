"""parse_request: the body useChat posts, truncation, approvals, continuation, and every bad input a 4xx."""

from __future__ import annotations

import json
from typing import Any

import pytest

from uibridge import ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from uibridge.adapters.vercel_ai import VercelAIEventStream, dump_messages, parse_request
from uibridge.core.errors import InputError
from uibridge.core.events import PartEnd, PartStart, RunFinished, ToolCallReady
from uibridge.core.provenance import Keyring
from uibridge.core.run import ToolApproval


def user(message_id: str, text: str) -> dict[str, Any]:
    return {'id': message_id, 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}


def assistant(message_id: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {'id': message_id, 'role': 'assistant', 'parts': [{'type': 'step-start'}, *parts]}


def text(value: str) -> dict[str, Any]:
    return {'type': 'text', 'text': value, 'state': 'done'}


HISTORY = [user('u1', 'one'), assistant('a1', text('first')), user('u2', 'two'), assistant('a2', text('second'))]


def test_the_observed_body_parses() -> None:
    # Verbatim from the reference (a real DefaultChatTransport request).
    body = (
        '{"sessionExtra":"from-transport","perRequest":42,"id":"chat-123","messages":[{"parts":[{"type":"text",'
        '"text":"Weather in Paris?"}],"id":"S6Lut3gPIVmP1His","role":"user"}],"trigger":"submit-message"}'
    )
    request = parse_request(body.encode())
    assert request.id == 'chat-123'
    assert request.trigger == 'submit-message'
    assert request.message_id is None
    assert request.extra == {'sessionExtra': 'from-transport', 'perRequest': 42}
    assert request.continuation_message_id is None
    run = request.run_input()
    assert run.thread_id == 'chat-123'
    assert run.run_id.startswith('run_') and run.run_id != request.run_input().run_id
    assert run.trigger == 'submit'
    assert run.extra == request.extra
    (message,) = run.history
    assert isinstance(message, ModelRequest)
    assert message.parts[0] == UserPromptPart(content='Weather in Paris?', timestamp=message.parts[0].timestamp)


@pytest.mark.parametrize('form', ['mapping', 'str', 'bytes'])
def test_str_bytes_and_mappings_are_accepted(form: str) -> None:
    data = {'id': 'c', 'messages': HISTORY}
    body: Any = {'mapping': data, 'str': json.dumps(data), 'bytes': json.dumps(data).encode()}[form]
    assert [m.id for m in parse_request(body).messages] == ['u1', 'a1', 'u2', 'a2']


def test_regenerate_drops_the_trailing_assistant_message() -> None:
    request = parse_request({'id': 'c', 'messages': HISTORY, 'trigger': 'regenerate-message'})
    assert [m.id for m in request.messages] == ['u1', 'a1', 'u2']
    assert request.run_input().trigger == 'regenerate'
    assert request.continuation_message_id is None


def test_regenerate_an_earlier_message_cuts_before_it() -> None:
    request = parse_request({'id': 'c', 'messages': HISTORY, 'trigger': 'regenerate-message', 'messageId': 'a1'})
    assert [m.id for m in request.messages] == ['u1']


def test_regenerate_as_the_client_sends_it_is_kept() -> None:
    request = parse_request({'id': 'c', 'messages': HISTORY[:3], 'trigger': 'regenerate-message'})
    assert [m.id for m in request.messages] == ['u1', 'a1', 'u2']


def test_an_edit_cuts_after_the_edited_user_message() -> None:
    request = parse_request({'id': 'c', 'messages': HISTORY, 'trigger': 'submit-message', 'messageId': 'u2'})
    assert [m.id for m in request.messages] == ['u1', 'a1', 'u2']
    request = parse_request({'id': 'c', 'messages': HISTORY[:1], 'messageId': 'u1'})
    assert [m.id for m in request.messages] == ['u1']


def test_an_answered_approval_continues_the_assistant_message() -> None:
    answered = assistant(
        'a1',
        {
            'type': 'tool-delete',
            'toolCallId': 'c1',
            'state': 'approval-responded',
            'input': {'all': True},
            'approval': {'id': 'apr_1', 'approved': False, 'reason': 'too risky'},
        },
        {
            'type': 'dynamic-tool',
            'toolName': 'wipe',
            'toolCallId': 'c2',
            'state': 'approval-responded',
            'input': {},
            'approval': {'id': 'apr_2', 'approved': True},
        },
    )
    request = parse_request({'id': 'c', 'messages': [user('u1', 'go'), answered], 'messageId': 'a1'})
    assert request.continuation_message_id == 'a1'
    run = request.run_input()
    assert run.approvals == [
        ToolApproval(approval_id='apr_1', approved=False, tool_call_id='c1', reason='too risky'),
        ToolApproval(approval_id='apr_2', approved=True, tool_call_id='c2'),
    ]
    response = run.history[-1]
    assert isinstance(response, ModelResponse)
    assert [p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart)] == ['c1', 'c2']


def test_a_client_tool_output_continues_the_assistant_message() -> None:
    answered = assistant(
        'a1',
        {'type': 'tool-ask', 'toolCallId': 'c1', 'state': 'output-available', 'input': {}, 'output': 'Paris'},
    )
    request = parse_request({'id': 'c', 'messages': [user('u1', 'go'), answered], 'trigger': 'submit-message'})
    assert request.continuation_message_id == 'a1'
    assert request.run_input().approvals == []
    assert [m.kind for m in request.run_input().history] == ['request', 'response', 'request']


@pytest.mark.parametrize(
    ('body', 'path', 'message'),
    [
        (b'{"id": "c", "messages": [', '', 'the body is not valid JSON'),
        (b'\xff\xfe', '', 'the body is not valid JSON'),
        (b'[1]', '', 'the body must be a JSON object'),
        ('"text"', '', 'the body must be a JSON object'),
        ({'messages': []}, 'id', 'required, a string'),
        ({'id': 3, 'messages': []}, 'id', 'must be a string'),
        ({'id': 'c'}, 'messages', 'required, a list of messages'),
        ({'id': 'c', 'messages': {}}, 'messages', 'must be a list'),
        ({'id': 'c', 'messages': []}, 'messages', 'needs at least one message'),
        ({'id': 'c', 'messages': [user('u', 'x')], 'trigger': 'resume'}, 'trigger', "must be 'submit-message' or"),
        ({'id': 'c', 'messages': [user('u', 'x')], 'messageId': 5}, 'messageId', 'must be a string'),
        ({'id': 'c', 'messages': [user('u', 'x'), 7]}, 'messages.1', 'a message must be an object'),
        ({'id': 'c', 'messages': [{'id': 'u', 'role': 'user'}]}, 'messages.0.parts', 'required field missing'),
        (
            {'id': 'c', 'messages': [user('u', 'x'), {'id': 'u', 'role': 'user', 'parts': [{'text': 'x'}]}]},
            'messages.1.parts.0',
            'a part needs a string type',
        ),
        (
            {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [text('a'), {'type': 'text', 'text': 5}]}]},
            'messages.0.parts.1.text',
            'Input should be a valid string',
        ),
        (
            {
                'id': 'c',
                'messages': [
                    {
                        'id': 'a',
                        'role': 'assistant',
                        'parts': [{'type': 'tool-x', 'toolCallId': 'c', 'state': 'sleeping'}],
                    }
                ],
            },
            'messages.0.parts.0.state',
            'Input should be',
        ),
    ],
)
def test_bad_input_is_an_input_error_with_a_path(body: Any, path: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_request(body)
    assert info.value.path == path
    assert info.value.message.startswith(message)


def test_content_the_model_cannot_take_is_an_input_error_at_its_path() -> None:
    body = {
        'id': 'c',
        'messages': [user('u', 'x'), {'id': 's', 'role': 'system', 'parts': [{'type': 'reasoning', 'text': 'hmm'}]}],
    }
    with pytest.raises(InputError) as info:
        parse_request(body).run_input()
    assert info.value.path == 'messages.1.parts.0'


def test_an_error_never_echoes_a_large_input() -> None:
    huge = 'A' * 100_000
    bodies: list[Any] = [
        {'id': 'c', 'messages': [{'id': 'u', 'role': huge, 'parts': [text('x')]}]},
        {'id': 'c', 'messages': [{'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': [huge]}]}]},
        '{"id": "' + huge,
        {'id': 'c', 'messages': [user('u', 'x')], 'trigger': huge},
    ]
    for body in bodies:
        with pytest.raises(InputError) as info:
            parse_request(body)
        assert 'AAAAAAAAAA' not in str(info.value)
        assert len(str(info.value)) < 300


def test_deeply_nested_json_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_request('[' * 100_000 + ']' * 100_000)


def test_an_approval_the_stream_asked_for_comes_back_verifiable() -> None:
    keyring = Keyring('secret')
    call = ToolCallPart(tool_name='delete', args={'all': True}, tool_call_id='c1')
    stream = VercelAIEventStream(keyring=keyring, thread_id='chat')
    for event in [PartStart(0, call), PartEnd(0), ToolCallReady('c1', 'approval'), RunFinished()]:
        stream.encode(event)
    history = [ModelRequest(parts=[UserPromptPart(content='Delete it all')]), *stream.new_messages]
    ui = [m.model_dump(mode='json') for m in dump_messages(history)]
    tool = ui[-1]['parts'][1]
    assert tool['state'] == 'approval-requested'
    # What the client does on addToolApprovalResponse({id, approved: true}).
    tool['state'] = 'approval-responded'
    tool['approval']['approved'] = True
    request = parse_request({'id': 'chat', 'messages': ui, 'messageId': ui[-1]['id']})
    assert request.continuation_message_id == ui[-1]['id']
    (approval,) = request.run_input().approvals
    assert approval.approved and approval.tool_call_id == 'c1'
    assert keyring.verify_approval(approval.approval_id, 'chat', call)
