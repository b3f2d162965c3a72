"""Bounded work and clean failures, in-process with the stand-in protocol; the same attacks against a
real uvicorn server are in tests/e2e/test_hostile_load.py."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from endpoint_support import history, make, post, user
from fake_protocol import event_types
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from uibridge import RetryPromptPart, TextPart, ToolReturnPart
from uibridge.core.events import AgentEvent, PartEnd, PartStart, RunFinished, ToolResult
from uibridge.server import AgentRun, ChatEndpoint
from uibridge.server.limits import RequestLimits, check_limits

pytestmark = pytest.mark.anyio


# ----------------------------------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ('body', 'limit', 'path'),
    [
        ({'messages': [{}] * 11}, 'max_messages', 'messages'),
        ({'messages': [{'parts': [{}] * 11}]}, 'max_parts_per_message', 'messages.0.parts'),
        ({'messages': [{'content': [{}] * 11}]}, 'max_parts_per_message', 'messages.0.content'),
        ({'messages': [{'toolCalls': [{}] * 11}]}, 'max_parts_per_message', 'messages.0.toolCalls'),
        ({'messages': [{'parts': [{}] * 6}, {'content': [{}] * 6}]}, 'max_parts', 'messages.1.content'),
        ({'runId': 'r' * 33}, 'max_id_length', 'runId'),
        ({'messages': [{'parts': [{'toolCallId': 'c' * 33}]}]}, 'max_id_length', 'messages.0.parts.0.toolCallId'),
        ({'messages': [{'parts': [{'type': 't' * 101}]}]}, 'max_string_length', 'messages.0.parts.0.type'),
        ({'tags': ['t' * 101]}, 'max_string_length', 'tags.0'),
        ({'values': list(range(200))}, 'max_json_values', ''),
        ({'nested': [[[[[[[[[[0]]]]]]]]]] * 20}, 'max_json_values', ''),
    ],
)
async def test_each_limit_is_a_413_naming_it(body: dict[str, Any], limit: str, path: str) -> None:
    options = {
        'max_messages': 10,
        'max_parts_per_message': 10,
        'max_parts': 11,
        'max_id_length': 32,
        'max_string_length': 100,
        'max_json_values': 150,
    }
    endpoint, recorder, _ = make(**options)
    response = await post(endpoint, body, signed=False)
    assert response.status_code == 413
    assert limit in response.json()['error'] and response.json()['path'] == path
    assert recorder.runs == []
    # one under each limit is fine as far as the limits go
    under = {**options, 'max_json_values': 10**6, 'max_parts': 100}
    check_limits({'messages': [{'parts': [{'type': 't' * 100}] * 10}] * 10}, RequestLimits(**under))


def test_json_inside_strings_counts_against_the_budget_and_its_nesting_is_bounded() -> None:
    limits = RequestLimits(max_json_values=1000)
    arguments = '[' + ','.join(['{}'] * 2000) + ']'  # one string, ~2,000 values once the server parses it
    with pytest.raises(Exception, match='max_json_values'):
        check_limits({'messages': [{'toolCalls': [{'function': {'arguments': arguments}}]}]}, limits)
    deep = '[' * 150 + ']' * 150 + ' ' * 64
    with pytest.raises(Exception, match='nested deeper'):
        check_limits({'messages': [{'toolCalls': [{'function': {'arguments': deep}}]}]}, RequestLimits())
    # prose that merely mentions brackets is one value, and short strings are never read
    check_limits({'messages': [{'content': 'a [b] {c}, d' * 10}]}, limits)


def test_text_content_is_bounded_by_the_body_size_alone() -> None:
    long = 'x' * 1000
    body = {
        'messages': [
            {'parts': [{'type': 'text', 'text': long, 'providerMetadata': {'uibridge': {'x': long}}}]},
            {'parts': [{'type': 'tool-t', 'input': {'q': long, 'id': long}, 'output': [long]}]},
            {'content': [{'type': 'image', 'source': {'type': 'data', 'value': long}}]},
        ],
        'state': {'notes': long, 'id': long},
    }
    check_limits(body, RequestLimits(max_string_length=100, max_id_length=32))


async def test_an_id_no_encoder_can_write_is_a_422_before_the_stream() -> None:
    endpoint, recorder, _ = make()
    for key in ('threadId', 'runId', 'id'):
        response = await post(endpoint, None, content=b'{"messages": [], "%s": "a\\ud800b"}' % key.encode())
        assert response.status_code == 422 and 'surrogate' in response.json()['error']
    assert recorder.runs == []


@pytest.mark.parametrize('number', [b'1e999999', b'-1e400', b'1E+999'])
async def test_non_finite_numbers_are_refused_in_every_spelling(number: bytes) -> None:
    endpoint, recorder, _ = make()
    for content in (b'{"messages": [], "state": %s}' % number, b'{"messages": [], "x": Infinity}'):
        response = await post(endpoint, None, content=content)
        assert response.status_code == 422
    assert recorder.runs == []


async def test_a_body_that_never_finishes_is_a_408_and_the_connection_closes() -> None:
    endpoint, recorder, _ = make(body_timeout=0.2)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await anyio.sleep(0.05)
        return {'type': 'http.request', 'body': b' ', 'more_body': True}  # one byte at a time, forever

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {'type': 'http', 'method': 'POST', 'headers': [(b'content-type', b'application/json')], 'path': '/'}
    with anyio.fail_after(10):
        await endpoint(scope, receive, send)
    assert sent[0]['status'] == 408
    assert (b'connection', b'close') in sent[0]['headers']
    assert 'did not arrive within' in json.loads(sent[1]['body'])['error']
    assert recorder.runs == []


@pytest.mark.parametrize('option', ['max_messages', 'max_id_length', 'max_json_values'])
def test_limits_are_validated_at_construction(option: str) -> None:
    with pytest.raises(ValueError, match=option):
        make(**{option: 0})
    with pytest.raises(ValueError, match='body_timeout'):
        make(body_timeout=-1)


# ------------------------------------------------------------------------------------------- websockets


async def asgi(app: Any, scope: dict[str, Any], incoming: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drive `app` with `incoming` messages (then wait forever), and return what it sent."""
    sent: list[dict[str, Any]] = []
    queue = list(incoming)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await anyio.sleep_forever()
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        await app(scope, receive, send)
    return sent


@pytest.mark.parametrize('mounting', ['bare', 'mount', 'route'])
async def test_a_websocket_upgrade_is_refused_cleanly(mounting: str) -> None:
    endpoint, _, _ = make()
    apps: dict[str, Any] = {
        'bare': endpoint,
        'mount': Starlette(routes=[Mount('/chat', endpoint)]),
        'route': Starlette(routes=[Route('/chat', endpoint)]),
    }
    scope = {'type': 'websocket', 'path': '/chat/' if mounting == 'mount' else '/chat', 'headers': [], 'scheme': 'ws'}
    scope |= {'query_string': b'', 'root_path': '', 'subprotocols': []}
    sent = await asgi(apps[mounting], scope, [{'type': 'websocket.connect'}])
    # Closed before it was accepted: the server answers the upgrade with a 403 (Route matches HTTP only, and
    # Starlette closes an unmatched WebSocket the same way).
    assert [m['type'] for m in sent] == ['websocket.close']
    if mounting != 'route':
        assert sent[0]['code'] == 1008


@pytest.mark.parametrize('mounting', ['bare', 'mount', 'route'])
async def test_lifespan_keeps_working_under_route_and_mount(mounting: str) -> None:
    endpoint, _, _ = make()
    app: Any = {
        'bare': endpoint,
        'mount': Starlette(routes=[Mount('/chat', endpoint)]),
        'route': Starlette(routes=[Route('/chat', endpoint)]),
    }[mounting]
    sent = await asgi(
        app,
        {'type': 'lifespan', 'asgi': {'version': '3.0'}, 'state': {}},
        [{'type': 'lifespan.startup'}, {'type': 'lifespan.shutdown'}],
    )
    assert [m['type'] for m in sent] == ['lifespan.startup.complete', 'lifespan.shutdown.complete']


# ------------------------------------------------------------------------------------------ agent misuse


def misbehaving(*items: Any) -> Any:
    async def agent(run: AgentRun) -> AsyncIterator[Any]:
        for item in items:
            yield item

    return agent


@pytest.mark.parametrize('junk', ['some text', {'type': 'text-delta'}, 42, None])
@pytest.mark.parametrize('expose_errors', [True, False])
async def test_anything_but_an_event_or_message_fails_the_run(junk: Any, expose_errors: bool) -> None:
    agent = misbehaving(PartStart(0, TextPart(content='hi')), junk)
    endpoint, recorder, _ = make(agent, expose_errors=expose_errors)
    response = await post(endpoint, {'messages': history(user('hi'))})
    assert event_types(response.content)[-1] == 'RunError'
    error = [json.loads(line[6:]) for line in response.text.split('\n') if line.startswith('data: ')][-1]
    assert ('neither an agent event nor a message' in error['message']) is expose_errors
    [(_, run)] = recorder.completed
    assert run.status == 'failed' and isinstance(run.error, TypeError)


async def test_an_agent_raising_cancelled_error_itself_fails_the_run() -> None:
    async def agent(run: AgentRun) -> AsyncIterator[AgentEvent]:
        yield PartStart(0, TextPart(content='hi'))
        raise asyncio.CancelledError

    endpoint, recorder, _ = make(agent)
    response = await post(endpoint, {'messages': history(user('hi'))})
    assert event_types(response.content)[-1] == 'RunError'
    [(_, run)] = recorder.completed
    assert run.status == 'failed'


async def test_agent_slips_are_logged_once_per_run(caplog: pytest.LogCaptureFixture) -> None:
    stray = ToolResult(ToolReturnPart(tool_name='t', content='x', tool_call_id='nobody'))
    agent = misbehaving(stray, stray, PartStart(0, TextPart(content='hi')), PartEnd(0), RunFinished(), stray, stray)
    endpoint, _, _ = make(agent)
    with caplog.at_level(logging.WARNING, logger='uibridge.server'):
        response = await post(endpoint, {'messages': history(user('hi'))})
        await post(make(misbehaving())[0], {'messages': history(user('hi'))})
    assert caplog.text.count('did not make') == 1
    assert caplog.text.count('yielded nothing') == 1
    # After its terminal event the agent is closed, never asked for more: what it had left is not streamed.
    assert event_types(response.content)[-3:] == ['PartStart', 'PartEnd', 'RunFinished']


async def test_a_legacy_retry_prompt_is_no_stray_result(caplog: pytest.LogCaptureFixture) -> None:
    """A tool-less `RetryPromptPart` answers no call: its generated tool call id is no result for a call nobody
    made, so nothing is logged as one."""
    legacy = ToolResult(RetryPromptPart(content='Answer in JSON.'))
    agent = misbehaving(PartStart(0, TextPart(content='hi')), PartEnd(0), legacy, RunFinished())
    endpoint, _, _ = make(agent)
    with caplog.at_level(logging.WARNING, logger='uibridge.server'):
        await post(endpoint, {'messages': history(user('hi'))})
    assert 'did not make' not in caplog.text


async def test_log_lines_quoting_client_input_are_clipped(caplog: pytest.LogCaptureFixture) -> None:
    from fake_protocol import FakeBinding

    from uibridge.core.diagnostics import warn

    class WarningBinding(FakeBinding):
        def parse(self, body: Any) -> Any:
            warn('skipped a ' + 'x' * 100_000 + ' part')
            return super().parse(body)

    endpoint = ChatEndpoint(misbehaving(), WarningBinding())
    with caplog.at_level(logging.WARNING, logger='uibridge.server'):
        await post(endpoint, {'messages': history(user('hi'))})
    assert caplog.records and max(len(r.getMessage()) for r in caplog.records) < 1000
