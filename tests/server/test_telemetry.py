"""OpenTelemetry spans and metrics, read with the real SDK's in-memory span exporter and metric reader: both
protocols, client-held and server-managed, a finished, a failed, a cancelled and a refused request, the
incoming `traceparent`, and nothing said in the conversation recorded unless the application opts in."""

from __future__ import annotations

import json
import os
import sys
from types import FrameType
from typing import Any

import anyio
import httpx
import pytest
from opentelemetry.context import Context
from opentelemetry.propagate import get_global_textmap, set_global_textmap
from opentelemetry.propagators.textmap import Getter, Setter, TextMapPropagator, default_getter, default_setter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, StatusCode, TraceFlags, set_span_in_context
from telemetry_support import (
    ANSWER,
    API,
    ARGUMENT,
    CHAT,
    FAILURE,
    PROMPT,
    PROTOCOLS,
    RESULT,
    SECRETS,
    Agent,
    Otel,
    Protocol,
    app_client,
    body,
    by_header,
    disconnecting,
)

from uibridge.server import create_app
from uibridge.server.limits import QuotaRefusal, QuotaRequest
from uibridge.server.store import MemoryStore
from uibridge.server.telemetry import Telemetry

pytestmark = pytest.mark.anyio

TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
PARENT_ID = 'b7ad6b7169203331'


def request_and_run(otel: Otel) -> tuple[ReadableSpan, ReadableSpan]:
    [run] = otel.named('invoke_agent')
    [request] = [span for span in otel.spans() if span.name in ('POST vercel-ai', 'POST ag-ui')]
    return request, run


@pytest.mark.parametrize('managed', [False, True], ids=['client-held', 'managed'])
@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_a_finished_run_is_a_request_span_with_an_invoke_agent_span_and_its_metrics(
    protocol: Protocol, managed: bool
) -> None:
    otel, agent = Otel(), Agent()
    async with app_client(agent, managed=managed, telemetry=otel.telemetry()) as client:
        response = await client.post(API[protocol], json=body(protocol), headers={'x-request-id': 'req-42'})
    assert response.status_code == 200
    request, run = request_and_run(otel)

    assert request.name == f'POST {protocol}'
    assert request.kind == SpanKind.SERVER
    assert request.parent is None
    assert request.attributes is not None
    assert request.attributes['http.request.method'] == 'POST'
    assert request.attributes['http.response.status_code'] == 200
    assert request.attributes['uibridge.protocol'] == protocol
    assert request.attributes['uibridge.request.id'] == 'req-42'
    assert request.attributes['gen_ai.conversation.id'] == CHAT
    ttfb = request.attributes['uibridge.response.time_to_first_byte']
    assert isinstance(ttfb, float)
    assert 0 < ttfb < (request.end_time - request.start_time) / 1e9  # pyright: ignore[reportOptionalOperand]
    assert request.status.status_code == StatusCode.UNSET

    assert run.name == 'invoke_agent weather_agent'
    assert run.parent is not None
    assert run.parent.span_id == request.context.span_id  # pyright: ignore[reportOptionalMemberAccess]
    assert run.attributes is not None
    assert dict(run.attributes) == {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'weather_agent',
        'gen_ai.conversation.id': CHAT,
        'uibridge.run.id': agent.run_ids[0],
        'uibridge.run.trigger': 'submit',
        'uibridge.protocol': protocol,
        'uibridge.run.status': 'finished',
        'gen_ai.usage.input_tokens': 30,
        'gen_ai.usage.output_tokens': 10,
        'gen_ai.usage.cache_read.input_tokens': 5,
        'gen_ai.response.model': 'm-1',
        'gen_ai.provider.name': 'acme',
        'gen_ai.response.id': 'resp_2',
        'gen_ai.response.finish_reasons': ('tool_call', 'stop'),
    }
    [tool] = run.events
    assert tool.name == 'uibridge.tool_call'
    assert dict(tool.attributes or {}) == {
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.type': 'function',
        'uibridge.tool.outcome': 'success',
    }
    assert run.start_time <= tool.timestamp <= run.end_time  # pyright: ignore[reportOperator]
    assert run.status.status_code == StatusCode.UNSET

    duration = otel.point('gen_ai.client.operation.duration', **{'gen_ai.operation.name': 'invoke_agent'})
    assert duration.count == 1  # runs by status: the duration's count
    assert (duration.attributes['uibridge.protocol'], duration.attributes['uibridge.run.status']) == (
        protocol,
        'finished',
    )
    assert duration.attributes['gen_ai.provider.name'] == 'acme'
    assert duration.attributes['gen_ai.response.model'] == 'm-1'
    assert otel.point('gen_ai.client.token.usage', **{'gen_ai.token.type': 'input'}).sum == 30
    assert otel.point('gen_ai.client.token.usage', **{'gen_ai.token.type': 'output'}).sum == 10
    first_byte = otel.point('uibridge.request.time_to_first_byte', **{'http.response.status_code': 200})
    assert first_byte.count == 1
    assert first_byte.sum == pytest.approx(ttfb)
    assert otel.point('uibridge.streams.active', **{'uibridge.protocol': protocol}).value == 0
    assert otel.points('uibridge.requests.rejected') == []


@pytest.mark.parametrize('managed', [False, True], ids=['client-held', 'managed'])
@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_a_failed_run_has_an_error_status_and_the_exception_class_but_not_its_text(
    protocol: Protocol, managed: bool
) -> None:
    otel = Otel()
    async with app_client(Agent('fail'), managed=managed, telemetry=otel.telemetry()) as client:
        response = await client.post(API[protocol], json=body(protocol))
    assert response.status_code == 200  # the stream started; it ends with the protocol's error event
    request, run = request_and_run(otel)
    assert run.status.status_code == StatusCode.ERROR
    assert run.attributes is not None
    assert run.attributes['uibridge.run.status'] == 'failed'
    assert run.attributes['error.type'] == 'RuntimeError'
    assert run.attributes['gen_ai.usage.input_tokens'] == 10  # what the run used before it failed
    assert [event.name for event in run.events] == ['uibridge.tool_call']  # no exception event: its text is content
    assert request.status.status_code == StatusCode.UNSET
    runs = otel.point('gen_ai.client.operation.duration', **{'uibridge.run.status': 'failed'})
    assert (runs.count, runs.attributes['error.type']) == (1, 'RuntimeError')
    assert FAILURE not in otel.recorded_text()


@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_a_client_that_goes_away_ends_a_client_held_run_as_cancelled(protocol: Protocol) -> None:
    otel, agent = Otel(), Agent('wait')
    app = create_app(agent, telemetry=otel.telemetry())
    endpoint = app.state.vercel_ai if protocol == 'vercel-ai' else app.state.ag_ui
    await disconnecting(endpoint, body(protocol), agent.streaming)
    request, run = request_and_run(otel)
    assert run.attributes is not None
    assert run.attributes['uibridge.run.status'] == 'cancelled'
    assert run.attributes['error.type'] == 'cancelled'
    assert run.status.status_code == StatusCode.UNSET  # a client leaving is not the server's error
    assert request.attributes is not None
    assert request.attributes['http.response.status_code'] == 200
    assert request.attributes['uibridge.request.id'] == 'gone-1'
    runs = otel.point('gen_ai.client.operation.duration', **{'uibridge.run.status': 'cancelled'})
    assert (runs.count, runs.attributes['error.type']) == (1, 'cancelled')
    assert otel.point('uibridge.streams.active', **{'uibridge.protocol': protocol}).value == 0


async def test_a_stop_through_the_store_cancels_a_managed_run_and_the_stop_request_has_its_span() -> None:
    otel, agent = Otel(), Agent('wait')
    async with app_client(agent, managed=True, telemetry=otel.telemetry()) as client:

        async def send() -> None:
            await client.post('/api/chat', json=body('vercel-ai'))

        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await agent.streaming.wait()
            assert otel.point('uibridge.streams.active', **{'uibridge.protocol': 'vercel-ai'}).value == 1
            assert (await client.delete(f'/api/chat/{CHAT}/stream')).status_code == 204
    [run] = otel.named('invoke_agent')
    assert run.attributes is not None
    assert run.attributes['uibridge.run.status'] == 'cancelled'
    [stop] = otel.named('DELETE')
    assert stop.attributes is not None
    assert stop.attributes['gen_ai.conversation.id'] == CHAT
    assert stop.attributes['http.response.status_code'] == 204
    assert otel.point('uibridge.streams.active', **{'uibridge.protocol': 'vercel-ai'}).value == 0


async def test_refused_requests_are_counted_by_reason_and_start_no_run() -> None:
    otel, agent = Otel(), Agent()
    async with app_client(agent, managed=True, telemetry=otel.telemetry(), authorize=by_header) as client:
        json_type, text_type = {'content-type': 'application/json'}, {'content-type': 'text/plain'}
        assert (await client.post('/api/chat', content=b'{"id": ', headers=json_type)).status_code == 422
        assert (await client.post('/ag-ui', content=b'{}', headers=text_type)).status_code == 415
        assert (await client.get('/api/chat/nobody-has-this')).status_code == 404
        assert (await client.put('/ag-ui')).status_code == 405
    assert agent.run_ids == []
    assert otel.named('invoke_agent') == []
    keys = ('uibridge.protocol', 'http.response.status_code', 'uibridge.rejection.reason')
    reasons = {tuple(p.attributes[key] for key in keys): p.value for p in otel.points('uibridge.requests.rejected')}
    assert reasons == {
        ('vercel-ai', 422, 'invalid_request'): 1,
        ('ag-ui', 415, 'unsupported_media_type'): 1,
        ('vercel-ai', 404, 'not_found'): 1,
        ('ag-ui', 405, 'method_not_allowed'): 1,
    }
    statuses = sorted((span.name, (span.attributes or {})['error.type']) for span in otel.spans())
    assert statuses == [
        ('GET vercel-ai', '404'), ('POST ag-ui', '415'), ('POST vercel-ai', '422'), ('PUT ag-ui', '405'),
    ]  # fmt: skip
    assert all(span.status.status_code == StatusCode.UNSET for span in otel.spans())  # a 4xx is the client's


async def test_measurements_are_made_outside_uibridges_spans_so_exemplars_point_at_the_servers_span() -> None:
    """The SDK's default exemplar filter keeps one for a measurement made while a sampled span is current. uibridge
    measures in the context its request arrived in: none of its own spans is an exemplar's, and a server's span
    (an ASGI instrumentation's), when there is one, is."""
    otel = Otel()
    server = otel.tracer_provider.get_tracer('asgi-server')
    async with app_client(Agent(), managed=False, telemetry=otel.telemetry()) as client:
        assert (await client.post(API['vercel-ai'], json=body('vercel-ai', chat='alone'))).status_code == 200
        with server.start_as_current_span('POST /api/chat') as outer:
            assert (await client.post(API['vercel-ai'], json=body('vercel-ai', chat='served'))).status_code == 200
    ours = {span.context.span_id for span in otel.spans() if span.name != 'POST /api/chat'}  # pyright: ignore[reportOptionalMemberAccess]
    assert len(ours) == 4  # two requests, two runs
    # One collection: the SDK hands each exemplar to one collection only.
    exemplars: dict[str, set[int | None]] = {}
    data = otel.reader.get_metrics_data()
    assert data is not None
    for metric in (m for resource in data.resource_metrics for scope in resource.scope_metrics for m in scope.metrics):
        for point in metric.data.data_points:
            exemplars.setdefault(metric.name, set()).update(e.span_id for e in point.exemplars)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    server_span = outer.get_span_context().span_id
    assert exemplars['gen_ai.client.operation.duration'] == {server_span}
    assert exemplars['gen_ai.client.token.usage'] == {server_span}
    assert exemplars['uibridge.request.time_to_first_byte'] == {server_span}
    # The token counts carry the conventions' attributes (and the protocol), not the run's status.
    tokens = otel.point('gen_ai.client.token.usage', **{'gen_ai.token.type': 'input'})
    assert dict(tokens.attributes) == {
        'uibridge.protocol': 'vercel-ai',
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'acme',
        'gen_ai.response.model': 'm-1',
        'gen_ai.token.type': 'input',
    }


async def test_a_413_names_the_limit_it_passed() -> None:
    otel, agent = Otel(), Agent()
    refused_chats: set[str] = set()

    async def quota(request: QuotaRequest) -> QuotaRefusal | None:
        return QuotaRefusal('over quota', status=413) if request.chat_id in refused_chats else None

    options: dict[str, Any] = {'max_body_bytes': 4000, 'max_messages': 3, 'max_chat_messages': 5, 'quota': quota}
    async with app_client(agent, managed=True, telemetry=otel.telemetry(), **options) as client:
        too_big = body('vercel-ai', chat='big', prompt='x' * 5000)
        assert (await client.post('/api/chat', json=too_big)).status_code == 413
        too_many = body('ag-ui', chat='many')
        too_many['messages'] = [{'id': f'u{n}', 'role': 'user', 'content': 'hi'} for n in range(4)]
        assert (await client.post('/ag-ui', json=too_many)).status_code == 413
        # A turn stores 4 messages (the prompt, two responses around a tool result): the third turn's prompt would
        # take the chat past `max_chat_messages`.
        for turn in range(3):
            answer = await client.post('/api/chat', json=body('vercel-ai', chat='full', prompt=f'turn {turn}'))
            assert answer.status_code == (200 if turn < 2 else 413)
        refused_chats.add('refused')
        assert (await client.post('/api/chat', json=body('vercel-ai', chat='refused'))).status_code == 413
    keys = ('uibridge.protocol', 'uibridge.rejection.reason')
    reasons = {tuple(p.attributes[key] for key in keys): p.value for p in otel.points('uibridge.requests.rejected')}
    assert reasons == {
        ('vercel-ai', 'max_body_bytes'): 1,
        ('ag-ui', 'max_messages'): 1,
        ('vercel-ai', 'max_chat_messages'): 1,
        ('vercel-ai', 'quota'): 1,
    }
    refused = [span for span in otel.spans() if (span.attributes or {}).get('http.response.status_code') == 413]
    assert sorted((span.attributes or {})['uibridge.rejection.reason'] for span in refused) == [
        'max_body_bytes', 'max_chat_messages', 'max_messages', 'quota',
    ]  # fmt: skip


@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_the_request_span_continues_the_trace_of_the_incoming_traceparent(protocol: Protocol) -> None:
    otel = Otel()
    traceparent = f'00-{TRACE_ID}-{PARENT_ID}-01'
    async with app_client(Agent(), managed=False, telemetry=otel.telemetry()) as client:
        await client.post(API[protocol], json=body(protocol), headers={'traceparent': traceparent})
    request, run = request_and_run(otel)
    assert f'{request.context.trace_id:032x}' == TRACE_ID  # pyright: ignore[reportOptionalMemberAccess]
    assert request.parent is not None
    assert request.parent.is_remote
    assert f'{request.parent.span_id:016x}' == PARENT_ID
    assert request.kind == SpanKind.SERVER
    assert run.context.trace_id == request.context.trace_id  # pyright: ignore[reportOptionalMemberAccess]


class _OwnHeaderPropagator(TextMapPropagator):
    """An application's propagator reading a header of its own (`x-own-trace: <trace id>-<span id>`), counting
    how often it is asked."""

    def __init__(self) -> None:
        self.extracted = 0

    def extract(self, carrier: Any, context: Context | None = None, getter: Getter[Any] = default_getter) -> Context:
        self.extracted += 1
        [value] = getter.get(carrier, 'x-own-trace') or [None]
        if value is None:
            return context or Context()
        trace_id, span_id = value.split('-')
        parent = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(1))
        return set_span_in_context(NonRecordingSpan(parent), context)

    def inject(self, carrier: Any, context: Context | None = None, setter: Setter[Any] = default_setter) -> None:
        pass

    @property
    def fields(self) -> set[str]:
        return {'X-Own-Trace'}


async def test_the_global_propagator_is_asked_only_when_a_request_carries_a_header_it_reads() -> None:
    """The application's propagator decides which headers carry a trace: a request with one of them continues
    that trace; one without any starts its own, and the propagator is not asked to look."""
    otel = Otel()
    propagator = _OwnHeaderPropagator()
    previous = get_global_textmap()
    set_global_textmap(propagator)
    try:
        async with app_client(Agent(), managed=False, telemetry=otel.telemetry()) as client:
            await client.post(
                API['vercel-ai'], json=body('vercel-ai'), headers={'x-own-trace': f'{TRACE_ID}-{PARENT_ID}'}
            )
            assert propagator.extracted == 1
            await client.post(
                API['vercel-ai'],
                json=body('vercel-ai', chat='chat-8'),
                headers={'traceparent': f'00-{TRACE_ID}-{PARENT_ID}-01'},
            )
            assert propagator.extracted == 1  # not a header this propagator reads
    finally:
        set_global_textmap(previous)
    continued, started = [span for span in otel.spans() if span.name == 'POST vercel-ai']
    assert f'{continued.context.trace_id:032x}' == TRACE_ID  # pyright: ignore[reportOptionalMemberAccess]
    assert continued.parent is not None and continued.parent.is_remote
    assert f'{continued.parent.span_id:016x}' == PARENT_ID
    assert f'{started.context.trace_id:032x}' != TRACE_ID  # pyright: ignore[reportOptionalMemberAccess]
    assert started.parent is None
    assert continued.kind == started.kind == SpanKind.SERVER


async def test_under_a_span_already_open_the_request_span_is_its_child_and_the_agent_spans_nest_in_the_run() -> None:
    """An ASGI server's instrumentation opens the HTTP span (and has read `traceparent` already): uibridge's
    spans go under it; and what the agent traces itself goes under the run's span."""
    otel = Otel()
    tracer = otel.tracer_provider.get_tracer('test')
    agent = Agent()
    inner = agent.__call__

    async def traced_agent(run: Any) -> Any:
        with tracer.start_as_current_span('chat m-1'):
            async for item in inner(run):
                yield item

    traced_agent.name = 'weather_agent'  # type: ignore[attr-defined]
    app = create_app(traced_agent, telemetry=otel.telemetry())

    async def instrumented(scope: Any, receive: Any, send: Any) -> None:
        with tracer.start_as_current_span('POST /api/chat', kind=SpanKind.SERVER):
            await app(scope, receive, send)

    transport = httpx.ASGITransport(app=instrumented)
    async with httpx.AsyncClient(transport=transport, base_url='http://test') as client:
        traceparent = f'00-{TRACE_ID}-{PARENT_ID}-01'
        await client.post('/api/chat', json=body('vercel-ai'), headers={'traceparent': traceparent})
    [server] = otel.named('POST /api/chat')
    request, run = request_and_run(otel)
    [model] = otel.named('chat m-1')
    assert request.kind == SpanKind.INTERNAL
    assert request.parent is not None and request.parent.span_id == server.context.span_id  # pyright: ignore[reportOptionalMemberAccess]
    assert run.parent is not None and run.parent.span_id == request.context.span_id  # pyright: ignore[reportOptionalMemberAccess]
    assert model.parent is not None and model.parent.span_id == run.context.span_id  # pyright: ignore[reportOptionalMemberAccess]
    assert f'{request.context.trace_id:032x}' != TRACE_ID  # pyright: ignore[reportOptionalMemberAccess]


@pytest.mark.parametrize('managed', [False, True], ids=['client-held', 'managed'])
@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_by_default_nothing_said_is_recorded_nor_who_said_it(protocol: Protocol, managed: bool) -> None:
    otel, agent = Otel(), Agent()
    async with app_client(agent, managed=managed, telemetry=otel.telemetry(), authorize=by_header) as client:
        await client.post(API[protocol], json=body(protocol), headers={'x-user': 'alice-user'})
    assert agent.principals == ['alice-user']
    recorded = otel.recorded_text()
    assert 'invoke_agent' in recorded
    for secret in (*SECRETS, 'alice-user'):
        assert secret not in recorded
    [run] = otel.named('invoke_agent')
    assert 'user.id' not in (run.attributes or {})


async def test_content_and_principal_are_recorded_when_the_application_opts_in() -> None:
    otel = Otel()
    telemetry = otel.telemetry(record_content=True, record_principal=True)
    async with app_client(Agent(), managed=True, telemetry=telemetry, authorize=by_header) as client:
        await client.post('/ag-ui', json=body('ag-ui'), headers={'x-user': 'alice-user'})
    [run] = otel.named('invoke_agent')
    attributes = run.attributes or {}
    assert attributes['user.id'] == 'alice-user'
    sent = json.loads(str(attributes['gen_ai.input.messages']))
    assert sent == [{'role': 'user', 'parts': [{'type': 'text', 'content': PROMPT}]}]
    answered = json.loads(str(attributes['gen_ai.output.messages']))
    assert answered == [
        {
            'role': 'assistant',
            'parts': [
                {'type': 'text', 'content': 'Looking it up.'},
                {'type': 'tool_call', 'id': 'call_1', 'name': 'lookup', 'arguments': {'city': ARGUMENT}},
            ],
            'finish_reason': 'tool_call',
        },
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': ANSWER}], 'finish_reason': 'stop'},
    ]
    [tool] = run.events
    assert json.loads(str((tool.attributes or {})['gen_ai.tool.call.arguments'])) == {'city': ARGUMENT}
    assert (tool.attributes or {})['gen_ai.tool.call.result'] == RESULT


async def test_with_content_on_a_failed_run_records_its_exception() -> None:
    otel = Otel()
    async with app_client(Agent('fail'), managed=False, telemetry=otel.telemetry(record_content=True)) as client:
        await client.post('/api/chat', json=body('vercel-ai'))
    [run] = otel.named('invoke_agent')
    [exception] = [event for event in run.events if event.name == 'exception']
    assert (exception.attributes or {})['exception.message'] == FAILURE


async def test_resuming_a_stream_is_an_active_stream_and_a_get_span() -> None:
    otel = Otel()
    async with app_client(Agent(), managed=True, telemetry=otel.telemetry()) as client:
        await client.post('/api/chat', json=body('vercel-ai'))
        replay = await client.get(f'/api/chat/{CHAT}/stream')
        assert replay.status_code == 200
        loaded = await client.get(f'/api/chat/{CHAT}')
        assert loaded.status_code == 200
    spans = sorted(
        ((span.attributes or {})['http.response.status_code'], (span.attributes or {})['gen_ai.conversation.id'])
        for span in otel.named('GET')
    )
    assert spans == [(200, CHAT), (200, CHAT)]
    assert otel.point('uibridge.streams.active', **{'uibridge.protocol': 'vercel-ai'}).value == 0
    assert otel.point('uibridge.request.time_to_first_byte', **{'http.request.method': 'GET'}).count == 2


async def test_telemetry_false_records_nothing() -> None:
    otel = Otel()
    app = create_app(Agent(), store=MemoryStore(), telemetry=False)
    assert app.state.vercel_ai.observer.instruments is None
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        response = await client.post('/api/chat', json=body('vercel-ai'))
    assert response.status_code == 200
    assert 'x-request-id' in response.headers
    assert otel.spans() == []


async def _opentelemetry_calls(telemetry: Telemetry | bool) -> int:
    """How many Python calls into OpenTelemetry (and uibridge's `otel` module) one served request makes on the
    event loop's thread, counted with a profile hook around the request."""
    app = create_app(Agent(), telemetry=telemetry)
    calls = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == 'call':
            path = frame.f_code.co_filename
            if f'{os.sep}opentelemetry{os.sep}' in path or path.endswith(f'server{os.sep}otel.py'):
                calls += 1

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        await client.post('/api/chat', json=body('vercel-ai'))  # first-use work out of the way
        sys.setprofile(count)
        try:
            response = await client.post('/api/chat', json=body('vercel-ai', chat='chat-8'))
        finally:
            sys.setprofile(None)
    assert response.status_code == 200
    return calls


async def test_with_telemetry_off_a_request_makes_no_opentelemetry_call() -> None:
    """Off costs a request nothing of OpenTelemetry: not a call, however cheap (the same request with it on
    makes a few hundred, so the count is seen to work)."""
    assert await _opentelemetry_calls(False) == 0
    assert await _opentelemetry_calls(Otel().telemetry()) > 50


def test_telemetry_must_be_a_telemetry_or_a_bool() -> None:
    with pytest.raises(TypeError, match='telemetry must be a Telemetry, True or False'):
        create_app(Agent(), telemetry='on')  # type: ignore[typeddict-item]
