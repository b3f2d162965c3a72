"""The conformance declaration (`vercel_ai._conformance`) against `ai` 7's own types and against the code.

- Complete: the chunk and part tables list exactly the types of `ai` 7's `UIMessageChunk` and `UIMessagePart`
  unions, read from the installed package's `.d.ts`, and exactly the members of uibridge's own unions: a type a
  new `ai` adds fails here until it is classified.
- Emitted: what `VercelAIEventStream` writes for a corpus of neutral event streams (every golden scenario, and
  the streams below that reach the writers no golden does) is exactly the chunks declared emitted; and no module
  of uibridge can write a chunk declared never emitted (it would import the chunk's model or hold its JSON).
  `dump_messages` of what the corpus's runs keep writes exactly the parts declared emitted.
- Loaded: the decoder's dispatch table reads exactly the chunks declared loaded and skips the others (fed one,
  it counts it skipped and yields nothing); every part type loads, and dumps back as itself.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from vercel_ai_cases import CLIENTS, ROOT, SCENARIOS, scenario_stream

from uibridge.adapters.vercel_ai import VercelAIEventStream, dump_messages, load_messages
from uibridge.adapters.vercel_ai import chunks as chunk_models
from uibridge.adapters.vercel_ai import decode as decode_module
from uibridge.adapters.vercel_ai._conformance import CHUNKS, PARTS
from uibridge.adapters.vercel_ai.decode import VercelAIStreamDecoder
from uibridge.adapters.vercel_ai.types import UIMessagePart
from uibridge.core.events import AgentEvent, PartDelta, PartStart, ResponseStart, RunError
from uibridge.core.messages import NativeToolCallPart, ToolCallPart
from uibridge.core.tagged_unions import union_members

AI7 = CLIENTS / 'node_modules' / 'ai'
SRC = ROOT / 'src' / 'uibridge'


# ------------------------------------------------------------------------------------ ai 7's declarations


def _split_top(text: str, separator: str) -> Iterator[str]:
    """`text` cut at each `separator` outside brackets, braces, parentheses and template literals."""
    depth, start, in_template = 0, 0, False
    for index, char in enumerate(text):
        if char == '`':
            in_template = not in_template
        elif in_template:
            continue
        elif char in '{[(<':
            depth += 1
        elif char in '}])' or (char == '>' and text[index - 1] != '='):
            depth -= 1
        elif char == separator and depth == 0:
            yield text[start:index]
            start = index + 1
    yield text[start:]


def _declaration(dts: str, name: str) -> str:
    """The right-hand side of `type <name><...> = ...;` in `dts`."""
    match = re.search(rf'^type {name}\b(?:<[^\n]*?>)? = ', dts, re.M)
    assert match, f'ai 7 declares no type {name}'
    return next(_split_top(dts[match.end() :], ';'))


def _type_tag(member: str, dts: str) -> str:
    """The `type` of one union member: an object literal's own `type` field (not one of a nested object), or the
    named type's; a template literal `tool-${NAME}` is the family `tool-*`."""
    member = member.strip()
    if member.startswith('{'):
        fields = (field.strip() for field in _split_top(member.strip()[1:-1], ';'))
        tags = [field for field in fields if re.match(r'(/\*\*.*?\*/\s*)?type:', field, re.S)]
        assert len(tags) == 1, member
        body = tags[0]
    else:
        name = re.match(r'\w+', member)
        assert name, member
        body = _declaration(dts, name.group())
    tag = re.search(r"\btype: (?:'([^']+)'|`([^`$]+)\$\{\w+\}`)", body)
    assert tag, f'no type tag in {member[:80]!r}'
    return tag.group(1) or f'{tag.group(2)}*'


def ai7_union(name: str) -> list[str]:
    package = json.loads((AI7 / 'package.json').read_text())
    assert package['version'].startswith('7.'), package['version']
    dts = (AI7 / 'dist' / 'index.d.ts').read_text(encoding='utf-8')
    return [_type_tag(member, dts) for member in _split_top(_declaration(dts, name), '|') if member.strip()]


def test_the_chunk_table_lists_every_type_of_ai7s_ui_message_chunk() -> None:
    declared = ai7_union('UIMessageChunk')
    assert len(declared) == len(set(declared)) > 25
    assert set(CHUNKS) == set(declared), 'classify each new chunk type in vercel_ai/_conformance.py'


def test_the_part_table_lists_every_type_of_ai7s_ui_message_part() -> None:
    declared = ai7_union('UIMessagePart')
    assert len(declared) == len(set(declared)) > 10
    assert set(PARTS) == set(declared), 'classify each new part type in vercel_ai/_conformance.py'


def _family(tag: str) -> str:
    return {'data': 'data-*', 'tool': 'tool-*'}.get(tag, tag)


def test_the_tables_are_the_types_uibridges_models_declare() -> None:
    assert {_family(tag) for tag in union_members(chunk_models.UIMessageChunk)} == set(CHUNKS)
    # An `unknown` part is any other type: kept whole and skipped when loading (no row of its own).
    assert {_family(tag) for tag in union_members(UIMessagePart)} - {'unknown'} == set(PARTS)


# ---------------------------------------------------------------------------------------------- emitted

# Streams that reach writers no golden scenario does.
EXTRA: dict[str, list[AgentEvent]] = {
    'a call cut off by an error': [
        ResponseStart(),
        PartStart(0, ToolCallPart(tool_name='t', args='{"a": ', tool_call_id='c')),
        PartDelta(0, '1'),
        RunError('Something went wrong.'),
    ],
    'a native call cut off by an error': [
        ResponseStart(),
        PartStart(0, NativeToolCallPart(tool_name='web_search', args='{"q"', tool_call_id='ws')),
        RunError('boom'),
    ],
}


def _chunk_types(data: bytes) -> set[str]:
    types: set[str] = set()
    for frame in data.decode().split('\n\n'):
        if frame.startswith('data: {'):
            kind = json.loads(frame[len('data: ') :])['type']
            types.add('data-*' if kind.startswith('data-') else kind)
    return types


def _corpus() -> Iterator[tuple[bytes, VercelAIEventStream]]:
    streams = [(scenario_stream(scenario), scenario.events) for scenario in SCENARIOS.values()]
    streams += [(VercelAIEventStream(), events) for events in EXTRA.values()]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the scenarios that misuse the protocol on purpose warn
        for stream, events in streams:
            yield stream.start() + b''.join(stream.encode(event) for event in events) + stream.close(), stream


def _declared(table: dict[str, Any], attribute: str) -> set[str]:
    return {name for name, row in table.items() if getattr(row, attribute)}


def test_the_stream_writes_exactly_the_chunks_declared_emitted() -> None:
    written = set[str]().union(*(_chunk_types(data) for data, _ in _corpus()))
    assert written == _declared(CHUNKS, 'emitted')


def _family_of(part_type: str) -> str:
    return next((f'{prefix}*' for prefix in ('tool-', 'data-') if part_type.startswith(prefix)), part_type)


def test_dump_writes_exactly_the_parts_declared_emitted_from_what_runs_keep() -> None:
    written = {
        _family_of(part.type)
        for _, stream in _corpus()
        for message in dump_messages(stream.new_messages)
        for part in message.parts
    }
    assert written == _declared(PARTS, 'emitted')


def _writable_chunks(module: Path) -> set[str]:
    """The chunk types a module can write: those whose model it imports (`chunks.py`'s classes), and those whose
    JSON it holds as text (`"type":"..."`, as a hand-written frame does)."""
    tags = {
        name: _family(tag)
        for tag, model in union_members(chunk_models.UIMessageChunk).items()
        for name in [model.__name__]
    }
    aliases = {
        name: tags[value.__name__]
        for name, value in vars(chunk_models).items()
        if getattr(value, '__name__', None) in tags
    }
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom) and (node.module or '').endswith('chunks'):
            found.update(aliases[alias.name] for alias in node.names if alias.name in aliases)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            text = node.value.decode('utf-8', 'replace') if isinstance(node.value, bytes) else node.value
            for kind in re.findall(r'"type":"([a-z-]+)', text):
                found.add('data-*' if kind.startswith('data-') else kind)
    return found & set(CHUNKS)


def test_no_module_can_write_a_chunk_declared_never_emitted() -> None:
    never = set(CHUNKS) - _declared(CHUNKS, 'emitted')
    writers = {
        path.relative_to(SRC).as_posix(): found
        for path in sorted(SRC.rglob('*.py'))
        if (found := _writable_chunks(path) & never)
    }
    assert not writers


def test_the_module_scan_sees_the_stream_writers() -> None:
    # The scan above finds what it looks for: the stream's own writers, and a frame the server writes by hand.
    assert _writable_chunks(SRC / 'adapters' / 'vercel_ai' / 'stream.py') >= {
        'start',
        'file',
        'data-*',
        'tool-input-delta',
    }
    assert 'error' in _writable_chunks(SRC / 'server' / 'vercel_ai.py')


# ----------------------------------------------------------------------------------------------- loaded


def test_the_decoder_reads_exactly_the_chunks_declared_loaded() -> None:
    handlers: dict[str, Any] = decode_module._HANDLERS  # pyright: ignore[reportPrivateUsage]
    skip = VercelAIStreamDecoder._skip  # pyright: ignore[reportPrivateUsage]
    read = {kind for kind, handler in handlers.items() if handler is not skip} | {'data-*'}  # `data-*`: by prefix
    assert set(handlers) | {'data-*'} == set(CHUNKS)
    assert read == _declared(CHUNKS, 'loaded')


@pytest.mark.parametrize('kind', sorted(set(CHUNKS) - _declared(CHUNKS, 'loaded')))
def test_a_chunk_declared_not_loaded_is_skipped(kind: str) -> None:
    decoder = VercelAIStreamDecoder()
    decoder.feed_frame({'type': 'start'})
    decoder.feed_frame({'type': 'start-step'})
    events = decoder.feed_frame({'type': kind, 'id': 'x', 'kind': 'openai.thing', 'url': 'data:,x', 'parts': []})
    assert (events, decoder.skipped) == ([], 1)


# One message holding a part of each type, in the role it loads in.
_SAMPLES: dict[str, tuple[str, list[dict[str, Any]]]] = {
    'text': ('user', [{'type': 'text', 'text': 'hi'}]),
    'custom': ('assistant', [{'type': 'step-start'}, {'type': 'custom', 'kind': 'openai.compaction'}]),
    'reasoning': ('assistant', [{'type': 'step-start'}, {'type': 'reasoning', 'text': 'hmm', 'state': 'done'}]),
    'tool-*': (
        'assistant',
        [
            {'type': 'step-start'},
            {'type': 'tool-t', 'toolCallId': 'c', 'state': 'output-available', 'input': {}, 'output': 1},
        ],
    ),
    'dynamic-tool': (
        'assistant',
        [
            {'type': 'step-start'},
            {
                'type': 'dynamic-tool',
                'toolName': 'm',
                'toolCallId': 'd',
                'state': 'output-available',
                'input': {},
                'output': 1,
            },
        ],
    ),
    'source-url': (
        'assistant',
        [
            {'type': 'step-start'},
            {'type': 'text', 'text': 'a'},
            {'type': 'source-url', 'sourceId': 's', 'url': 'https://example.com'},
        ],
    ),
    'source-document': (
        'assistant',
        [
            {'type': 'step-start'},
            {'type': 'text', 'text': 'a'},
            {'type': 'source-document', 'sourceId': 's', 'mediaType': 'application/pdf', 'title': 'doc'},
        ],
    ),
    'file': ('user', [{'type': 'file', 'mediaType': 'text/plain', 'url': 'data:text/plain;base64,aGk='}]),
    'reasoning-file': (
        'assistant',
        [
            {'type': 'step-start'},
            {'type': 'reasoning-file', 'mediaType': 'image/png', 'url': 'https://example.com/a.png'},
        ],
    ),
    'data-*': ('assistant', [{'type': 'step-start'}, {'type': 'data-progress', 'id': 'p', 'data': {'done': 1}}]),
    'steering-message': (
        'assistant',
        [
            {'type': 'step-start'},
            {'type': 'text', 'text': 'a'},
            {'type': 'steering-message', 'id': 'sm', 'parts': [{'type': 'text', 'text': 'shorter'}]},
            {'type': 'step-start'},
            {'type': 'text', 'text': 'b'},
        ],
    ),
    'step-start': ('assistant', [{'type': 'step-start'}, {'type': 'text', 'text': 'a'}]),
}


def _messages(kind: str) -> Iterable[dict[str, Any]]:
    role, parts = _SAMPLES[kind]
    if role == 'assistant':
        yield {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'go'}]}
    yield {'id': 'm', 'role': role, 'parts': parts}


def test_every_part_type_has_a_sample() -> None:
    assert set(_SAMPLES) == set(PARTS)


@pytest.mark.parametrize('kind', sorted(_declared(PARTS, 'loaded')))
def test_a_part_declared_loaded_loads_and_dumps_back_as_itself(kind: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a part type load does not know warns, and is dropped
        history = load_messages(list(_messages(kind)))
    dumped = {_family_of(part.type) for message in dump_messages(history) for part in message.parts}
    assert kind in dumped


def test_the_decoder_skips_nothing_the_stream_writes() -> None:
    for data, _ in _corpus():
        decoder = VercelAIStreamDecoder()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            decoder.feed(data)
            decoder.close()
        assert decoder.skipped == 0
