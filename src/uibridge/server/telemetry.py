"""What an endpoint tells the operator: one log record per run, request ids, and OpenTelemetry when installed.

Per request, `Observer.request` wraps the ASGI `send` of the endpoint's answer: it adds the `x-request-id`
header (`request_ids`), and notes the status and when the first body byte left (a stream's later frames go
around it). Per run, `observe_run` (a
`with` around the streamed run) notes when the run started and, when it ended, reads what it produced:
`run.status`, `run.error`, and the encoder's new messages (token usage, model, provider, finish reasons, tool
calls and their results). Nothing here runs per event: a stream's cost does not grow with telemetry.

- **The run log line**: one record per run at INFO on the `uibridge.server` logger, a readable message and
  the same facts as `extra=` fields (`RUN_LOG_FIELDS`) for a structured formatter.
- **OpenTelemetry** (`uibridge.server.otel`): a span per request and per run, and metrics, when the
  `opentelemetry-api` package is installed (the `otel` extra) and the endpoint's `telemetry` option is not
  `False`. Without the package, nothing of OpenTelemetry is imported or run.

`Telemetry` is the endpoint's `telemetry=` option: the providers to report to (OpenTelemetry's global ones by
default, which the application's SDK set-up configures), and what may be recorded beyond the defaults (the
conversation's content, the principal).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..core.messages import ModelMessage, ModelResponse
from ..core.stream import EventStreamEncoder
from .asgi import Message, Scope, Send
from .request_ids import ResponseWatch, request_id_for
from .run import AgentRun, RunStatus

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from .otel import Instruments, RequestSpan, RunSpan

logger = logging.getLogger('uibridge.server')

RUN_LOG_FIELDS = (
    'request_id',
    'protocol',
    'chat_id',
    'run_id',
    'principal',
    'status',
    'duration_ms',
    'ttfb_ms',
    'input_tokens',
    'output_tokens',
    'model',
    'error_type',
)
"""The `extra=` fields of the run log record (`principal` is `None` unless `Telemetry.record_principal`; the
two token counts are `None` when the run's responses reported no usage, `ttfb_ms` when no byte was sent)."""

_EVENT_STREAM = b'text/event-stream'


@dataclass(frozen=True)
class Telemetry:
    """An endpoint's `telemetry=` option (`True`, the default, is `Telemetry()`; `False` turns OpenTelemetry off
    for the endpoint; the run log line is the logging configuration's to keep or drop).

    - `tracer_provider`, `meter_provider`: where spans and metrics go; `None` (the default) for OpenTelemetry's
      global providers, so an application that sets up the SDK once gets uibridge's spans and metrics too.
    - `record_content` (default false): also record what was said: the run's input and output messages
      (`gen_ai.input.messages`, `gen_ai.output.messages`), tool call arguments and results, and the agent's
      exception text. Off, spans hold ids, names, counts and outcomes only.
    - `record_principal` (default false): record who asked (`run.principal`) on the run's span (`user.id`) and
      in its log record.
    - `agent_name`: the `gen_ai.agent.name` of the runs; by default the agent's `name` attribute, else its
      function or class name.
    """

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    record_content: bool = False
    record_principal: bool = False
    agent_name: str | None = None


@dataclass
class RunSummary:
    """What a run's new responses say about it, read once when it ends."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    usage_reported: bool = False
    model: str | None = None
    provider: str | None = None
    response_id: str | None = None
    finish_reasons: list[str] = field(default_factory=list[str])

    @classmethod
    def of(cls, messages: Sequence[ModelMessage]) -> RunSummary:
        summary = cls()
        for message in messages:
            if not isinstance(message, ModelResponse):
                continue
            summary.model = message.model_name or summary.model
            summary.provider = message.provider_name or summary.provider
            summary.response_id = message.provider_response_id or summary.response_id
            if message.finish_reason is not None:
                summary.finish_reasons.append(message.finish_reason)
            usage = message.usage
            if usage is not None:
                summary.usage_reported = True
                summary.input_tokens += usage.input_tokens
                summary.output_tokens += usage.output_tokens
                summary.cache_read_tokens += usage.cache_read_tokens
                summary.cache_write_tokens += usage.cache_write_tokens
                summary.reasoning_tokens += usage.output_reasoning_tokens
        return summary


class Observer:
    """An endpoint's telemetry, built once with it: its options, and its OpenTelemetry instruments when
    OpenTelemetry is installed and wanted."""

    def __init__(self, telemetry: Telemetry | bool, agent: object, protocol: str) -> None:
        if not isinstance(telemetry, Telemetry | bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'telemetry must be a Telemetry, True or False, not {telemetry!r}')
        options = telemetry if isinstance(telemetry, Telemetry) else Telemetry()
        self.protocol = protocol
        self.record_principal = options.record_principal
        self.instruments: Instruments | None = None
        if telemetry is not False:
            self.instruments = _instruments(options, protocol, options.agent_name or _agent_name(agent))

    def request(self, scope: Scope, headers: Mapping[str, str], send: Send) -> RequestObservation:
        """The observation of one request: enter it around the request's handling, answer through its `send`."""
        return RequestObservation(self, scope, headers, send)


def _instruments(options: Telemetry, protocol: str, agent_name: str) -> Instruments | None:
    try:
        from .otel import Instruments
    except ImportError:  # opentelemetry-api is not installed: the `otel` extra
        return None
    return Instruments(options, protocol, agent_name)


def _agent_name(agent: object) -> str:
    name = getattr(agent, 'name', None)
    if isinstance(name, str) and name:
        return name
    name = getattr(agent, '__name__', None)
    return name if isinstance(name, str) else type(agent).__name__


_current: ContextVar[RequestObservation | None] = ContextVar('uibridge_request', default=None)


class RequestObservation:
    """One request as telemetry sees it (`Observer.request`): entered around its handling, answered through
    `send`, which adds the request id and notes the status and the time of the first body byte (a
    `ResponseWatch`)."""

    __slots__ = (
        '_headers',
        '_scope',
        '_token',
        'method',
        'observer',
        'rejection',
        'send',
        'span',
        'streaming',
        'watch',
    )

    def __init__(self, observer: Observer, scope: Scope, headers: Mapping[str, str], send: Send) -> None:
        self.observer = observer
        watch = self.watch = ResponseWatch(request_id_for(headers), send)
        self.send = watch.send
        self.method: str = scope.get('method', '')
        self.streaming = False
        self.rejection: str | None = None
        """Why the request was refused, when its status alone does not say (`note_rejection`)."""
        self.span: RequestSpan | None = None
        self._scope = scope
        self._headers = headers
        self._token: Token[RequestObservation | None] | None = None

    @property
    def request_id(self) -> str:
        return self.watch.request_id

    @property
    def status(self) -> int | None:
        return self.watch.status

    @property
    def ttfb(self) -> float | None:
        """Seconds from the request's arrival to the first byte of its answer's body, once it was sent."""
        first_byte = self.watch.first_byte
        return None if first_byte is None else first_byte - self.watch.arrived

    def __enter__(self) -> RequestObservation:
        instruments = self.observer.instruments
        if instruments is not None:
            chat_id = self._scope.get('path_params', {}).get('chat_id')
            try:
                self.span = instruments.start_request(
                    self.method, self._headers, self.request_id, chat_id, time.time_ns()
                )
                self.watch.on_start = self._started
            except Exception:  # telemetry never fails a request
                logger.exception('Starting the span of request %s failed', self.request_id)
        self._token = _current.set(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._token is not None:
            _current.reset(self._token)
        if self.span is not None:
            try:
                self.span.end(self, error)
            except Exception:
                logger.exception('Recording the request %s in OpenTelemetry failed', self.request_id)

    def _started(self, message: Message) -> None:
        if self.span is not None and _streams(message):
            self.streaming = True
            self.span.stream_started()


def note_rejection(reason: str | None) -> None:
    """Tell the current request's telemetry why the endpoint refuses it (`Rejected.reason`: which limit a 413
    passed), for `uibridge.rejection.reason`."""
    observation = _current.get()
    if observation is not None:
        observation.rejection = reason


def _streams(message: Message) -> bool:
    for key, value in message.get('headers', ()):
        if key.lower() == b'content-type':
            return value.startswith(_EVENT_STREAM)
    return False


def observe_run(run: AgentRun, encoder: EventStreamEncoder) -> RunObservation:
    """Enter around a run's stream (both modes of an endpoint do): on leaving, the run's span ends, its metrics
    and its log record are written, from `run` and `encoder.new_messages`."""
    return RunObservation(_current.get(), run, encoder)


class RunObservation:
    __slots__ = ('encoder', 'request', 'run', 'span', 'start')

    def __init__(self, request: RequestObservation | None, run: AgentRun, encoder: EventStreamEncoder) -> None:
        self.request = request
        self.run = run
        self.encoder = encoder
        self.start = 0.0
        self.span: RunSpan | None = None

    def __enter__(self) -> RunObservation:
        self.start = time.perf_counter()
        request = self.request
        if request is not None and request.span is not None:
            try:
                self.span = request.span.start_run(self.run)
            except Exception:  # telemetry never fails a run
                logger.exception('Starting the span of run %.64r failed', self.run.run_id)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        duration = time.perf_counter() - self.start
        run = self.run
        logged = self.request is not None and logger.isEnabledFor(logging.INFO)
        if self.span is None and not logged:
            return  # nobody to tell: the run's messages are not even read
        try:
            status, error_type = _outcome(run, error)
            new_messages = self.encoder.new_messages
            summary = RunSummary.of(new_messages)
            if self.span is not None:
                self.span.end(run, status, error_type, summary, duration, new_messages)
            if logged and self.request is not None:
                _log_run(self.request, run, status, error_type, summary, duration)
        except Exception:
            logger.exception('Recording run %.64r failed', run.run_id)


def _outcome(run: AgentRun, error: BaseException | None) -> tuple[RunStatus, str | None]:
    """How the run ended, and the error's class when it failed. An exception leaving the stream is a failure;
    a cancellation (the server shutting down) or a run still marked running is a cancelled run."""
    if isinstance(error, Exception):
        return 'failed', type(error).__qualname__
    if error is not None or run.status == 'running':
        return 'cancelled', None
    if run.status == 'failed':
        return 'failed', type(run.error).__qualname__ if run.error is not None else 'RunError'
    return run.status, None


def _log_run(
    request: RequestObservation,
    run: AgentRun,
    status: RunStatus,
    error_type: str | None,
    summary: RunSummary,
    duration: float,
) -> None:
    ttfb = request.ttfb
    principal = run.principal if request.observer.record_principal else None
    extra: dict[str, Any] = {
        'request_id': request.request_id,
        'protocol': run.protocol,
        'chat_id': run.thread_id,
        'run_id': run.run_id,
        'principal': principal,
        'status': status,
        'duration_ms': round(duration * 1000, 1),
        'ttfb_ms': None if ttfb is None else round(ttfb * 1000, 1),
        'input_tokens': summary.input_tokens if summary.usage_reported else None,
        'output_tokens': summary.output_tokens if summary.usage_reported else None,
        'model': summary.model,
        'error_type': error_type,
    }
    # Ids are the client's: quoted and cut short (`%.64r`), so a newline or a huge id cannot forge or flood a line.
    text = '%s run %.64r on chat %.64r %s%s in %.1f ms'
    args: list[Any] = [run.protocol, run.run_id, run.thread_id, status]
    args.append(f' ({error_type})' if error_type else '')
    args.append(duration * 1000)
    if ttfb is not None:
        text += ', first byte after %.1f ms'
        args.append(ttfb * 1000)
    if summary.usage_reported:
        text += ', %d input / %d output tokens'
        args += [summary.input_tokens, summary.output_tokens]
    if principal is not None:
        text += ', for %.64r'
        args.append(principal)
    text += ' [request %s]'
    args.append(request.request_id)
    logger.info(text, *args, extra=extra)
