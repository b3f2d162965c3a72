"""OpenTelemetry spans and metrics for an endpoint's requests and runs (imported only when `opentelemetry-api`
is installed: `uibridge.server.telemetry` decides).

Names follow the OpenTelemetry semantic conventions for generative AI (`gen_ai.*`, the latest experimental
version) where one applies, and are uibridge's own (`uibridge.*`) where none does.

Spans:
- a request span, `"{method} {protocol}"` (`POST vercel-ai`), the child of the current span (an ASGI
  server's instrumentation), else of the `traceparent` the request carries (OpenTelemetry's global
  propagator; the span is then of kind SERVER), else a new trace's root. `http.request.method`,
  `http.response.status_code`, `uibridge.protocol`, `uibridge.request.id`,
  `uibridge.response.time_to_first_byte` (seconds); a 4xx has `error.type` (the status) and
  `uibridge.rejection.reason` (for a 413, the limit: `max_body_bytes`, `max_chat_messages`, `max_chat_bytes`, ...,
  or `quota`); a 5xx or an exception sets the span's error status;
- a run span, `"invoke_agent {agent}"`, its child and the current span while the agent runs (an
  instrumented agent's own spans nest under it): `gen_ai.operation.name` (`invoke_agent`), `gen_ai.agent.name`,
  `gen_ai.conversation.id` (the chat, or AG-UI thread), `uibridge.run.id`, `uibridge.run.status`,
  `uibridge.run.trigger`; from the run's responses `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`
  (and the cache and reasoning counts when reported), `gen_ai.response.model`, `gen_ai.provider.name`,
  `gen_ai.response.id`, `gen_ai.response.finish_reasons`; `error.type` when it failed (the exception's class;
  the span's status is then an error) or was cancelled (`cancelled`); `user.id` (the principal) only with
  `record_principal`. Each tool call of the run is an event, `uibridge.tool_call`: `gen_ai.tool.name`,
  `gen_ai.tool.call.id`, `gen_ai.tool.type` (`function` for a call the application answers),
  `uibridge.tool.outcome` (`success`, `failed`, `denied`, `interrupted`, `retry`, `awaiting_client`,
  `awaiting_approval`, `no_result`), at the time its result was made.
- With `record_content` only: `gen_ai.input.messages`, `gen_ai.output.messages` (the conventions' JSON,
  `uibridge.server.gen_ai_messages`), `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` on the tool
  events, and the agent's exception as an exception event.

Metrics (every one with `uibridge.protocol`):
- `gen_ai.client.operation.duration` (histogram, s): run duration, with `gen_ai.operation.name`,
  `uibridge.run.status`, `error.type`, `gen_ai.provider.name`, `gen_ai.response.model`; its count is the runs
  by status (no separate counter: each measurement costs a request as much as a span's attribute set);
- `gen_ai.client.token.usage` (histogram, `{token}`): a run's tokens by `gen_ai.token.type` (`input`,
  `output`), with `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.response.model`, when its responses
  reported usage;
- `uibridge.request.time_to_first_byte` (histogram, s): by `http.request.method`, `http.response.status_code`;
- `uibridge.requests.rejected` (counter): 4xx answers by `http.response.status_code` and
  `uibridge.rejection.reason`;
- `uibridge.streams.active` (observable up-down counter): event streams being answered (runs and resumes).

Every measurement is made when its request ends, in the context the request arrived in, none of uibridge's
spans current (`RunMeasurements`): with the SDK's default exemplar filter, a measurement then carries an exemplar
of the server's own span when one is current (an ASGI instrumentation's), and none of uibridge's, each of which
would cost more than half a measurement again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation, get_meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from ..core.messages import (
    ModelMessage,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from ..core.metadata import answered_by
from .gen_ai_messages import input_messages, output_messages, tool_result_text
from .run import AgentRun, RunStatus

if TYPE_CHECKING:
    from .telemetry import RequestObservation, RunSummary, Telemetry

PROTOCOL = 'uibridge.protocol'
RUN_STATUS = 'uibridge.run.status'
ERROR_TYPE = 'error.type'
STATUS_CODE = 'http.response.status_code'
OPERATION = 'gen_ai.operation.name'
INVOKE_AGENT = 'invoke_agent'
PROVIDER = 'gen_ai.provider.name'
RESPONSE_MODEL = 'gen_ai.response.model'
TOOL_CALL_EVENT = 'uibridge.tool_call'

_SECONDS = (0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84)
"""Run durations: the conventions' advice for `gen_ai.client.operation.duration`, extended to minutes."""
_TTFB_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_TOKENS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
"""The conventions' advice for `gen_ai.client.token.usage`."""

_REASONS = {
    400: 'bad_request',
    401: 'unauthorized',
    404: 'not_found',
    405: 'method_not_allowed',
    408: 'body_timeout',
    409: 'chat_busy',
    413: 'too_large',
    415: 'unsupported_media_type',
    422: 'invalid_request',
}
"""`uibridge.rejection.reason` by status: what each 4xx of an endpoint means (`body.py`, `limits.py`), unless the
refusal names its reason (`Rejected.reason`: a 413 names the limit it passed, `max_body_bytes`, `max_chat_bytes`
and the others, or `quota`, as does a quota's 429)."""


def _uibridge_version() -> str:
    try:
        return version('uibridge')
    except PackageNotFoundError:
        return ''


class _Meters:
    """The metric instruments, one set per meter provider, shared by every endpoint reporting to it. Active
    streams are counted here and observed when the SDK collects (an observable up-down counter), so a stream
    costs two integer updates rather than two measurements."""

    def __init__(self, meter_provider: MeterProvider | None) -> None:
        meter = get_meter('uibridge', _uibridge_version(), meter_provider=meter_provider)
        self.run_duration = meter.create_histogram(
            'gen_ai.client.operation.duration',
            unit='s',
            description='GenAI operation duration: an agent run, from its first event to its end (its count: runs)',
            explicit_bucket_boundaries_advisory=_SECONDS,
        )
        self.tokens = meter.create_histogram(
            'gen_ai.client.token.usage',
            unit='{token}',
            description="Tokens used by an agent run's model responses",
            explicit_bucket_boundaries_advisory=_TOKENS,
        )
        self.ttfb = meter.create_histogram(
            'uibridge.request.time_to_first_byte',
            unit='s',
            description="Time from a request's arrival to the first byte of its answer's body",
            explicit_bucket_boundaries_advisory=_TTFB_SECONDS,
        )
        self.rejected = meter.create_counter(
            'uibridge.requests.rejected', unit='{request}', description='Requests answered with a 4xx, by reason'
        )
        self.active: dict[str, int] = {}
        """Event streams being answered, by protocol."""
        meter.create_observable_up_down_counter(
            'uibridge.streams.active',
            callbacks=[self._observe_active],
            unit='{stream}',
            description='Event streams being answered',
        )

    def _observe_active(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(count, {PROTOCOL: protocol}) for protocol, count in self.active.items()]


_meters: dict[MeterProvider | None, _Meters] = {}


class Instruments:
    """An endpoint's tracer and meter instruments, made once with the endpoint."""

    def __init__(self, options: Telemetry, protocol: str, agent_name: str) -> None:
        self.protocol = protocol
        self.agent_name = agent_name
        self.run_name = f'{INVOKE_AGENT} {agent_name}'
        self.record_content = options.record_content
        self.record_principal = options.record_principal
        self.span_names: dict[str, str] = {}
        """The request span's name by method, made once each."""
        self.tracer = trace.get_tracer('uibridge', _uibridge_version(), tracer_provider=options.tracer_provider)
        meters = _meters.get(options.meter_provider)
        if meters is None:
            meters = _meters[options.meter_provider] = _Meters(options.meter_provider)
        self.meters = meters
        meters.active.setdefault(protocol, 0)

    def start_request(
        self, method: str, headers: Mapping[str, str], request_id: str, chat_id: object, start_time: int
    ) -> RequestSpan:
        attributes: dict[str, AttributeValue] = {
            'http.request.method': method,
            PROTOCOL: self.protocol,
            'uibridge.request.id': request_id,
        }
        if isinstance(chat_id, str):
            attributes['gen_ai.conversation.id'] = chat_id
        parent = None
        kind = SpanKind.INTERNAL
        if not trace.get_current_span().get_span_context().is_valid:
            # No span of this process is open: the request enters the trace here, under the context its headers
            # carry (a `traceparent`) when they carry one.
            if _carries_context(headers):
                parent = propagate.extract(headers)
            kind = SpanKind.SERVER
        name = self.span_names.get(method)
        if name is None:
            name = self.span_names[method] = f'{method} {self.protocol}'
        span = self.tracer.start_span(name, context=parent, kind=kind, attributes=attributes, start_time=start_time)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        return RequestSpan(self, span, token)


_propagation_fields: tuple[object, frozenset[str]] | None = None
"""The global propagator last seen, and the headers it reads."""


def _carries_context(headers: Mapping[str, str]) -> bool:
    """Whether the request has a header the global propagator reads (`traceparent`, `tracestate`, `baggage` for
    OpenTelemetry's default one): without one, extracting finds nothing, and a request need not pay for looking."""
    global _propagation_fields
    propagator = propagate.get_global_textmap()
    known = _propagation_fields
    if known is None or known[0] is not propagator:
        known = _propagation_fields = (propagator, frozenset(field.lower() for field in propagator.fields))
    return not known[1].isdisjoint(headers)


class RequestSpan:
    __slots__ = ('chat_id', 'ended', 'instruments', 'run_measurements', 'span', 'streaming', 'token')

    def __init__(self, instruments: Instruments, span: Span, token: object) -> None:
        self.instruments = instruments
        self.span = span
        self.token = token
        self.streaming = False
        self.chat_id: str | None = None
        """The chat of the request's run, set on the span with its closing attributes."""
        self.run_measurements: RunMeasurements | None = None
        """The run's measurements, recorded once this span is no longer current (see `RunMeasurements`)."""
        self.ended = False

    def stream_started(self) -> None:
        self.streaming = True
        self.instruments.meters.active[self.instruments.protocol] += 1

    def start_run(self, run: AgentRun) -> RunSpan:
        self.chat_id = run.thread_id
        return RunSpan(self.instruments, self, run)

    def end(self, request: RequestObservation, error: BaseException | None) -> None:
        instruments = self.instruments
        meters = instruments.meters
        span = self.span
        otel_context.detach(self.token)  # pyright: ignore[reportArgumentType]
        self.ended = True
        protocol = instruments.protocol
        if self.streaming:
            meters.active[protocol] -= 1
        status = request.status
        ttfb = request.ttfb
        error_type: str | None = None
        reason: str | None = None
        if error is not None:
            error_type = type(error).__qualname__ if isinstance(error, Exception) else 'cancelled'
        elif status is not None and status >= 400:
            error_type = str(status)
            if status < 500:
                reason = request.rejection or _REASONS.get(status, 'client_error')
        if span.is_recording():  # a sampled-out request, or no SDK: no attributes to build
            attributes: dict[str, AttributeValue] = {}
            if self.chat_id is not None:
                attributes['gen_ai.conversation.id'] = self.chat_id
            if status is not None:
                attributes[STATUS_CODE] = status
                if ttfb is not None:
                    attributes['uibridge.response.time_to_first_byte'] = ttfb
            if error_type is not None:
                attributes[ERROR_TYPE] = error_type
            if reason is not None:
                attributes['uibridge.rejection.reason'] = reason
            span.set_attributes(attributes)
            if isinstance(error, Exception):
                span.set_status(Status(StatusCode.ERROR, error_type))
            elif error is None and reason is None and error_type is not None:  # a 5xx
                span.set_status(Status(StatusCode.ERROR))
        span.end()
        if ttfb is not None and status is not None:
            meters.ttfb.record(ttfb, {PROTOCOL: protocol, 'http.request.method': request.method, STATUS_CODE: status})
        if reason is not None:
            meters.rejected.add(1, {PROTOCOL: protocol, STATUS_CODE: status, 'uibridge.rejection.reason': reason})
        if self.run_measurements is not None:
            self.run_measurements.record()


class RunMeasurements:
    """A run's duration and token counts, recorded in the context the request arrived in (after its span was
    detached), not while uibridge's spans are current: the SDK's default exemplar filter then keeps no exemplar
    pointing at them, and an exemplar costs a measurement more than half again. Under a server's own span (ASGI
    instrumentation), the measurements' exemplars point at that one."""

    __slots__ = ('attributes', 'duration', 'meters', 'tokens')

    def __init__(
        self, meters: _Meters, duration: float, attributes: dict[str, AttributeValue], tokens: tuple[int, int] | None
    ) -> None:
        self.meters = meters
        self.duration = duration
        self.attributes = attributes
        self.tokens = tokens

    def record(self) -> None:
        attributes = self.attributes
        if self.tokens is not None:
            # The token counts' attributes: the conventions' for `gen_ai.client.token.usage` (and the protocol),
            # without the run's status and error: the fewer attributes, the cheaper each measurement. A mapping of
            # its own for each point, never changed after: the SDK may keep the one it is given as the point's
            # attributes (1.30 does), so reusing one dict would give both points the last type.
            counted: dict[str, AttributeValue] = {PROTOCOL: attributes[PROTOCOL], OPERATION: INVOKE_AGENT}
            if PROVIDER in attributes:
                counted[PROVIDER] = attributes[PROVIDER]
            if RESPONSE_MODEL in attributes:
                counted[RESPONSE_MODEL] = attributes[RESPONSE_MODEL]
            output = counted.copy()
            counted['gen_ai.token.type'] = 'input'
            output['gen_ai.token.type'] = 'output'
            self.meters.tokens.record(self.tokens[0], counted)
            self.meters.tokens.record(self.tokens[1], output)
        self.meters.run_duration.record(self.duration, attributes)


class RunSpan:
    __slots__ = ('instruments', 'request_span', 'span', 'start_ns', 'token')

    def __init__(self, instruments: Instruments, request_span: RequestSpan, run: AgentRun) -> None:
        self.instruments = instruments
        self.request_span = request_span
        attributes: dict[str, AttributeValue] = {
            OPERATION: INVOKE_AGENT,
            'gen_ai.agent.name': instruments.agent_name,
            'gen_ai.conversation.id': run.thread_id,
            'uibridge.run.id': run.run_id,
            'uibridge.run.trigger': run.trigger,
            PROTOCOL: instruments.protocol,
        }
        if instruments.record_principal and run.principal is not None:
            attributes['user.id'] = run.principal
        self.start_ns = time.time_ns()
        self.span = span = instruments.tracer.start_span(
            instruments.run_name, kind=SpanKind.INTERNAL, attributes=attributes, start_time=self.start_ns
        )
        if instruments.record_content and span.is_recording():
            span.set_attribute('gen_ai.input.messages', _json(input_messages(run.messages)))
        self.token = otel_context.attach(trace.set_span_in_context(span))

    def end(
        self,
        run: AgentRun,
        status: RunStatus,
        error_type: str | None,
        summary: RunSummary,
        duration: float,
        new_messages: Sequence[ModelMessage],
    ) -> None:
        instruments = self.instruments
        span = self.span
        otel_context.detach(self.token)
        if status == 'cancelled':
            error_type = 'cancelled'
        if span.is_recording():
            self._describe(run, status, error_type, summary, new_messages)
        span.end()
        attributes: dict[str, AttributeValue] = {
            PROTOCOL: instruments.protocol,
            OPERATION: INVOKE_AGENT,
            RUN_STATUS: status,
        }
        if summary.provider is not None:
            attributes[PROVIDER] = summary.provider
        if summary.model is not None:
            attributes[RESPONSE_MODEL] = summary.model
        if error_type is not None:
            attributes[ERROR_TYPE] = error_type
        tokens = (summary.input_tokens, summary.output_tokens) if summary.usage_reported else None
        measurements = RunMeasurements(instruments.meters, duration, attributes, tokens)
        if self.request_span.ended:  # a run outliving its request: nothing of uibridge's is current any more
            measurements.record()
        else:
            self.request_span.run_measurements = measurements

    def _describe(
        self,
        run: AgentRun,
        status: RunStatus,
        error_type: str | None,
        summary: RunSummary,
        new_messages: Sequence[ModelMessage],
    ) -> None:
        span = self.span
        record_content = self.instruments.record_content
        attributes: dict[str, AttributeValue] = {RUN_STATUS: status}
        if error_type is not None:
            attributes[ERROR_TYPE] = error_type
        if summary.usage_reported:
            attributes['gen_ai.usage.input_tokens'] = summary.input_tokens
            attributes['gen_ai.usage.output_tokens'] = summary.output_tokens
            for name, count in (
                ('gen_ai.usage.cache_read.input_tokens', summary.cache_read_tokens),
                ('gen_ai.usage.cache_creation.input_tokens', summary.cache_write_tokens),
                ('gen_ai.usage.reasoning.output_tokens', summary.reasoning_tokens),
            ):
                if count:
                    attributes[name] = count
        if summary.model is not None:
            attributes[RESPONSE_MODEL] = summary.model
        if summary.provider is not None:
            attributes[PROVIDER] = summary.provider
        if summary.response_id is not None:
            attributes['gen_ai.response.id'] = summary.response_id
        if summary.finish_reasons:
            attributes['gen_ai.response.finish_reasons'] = summary.finish_reasons
        if record_content:
            attributes['gen_ai.output.messages'] = _json(output_messages(new_messages))
        span.set_attributes(attributes)
        if status == 'failed':
            span.set_status(Status(StatusCode.ERROR, error_type))
            if record_content and run.error is not None:
                span.record_exception(run.error)
        now = time.time_ns()
        for call in _tool_calls(new_messages):
            at = now if call.at is None else min(max(call.at, self.start_ns), now)
            span.add_event(TOOL_CALL_EVENT, call.attributes(record_content), timestamp=at)


class _ToolCall:
    __slots__ = ('at', 'content', 'function', 'outcome', 'part')

    def __init__(self, part: ToolCallPart | NativeToolCallPart, outcome: str) -> None:
        self.part = part
        self.function = isinstance(part, ToolCallPart)
        self.outcome = outcome
        self.content: Any = _NO_RESULT
        self.at: int | None = None

    def answer(self, outcome: str, content: Any, at: datetime) -> None:
        self.outcome = outcome
        self.content = content
        self.at = int(at.timestamp() * 1e9)

    def attributes(self, record_content: bool) -> dict[str, AttributeValue]:
        part = self.part
        attributes: dict[str, AttributeValue] = {
            'gen_ai.tool.name': part.tool_name,
            'gen_ai.tool.call.id': part.tool_call_id,
            'uibridge.tool.outcome': self.outcome,
        }
        if self.function:
            attributes['gen_ai.tool.type'] = 'function'
        if record_content:
            attributes['gen_ai.tool.call.arguments'] = part.args_as_json_str()
            if self.content is not _NO_RESULT:
                attributes['gen_ai.tool.call.result'] = tool_result_text(self.content)
        return attributes


_NO_RESULT = object()


def _tool_calls(messages: Sequence[ModelMessage]) -> list[_ToolCall]:
    """The run's tool calls in order, each with how it ended (its result in this run, or what it waits for)."""
    calls: dict[str, _ToolCall] = {}
    for message in messages:
        if isinstance(message, ModelResponse):
            waits = answered_by(message.metadata)
            for part in message.parts:
                if isinstance(part, ToolCallPart | NativeToolCallPart):
                    waiting = waits.get(part.tool_call_id)
                    outcome = f'awaiting_{waiting}' if waiting in ('client', 'approval') else 'no_result'
                    calls[part.tool_call_id] = _ToolCall(part, outcome)
                elif isinstance(part, NativeToolReturnPart) and (call := calls.get(part.tool_call_id)):
                    call.answer('success', part.content, part.timestamp)
        else:
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and (call := calls.get(part.tool_call_id)):
                    call.answer(part.outcome, part.content, part.timestamp)
                elif isinstance(part, RetryPromptPart) and (call := calls.get(part.tool_call_id)):
                    call.answer('retry', part.content, part.timestamp)
    return list(calls.values())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(',', ':'))
