"""Both stream decoders are the inverse of their encoders: a run's events, encoded by uibridge's stream encoder,
split into chunks anywhere and decoded, add up to the same messages (`MessageCollector`) and end the same way.

"The same", modulo what a protocol cannot carry (each left out of the comparison below, and only there):

- both: timestamps of what the stream sends live (a decoded part is stamped when it is read; tool results keep
  theirs), a response's finish reason (the stream has one for the whole run), and a response's provider id,
  details and application metadata, which no event sets;
- Vercel: the shared state travels whole (`data-state`): a `StateDelta` comes back as the snapshot it made;
- AG-UI: no place for a file the model made (`FileOutput` is not sent); a thinking part's id and provider name
  come after its text, so a decoder streaming it keeps only its signature; custom data has no id (`CUSTOM`);
  usage goes once, summed, with the run's end (it lands on the last response); calls awaiting approval are named
  only by `RUN_FINISHED`, so a run that fails or is cancelled does not say which those were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uibridge import (
    BinaryContent,
    Citation,
    FilePart,
    ModelMessage,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    Usage,
    WebCitationSource,
)
from uibridge.adapters import ag_ui, vercel_ai
from uibridge.adapters.ag_ui.decode import AGUIStreamDecoder
from uibridge.adapters.vercel_ai.decode import VercelAIStreamDecoder
from uibridge.core import events as ev
from uibridge.core.collector import MessageCollector
from uibridge.core.decoder import StreamDecoder
from uibridge.core.provenance import Keyring
from uibridge.core.sse import StreamError
from uibridge.core.stream import EventStreamEncoder, encode_all

KEYRING = Keyring('decoders')
ENCODERS: dict[str, Callable[[], EventStreamEncoder]] = {
    'vercel_ai': lambda: vercel_ai.VercelAIEventStream(message_id='m', keyring=KEYRING, thread_id='t'),
    'vercel_ai_6': lambda: vercel_ai.VercelAIEventStream(message_id='m', keyring=KEYRING, thread_id='t', sdk_version=6),
    'vercel_ai_5': lambda: vercel_ai.VercelAIEventStream(message_id='m', keyring=KEYRING, thread_id='t', sdk_version=5),
    'ag_ui': lambda: ag_ui.AGUIEventStream(thread_id='t', run_id='r', keyring=KEYRING, client_protocol_version='1.0'),
}
DECODERS: dict[str, Callable[[], StreamDecoder]] = {
    'vercel_ai': VercelAIStreamDecoder,
    'vercel_ai_6': VercelAIStreamDecoder,
    'vercel_ai_5': VercelAIStreamDecoder,
    'ag_ui': AGUIStreamDecoder,
}

text = st.text(max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=4), inner, max_size=3),
    max_leaves=5,
)


@st.composite
def runs(draw: st.DrawFn) -> list[ev.AgentEvent]:
    """A run as an agent streams it: responses of text (some citing sources), thinking, calls and files, each
    call answered in the run (a result of every outcome, or a retry) except in the last response, where calls may
    wait for the client or an approval; state, custom data, message metadata, usage and retry feedback between."""
    events: list[ev.AgentEvent] = []
    calls = 0
    responses = draw(st.integers(1, 3))
    for number in range(responses):
        last = number == responses - 1
        events.append(ev.ResponseStart(model_name=draw(st.sampled_from([None, 'model-a'])), provider_name='prov'))
        answers: list[ev.AgentEvent] = []
        kinds = draw(st.lists(st.sampled_from(['text', 'thinking', 'call', 'file']), min_size=1, max_size=3))
        if set(kinds) == {'file'}:
            kinds.append('text')  # a response of files alone has no AG-UI form at all: not even its metadata
        for index, kind in enumerate(kinds):
            if kind == 'text':
                content = draw(text)
                cited = draw(st.booleans()) and bool(content)
                citations = [Citation(sources=[WebCitationSource(url='https://e.com/a', title='A')])] if cited else None
                events.append(ev.PartStart(index, TextPart(content=content[:3], citations=citations)))
                if content[3:]:
                    events.append(ev.PartDelta(index, content[3:]))
                events.append(ev.PartEnd(index))
            elif kind == 'thinking':
                events.append(ev.PartStart(index, ThinkingPart(content=draw(text))))
                events.append(ev.PartEnd(index, signature=draw(st.none() | st.text(min_size=1, max_size=6))))
            elif kind == 'file':
                data = draw(st.binary(min_size=1, max_size=6))
                events.append(ev.FileOutput(FilePart(content=BinaryContent(data=data, media_type='image/png'))))
            else:
                calls += 1
                call_id = f'call_{calls}'
                args = draw(st.dictionaries(st.text(min_size=1, max_size=4), json_values, max_size=2))
                if draw(st.booleans()):
                    events.append(ev.PartStart(index, ToolCallPart(tool_name='tool', args=args, tool_call_id=call_id)))
                else:
                    whole = json.dumps(args)
                    events.append(ev.PartStart(index, ToolCallPart(tool_name='tool', args='', tool_call_id=call_id)))
                    events.append(ev.PartDelta(index, whole))
                events.append(ev.PartEnd(index))
                answer = draw(
                    st.sampled_from(['success', 'failed', 'denied', 'retry'] + (['client', 'approval'] if last else []))
                )
                if answer in ('client', 'approval'):
                    events.append(ev.ToolCallReady(call_id, answer))
                elif answer == 'retry':
                    answers.append(
                        ev.ToolResult(RetryPromptPart(content=draw(text), tool_name='tool', tool_call_id=call_id))
                    )
                else:
                    # A denial says why (an `ai` 5 stream shows an empty reason as the default text).
                    content = draw(st.text(min_size=1, max_size=8) if answer == 'denied' else json_values)
                    part = ToolReturnPart(tool_name='tool', content=content, tool_call_id=call_id, outcome=answer)
                    answers.append(ev.ToolResult(part))
        if draw(st.booleans()):
            events.append(ev.ResponseInfo(usage=Usage(input_tokens=draw(st.integers(1, 9)), output_tokens=3)))
        if draw(st.booleans()):
            events.append(ev.StateSnapshot({'step': number, 'items': draw(st.lists(st.integers(0, 5), max_size=2))}))
        if draw(st.booleans()):
            events.append(ev.CustomData('progress', draw(json_values), id=f'p{number}'))
        if draw(st.booleans()):
            events.append(ev.MessageMetadata({'note': draw(text)}))
        events.extend(answers)
        if not last and draw(st.booleans()):
            events.append(
                ev.RetryFeedback(RetryFeedbackPart(content=draw(st.text(min_size=1, max_size=8)), cause='model_retry'))
            )
    events.append(draw(st.sampled_from([ev.RunFinished(), ev.RunError('It broke.'), ev.RunCancelled()])))
    return events


def collected(events: list[ev.AgentEvent]) -> tuple[list[ModelMessage], type]:
    collector = MessageCollector()
    for event in events:
        collector.feed(event)
    terminal = next(type(e) for e in reversed(events) if isinstance(e, ev.RunFinished | ev.RunError | ev.RunCancelled))
    return collector.messages, terminal


def view(messages: list[ModelMessage], protocol: str, terminal: type) -> list[dict[str, Any]]:
    """The messages as this comparison sees them (see the module docstring for what is left out, and why)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        metadata = dict(message.metadata or {})
        entry: dict[str, Any] = {'kind': message.kind}
        if isinstance(message, ModelResponse):
            entry.update(model_name=message.model_name, provider_name=message.provider_name)
            if protocol != 'ag_ui':
                entry['usage'] = message.usage
            marks = dict(metadata.get('uibridge_answered_by', {}))
            if protocol == 'ag_ui' and terminal is not ev.RunFinished:
                marks = {k: v for k, v in marks.items() if v != 'approval'}
            entry['marks'] = marks
            custom = metadata.get('uibridge_custom_data', [])
            # On AG-UI the custom data has no id, and its place among the parts counts no file.
            entry['custom'] = [(c['name'], c['data']) if protocol == 'ag_ui' else c for c in custom]
            entry['message_metadata'] = metadata.get('uibridge_message_metadata')
            entry['state'] = metadata.get('uibridge_state')
        parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, FilePart) and protocol == 'ag_ui':
                continue
            fields = part.model_dump(mode='json', exclude={'timestamp'})
            if isinstance(part, ToolCallPart):
                fields['args'] = part.args_as_dict()
            if isinstance(part, ThinkingPart) and protocol == 'ag_ui':
                fields.update(id=None, provider_name=None)
            parts.append(fields)
        entry['parts'] = parts
        out.append(entry)
    return out


def usage_total(messages: list[ModelMessage]) -> tuple[int, int]:
    usages = [m.usage for m in messages if isinstance(m, ModelResponse) and m.usage is not None]
    return sum(u.input_tokens for u in usages), sum(u.output_tokens for u in usages)


def decode(protocol: str, body: bytes, cuts: list[int]) -> list[ev.AgentEvent]:
    decoder = DECODERS[protocol]()
    points = sorted({cut % (len(body) + 1) for cut in cuts})
    events: list[ev.AgentEvent] = []
    for start, end in zip([0, *points], [*points, len(body)], strict=True):
        events += decoder.feed(body[start:end])
    return events + decoder.close()


@pytest.mark.parametrize('protocol', ENCODERS)
@settings(suppress_health_check=[HealthCheck.too_slow])  # examples and deadline: the profile's (tests/conftest.py)
@given(events=runs(), cuts=st.lists(st.integers(0, 100_000), max_size=20))
def test_encoded_then_decoded_adds_up_to_the_same_run(
    protocol: str, events: list[ev.AgentEvent], cuts: list[int]
) -> None:
    encoder = ENCODERS[protocol]()
    body = encode_all(encoder, events)
    decoded = decode(protocol, body, cuts)
    expected, terminal = collected(events)
    got, decoded_terminal = collected(decoded)
    assert decoded_terminal is terminal
    if terminal is ev.RunError:
        assert [e.message for e in decoded if isinstance(e, ev.RunError)] == ['It broke.']
    assert view(got, protocol, terminal) == view(expected, protocol, terminal)
    assert usage_total(got) == usage_total(expected)


@pytest.mark.parametrize('protocol', ENCODERS)
def test_state_deltas_come_back_as_what_they_make(protocol: str) -> None:
    events: list[ev.AgentEvent] = [
        ev.ResponseStart(),
        ev.PartStart(0, TextPart(content='hi')),
        ev.PartEnd(0),
        ev.StateSnapshot({'n': 1, 'items': []}),
        ev.StateDelta([{'op': 'replace', 'path': '/n', 'value': 2}, {'op': 'add', 'path': '/items/-', 'value': 'a'}]),
        ev.RunFinished(),
    ]
    decoded = decode(protocol, encode_all(ENCODERS[protocol](), events), [])
    states = [e for e in decoded if isinstance(e, ev.StateSnapshot | ev.StateDelta)]
    if protocol == 'ag_ui':
        assert states == [events[3], events[4]]
    else:
        assert states == [ev.StateSnapshot({'n': 1, 'items': []}), ev.StateSnapshot({'n': 2, 'items': ['a']})]
    assert collected(decoded)[0][-1].metadata['uibridge_state'] == {'n': 2, 'items': ['a']}  # type: ignore[index]


@pytest.mark.parametrize('protocol', ENCODERS)
def test_a_delta_that_splits_a_character_decodes(protocol: str) -> None:
    # The encoders write each half as a lone surrogate escape, which `JSON.parse` reads (and orjson refuses).
    events: list[ev.AgentEvent] = [
        ev.ResponseStart(),
        ev.PartStart(0, TextPart(content='a\ud83d')),
        ev.PartDelta(0, '\ude00b'),
        ev.PartEnd(0),
        ev.RunFinished(),
    ]
    body = encode_all(ENCODERS[protocol](), events)
    assert b'\\ud83d' in body
    [response] = collected(decode(protocol, body, []))[0]
    assert response.parts[0].content == 'a\U0001f600b'  # type: ignore[union-attr]


@pytest.mark.parametrize('protocol', ENCODERS)
@pytest.mark.parametrize('frame', [b'data: {"type": NaN}\n\n', b'data: {"type": "a\xff"}\n\n', b'data: {\n\n'])
def test_a_frame_json_parse_refuses_is_a_stream_error(protocol: str, frame: bytes) -> None:
    with pytest.raises(StreamError, match='not JSON'):
        DECODERS[protocol]().feed(frame)
