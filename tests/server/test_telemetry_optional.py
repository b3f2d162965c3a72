"""OpenTelemetry is optional: without the package an app serves as always, with its request ids and run log,
and imports nothing of it; with it, the default reports to the global providers an application's SDK set-up
installs. Each in a fresh interpreter: the global providers can be set once per process, and a module
imported by an earlier test cannot be un-imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

REQUEST = """
import asyncio, logging, sys
import httpx
from uibridge.server import create_app
from uibridge.core.events import PartStart
from uibridge.core.messages import TextPart

async def agent(run):
    yield PartStart(0, TextPart(content='hello'))

records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger('uibridge.server').addHandler(handler)
logging.getLogger('uibridge.server').setLevel(logging.INFO)

async def ask():
    app = create_app(agent)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        body = {'id': 'c1', 'messages': [{'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}]}
        return await client.post('/api/chat', json=body, headers={'x-request-id': 'sub-1'})

response = asyncio.run(ask())
assert response.status_code == 200, response.status_code
assert response.headers['x-request-id'] == 'sub-1'
[record] = [r for r in records if getattr(r, 'run_id', None)]
assert (record.request_id, record.status) == ('sub-1', 'finished'), record.getMessage()
"""

WITHOUT_OPENTELEMETRY = """
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == 'opentelemetry' or name.startswith('opentelemetry.'):
            raise ModuleNotFoundError(f'No module named {name!r}', name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""

AFTER_THE_REQUEST_WITHOUT = """
loaded = sorted(name for name in sys.modules if name.split('.')[0] == 'opentelemetry')
assert loaded == [], loaded
print('served without opentelemetry')
"""

GLOBAL_PROVIDERS = """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
reader = InMemoryMetricReader()
"""

AFTER_THE_REQUEST_WITH = """
names = sorted(span.name for span in exporter.get_finished_spans())
assert names == ['POST vercel-ai', 'invoke_agent agent'], names
runs = [m for r in reader.get_metrics_data().resource_metrics for s in r.scope_metrics for m in s.metrics
        if m.name == 'gen_ai.client.operation.duration']
assert runs and runs[0].data.data_points[0].count == 1
print('reported to the global providers')
"""


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_without_the_package_an_app_serves_and_imports_nothing_of_it() -> None:
    assert run_python(WITHOUT_OPENTELEMETRY + REQUEST + AFTER_THE_REQUEST_WITHOUT).strip() == (
        'served without opentelemetry'
    )


def test_by_default_spans_and_metrics_go_to_the_global_providers_even_when_set_after_the_app_is_made() -> None:
    # The app is made before the SDK's providers are set (an app module imported before the SDK set-up runs):
    # the endpoints' tracer and meter are OpenTelemetry's proxies, which follow the providers set later.
    code = GLOBAL_PROVIDERS + REQUEST.replace(
        'async def ask():\n    app = create_app(agent)\n',
        'app = create_app(agent)\n'
        'trace.set_tracer_provider(tracer_provider)\n'
        'metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))\n\n'
        'async def ask():\n',
    )
    assert 'trace.set_tracer_provider' in code
    assert run_python(code + AFTER_THE_REQUEST_WITH).strip() == 'reported to the global providers'
