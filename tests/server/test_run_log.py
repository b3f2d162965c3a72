"""The run log line: one record per run at INFO on `uibridge.server`, its facts as `extra=` fields and in a
readable message, with the request's id; OpenTelemetry on or off."""

from __future__ import annotations

import logging

import pytest
from telemetry_support import (
    API,
    CHAT,
    PROMPT,
    PROTOCOLS,
    SECRETS,
    Agent,
    Protocol,
    app_client,
    body,
    by_header,
    disconnecting,
)

from uibridge.server import create_app
from uibridge.server.telemetry import RUN_LOG_FIELDS, Telemetry

pytestmark = pytest.mark.anyio


def run_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == 'uibridge.server' and hasattr(r, 'run_id')]


def fields(record: logging.LogRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in RUN_LOG_FIELDS}


@pytest.mark.parametrize('managed', [False, True], ids=['client-held', 'managed'])
@pytest.mark.parametrize('protocol', PROTOCOLS)
async def test_a_finished_run_writes_one_info_record_with_its_facts(
    caplog: pytest.LogCaptureFixture, protocol: Protocol, managed: bool
) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    agent = Agent()
    async with app_client(agent, managed=managed, telemetry=False, authorize=by_header) as client:
        response = await client.post(
            API[protocol], json=body(protocol), headers={'x-request-id': 'lb-7f3a', 'x-user': 'alice-user'}
        )
    assert response.headers['x-request-id'] == 'lb-7f3a'
    [record] = run_records(caplog)
    assert record.levelno == logging.INFO
    logged = fields(record)
    duration, ttfb = logged.pop('duration_ms'), logged.pop('ttfb_ms')
    assert logged == {
        'request_id': 'lb-7f3a',
        'protocol': protocol,
        'chat_id': CHAT,
        'run_id': agent.run_ids[0],
        'principal': None,  # not unless the application allows it
        'status': 'finished',
        'input_tokens': 30,
        'output_tokens': 10,
        'model': 'm-1',
        'error_type': None,
    }
    assert isinstance(duration, float) and isinstance(ttfb, float)
    assert ttfb > 0 and duration > 0
    message = record.getMessage()
    assert message.startswith(f"{protocol} run '{agent.run_ids[0]}' on chat '{CHAT}' finished in ")
    assert ', 30 input / 10 output tokens [request lb-7f3a]' in message
    assert 'alice-user' not in message
    for secret in SECRETS:
        assert secret not in message


async def test_the_principal_is_logged_when_the_application_allows_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    telemetry = Telemetry(record_principal=True)
    async with app_client(Agent(), managed=True, telemetry=telemetry, authorize=by_header) as client:
        await client.post('/api/chat', json=body('vercel-ai'), headers={'x-user': 'alice-user'})
    [record] = run_records(caplog)
    assert fields(record)['principal'] == 'alice-user'
    assert record.getMessage().endswith(f", for 'alice-user' [request {fields(record)['request_id']}]")


async def test_a_failed_run_logs_its_error_class(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    async with app_client(Agent('fail'), managed=False) as client:
        response = await client.post('/api/chat', json=body('vercel-ai'))
    [record] = run_records(caplog)
    assert (fields(record)['status'], fields(record)['error_type']) == ('failed', 'RuntimeError')
    assert fields(record)['input_tokens'] == 10
    assert ' failed (RuntimeError) in ' in record.getMessage()
    assert fields(record)['request_id'] == response.headers['x-request-id']


async def test_a_run_whose_client_went_away_logs_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    agent = Agent('wait')
    app = create_app(agent)
    sent = await disconnecting(app.state.ag_ui, body('ag-ui'), agent.streaming)
    [record] = run_records(caplog)
    logged = fields(record)
    assert (logged['status'], logged['error_type'], logged['request_id']) == ('cancelled', None, 'gone-1')
    assert (logged['input_tokens'], logged['output_tokens']) == (None, None)  # no response reported usage
    assert ' cancelled in ' in record.getMessage()
    [start] = [m for m in sent if m['type'] == 'http.response.start']
    assert (b'x-request-id', b'gone-1') in start['headers']


async def test_refused_requests_write_no_run_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    async with app_client(Agent(), managed=True) as client:
        assert (await client.post('/api/chat', json={'id': CHAT})).status_code == 422
    assert run_records(caplog) == []


async def test_a_clients_ids_cannot_break_the_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger='uibridge.server')
    forged_chat = 'c\nINFO uibridge.server forged line ' + 'x' * 200
    async with app_client(Agent(), managed=False) as client:
        await client.post('/api/chat', json=body('vercel-ai', chat=forged_chat, prompt=PROMPT))
    [record] = run_records(caplog)
    message = record.getMessage()
    assert '\n' not in message
    assert "on chat 'c\\nINFO uibridge.server forged line xxx" in message
    assert 'x' * 100 not in message
    assert fields(record)['chat_id'] == forged_chat  # the field keeps it whole, for a structured formatter


async def test_no_record_below_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger='uibridge.server')
    async with app_client(Agent(), managed=False) as client:
        assert (await client.post('/api/chat', json=body('vercel-ai'))).status_code == 200
    assert run_records(caplog) == []
