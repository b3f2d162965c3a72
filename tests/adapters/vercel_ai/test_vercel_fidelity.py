"""What a client holds that uibridge did not write survives load -> dump, in every `ai` version that has it.

A message another server streamed (`ai`'s own `toUIMessageStream` writes these fields) is built by the real client
of each version (`ai@5`, `ai@6`, `ai@7`: tests/clients/vercel_versions.mjs, `readUIMessageStream`), and a user's
message is written as the client writes it; each version's own `safeValidateUIMessages` takes them and strips
nothing (and `convertToModelMessages` converts them, no warning logged). Loaded and dumped again for that version,
they come back exactly: a text part's `citations`, a tool part's `title`, `toolMetadata` and `preliminary` output,
a `dynamic-tool` part (with the neutral history knowing the call was dynamic), a tool part still `input-streaming`
(no call for the model, as `convertToModelMessages` skips it), a model's file, a steering message (the user's
prompt between two steps), a user's reasoning part (no 422),
and a user's file with its `filename` and `providerReference` (the provider file it names, as an `UploadedFile`).
"""

from __future__ import annotations

import functools
import json
import subprocess
from typing import Any

import pytest
from vercel_ai_cases import CLIENTS

from uibridge import ModelResponse, NativeToolCallPart, ToolCallPart, ToolReturnPart, UploadedFile, UserPromptPart
from uibridge.adapters.vercel_ai import SDK_VERSIONS, SdkVersion, dump_messages, load_messages
from uibridge.adapters.vercel_ai._sdk_versions import CHUNK_FIELDS, PART_FIELDS, chunk_tag
from uibridge.core.events import DYNAMIC_TOOLS_METADATA_KEY

PACKAGE = {5: 'ai5', 6: 'ai6', 7: 'ai'}
NODE = ['node', 'vercel_versions.mjs', '/dev/stdin']

CITATION = {
    'source': {'type': 'source', 'sourceType': 'url', 'id': 's1', 'url': 'https://example.com/p', 'title': 'P'},
    'startIndex': 0,
    'endIndex': 5,
    'citedText': 'Paris',
}

FOREIGN: list[dict[str, Any]] = [
    {'type': 'start', 'messageId': 'm_foreign'},
    {'type': 'start-step'},
    {'type': 'reasoning-start', 'id': 'r1'},
    {'type': 'reasoning-delta', 'id': 'r1', 'delta': 'Checking.'},
    {'type': 'reasoning-end', 'id': 'r1'},
    {'type': 'text-start', 'id': 't1'},
    {'type': 'text-delta', 'id': 't1', 'delta': 'Paris is sunny.'},
    {'type': 'text-end', 'id': 't1', 'citations': [CITATION]},
    # A static tool with a title and metadata.
    {'type': 'tool-input-start', 'toolCallId': 'c1', 'toolName': 'get_weather', 'title': 'Weather',
     'toolMetadata': {'server': 'local'}},
    {'type': 'tool-input-delta', 'toolCallId': 'c1', 'inputTextDelta': '{"city":"Paris"}'},
    {'type': 'tool-input-available', 'toolCallId': 'c1', 'toolName': 'get_weather', 'input': {'city': 'Paris'},
     'title': 'Weather', 'toolMetadata': {'server': 'local'}},
    {'type': 'tool-output-available', 'toolCallId': 'c1', 'output': {'sky': 'sunny'}},
    # A tool the UI does not know by name (an MCP tool), whose output streamed: a preliminary one, then the last.
    {'type': 'tool-input-start', 'toolCallId': 'c2', 'toolName': 'mcp.search', 'dynamic': True, 'title': 'Search'},
    {'type': 'tool-input-available', 'toolCallId': 'c2', 'toolName': 'mcp.search', 'input': {'q': 'x'},
     'dynamic': True, 'title': 'Search'},
    {'type': 'tool-output-available', 'toolCallId': 'c2', 'output': {'n': 1}, 'dynamic': True, 'preliminary': True},
    {'type': 'tool-output-available', 'toolCallId': 'c2', 'output': {'n': 2}, 'dynamic': True},
    # A tool whose stream stopped at a preliminary output.
    {'type': 'tool-input-start', 'toolCallId': 'c3', 'toolName': 'report'},
    {'type': 'tool-input-available', 'toolCallId': 'c3', 'toolName': 'report', 'input': {}},
    {'type': 'tool-output-available', 'toolCallId': 'c3', 'output': '50%', 'preliminary': True},
    {'type': 'file', 'url': 'data:image/png;base64,iVBORw0KGgo=', 'mediaType': 'image/png'},
    {'type': 'finish-step'},
    # A user message that joined the running answer (`ai` 7's steering), before the step that received it.
    {'type': 'steering-message', 'id': 'steer-1', 'parts': [{'type': 'text', 'text': 'I meant Paris, Texas.'}]},
    # A call cut off while its arguments streamed.
    {'type': 'start-step'},
    {'type': 'tool-input-start', 'toolCallId': 'c4', 'toolName': 'slow'},
    {'type': 'tool-input-delta', 'toolCallId': 'c4', 'inputTextDelta': '{"n": 1'},
    {'type': 'abort'},
]  # fmt: skip


def user_message(version: SdkVersion) -> dict[str, Any]:
    """A user's message as the client of `version` holds it: a reasoning part (`ai` 7 validates it in a user message
    too), a named file, and (7) a provider file (`providerReference`)."""
    parts: list[dict[str, Any]] = [
        {'type': 'text', 'text': 'Look at these.'},
        {'type': 'file', 'mediaType': 'image/png', 'url': 'https://example.com/a.png', 'filename': 'a.png'},
    ]
    if version == 7:
        parts.insert(1, {'type': 'reasoning', 'text': 'The user wonders.'})
        parts.append(
            {
                'type': 'file',
                'mediaType': 'application/pdf',
                'url': 'https://example.com/report.pdf',
                'filename': 'report.pdf',
                'providerReference': {'openai': 'file-1', 'anthropic': 'file_2'},
            }
        )
    return {'id': 'u1', 'role': 'user', 'parts': parts}


def foreign_sse(version: SdkVersion) -> str:
    """The foreign stream as that version's server would write it: only the chunks and fields it declares."""
    fields = CHUNK_FIELDS[version]
    frames: list[str] = []
    for chunk in FOREIGN:
        keys = fields.get(chunk_tag(chunk['type']))
        if keys is not None:
            frames.append('data: ' + json.dumps({k: v for k, v in chunk.items() if k in keys}) + '\n\n')
    return ''.join(frames) + 'data: [DONE]\n\n'


@functools.cache
def clients() -> dict[str, Any]:
    tasks: list[dict[str, Any]] = []
    for version in SDK_VERSIONS:
        tasks.append({'kind': 'replay', 'sdk': PACKAGE[version], 'sse': foreign_sse(version)})
        tasks.append({'kind': 'validate', 'sdk': PACKAGE[version], 'messages': [user_message(version)]})
    done = subprocess.run(
        NODE, input=json.dumps({'tasks': tasks}), capture_output=True, text=True, cwd=CLIENTS, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    output = json.loads(done.stdout)
    results = iter(output['results'])
    found: dict[str, Any] = {'warnings': output['warnings']}
    for version in SDK_VERSIONS:
        found[f'replay{version}'] = next(results)
        found[f'validate{version}'] = next(results)
    return found


def held(version: SdkVersion) -> list[dict[str, Any]]:
    """What the client of `version` holds: the user's message, then the message it built from the stream, as its
    own validator keeps it. `ai` 6 builds a tool part's `title` from the stream but its validator does not declare
    it, and strips it (the only key any version strips here): a page that validates its stored messages has none."""
    replay = clients()[f'replay{version}']
    assert replay['errors'] == [] and replay['valid'] is True, replay
    message = replay['message']
    parts: list[dict[str, Any]] = []
    dropped: set[str] = set()
    for part in message['parts']:
        tag = 'tool' if part['type'].startswith('tool-') else part['type']
        keys = PART_FIELDS[version][tag]
        dropped |= set(part) - keys
        parts.append({key: value for key, value in part.items() if key in keys})
    assert dropped == ({'title'} if version == 6 else set())
    assert replay['stripped'] is bool(dropped)
    return [user_message(version), {**message, 'parts': parts}]


def test_no_client_logs_a_warning() -> None:
    assert clients()['warnings'] == []


@pytest.mark.parametrize('version', SDK_VERSIONS)
def test_the_client_takes_the_user_message_whole(version: SdkVersion) -> None:
    result = clients()[f'validate{version}']
    assert result == {'valid': True, 'stripped': False}


@pytest.mark.parametrize('version', SDK_VERSIONS)
def test_what_the_client_holds_dumps_back_exactly(version: SdkVersion) -> None:
    ui = held(version)
    again = [m.model_dump(mode='json') for m in dump_messages(load_messages(ui), sdk_version=version)]
    assert again == ui


@pytest.mark.parametrize('version', SDK_VERSIONS)
def test_the_model_sees_what_convert_to_model_messages_would_show(version: SdkVersion) -> None:
    ui = held(version)
    request, *responses = load_messages(ui)
    [prompt] = request.parts
    assert isinstance(prompt, UserPromptPart) and isinstance(prompt.content, list)
    # A user's reasoning part is the UI's only; a provider file is that file, whichever providers it names.
    files = [item for item in prompt.content if isinstance(item, UploadedFile)]
    if version == 7:
        [uploaded] = files
        assert (uploaded.file_id, uploaded.provider_name, uploaded.media_type, uploaded.filename) == (
            'file-1',
            'openai',
            'application/pdf',
            'report.pdf',
        )
    assert prompt.content[0] == 'Look at these.' and len(prompt.content) == 2 + len(files)
    calls = [p for m in responses if isinstance(m, ModelResponse) for p in m.parts]
    named = [(p.tool_call_id, p.tool_name) for p in calls if isinstance(p, ToolCallPart | NativeToolCallPart)]
    # The call cut off mid-arguments is no call (`convertToModelMessages` skips it): kept for the UI only.
    assert named == [('c1', 'get_weather'), ('c2', 'mcp.search'), ('c3', 'report')]
    results = {p.tool_call_id: p.content for m in responses for p in m.parts if isinstance(p, ToolReturnPart)}
    assert results == {'c1': {'sky': 'sunny'}, 'c2': {'n': 2}, 'c3': '50%'}
    dynamic = [call for m in responses for call in (m.metadata or {}).get(DYNAMIC_TOOLS_METADATA_KEY, [])]
    assert dynamic == ['c2']
    # The steering message is the user's prompt between the two steps (after the first step's results), as
    # `convertToModelMessages` makes it.
    assert [m.kind for m in responses] == ['response', 'request', 'response']
    after = [p.content if isinstance(p, UserPromptPart) else p.part_kind for p in responses[1].parts]
    assert after == ['tool-return'] * 3 + (['I meant Paris, Texas.'] if version == 7 else [])


@pytest.mark.parametrize('version', SDK_VERSIONS)
def test_the_built_message_has_what_the_version_keeps(version: SdkVersion) -> None:
    """The fields this suite is about are really there (where the version has them), so the round trip proves
    something."""
    parts = held(version)[1]['parts']
    kinds = [part['type'] for part in parts]
    assert 'dynamic-tool' in kinds and kinds[-1] == 'tool-slow' and parts[-1]['state'] == 'input-streaming'
    tools = {part['toolCallId']: part for part in parts if 'toolCallId' in part}
    assert tools['c3']['preliminary'] is True and 'preliminary' not in tools['c2']
    text = next(part for part in parts if part['type'] == 'text')
    assert ('citations' in text) is (version == 7)
    assert ('title' in tools['c1']) is (version == 7)
    assert ('toolMetadata' in tools['c1']) is (version != 5)
