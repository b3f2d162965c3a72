"""Default-deny, field by field: every field of every neutral model class, edited in a signed history the way a
client would edit its copy, either drops the item it belongs to or never reaches the agent (`run.messages`).

The classes and their fields are found, not listed: every part class of the request and response unions, the
two message classes, and every model class reachable from their fields (usage, citations and their sources,
file content), each field of each. A class or field added later is walked too, and fails here unless a
signature covers it or verification resets it. The one class a client authors (`UserPromptPart`) is named, and
checked to be the only one left out.

Each edit is a new value of the field's own type in the history the server signed; the client's wire is that
edited history dumped by the adapter with the original signatures put back (`forgery_support.forged`), sent to
the real endpoints of both protocols (`create_app`) next to the unedited one. What the agent got from the forged
request must be what it got from the unedited one, or that with items left out, and must hold no edited value.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import httpx
import pydantic
import pytest

from forgery_support import forged, request_body, wire
from uibridge import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from uibridge.core.citations import Citation, ContentCitationAnchor, DocumentCitationSource, WebCitationSource
from uibridge.core.events import STATE_METADATA_KEY
from uibridge.core.messages import ModelRequestPart, ModelResponsePart, OpaquePart
from uibridge.core.provenance import Keyring
from uibridge.core.usage import Usage
from uibridge.server import AgentRun
from uibridge.server.app import create_app

pytestmark = pytest.mark.anyio

KEYRING = Keyring('default-deny')
T0 = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
FORGED_TIME = datetime(1999, 9, 9, 9, 9, 9, tzinfo=UTC)
MARK = 'FORGED'
CLIENT_AUTHORED = {UserPromptPart}
"""What a client may write itself: its edits reach the agent, as its own words."""


def _union_members(annotation: Any) -> list[type[Any]]:
    """The classes of a (possibly `Annotated`) union of models."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return [member for member in get_args(annotation) if isinstance(member, type)]


def _models_in(annotation: Any) -> Iterator[type[pydantic.BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        yield annotation
        return
    for arg in get_args(annotation):
        yield from _models_in(arg)


def neutral_classes() -> set[type[pydantic.BaseModel]]:
    """Every model class of the neutral history, found from the message classes and the part unions."""
    found: set[type[pydantic.BaseModel]] = set()
    pending: list[type[pydantic.BaseModel]] = [
        ModelRequest,
        ModelResponse,
        *_union_members(ModelRequestPart),
        *_union_members(ModelResponsePart),
    ]
    while pending:
        cls = pending.pop()
        if cls in found:
            continue
        found.add(cls)
        for info in cls.model_fields.values():
            pending.extend(_models_in(info.annotation))
    return found


# ------------------------------------------------------------------------------------------ the history

WEB = WebCitationSource(url='https://example.org/a', title='A', excerpts=['a'], id='w1')
DOC = DocumentCitationSource(
    document_id='d1', title='D', excerpts=['d'], media_type='application/pdf', filename='d.pdf', id='dd1'
)
STATE = {'step': 2, 'items': ['a']}


def history() -> list[ModelMessage]:
    """A history the server signed in which every field of every class holds a value (none left at `None`)."""
    usage = Usage(
        input_tokens=10,
        cache_write_tokens=1,
        cache_read_tokens=2,
        output_tokens=5,
        output_reasoning_tokens=3,
        input_audio_tokens=4,
        cache_audio_read_tokens=6,
        output_audio_tokens=7,
        details={'accepted_prediction_tokens': 8},
    )
    cited = Citation(sources=[WEB, DOC], anchor=ContentCitationAnchor(start=0, end=4))
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content='Be brief.', timestamp=T0, dynamic_ref='sys'),
                UserPromptPart(content='Weather in Paris?', timestamp=T0),
            ],
            instructions='Answer in French.',
            metadata={'app': 'request'},
        ),
        ModelResponse(
            parts=[
                ThinkingPart(content='Look it up.', id='rs_1', signature='enc-1', provider_name='openai'),
                TextPart(content='Sure, checking.', id='msg_1', citations=[cited]),
                ToolCallPart(tool_name='get_weather', args='{"city": "Paris"}', tool_call_id='call_1'),
                ToolCallPart(
                    tool_name='convert', args={'amount': 12345678901234567891, 'rate': 1.0}, tool_call_id='call_2'
                ),
                FilePart(content=BinaryContent(data=b'\x89PNG', media_type='image/png'), id='file_1'),
                NativeToolCallPart(
                    tool_name='web_search', args='{"query": "paris"}', tool_call_id='ws_1', provider_name='openai'
                ),
                NativeToolReturnPart(
                    tool_name='web_search',
                    content={'hits': 2},
                    tool_call_id='ws_1',
                    provider_name='openai',
                    timestamp=T0,
                ),
            ],
            model_name='gpt-x',
            provider_name='openai',
            timestamp=T0,
            finish_reason='tool_call',
            usage=usage,
            provider_response_id='resp_1',
            provider_details={'service_tier': 'default'},
            metadata={'app': 'response', '__pydantic_ai__': {'pinned': True}, STATE_METADATA_KEY: STATE},
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name='get_weather',
                    content={'temp_c': 21, 'sky': 'clear'},
                    tool_call_id='call_1',
                    metadata={'source': 'station-7'},
                    timestamp=T0,
                    outcome='success',
                ),
                RetryPromptPart(
                    content=[
                        {'type': 'int_parsing', 'loc': ('amount',), 'msg': 'Input should be an integer', 'input': 'x'}
                    ],
                    tool_name='convert',
                    tool_call_id='call_2',
                    timestamp=T0,
                ),
            ],
            instructions='Answer in French.',
            metadata={'app': 'results'},
        ),
        ModelResponse(parts=[TextPart(content='It is 21C.')], timestamp=T0),
        ModelRequest(parts=[RetryFeedbackPart(content='Say where.', cause='model_retry', timestamp=T0)]),
        ModelResponse(parts=[TextPart(content='In Paris, 21C.')], timestamp=T0),
        ModelRequest(parts=[UserPromptPart(content='Thanks!', timestamp=T0)]),
    ]


# ------------------------------------------------------------------------------------------ the edits


def _other_value(value: Any, annotation: Any) -> Any:
    """A different value of `value`'s own type (and the field's), carrying `MARK` wherever it can."""
    literal = [a for a in get_args(_strip_optional(annotation)) if isinstance(a, str)]
    if get_origin(_strip_optional(annotation)) is Literal:
        return next(option for option in literal if option != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 128 if abs(value) > 2**53 else value + 1_000_003
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return f'{value}-{MARK}'
    if isinstance(value, bytes):
        return value + MARK.encode()
    if isinstance(value, datetime):
        return FORGED_TIME
    if isinstance(value, dict):
        text = next((key for key, item in value.items() if isinstance(item, str)), None)  # pyright: ignore[reportUnknownVariableType]
        if text is not None:
            return {**value, text: f'{value[text]}-{MARK}'}  # a value the model reads, edited in place
        return {**value, MARK.lower(): MARK}
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        if items and isinstance(items[0], dict):
            return [_other_value(items[0], Any), *items[1:]]
        return [*items, MARK]
    raise AssertionError(f'no edit for {value!r}')


def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _is_discriminator(info: Any) -> bool:
    """A `kind` / `part_kind` tag: a single-value literal, whose edit makes another class, not another value."""
    return get_origin(info.annotation) is Literal and len(get_args(info.annotation)) == 1


Edit = tuple[str, list[ModelMessage]]


def _edits_of(model: pydantic.BaseModel, path: str) -> Iterator[tuple[str, pydantic.BaseModel]]:
    """Each copy of `model` with one field (or one field of a model it holds) given another value."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if _is_discriminator(info) or value is None:
            continue
        if name == 'parts':
            continue  # each part is walked on its own
        if isinstance(value, pydantic.BaseModel):
            for where, inner in _edits_of(value, f'{path}.{name}'):
                yield where, model.model_copy(update={name: inner})
        elif isinstance(value, list) and value and all(isinstance(item, pydantic.BaseModel) for item in value):
            for index, item in enumerate(value):
                for where, inner in _edits_of(item, f'{path}.{name}'):
                    yield where, model.model_copy(update={name: [*value[:index], inner, *value[index + 1 :]]})
        else:
            yield f'{path}.{name}', model.model_copy(update={name: _other_value(value, info.annotation)})


def edits() -> list[tuple[str, type[Any], list[ModelMessage]]]:
    """`(what was edited, its class, the edited history)` for every field of every message and part."""
    base = history()
    found: list[tuple[str, type[Any], list[ModelMessage]]] = []
    for i, message in enumerate(base):
        for where, copy in _edits_of(message, type(message).__name__):
            found.append((f'{i}:{where}', type(message), [*base[:i], _same_parts(copy, message), *base[i + 1 :]]))
        for j, part in enumerate(message.parts):
            if type(part) in CLIENT_AUTHORED:
                continue
            for where, edited_part in _edits_of(part, type(part).__name__):
                edited = _renamed_alike(base, part, edited_part)
                siblings = edited[i].parts
                parts = [*siblings[:j], edited_part, *siblings[j + 1 :]]
                edited[i] = edited[i].model_copy(update={'parts': parts})
                found.append((f'{i}.{j}:{where}', type(part), edited))
    return found


def _same_parts(copy: ModelMessage, message: ModelMessage) -> ModelMessage:
    return copy.model_copy(update={'parts': message.parts})


def _renamed_alike(base: list[ModelMessage], part: Any, edited: Any) -> list[ModelMessage]:
    """`base` where the parts sharing `part`'s call id take its new id or tool name too: a client's wire holds a
    call and its result as one item (a Vercel tool part), so it edits both at once."""
    call_id = getattr(part, 'tool_call_id', None)
    changes = {
        name: getattr(edited, name)
        for name in ('tool_call_id', 'tool_name')
        if getattr(edited, name, None) != getattr(part, name, None)
    }
    if call_id is None or not changes:
        return list(base)
    out: list[ModelMessage] = []
    for message in base:
        parts = [
            p.model_copy(update=changes) if getattr(p, 'tool_call_id', None) == call_id and p is not part else p
            for p in message.parts
        ]
        out.append(message.model_copy(update={'parts': parts}))
    return out


# ------------------------------------------------------------------------------------------ the runs


class _Recording:
    def __init__(self) -> None:
        self.runs: list[AgentRun] = []

    async def __call__(self, run: AgentRun) -> Any:
        self.runs.append(run)
        return
        yield  # an async generator that yields nothing


async def agent_gets(protocol: str, messages: list[dict[str, Any]], thread_id: str) -> list[ModelMessage] | None:
    """What the agent got from a request with these messages; `None` when the endpoint refused it (a 422: a
    tool message whose call id names no call, say), which no agent then sees."""
    agent = _Recording()
    app = create_app(agent, secret=KEYRING)
    path = '/api/chat' if protocol == 'vercel' else '/ag-ui'
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        response = await client.post(path, json=request_body(protocol, messages, thread_id))
    if response.status_code == 422:
        assert not agent.runs
        return None
    assert response.status_code == 200, response.text
    [run] = agent.runs
    return run.messages


def _view(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """The messages as JSON, a response's `timestamp` left out (verification resets it to the time it ran)."""
    dumped = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    for message in dumped:
        if message['kind'] == 'response':
            del message['timestamp']
    return dumped


def _is_part_of(forged_view: list[dict[str, Any]], whole: list[dict[str, Any]]) -> bool:
    """Whether `forged_view` is `whole` with messages or parts left out (in order), nothing changed or added."""
    at = 0
    for message in forged_view:
        while at < len(whole) and not _message_within(message, whole[at]):
            at += 1
        if at == len(whole):
            return False
        at += 1
    return True


def _message_within(message: dict[str, Any], whole: dict[str, Any]) -> bool:
    if {k: v for k, v in message.items() if k != 'parts'} != {k: v for k, v in whole.items() if k != 'parts'}:
        return False
    parts = iter(whole['parts'])
    return all(any(part == candidate for candidate in parts) for part in message['parts'])


def _holds_forged_value(value: Any) -> bool:
    if isinstance(value, str):
        return MARK in value or value == FORGED_TIME.isoformat().replace('+00:00', 'Z')
    if isinstance(value, dict):
        return any(_holds_forged_value(k) or _holds_forged_value(v) for k, v in value.items())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list):
        return any(_holds_forged_value(item) for item in value)  # pyright: ignore[reportUnknownVariableType]
    return False


# ------------------------------------------------------------------------------------------ the tests


def test_every_class_of_the_neutral_history_is_walked() -> None:
    classes = neutral_classes()
    edited = {cls for _, cls, _ in edits()}
    part_classes = {*_union_members(ModelRequestPart), *_union_members(ModelResponsePart)}
    # Every message and part class has an instance in the history above, and every field of it an edit: a class
    # added to the model fails here until the history holds one.
    never = {cls for cls in part_classes | {ModelRequest, ModelResponse} if cls not in edited}
    assert never == CLIENT_AUTHORED | {OpaquePart}  # an opaque part is never dumped to a client (nothing to edit)
    assert {Usage, Citation, WebCitationSource, DocumentCitationSource, ContentCitationAnchor, BinaryContent} <= classes
    # Every field of every class holds a value in the history, so every one is edited somewhere.
    where = {what.split(':', 1)[1] for what, _, _ in edits()}
    for cls in classes - CLIENT_AUTHORED - {OpaquePart}:
        reached = [w for w in where if f'{cls.__name__}.' in w or f'.{cls.__name__}' in w]
        for name, info in cls.model_fields.items():
            if _is_discriminator(info) or name == 'parts':
                continue
            edited = any(w.endswith(f'.{name}') or f'.{name}.' in w for w in reached)
            assert edited or _nested_only(cls), (cls.__name__, name)


def _nested_only(cls: type[Any]) -> bool:
    """A class reached only inside another's field: its edits are named by the outer field's path."""
    return cls not in {
        ModelRequest,
        ModelResponse,
        *_union_members(ModelRequestPart),
        *_union_members(ModelResponsePart),
    }


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
async def test_an_edited_field_drops_its_item_or_never_reaches_the_agent(protocol: str) -> None:
    base = history()
    received = await agent_gets(protocol, wire(protocol, base, KEYRING), 'base')
    assert received is not None
    baseline = _view(received)
    assert any(m['kind'] == 'response' for m in baseline)  # the signed history reached the agent
    assert not _holds_forged_value(baseline)
    failures: list[str] = []
    for what, _, edited in edits():
        got = await agent_gets(protocol, forged(protocol, base, edited, KEYRING), 'forged')
        if got is None:
            continue  # refused whole
        view = _view(got)
        if _holds_forged_value(view) or not _is_part_of(view, baseline):
            failures.append(what)
    assert failures == []
