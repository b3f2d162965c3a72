"""StreamEncoder, the skeleton both protocols' encoders are built on: its rules, through a protocol that only
writes down which hook ran with what (one line each)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from uibridge.core import events as ev
from uibridge.core import messages as m
from uibridge.core.citations import Citation, WebCitationSource
from uibridge.core.encoder import OpenPart, StreamEncoder, frame_writer
from uibridge.core.provenance import Keyring
from uibridge.core.stream import encode_all
from uibridge.core.usage import Usage

KEYRING = Keyring('test')


@dataclass(eq=False, slots=True)
class _Rec(OpenPart):
    name: str


class Recorder(StreamEncoder[_Rec]):
    """Each hook writes one line: the hook's name and what it was given."""

    def __init__(self) -> None:
        super().__init__(KEYRING)

    @property
    def headers(self) -> Mapping[str, str]:
        return {'content-type': 'text/plain'}

    @property
    def new_messages(self) -> list[m.ModelMessage]:
        return self._collector.messages

    def _stream_started(self) -> bytes:
        return b'start\n'

    def _response_started(self) -> bytes:
        return b'response\n'

    def _part_started(self, event: ev.PartStart, response: m.ModelResponse, slot: int) -> tuple[_Rec, bytes]:
        part = event.part
        name = part.tool_call_id if isinstance(part, m.ToolCallPart) else f'{part.part_kind}{event.index}'
        return _Rec(response, slot, name), f'part-start {name}\n'.encode()

    def _part_delta(self, event: ev.PartDelta) -> bytes:
        return f'delta {self._open[event.index].name} {event.delta}\n'.encode()

    def _part_ended(self, opened: _Rec, error: str | None) -> bytes:
        part = opened.finished
        if isinstance(part, m.ToolCallPart):
            return self._call_ended(opened.name, opened, error)
        assert isinstance(part, m.TextPart | m.ThinkingPart)
        return f'part-end {opened.name} {part.content!r}\n'.encode()

    def _send_call(self, held: _Rec, mark: ev.AnsweredBy | None, error: str | None = None) -> bytes:
        call = held.finished
        assert isinstance(call, m.ToolCallPart)
        return f'call {held.name} {call.args!r} mark={mark} error={error}\n'.encode()

    def _tool_call_ready(self, event: ev.ToolCallReady, *, late: bool) -> bytes:
        return f'ready {event.tool_call_id} late\n'.encode() if late else b''

    def _tool_result(self, event: ev.ToolResult) -> bytes:
        return f'result {event.part.tool_call_id}\n'.encode()

    def _retry_prompt(self, part: m.RetryPromptPart) -> bytes:
        return b'retry-prompt\n'

    def _retry_feedback(self, event: ev.RetryFeedback) -> bytes:
        return b'feedback\n'

    def _file_output(self, event: ev.FileOutput) -> bytes:
        return b'file\n'

    def _custom_data(self, event: ev.CustomData) -> bytes:
        return f'custom {event.name}\n'.encode()

    def _native_tool_result(self, event: ev.NativeToolResult) -> bytes:
        return f'native-result {event.part.tool_call_id}\n'.encode()

    def _citation_added(self, event: ev.CitationAdded) -> bytes:
        return f'citation {event.index}\n'.encode()

    def _response_info(self, event: ev.ResponseInfo) -> bytes:
        return b'response-info\n'

    def _message_metadata(self, event: ev.MessageMetadata) -> bytes:
        return b'message-metadata\n'

    def _state_snapshot(self, event: ev.StateSnapshot) -> bytes:
        return b'state\n'

    def _state_delta(self, event: ev.StateDelta) -> bytes:
        return b'state-delta\n'

    def _step_started(self, event: ev.StepStarted) -> bytes:
        return f'step {event.name}\n'.encode()

    def _step_finished(self, event: ev.StepFinished) -> bytes:
        return f'step-end {event.name}\n'.encode()

    def _activity_snapshot(self, event: ev.ActivitySnapshot) -> bytes:
        return b'activity\n'

    def _activity_delta(self, event: ev.ActivityDelta) -> bytes:
        return b'activity-delta\n'

    def _raw_event(self, event: ev.RawEvent) -> bytes:
        return b'raw\n'

    def _run_finished(self, event: ev.RunFinished) -> bytes:
        return b'finished\n'

    def _run_error(self, event: ev.RunError) -> bytes:
        return f'error {event.message}\n'.encode()

    def _run_cancelled(self, event: ev.RunCancelled) -> bytes:
        return b'cancelled\n'


def lines(events: list[ev.AgentEvent]) -> list[str]:
    return encode_all(Recorder(), events).decode().splitlines()


def call(call_id: str, args: str | dict[str, Any] | None = None) -> m.ToolCallPart:
    return m.ToolCallPart(tool_name='f', args=args, tool_call_id=call_id)


def result(call_id: str) -> ev.ToolResult:
    return ev.ToolResult(m.ToolReturnPart(tool_name='f', content='ok', tool_call_id=call_id))


def test_encoding_before_start_opens_the_stream_and_a_terminal_event_ends_it() -> None:
    stream = Recorder()
    assert stream.encode(ev.ResponseStart()) == b'start\nresponse\n'
    assert stream.start() == b''
    assert stream.encode(ev.RunError('boom')) == b'error boom\n'
    assert stream.encode(ev.ResponseStart()) == b''
    assert stream.close() == b''


def test_close_finishes_a_run_that_did_not_end() -> None:
    assert lines([]) == ['start', 'finished']


@pytest.mark.parametrize(
    'event',
    [
        ev.PartStart(0, m.TextPart(content='')),
        ev.FileOutput(m.FilePart(content=m.BinaryContent(data=b'x', media_type='image/png'))),
        ev.CustomData('kept', 1),
    ],
)
def test_what_belongs_to_a_response_opens_one_outside_any(event: ev.AgentEvent) -> None:
    assert lines([event])[1] == 'response'


def test_transient_data_opens_no_response_and_a_response_opens_once() -> None:
    assert lines([ev.CustomData('shown', 1, transient=True)]) == ['start', 'custom shown', 'finished']
    assert lines([ev.ResponseStart(), ev.PartStart(0, m.TextPart(content='')), ev.CustomData('kept', 1)]) == [
        'start',
        'response',
        'part-start text0',
        'custom kept',
        "part-end text0 ''",
        'finished',
    ]


def test_parts_cut_off_end_in_the_order_they_started_and_whole() -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(1, m.TextPart(content='a')),
        ev.PartStart(0, m.ThinkingPart(content='b')),
        ev.PartDelta(1, 'c'),
        ev.ResponseStart(),
    ]
    assert lines(events)[5:8] == ["part-end text1 'ac'", "part-end thinking0 'b'", 'response']


def test_a_finished_call_waits_for_its_mark() -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, call('c1')),
        ev.PartDelta(0, '{"a": 1}'),
        ev.PartEnd(0),
        ev.ToolCallReady('c1', 'client'),
    ]
    assert lines(events)[3:] == ['delta c1 {"a": 1}', 'call c1 \'{"a": 1}\' mark=client error=None', 'finished']


def test_a_mark_that_comes_while_the_call_streams_is_sent_at_its_end_and_the_last_one_counts() -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, call('c1', {})),
        ev.ToolCallReady('c1', 'client'),
        ev.ToolCallReady('c1', 'approval'),
        ev.PartEnd(0),
    ]
    assert lines(events)[3:] == ['call c1 {} mark=approval error=None', 'finished']


@pytest.mark.parametrize(
    ('release', 'expected'),
    [
        (result('c1'), ['call c1 {} mark=None error=None', 'result c1']),
        (ev.RunCancelled(), ['call c1 {} mark=None error=None', 'cancelled']),
    ],
    ids=['its result', 'the run ends'],
)
def test_a_held_call_is_sent_unmarked_when(release: ev.AgentEvent, expected: list[str]) -> None:
    assert lines([ev.PartStart(0, call('c1', {})), ev.PartEnd(0), release])[3:5] == expected


def test_held_calls_are_sent_in_the_order_they_ended_and_a_new_response_keeps_them() -> None:
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, call('c1', {})),
        ev.PartStart(1, call('c2', {})),
        ev.PartEnd(1),
        ev.PartEnd(0),
        ev.ResponseStart(),
    ]
    assert lines(events)[4:] == [
        'response',
        'call c2 {} mark=None error=None',
        'call c1 {} mark=None error=None',
        'finished',
    ]


def test_a_failed_run_answers_the_calls_it_cuts_off_as_failed() -> None:
    """Each of the server's calls nothing answered (held, or cut off mid-arguments) ends as any call does and
    gets the error as its failed result, in the order the calls started; the collector keeps the same."""
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, call('c1', {})),
        ev.PartEnd(0),
        ev.PartStart(1, call('c2')),
        ev.PartDelta(1, '{"a'),
        ev.RunError('boom'),
    ]
    assert lines(events)[5:] == [
        'call c1 {} mark=None error=None',
        'result c1',
        "call c2 '{\"a' mark=None error=None",
        'result c2',
        'error boom',
    ]
    stream = Recorder()
    encode_all(stream, events)
    *_, request = stream.new_messages
    assert isinstance(request, m.ModelRequest)
    assert [(p.tool_call_id, p.outcome, p.content) for p in request.parts if isinstance(p, m.ToolReturnPart)] == [
        ('c1', 'failed', 'boom'),
        ('c2', 'failed', 'boom'),
    ]


def test_a_failed_run_hands_its_error_to_a_client_call_it_cuts_off() -> None:
    """A call a client tool or an approval answers is cut off as it was, and no result is made up for it."""
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, call('c1', {})),
        ev.PartEnd(0),
        ev.ToolCallReady('c1', 'approval'),
        ev.PartStart(1, call('c2')),
        ev.ToolCallReady('c2', 'client'),
        ev.PartDelta(1, '{"a'),
        ev.RunError('boom'),
    ]
    assert lines(events)[-2:] == ["call c2 '{\"a' mark=client error=boom", 'error boom']
    assert 'result' not in ' '.join(lines(events))


def test_a_mark_for_a_call_neither_held_nor_streaming_is_late() -> None:
    events: list[ev.AgentEvent] = [
        ev.ToolCallReady('c1', 'approval'),
        ev.PartStart(0, call('c1', {})),
        ev.PartEnd(0),
        result('c1'),
        ev.ToolCallReady('c1', 'client'),
    ]
    assert lines(events)[1:] == [
        'ready c1 late',
        'response',
        'part-start c1',
        'call c1 {} mark=None error=None',
        'result c1',
        'ready c1 late',
        'finished',
    ]


def test_a_legacy_retry_prompt_answers_no_call() -> None:
    legacy = ev.ToolResult(m.RetryPromptPart(content='again', tool_name=None, tool_call_id='c1'))
    assert lines([ev.PartStart(0, call('c1', {})), ev.PartEnd(0), legacy])[3:] == [
        'retry-prompt',
        'call c1 {} mark=None error=None',
        'finished',
    ]


def test_feedback_closes_parts_and_the_response() -> None:
    feedback = ev.RetryFeedback(m.RetryFeedbackPart(content='no', cause='model_retry'))
    events: list[ev.AgentEvent] = [
        ev.PartStart(0, m.TextPart(content='x')),
        feedback,
        ev.PartStart(0, m.TextPart(content='y')),
    ]
    assert lines(events)[1:] == [
        'response',
        'part-start text0',
        "part-end text0 'x'",
        'feedback',
        'response',
        'part-start text0',
        "part-end text0 'y'",
        'finished',
    ]


def test_every_agent_event_kind_has_a_hook() -> None:
    samples: list[ev.AgentEvent] = [
        ev.ResponseStart(),
        ev.PartStart(0, m.TextPart(content='')),
        ev.PartDelta(0, 'x'),
        ev.PartEnd(0),
        ev.ToolCallReady('c', 'client'),
        result('c'),
        ev.RetryFeedback(m.RetryFeedbackPart(content='no', cause='model_retry')),
        ev.FileOutput(m.FilePart(content=m.BinaryContent(data=b'x', media_type='image/png'))),
        ev.CustomData('d', 1),
        ev.NativeToolResult(m.NativeToolReturnPart(tool_name='web_search', content='r', tool_call_id='n')),
        ev.CitationAdded(0, Citation(sources=[WebCitationSource(url='https://x')])),
        ev.ResponseInfo(usage=Usage(input_tokens=1)),
        ev.MessageMetadata({'k': 1}),
        ev.StateSnapshot({'a': 1}),
        ev.StateDelta([{'op': 'add', 'path': '/b', 'value': 2}]),
        ev.StepStarted('s'),
        ev.StepFinished('s'),
        ev.ActivitySnapshot('a1', 'plan', {'steps': []}),
        ev.ActivityDelta('a1', 'plan', []),
        ev.RawEvent({'type': 'x'}),
        ev.RunFinished(),
        ev.RunError(),
        ev.RunCancelled(),
    ]
    assert {type(event) for event in samples} == set(get_args(ev.AgentEvent))
    for event in samples:
        Recorder._hook_for(event)  # pyright: ignore[reportPrivateUsage]


def test_what_is_no_agent_event_is_a_type_error_naming_it_and_changes_nothing() -> None:
    stream = Recorder()
    with pytest.raises(TypeError, match='not an agent event: dict'):
        stream.encode({'type': 'text'})  # pyright: ignore[reportArgumentType]
    assert stream.start() == b'start\n'


def test_a_subclassed_event_takes_its_base_class_hook() -> None:
    @dataclass(frozen=True, slots=True)
    class MyDelta(ev.PartDelta):
        pass

    assert lines([ev.PartStart(0, m.TextPart(content='')), MyDelta(0, 'x')])[3] == 'delta text0 x'


def test_a_subclass_overriding_a_hook_dispatches_to_its_own() -> None:
    class Louder(Recorder):
        def _part_delta(self, event: ev.PartDelta) -> bytes:
            return super()._part_delta(event).upper()

    events: list[ev.AgentEvent] = [ev.PartStart(0, m.TextPart(content='')), ev.PartDelta(0, 'x')]
    assert encode_all(Recorder(), events) != encode_all(Louder(), events)
    assert b'DELTA TEXT0 X' in encode_all(Louder(), events)
    assert b'delta text0 x' in encode_all(Recorder(), events)


def test_a_protocol_without_every_hook_cannot_be_made() -> None:
    class Partial(StreamEncoder[_Rec]):
        def _stream_started(self) -> bytes:
            return b''

    with pytest.raises(TypeError, match='abstract'):
        Partial(KEYRING)  # pyright: ignore[reportAbstractUsage]


def test_the_collector_sees_every_event() -> None:
    stream = Recorder()
    encode_all(stream, [ev.PartStart(0, m.TextPart(content='a')), ev.PartDelta(0, 'b'), ev.RunFinished('stop')])
    [response] = stream.new_messages
    assert isinstance(response, m.ModelResponse)
    assert response.parts == [m.TextPart(content='ab')]
    assert response.finish_reason == 'stop'


# ------------------------------------------------------------------------------------------- frames


class _Frame(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel)

    call_id: str
    type: Literal['call'] = 'call'
    payload: Any
    note: str | None = None
    score: float | None = None
    kept: Any = None
    label: str = 'plain'


def test_a_frame_writer_writes_type_first_then_the_fields_in_order_under_their_wire_names() -> None:
    write = frame_writer(_Frame, keep_null={'kept'})
    assert write(call_id='c', payload={'a': [1, None]}, note='n', score=0.5) == (
        b'data: {"type":"call","callId":"c","payload":{"a":[1,null]},"note":"n","score":0.5,"kept":null,'
        b'"label":"plain"}\n\n'
    )


@pytest.mark.parametrize('empty', [None, math.nan, math.inf])
def test_an_optional_field_holding_nothing_is_left_out_unless_kept_or_required(empty: Any) -> None:
    write = frame_writer(_Frame, keep_null={'kept'})
    assert write(call_id='c', payload=None, note=None, score=empty, kept=None) == (
        b'data: {"type":"call","callId":"c","payload":null,"kept":null,"label":"plain"}\n\n'
    )
    assert (
        frame_writer(_Frame)(call_id='c', payload=1)
        == b'data: {"type":"call","callId":"c","payload":1,"label":"plain"}\n\n'
    )


def test_a_writer_of_some_optional_fields_refuses_the_others_and_still_writes_what_must_be() -> None:
    write: Any = frame_writer(_Frame, optional={'note'})
    assert write(call_id='c', payload=1, note='n') == (
        b'data: {"type":"call","callId":"c","payload":1,"note":"n","label":"plain"}\n\n'
    )
    with pytest.raises(TypeError, match=r"_Frame\(\) got an unexpected keyword argument 'score'"):
        write(call_id='c', payload=1, score=1.0)
    with pytest.raises(TypeError, match='_Frame has no field nope'):
        frame_writer(_Frame, optional={'nope'})


def test_a_bad_call_is_refused_as_python_refuses_it() -> None:
    write: Any = frame_writer(_Frame)
    with pytest.raises(TypeError, match=r"_Frame\(\) got an unexpected keyword argument 'callId'"):
        write(callId='c', payload=1)
    with pytest.raises(
        TypeError, match=r"_Frame\(\) missing 2 required keyword-only arguments: 'call_id' and 'payload'"
    ):
        write()
    with pytest.raises(TypeError, match=r'_Frame\(\) takes keyword arguments only'):
        write('c', payload=1)
    with pytest.raises(TypeError, match='is not a pydantic model'):
        frame_writer(dict)  # pyright: ignore[reportArgumentType]


def test_a_lone_surrogate_is_written_as_its_escape() -> None:
    # UTF-8 cannot hold half a surrogate pair; JSON's escape carries the same UTF-16 code unit to the client.
    assert frame_writer(_Frame)(call_id='\ud83d', payload={'\ud83d': 'é'}) == (
        b'data: {"type":"call","callId":"\\ud83d","payload":{"\\ud83d":"\xc3\xa9"},"label":"plain"}\n\n'
    )
