"""`sdk_version` 5 and 6 against the real `ai@5` and `ai@6` clients (installed as `ai5` / `ai6` in tests/clients).

One `node` run (tests/clients/vercel_versions.mjs) asks each installed client:
1. which chunk types and fields its own `uiMessageChunkSchema` declares: `CHUNK_FIELDS` must be exactly that, so
   the per-version table derived from the `ai` 7 models cannot drift from the clients;
2. to read every scenario's stream (the named ones and the random runs of `vercel_ai_cases`) encoded for it: no
   chunk refused, no error, and the message it builds valid for its own `safeValidateUIMessages`, nothing stripped;
3. to validate every dumped history written for it: valid, nothing stripped.
The messages each client built then go back through `load_messages`: the model sees what the run produced, and
`verify_history` drops nothing (every signature reached the client in a place that version keeps, the approval
flow's degraded forms included).
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
from typing import Any

import pytest
from vercel_ai_cases import (
    CLIENTS,
    HISTORIES,
    MESSAGE_SCENARIOS,
    RANDOM_SCENARIOS,
    SCENARIOS,
    THREAD_ID,
    Scenario,
    answer_client_tools,
    as_the_client_keeps_it,
    model_view,
)

from uibridge import ModelMessage
from uibridge.adapters.vercel_ai import SDK_VERSIONS, SdkVersion, VercelAIEventStream, dump_messages, load_messages
from uibridge.adapters.vercel_ai._sdk_versions import CHUNK_FIELDS, chunk_tag
from uibridge.adapters.vercel_ai._validation import validate_ui_message
from uibridge.adapters.vercel_ai.chunks import UIMessageChunk
from uibridge.adapters.vercel_ai.request import parse_request
from uibridge.core.events import FileOutput
from uibridge.core.provenance import default_keyring
from uibridge.core.tagged_unions import union_members
from uibridge.core.verification import SignatureClaims, pending_tool_calls, verify_history

OLDER: tuple[SdkVersion, ...] = tuple(v for v in SDK_VERSIONS if v != 7)
PACKAGE = {5: 'ai5', 6: 'ai6', 7: 'ai'}
RUNS = {**SCENARIOS, **RANDOM_SCENARIOS}
CASES = [(version, name) for version in OLDER for name in RUNS]
NODE = ['node', 'vercel_versions.mjs', '/dev/stdin']


def _ids(case: tuple[int, str]) -> str:
    return f'ai{case[0]}-{case[1]}'


def history_ui(scenario: Scenario, version: SdkVersion) -> list[dict[str, Any]]:
    """The UI messages an `ai@version` client holds before the run (its dump for that version)."""
    dumped = [m.model_dump(mode='json') for m in dump_messages(scenario.history, sdk_version=version)]
    if scenario.continues:
        dumped[-1]['id'] = 'msg_continued'
    return dumped


@functools.cache
def encode_once(version: SdkVersion, name: str) -> tuple[str, list[ModelMessage]]:
    scenario = RUNS[name]
    # As the server builds it: the continued message read as a request's message is (an ai 5 answer upgraded).
    continued = validate_ui_message(history_ui(scenario, version)[-1]) if scenario.continues else None
    stream = VercelAIEventStream(continued=continued, thread_id=THREAD_ID, sdk_version=version)
    data = stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
    return data.decode(), stream.new_messages


# -------------------------------------------------------------------------------------------- probes


def _minimal(tag: str) -> tuple[dict[str, Any], list[str]]:
    """A chunk of type `tag` with its required fields only, and the optional keys a probe can tell apart (a field
    of any type takes any value, so a probe cannot see whether a client declares it)."""
    model = _union()[tag]
    values = {str: 'x', bool: True, list: []}
    chunk: dict[str, Any] = {'type': 'data-x' if tag == 'data' else tag}
    optional: list[str] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key == 'type':
            continue
        kind = info.annotation
        origin = getattr(kind, '__origin__', None)
        if info.is_required():
            chunk[key] = values.get(kind if isinstance(kind, type) else origin, {})  # type: ignore[arg-type]
        elif kind is not Any and str(kind) != 'typing.Any':
            optional.append(key)
    return chunk, optional


@functools.cache
def _union() -> dict[str, Any]:
    return union_members(UIMessageChunk)


# -------------------------------------------------------------------------------------------- node


@pytest.fixture(scope='module')
def client() -> dict[str, Any]:
    tasks: list[dict[str, Any]] = []
    keys: list[tuple[str, Any]] = []
    for version in SDK_VERSIONS:
        probes = [dict(zip(('chunk', 'optional'), _minimal(tag), strict=True)) for tag in _union()]
        tasks.append({'kind': 'schema', 'sdk': PACKAGE[version], 'probes': probes})
        keys.append(('schema', version))
    for version, name in CASES:
        task: dict[str, Any] = {'kind': 'replay', 'sdk': PACKAGE[version], 'sse': encode_once(version, name)[0]}
        if RUNS[name].continues:
            task['message'] = history_ui(RUNS[name], version)[-1]
        tasks.append(task)
        keys.append(('replay', (version, name)))
    for version in OLDER:
        for name, history in stored_histories().items():
            messages = [m.model_dump(mode='json') for m in dump_messages(history, sdk_version=version)]
            tasks.append({'kind': 'validate', 'sdk': PACKAGE[version], 'messages': messages})
            keys.append(('validate', (version, name)))
    spec = json.dumps({'tasks': tasks})
    done = subprocess.run(NODE, input=spec, capture_output=True, text=True, cwd=CLIENTS, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    output = json.loads(done.stdout)
    results: dict[str, Any] = {'schema': {}, 'replay': {}, 'validate': {}, 'warnings': output['warnings']}
    for (kind, key), result in zip(keys, output['results'], strict=True):
        results[kind][key] = result
    return results


def test_no_client_logs_a_warning(client: dict[str, Any]) -> None:
    # Over every stream read and every history validated and converted (`convertToModelMessages`), in 5, 6 and 7.
    assert client['warnings'] == []


@pytest.mark.parametrize('version', SDK_VERSIONS)
def test_the_tables_are_what_each_client_declares(client: dict[str, Any], version: SdkVersion) -> None:
    declared: dict[str, frozenset[str]] = {}
    for tag, probe in zip(_union(), client['schema'][version], strict=True):
        if probe['accepted']:
            declared[tag] = frozenset(probe['declared'])
    expected = {tag: keys & {*_minimal(tag)[1]} for tag, keys in CHUNK_FIELDS[version].items()}
    assert declared == expected


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_every_chunk_is_one_the_version_declares(case: tuple[SdkVersion, str]) -> None:
    version, name = case
    fields = CHUNK_FIELDS[version]
    for frame in encode_once(version, name)[0].split('\n\n')[:-1]:
        if frame == 'data: [DONE]':
            continue
        chunk = json.loads(frame.removeprefix('data: '))
        assert set(chunk) <= fields[chunk_tag(chunk['type'])], chunk


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_the_client_reads_every_stream(client: dict[str, Any], case: tuple[SdkVersion, str]) -> None:
    result = client['replay'][case]
    scenario = RUNS[case[1]]
    assert result['errors'] == ([scenario.error] if scenario.error else [])
    assert result['valid'] is True, result['valid']
    assert result['stripped'] is False


def _client_message(result: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    message = copy.deepcopy(result['message'])
    if scenario.error:
        for part in message['parts']:  # an `error` chunk leaves the open part 'streaming'
            if part.get('state') == 'streaming':
                part['state'] = 'done'
    return message


def _before(scenario: Scenario, version: SdkVersion) -> list[dict[str, Any]]:
    before = history_ui(scenario, version)
    return before[:-1] if scenario.continues else before


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_what_the_client_built_loads_as_the_run(client: dict[str, Any], case: tuple[SdkVersion, str]) -> None:
    version, name = case
    scenario = RUNS[name]
    message = _client_message(client['replay'][case], scenario)
    loaded = model_view(load_messages([*_before(scenario, version), message]), stream=True)
    expected = model_view(as_the_client_keeps_it(scenario, encode_once(version, name)[1]), stream=True)
    if _unsigned_files(version, scenario):
        loaded, expected = _parts_only(loaded), _parts_only(expected)
    assert loaded == expected


def _unsigned_files(version: SdkVersion, scenario: Scenario) -> bool:
    """ai 5 keeps no metadata of a `file` chunk (it declares the field and drops it): a file the model made
    reaches it unsigned, without the response's info when it opens the response."""
    return version == 5 and any(isinstance(e, FileOutput) for e in scenario.events)


def _parts_only(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every part in order, a file by its content alone: what an ai 5 client keeps of a run with files."""
    parts = [part for message in view for part in message['parts']]
    return [{'content': p['content']} if p.get('part_kind') == 'file' else p for p in parts]


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_what_the_client_built_verifies_whole(client: dict[str, Any], case: tuple[SdkVersion, str]) -> None:
    version, name = case
    scenario = RUNS[name]
    new_messages = encode_once(version, name)[1]
    message = _client_message(client['replay'][case], scenario)
    waiting = answer_client_tools([message], new_messages)
    claims = SignatureClaims()
    loaded = load_messages([*_before(scenario, version), message], claims=claims)
    result = verify_history(loaded, claims, default_keyring())
    dropped = dict(result.dropped)
    if _unsigned_files(version, scenario):
        assert dropped.pop('file', 0) == sum(isinstance(e, FileOutput) for e in scenario.events)
        # A signed finish reason covers its response's parts: the response lost one, so the reason goes too.
        dropped.pop('finish reason', None)
    assert dropped == {}
    assert len(pending_tool_calls(result.messages)) >= waiting


# --------------------------------------------------------------------------------------------- dumps


@functools.cache
def stored_histories() -> dict[str, list[ModelMessage]]:
    """The named histories, and what a server stores after each carrier scenario (its history and the run's
    messages, as the `ai` 7 stream collected them): state, message metadata and usage, sources, native calls."""
    runs = {name: [*MESSAGE_SCENARIOS[name].history, *encode_once(7, name)[1]] for name in MESSAGE_SCENARIOS}
    return {**HISTORIES, **{f'run_{name}': messages for name, messages in runs.items()}}


DUMPS = [(version, name) for version in OLDER for name in [*HISTORIES, *(f'run_{n}' for n in MESSAGE_SCENARIOS)]]


@pytest.mark.parametrize('case', DUMPS, ids=_ids)
def test_every_dump_validates_and_strips_nothing(client: dict[str, Any], case: tuple[SdkVersion, str]) -> None:
    result = client['validate'][case]
    assert result['valid'] is True, result['valid']
    assert result['stripped'] is False


@pytest.mark.parametrize('case', DUMPS, ids=_ids)
def test_a_dump_for_an_older_client_loads_as_the_latest_and_dumps_back(case: tuple[SdkVersion, str]) -> None:
    version, name = case
    history = stored_histories()[name]
    dumped = [m.model_dump(mode='json') for m in dump_messages(history, sdk_version=version)]
    assert model_view(load_messages(dumped)) == model_view(load_messages(dump_messages(history)))
    again = dump_messages(load_messages(dumped), sdk_version=version)
    assert [m.model_dump(mode='json') for m in again] == dumped
    # The same ids whichever version a history is written for: a stored chat keeps its message ids.
    assert [m['id'] for m in dumped] == [m.id for m in dump_messages(history)]


# ------------------------------------------------------------------------------------ ai 5 approvals


def _answered(approved: bool, **change: Any) -> dict[str, Any]:
    ours = {'approval': True, 'approval_id': 'apr_1', 'sig': 's'}
    part = {
        'type': 'tool-delete_file',
        'toolCallId': 'call_1',
        'state': 'output-available',
        'input': {'path': 'a'},
        'output': {'approved': approved, 'reason': 'no'} if not approved else {'approved': True},
        'callProviderMetadata': {'uibridge': ours},
    }
    part.update(change)
    return {'id': 'chat', 'messages': [{'id': 'm1', 'role': 'assistant', 'parts': [part]}]}


@pytest.mark.parametrize('approved', [True, False])
def test_an_ai5_answer_is_read_as_the_approval(approved: bool) -> None:
    request = parse_request(_answered(approved))
    [answer] = request.approvals
    assert (answer.approval_id, answer.approved, answer.tool_call_id) == ('apr_1', approved, 'call_1')
    assert answer.reason == (None if approved else 'no')
    # Not a result: the call still waits for the server to run it (or not).
    assert pending_tool_calls(request.run_input().history)


@pytest.mark.parametrize(
    'change',
    [
        {'output': {'approved': True, 'extra': 1}},
        {'output': {'approved': 'yes'}},
        {'callProviderMetadata': {'uibridge': {'approval': True, 'approval_id': 'apr_1', 'result': {}}}},
        {'callProviderMetadata': {'uibridge': {'approval_id': 'apr_1'}}},
        {'resultProviderMetadata': {'uibridge': {'timestamp': '2026-01-01T00:00:00Z'}}},
    ],
)
def test_only_an_ai5_answer_is_read_as_one(change: dict[str, Any]) -> None:
    assert parse_request(_answered(True, **change)).approvals == []
