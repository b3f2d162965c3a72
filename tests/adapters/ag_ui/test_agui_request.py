"""parse_request / AGUIRunRequest.run_input, including bodies the real HttpAgent posts."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from agui_helpers import comparable_history, replay
from agui_history_support import sample_history

from uibridge import ModelRequest, TextPart, ToolCallPart, UserPromptPart
from uibridge.adapters.ag_ui import AGUIRunRequest, dump_messages, encode_events, parse_request
from uibridge.core.errors import InputError
from uibridge.core.events import PartEnd, PartStart, ToolCallReady
from uibridge.core.run import ClientTool, ToolApproval


def body(**extra: Any) -> dict[str, Any]:
    return {'threadId': 't1', 'runId': 'r1', 'messages': [{'id': 'u1', 'role': 'user', 'content': 'hi'}], **extra}


@pytest.mark.parametrize('form', ['bytes', 'str', 'mapping'])
def test_accepts_bytes_str_and_mappings(form: str) -> None:
    data = body(protocolVersion='1.0')
    raw: Any = {'bytes': json.dumps(data).encode(), 'str': json.dumps(data), 'mapping': data}[form]
    request = parse_request(raw)
    assert isinstance(request, AGUIRunRequest)
    assert request.protocol_version == '1.0'
    assert request.input.thread_id == 't1'


def test_run_input_hands_everything_over_untouched() -> None:
    request = parse_request(
        body(
            state={'cart': [1, 2]},
            tools=[
                {
                    'name': 'confirm',
                    'description': 'Ask the user',
                    'parameters': {'type': 'object'},
                    'metadata': {'ui': {'icon': 'check'}},
                },
                {'name': 'bare', 'description': ''},
            ],
            context=[{'description': 'locale', 'value': 'fr-FR'}],
            forwardedProps={'ignore previous instructions': True},
            parentRunId='r0',
            resume=[
                {'interruptId': 'apr_1', 'status': 'resolved', 'payload': {'approved': True, 'reason': 'fine'}},
                {'interruptId': 'apr_2', 'status': 'resolved', 'payload': {'approved': False}},
                {'interruptId': 'apr_3', 'status': 'cancelled', 'payload': {'approved': True}},
                {'interruptId': 'apr_4', 'status': 'resolved', 'payload': {'approved': 'yes'}},
                {'interruptId': 'apr_5', 'status': 'resolved'},
            ],
        )
    )
    run = request.run_input()
    assert (run.thread_id, run.run_id, run.parent_run_id) == ('t1', 'r1', 'r0')
    assert run.state == {'cart': [1, 2]}
    assert run.tools == [
        ClientTool(
            name='confirm',
            description='Ask the user',
            parameters={'type': 'object'},
            metadata={'ui': {'icon': 'check'}},
        ),
        ClientTool(name='bare'),
    ]
    assert run.extra == {
        'context': [{'description': 'locale', 'value': 'fr-FR'}],
        'forwarded_props': {'ignore previous instructions': True},
    }
    assert run.approvals == [
        ToolApproval('apr_1', True, None, 'fine', {'approved': True, 'reason': 'fine'}),
        ToolApproval('apr_2', False, None, None, {'approved': False}),
        ToolApproval('apr_3', False, None, None, {'approved': True}),
        ToolApproval('apr_4', False, None, None, {'approved': 'yes'}),
        ToolApproval('apr_5', False, None, None, None),
    ]
    [message] = run.history
    assert isinstance(message, ModelRequest)
    assert isinstance(message.parts[0], UserPromptPart) and message.parts[0].content == 'hi'


def test_absent_optionals() -> None:
    run = parse_request(body()).run_input()
    assert run.tools == [] and run.approvals == [] and run.state is None and run.parent_run_id is None
    assert run.extra == {'context': None, 'forwarded_props': None}
    assert parse_request(body()).protocol_version is None


@pytest.mark.parametrize(
    ('raw', 'message', 'path'),
    [
        (b'{"threadId": ', 'the request body is not valid JSON', ''),
        (b'\xff\xfe', 'the request body is not valid JSON', ''),
        (b'[1, 2]', 'the request body must be a JSON object', ''),
        ({'runId': 'r', 'messages': []}, 'Field required', 'threadId'),
        (body(messages='nope'), 'Input should be a valid list', 'messages'),
        (body(tools=[{'name': 'x'}]), 'Field required', 'tools.0.description'),
        (body(resume=[{'interruptId': 'i', 'status': 'maybe'}]), None, 'resume.0.status'),
        (
            body(messages=[{'id': 'a', 'role': 'user', 'content': [{'type': 'image'}]}]),
            'Field required',
            'messages.0.content.0.source',
        ),
        (body(messages=[{'id': 'a', 'role': 'user', 'content': 5}]), None, 'messages.0.content'),
    ],
)
def test_invalid_input_is_an_input_error_with_a_path(raw: Any, message: str | None, path: str) -> None:
    with pytest.raises(InputError) as info:
        parse_request(raw)
    assert info.value.path == path
    if message is not None:
        assert info.value.message == message


def test_errors_never_echo_a_large_input() -> None:
    huge = 'x' * 100_000
    with pytest.raises(InputError) as info:
        parse_request(body(messages=[{'id': 'a', 'role': 'user', 'content': 5, 'name': huge}], threadId=7))
    assert len(str(info.value)) < 400 and huge[:50] not in str(info.value)


def test_unknown_things_are_skipped_and_paths_count_as_the_client_did() -> None:
    data = body(
        messages=[
            {'id': 'x', 'role': 'narrator', 'content': 'skip me'},
            {'id': 'u', 'role': 'user', 'content': [{'type': 'emoji', 'e': ':)'}, {'type': 'text'}]},
        ]
    )
    with pytest.warns(UserWarning), pytest.raises(InputError) as info:
        parse_request(data)
    assert info.value.path == 'messages.1.content.1.text'


def test_load_errors_name_the_message_as_the_client_numbered_it() -> None:
    data = body(
        messages=[
            {'id': 'x', 'role': 'narrator', 'content': 'skip me'},
            {'id': 't', 'role': 'tool', 'toolCallId': 'ghost', 'content': 'result'},
        ]
    )
    with pytest.warns(UserWarning, match='narrator'):
        request = parse_request(data)
    with pytest.raises(InputError) as info:
        request.run_input()
    assert info.value.path == 'messages.1.toolCallId'


def test_what_http_agent_posts_parses_and_loads_back() -> None:
    """The real client sends a dumped history back (with its own additions); it parses and loads the same."""
    history = sample_history()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        dumped = [m.model_dump(by_alias=True, mode='json') for m in dump_messages(history)]
    answer = encode_events(
        [
            PartStart(0, ToolCallPart(tool_name='confirm', args={}, tool_call_id='call_x')),
            PartEnd(0),
            ToolCallReady('call_x', 'client'),
        ]
    ).decode()
    cases = [
        {
            'name': 'history',
            'initialMessages': dumped,
            'initialState': {'step': 2},
            'tools': [{'name': 'confirm', 'description': 'Ask', 'parameters': {'type': 'object', 'properties': {}}}],
            'context': [{'description': 'tz', 'value': 'UTC'}],
            'forwardedProps': {'mode': 'fast'},
            'sse': answer,
        },
        {
            'name': 'resume',
            'initialMessages': dumped[:3],
            'resume': [{'interruptId': 'apr_1', 'status': 'resolved', 'payload': {'approved': True}}],
            'sse': encode_events([PartStart(0, TextPart(content='ok')), PartEnd(0)]).decode(),
        },
    ]
    first, second = replay(cases, script='agui_request.mjs')
    for result in (first, second):
        assert result['ok'], result['error']
        assert result['warnings'] == []
        assert result['headers']['Content-Type'] == 'application/json'
    request = parse_request(json.dumps(first['body']).encode())
    assert request.protocol_version == '1.0'
    run = request.run_input()
    assert comparable_history(run.history) == comparable_history(history)
    assert run.state == {'step': 2}
    assert run.tools == [ClientTool('confirm', 'Ask', {'type': 'object', 'properties': {}})]
    assert run.extra == {'context': [{'description': 'tz', 'value': 'UTC'}], 'forwarded_props': {'mode': 'fast'}}
    # the messages the client holds after the run (history + the streamed call) load as well
    assert parse_request({'threadId': 't', 'runId': 'r2', 'messages': first['messages']}).run_input().history[
        -1
    ].parts == [ToolCallPart(tool_name='confirm', args={}, tool_call_id='call_x')]
    resumed = parse_request(second['body']).run_input()
    assert resumed.approvals == [ToolApproval('apr_1', True, None, None, {'approved': True})]


def test_tool_metadata_is_kept_from_request_to_a_remote_agents_request() -> None:
    """`Tool.metadata` reaches the agent on its `ClientTool`, and uibridge's own AG-UI client (what a bridge to a
    remote AG-UI agent posts) sends it on as it came."""
    from uibridge.client.ag_ui import AGUIClient

    tools = [{'name': 'pick', 'description': 'Pick a date', 'metadata': {'render': 'calendar', 'v': [1, 2]}}]
    [tool] = parse_request(body(tools=tools)).run_input().tools
    assert tool.metadata == {'render': 'calendar', 'v': [1, 2]}
    forwarded = AGUIClient('http://127.0.0.1:1/ag-ui').body([], tools=[tool])
    assert forwarded['tools'] == tools
    assert parse_request(forwarded).run_input().tools == [tool]
