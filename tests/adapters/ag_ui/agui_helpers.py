"""Shared by the AG-UI adapter tests: SSE parsing, the Node replay, ag-ui-validate, and the comparisons.

The comparisons say exactly what they ignore and why; everything else must be equal.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from ag_ui_validate.pytest_plugin import validate_agui

from neutral_views import without_extras
from uibridge import ModelMessage, ModelMessagesTypeAdapter, NativeToolCallPart, ToolCallPart
from uibridge.adapters.ag_ui._wire import METADATA_KEY

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ROOT / 'tests' / 'clients'
FIXTURES = ROOT / 'fixtures' / 'ag_ui'
REGENERATE = os.environ.get('UIBRIDGE_REGENERATE_GOLDEN') == '1'


def sse_events(data: bytes) -> list[dict[str, Any]]:
    """The events of an SSE body, checking the framing the TS client needs: `data: <json>\\n\\n`, LF only."""
    assert b'\r' not in data, 'SSE framing must be LF only'
    assert data.endswith(b'\n\n'), 'the stream must end with a complete frame'
    events: list[dict[str, Any]] = []
    for frame in data.decode().split('\n\n')[:-1]:
        assert frame.startswith('data: ') and '\n' not in frame, f'one data line per frame: {frame[:80]!r}'
        event = json.loads(frame[len('data: ') :])
        assert isinstance(event, dict)
        events.append(event)
    return events


_APPLICATION_DATA = frozenset(
    {
        ('CUSTOM', 'value'),
        ('STATE_SNAPSHOT', 'snapshot'),
        ('STATE_DELTA', 'delta'),
        ('ACTIVITY_SNAPSHOT', 'content'),
        ('ACTIVITY_DELTA', 'patch'),
        ('RAW', 'event'),
    }
)


def assert_no_nulls(event: dict[str, Any]) -> None:
    """No optional field may be `null` (the TS client rejects most of them): the event's own fields, its
    outcome and interrupts, and uibridge's records. Application data (`_APPLICATION_DATA`: custom values,
    state, activity content, raw events and patches to them; a tool result's or a response's own metadata)
    may hold `null` as a value."""

    def check(value: Any, where: str, skip: frozenset[str] = frozenset()) -> None:
        assert value is not None, f'null at {where}'
        if isinstance(value, dict):
            for key, item in value.items():
                if key not in skip:
                    check(item, f'{where}.{key}', skip)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                check(item, f'{where}.{index}', skip)

    for key, value in event.items():
        if (event['type'], key) in _APPLICATION_DATA:
            continue
        check(value, key, frozenset({'metadata'}) if key == 'metadata' else frozenset())
    records = (event.get('metadata') or {}).get('uibridge') or {}
    for name, record in records.items():
        # A message's records are objects; a tool call's `uibridge` holds its `sig` and `client` mark directly.
        if isinstance(record, dict):
            record = {k: v for k, v in record.items() if k != 'metadata'}
        check(record, f'metadata.uibridge.{name}')


def replay(cases: Sequence[dict[str, Any]], script: str = 'agui_replay.mjs') -> list[dict[str, Any]]:
    """Run every case through `@ag-ui/client` in one Node process (a script in tests/clients/)."""
    node = shutil.which('node')
    if node is None:
        pytest.fail('node is not on PATH: the AG-UI checks need Node 20 (see the Makefile)')
    if not (CLIENTS / 'node_modules' / '@ag-ui' / 'client').is_dir():
        pytest.fail('tests/clients/node_modules is missing: run `make install` (npm ci) first')
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as handle:
        json.dump(list(cases), handle)
    try:
        completed = subprocess.run(
            [node, str(CLIENTS / script), handle.name],
            cwd=CLIENTS,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.unlink(handle.name)
    assert completed.returncode == 0, completed.stderr
    results: list[dict[str, Any]] = json.loads(completed.stdout)
    assert [r['name'] for r in results] == [c['name'] for c in cases]
    return results


def validator_findings(events: list[dict[str, Any]], overrides: dict[str, str] | None = None) -> list[str]:
    """ag-ui-validate's findings (it knows 0.x). Where it disagrees with the 1.0 client the client wins:
    the caller turns a rule off in `overrides` and says why, next to the call."""
    report = validate_agui(events, severity_overrides=overrides or None)
    return [f'{d.rule} {d.severity}: {d.message} (event {d.event_index})' for d in report.diagnostics]


# -------------------------------------------------------------------------------------------- comparisons


def comparable_history(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """A history as JSON, reduced to what a faithful AG-UI round trip must keep.

    Ignored, and why:
    - the keys pydantic-ai stores that uibridge has no field for (`neutral_views`);
    - `metadata["uibridge_ag_ui"]`: the AG-UI ids and client metadata a load records so that a dump can
      give them back; it is bookkeeping for the round trip, not conversation (an empty metadata dict left
      behind counts as none).
    - A tool call's `args` are compared as `args_as_dict()`: a dict goes out as its JSON text and comes
      back the same dict, but `None` and `'{}'` both travel as `"{}"`, and a JSON-object string comes
      back parsed, exactly as the neutral collector parses streamed arguments. A native call's the same way
      (as the JSON value of `args_as_json_str()`).
    - Each validation error's `ctx` (and for retry feedback also `input`): the feedback marker leaves them
      out by design (it discloses no more than the rendered text), and a tool retry's `ctx` may
      hold objects that are not JSON.
    """
    result: list[dict[str, Any]] = []
    for message in without_extras(list(messages)):
        data: dict[str, Any] = ModelMessagesTypeAdapter.dump_python([message], mode='json')[0]
        metadata = {k: v for k, v in (data.get('metadata') or {}).items() if k != METADATA_KEY}
        data['metadata'] = metadata or None
        parts: list[dict[str, Any]] = []
        for part, original in zip(data['parts'], message.parts, strict=True):
            kind = part['part_kind']
            if kind == 'tool-call':
                assert isinstance(original, ToolCallPart)
                part['args'] = original.args_as_dict()
            if kind == 'builtin-tool-call':
                assert isinstance(original, NativeToolCallPart)
                with contextlib.suppress(ValueError):
                    part['args'] = json.loads(original.args_as_json_str())
            if kind in ('retry-prompt', 'retry-feedback') and isinstance(part['content'], list):
                dropped = ('ctx',) if kind == 'retry-prompt' else ('ctx', 'input')
                part['content'] = [{k: v for k, v in e.items() if k not in dropped} for e in part['content']]
            parts.append(part)
        if not parts and data['kind'] == 'response':
            continue
        data['parts'] = parts
        result.append(data)
    return result


LATE_RESPONSE_FIELDS = ('usage', 'provider_response_id', 'provider_details')
"""What a `ResponseInfo` sets on a response once its first message (and record) has gone (see `client_view`)."""


def client_view(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """AG-UI messages (SDK models or the client's JSON) reduced to what the live stream can give the client.

    Ignored, and why:
    - A tool message's `error`: `TOOL_CALL_RESULT` has no field for it and the reducer never sets one
      (`@ag-ui/client src/apply/default.ts`); the part record's `kind` / `outcome` carry the same fact.
    - `finish_reason` and `metadata` in a response record: they are known only once the response (or the
      run) ends, after the client built the message from its START event; the encoder does not re-open a
      message to patch it. (`metadata` holds the response's CustomData, which streamed as CUSTOM events.)
      The same for the late facts `ResponseInfo` gives (`usage`, `provider_response_id`, `provider_details`):
      the stream sends them as `CUSTOM uibridge.response_info` and `RUN_FINISHED.usage`.
    - The spelling of a tool call's `arguments` when they are JSON: the stream forwards the model's own
      argument text, which the collector keeps as the dict it spells, and a dump writes that dict compact.
      Arguments are compared as the JSON value they parse to (text that is not JSON is compared as is).
    - `activity` messages: the reducer makes one of each `ACTIVITY_SNAPSHOT`; they are UI-only, never kept.
    """
    result: list[dict[str, Any]] = []
    for message in messages:
        data = message.model_dump(by_alias=True, mode='json') if hasattr(message, 'model_dump') else dict(message)
        data = json.loads(json.dumps(data))
        if data.get('role') == 'activity':
            continue
        if data.get('role') == 'tool':
            data.pop('error', None)
        for call in data.get('toolCalls') or []:
            with contextlib.suppress(ValueError):
                call['function']['arguments'] = json.loads(call['function']['arguments'])
        record = ((data.get('metadata') or {}).get('uibridge') or {}).get('response')
        if isinstance(record, dict):
            for late in ('finish_reason', 'metadata', 'state_sig', 'state_json', *LATE_RESPONSE_FIELDS):
                record.pop(late, None)  # the state's signature and text go with the metadata that holds it
        result.append(data)
    return result


_TIMESTAMP_MS = re.compile(rb'"timestamp":\d+')
_ISO = re.compile(rb'"timestamp":"\d{4}-\d\d-\d\dT[0-9:.]+Z"')
_CLOCK_SIGNED = re.compile(rb'("timestamp":"<now>","outcome":"failed","sig":")v1\.[0-9a-f]{32}')


def stable_sse(data: bytes) -> bytes:
    """An SSE body with clock readings (event timestamps, a new response's timestamp) made constant."""
    data = _TIMESTAMP_MS.sub(b'"timestamp":0', data)
    data = _ISO.sub(b'"timestamp":"<now>"', data)
    # The failed result a run's error gives a call it cut off is stamped with the clock, and signed with that
    # reading: its signature is made constant with it.
    return _CLOCK_SIGNED.sub(rb'\1<sig>', data)


def golden(name: str, actual: str) -> None:
    path = FIXTURES / name
    if REGENERATE or not path.exists():
        if not REGENERATE:
            pytest.fail(f'golden file {path.relative_to(ROOT)} is missing: run with UIBRIDGE_REGENERATE_GOLDEN=1')
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding='utf-8')
    assert actual == path.read_text(encoding='utf-8'), f'differs from {path.relative_to(ROOT)}'
