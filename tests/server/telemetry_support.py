"""What the telemetry and run-log suites share: an agent whose run has usage, a tool call and a result (and can
fail, or wait to be cancelled), request bodies for both protocols, and the OpenTelemetry SDK set up with its
in-memory span exporter and metric reader.

The agent's words, the prompt, the tool's arguments and result and its exception text are `SECRETS`: a
suite checks that none of them reaches a span unless the application opted in.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import anyio
import httpx
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from uibridge.core.events import AgentEvent, PartDelta, PartStart, ResponseInfo, ResponseStart
from uibridge.core.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from uibridge.core.usage import Usage
from uibridge.server import create_app
from uibridge.server.auth import RequestInfo
from uibridge.server.store import MemoryStore
from uibridge.server.telemetry import Telemetry

Protocol = Literal['vercel-ai', 'ag-ui']
PROTOCOLS: tuple[Protocol, ...] = ('vercel-ai', 'ag-ui')
API: dict[Protocol, str] = {'vercel-ai': '/api/chat', 'ag-ui': '/ag-ui'}

CHAT = 'chat-7'
PROMPT = 'my secret prompt about Lyon'
ARGUMENT = 'secret-argument-Lyon'
RESULT = 'secret-result: 21 degrees'
ANSWER = 'secret answer: it is mild'
FAILURE = 'secret failure text'
SECRETS = (PROMPT, ARGUMENT, RESULT, ANSWER, FAILURE)


class Agent:
    """Two model responses around a tool call and its result (30 input and 10 output tokens in all, 5 read
    from cache). `fail`: raises after the tool result; `wait`: streams until cancelled."""

    name = 'weather_agent'

    def __init__(self, mode: Literal['finish', 'fail', 'wait'] = 'finish') -> None:
        self.mode = mode
        self.run_ids: list[str] = []
        self.principals: list[str | None] = []
        self.streaming = anyio.Event()

    async def __call__(self, run: Any) -> AsyncIterator[AgentEvent | ModelMessage]:
        self.run_ids.append(run.run_id)
        self.principals.append(run.principal)
        if self.mode == 'wait':
            yield ResponseStart(model_name='m-1')
            yield PartStart(0, TextPart(content='thinking'))
            while True:
                self.streaming.set()
                await anyio.sleep(0.01)
                yield PartDelta(0, '.')
        yield ModelResponse(
            parts=[
                TextPart(content='Looking it up.'),
                ToolCallPart(tool_name='lookup', args={'city': ARGUMENT}, tool_call_id='call_1'),
            ],
            model_name='m-1',
            provider_name='acme',
            usage=Usage(input_tokens=10, output_tokens=4),
        )
        # A whole message's finish reason is not streamed (`events_from_message`): the agent says it on its own.
        yield ResponseInfo(finish_reason='tool_call')
        yield ModelRequest(parts=[ToolReturnPart(tool_name='lookup', content=RESULT, tool_call_id='call_1')])
        if self.mode == 'fail':
            raise RuntimeError(FAILURE)
        yield ModelResponse(
            parts=[TextPart(content=ANSWER)],
            model_name='m-1',
            provider_name='acme',
            usage=Usage(input_tokens=20, output_tokens=6, cache_read_tokens=5),
            provider_response_id='resp_2',
        )
        yield ResponseInfo(finish_reason='stop')


def body(protocol: Protocol, chat: str = CHAT, prompt: str = PROMPT) -> dict[str, Any]:
    if protocol == 'vercel-ai':
        return {
            'id': chat,
            'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': prompt}]}],
            'trigger': 'submit-message',
        }
    return {
        'threadId': chat, 'runId': 'run-1', 'messages': [{'id': 'u1', 'role': 'user', 'content': prompt}],
        'tools': [], 'context': [], 'state': None, 'forwardedProps': None,
    }  # fmt: skip


async def by_header(request: RequestInfo) -> str | None:
    return request.headers.get('x-user', 'anonymous')


class Otel:
    """The OpenTelemetry SDK with in-memory exporters, for one test: `telemetry(...)` reports to it."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def telemetry(self, **options: Any) -> Telemetry:
        return Telemetry(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if (span.name or '').startswith(prefix)]

    def points(self, metric: str) -> list[Any]:
        """The data points of `metric` (counters: `.value`; histograms: `.count`, `.sum`), by attributes."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for each in scope.metrics:
                    if each.name == metric:
                        found += list(each.data.data_points)
        return found

    def point(self, metric: str, **attributes: Any) -> Any:
        """The one data point of `metric` whose attributes include `attributes`."""
        [found] = [p for p in self.points(metric) if all(p.attributes.get(k) == v for k, v in attributes.items())]
        return found

    def recorded_text(self) -> str:
        """Every span, with its attributes and events, as JSON text: what an exporter would send."""
        return '\n'.join(span.to_json() for span in self.spans())


def app_client(agent: Agent, *, managed: bool, **options: Any) -> httpx.AsyncClient:
    store = MemoryStore() if managed else None
    app = create_app(agent, store=store, **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test')


def chunks(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith('data: {')]


async def disconnecting(endpoint: Any, payload: dict[str, Any], started: anyio.Event) -> list[dict[str, Any]]:
    """POST `payload` to `endpoint` straight over ASGI, and go away once the agent streams: what was sent."""
    messages = [{'type': 'http.request', 'body': json.dumps(payload).encode(), 'more_body': False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await started.wait()
        return {'type': 'http.disconnect'}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        'type': 'http',
        'method': 'POST',
        'path': '/',
        'headers': [(b'content-type', b'application/json'), (b'x-request-id', b'gone-1')],
    }
    with anyio.fail_after(10):
        await endpoint(scope, receive, send)
    return sent


def header(sent: Sequence[dict[str, Any]], name: bytes) -> list[bytes]:
    """The values of a header in the `http.response.start` among ASGI messages sent."""
    [start] = [m for m in sent if m['type'] == 'http.response.start']
    return [value for key, value in start['headers'] if key == name]
