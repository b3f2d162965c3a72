"""The conformance declaration (`ag_ui._conformance`) against the installed `ag_ui` package and against the code.

- Complete: the table lists exactly the members of `ag_ui.core.EventType`: a type a new `ag_ui` adds fails here
  until it is classified.
- Emitted: what `AGUIEventStream` writes for a corpus of neutral event streams (every scenario of the golden and
  client tests, the endpoint's snapshot of a stored history) is exactly the events declared emitted; and no
  module of uibridge but the decoder (whose dispatch table names every type) can write an event declared never
  emitted: it would import the SDK's event model, name `EventType.<X>`, or hold the type's name or JSON as text.
- Loaded: the decoder's dispatch table reads exactly the events declared loaded and skips the others (fed one,
  it counts it skipped and yields nothing).
"""

from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ag_ui.core
import pytest
from agui_helpers import ROOT
from agui_scenarios import T0, scenarios

from uibridge import ModelRequest, ModelResponse, TextPart, UserPromptPart
from uibridge.adapters.ag_ui import AGUIEventStream, parse_request
from uibridge.adapters.ag_ui import decode as decode_module
from uibridge.adapters.ag_ui._conformance import EVENTS
from uibridge.adapters.ag_ui.decode import AGUIStreamDecoder
from uibridge.core.provenance import Keyring
from uibridge.server.ag_ui import AGUIBinding

SRC = ROOT / 'src' / 'uibridge'
EVENT_TYPES = [member.value for member in ag_ui.core.EventType]


def _declared(attribute: str) -> set[str]:
    return {name for name, row in EVENTS.items() if getattr(row, attribute)}


def test_the_table_lists_every_event_type_of_ag_ui() -> None:
    assert len(EVENT_TYPES) > 25
    assert list(EVENTS) == EVENT_TYPES, 'classify each new event type in ag_ui/_conformance.py, in its order'


# ---------------------------------------------------------------------------------------------- emitted


def _event_types(data: bytes) -> set[str]:
    return {
        json.loads(frame[len('data: ') :])['type']
        for frame in data.decode().split('\n\n')
        if frame.startswith('data: {')
    }


def _corpus() -> Iterator[bytes]:
    keyring = Keyring(b'conformance')
    stored = [
        ModelRequest(parts=[UserPromptPart(content='hi', timestamp=T0)]),
        ModelResponse(parts=[TextPart(content='hello')], timestamp=T0),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the scenarios that misuse the protocol on purpose warn
        for scenario in scenarios():
            stream = AGUIEventStream(thread_id='thread', run_id='run', **scenario.kwargs)
            yield stream.start() + b''.join(stream.encode(event) for event in scenario.events) + stream.close()
        # An endpoint with a store starts a run with the stored history (for a client that holds none of it).
        request = parse_request(
            {'threadId': 't', 'runId': 'r', 'messages': [], 'tools': [], 'context': [], 'state': None,
             'forwardedProps': None}
        )  # fmt: skip
        stream = AGUIBinding().with_snapshot(request, AGUIEventStream(thread_id='t', run_id='r'), stored, keyring)
        yield stream.start() + stream.close()


def test_the_stream_writes_exactly_the_events_declared_emitted() -> None:
    written = set[str]().union(*map(_event_types, _corpus()))
    assert written == _declared('emitted')


_EVENT_MODELS: dict[str, str] = {
    name: value.model_fields['type'].default.value
    for name, value in vars(ag_ui.core).items()
    if isinstance(value, type) and issubclass(value, ag_ui.core.BaseEvent) and value is not ag_ui.core.BaseEvent
}
"""Each SDK event model's name, with the type it writes."""


def _writable_events(module: Path) -> set[str]:
    """The event types a module can write: those whose SDK model it imports, those it names as `EventType.X`, and
    those whose name or JSON (`"type":"X"`) it holds as text."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom) and (node.module or '').startswith('ag_ui'):
            found.update(_EVENT_MODELS[alias.name] for alias in node.names if alias.name in _EVENT_MODELS)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'EventType':
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            text = node.value.decode('utf-8', 'replace') if isinstance(node.value, bytes) else node.value
            found.update(kind for kind in EVENT_TYPES if text == kind or f'"type":"{kind}"' in text)
    return found & set(EVENT_TYPES)


_READERS = {'adapters/ag_ui/decode.py', 'adapters/ag_ui/_conformance.py'}
"""The decoder's dispatch table and the declaration name every type: they write none."""


def test_no_module_can_write_an_event_declared_never_emitted() -> None:
    never = set(EVENT_TYPES) - _declared('emitted')
    writers = {
        name: found
        for path in sorted(SRC.rglob('*.py'))
        if (name := path.relative_to(SRC).as_posix()) not in _READERS and (found := _writable_events(path) & never)
    }
    assert not writers


def test_the_module_scan_sees_the_writers() -> None:
    stream = _writable_events(SRC / 'adapters' / 'ag_ui' / 'stream.py')
    assert {'RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'RAW'} <= stream  # model, delta, alias
    assert {'MESSAGES_SNAPSHOT', 'RUN_ERROR'} <= _writable_events(SRC / 'server' / 'ag_ui.py')
    assert _writable_events(SRC / 'adapters' / 'ag_ui' / 'decode.py') == set(EVENT_TYPES)


# ----------------------------------------------------------------------------------------------- loaded


def test_the_decoder_reads_exactly_the_events_declared_loaded() -> None:
    handlers: dict[str, Any] = decode_module._HANDLERS  # pyright: ignore[reportPrivateUsage]
    skip = AGUIStreamDecoder._skip  # pyright: ignore[reportPrivateUsage]
    assert set(handlers) == set(EVENT_TYPES)
    assert {kind for kind, handler in handlers.items() if handler is not skip} == _declared('loaded')


@pytest.mark.parametrize('kind', sorted(set(EVENT_TYPES) - _declared('loaded')))
def test_an_event_declared_not_loaded_is_skipped(kind: str) -> None:
    decoder = AGUIStreamDecoder()
    decoder.feed_frame({'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'})
    events = decoder.feed_frame({'type': kind, 'messages': [], 'subagentId': 's', 'runId': 'r2'})
    assert (events, decoder.skipped) == ([], 1)


def test_the_decoder_skips_only_the_snapshot_of_what_the_stream_writes() -> None:
    skipped: list[int] = []
    for data in _corpus():
        decoder = AGUIStreamDecoder()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            decoder.feed(data)
            decoder.close()
        skipped.append(decoder.skipped)
    assert skipped[:-1] == [0] * (len(skipped) - 1)
    assert skipped[-1] == 1  # the endpoint's `MESSAGES_SNAPSHOT`
