"""What one request may cost, checked on the parsed JSON before any protocol code runs.

A body within `max_body_bytes` can still ask for unbounded work: hundreds of thousands of tiny messages or
parts, a megabyte-long id that every derived id then repeats, a megabyte-long part type that ends up in a
log line. `check_limits` walks the body once (each JSON value is visited once, so the walk is linear and
itself bounded by `max_json_values`) and refuses, with a 413 naming the limit and where it was passed, what
goes beyond any of them; an id that is not valid Unicode text (a lone surrogate), which no encoder can write
once the `200` is out, is a 422. A server that keeps the chat and reads only the messages it does not have
(AG-UI, whose client sends the whole history every run) counts every message and part at once, and walks what a
message holds when it reads it (`check_message_limits`), within the budget the rest of the body left.

With a store, a chat is bounded too (`ChatLimits`): a run starts only when the chat, with what the client adds,
stays within `max_chat_messages` and `max_chat_bytes`, else a 413 names the limit before anything is stored
(the run's own answer may then take the chat past them: the next request is refused, until a regenerate or an
edit cuts it back). And an application's `quota` hook may refuse any run (413 or 429, its own message) after
the body is read and, with a store, the chat claimed, before the run is prepared.

Each file a client sends (a user prompt's attachments, media in a client tool's result) is checked too
(`AttachmentLimits`), on the history as loaded, so the check sees what the agent would get: a file past
`max_file_bytes` is a 413, one whose media type `allowed_media_types` does not allow a 415, each naming the file
(its index in the request and its name), before anything is stored or the agent runs.

"Text content" is where a chat legitimately holds long strings (texts, tool inputs and outputs, data URLs,
application state, metadata): strings under those keys are bounded only by the body size. Every other
string (a part's type, a role, a tool name, a media type) is bounded by `max_string_length`.
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal, TypeAlias, cast

from ..core.client_input import MAX_JSON_DEPTH, BodyError, check_depth
from ..core.json_text import LONE_SURROGATE
from ..core.media import attachments, check_media_type_pattern, media_type_allowed
from ..core.messages import ModelMessage
from .body import Rejected

__all__ = [
    'AttachmentLimits',
    'ChatLimits',
    'Quota',
    'QuotaRefusal',
    'QuotaRequest',
    'RequestLimits',
    'check_limits',
    'check_message_limits',
]


DEFAULT_MAX_MESSAGES = 5_000
DEFAULT_MAX_PARTS_PER_MESSAGE = 2_000
DEFAULT_MAX_PARTS = 20_000
DEFAULT_MAX_ID_LENGTH = 256
DEFAULT_MAX_STRING_LENGTH = 65_536
DEFAULT_MAX_JSON_VALUES = 500_000
DEFAULT_MAX_CHAT_MESSAGES = 5_000
DEFAULT_MAX_CHAT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_ALLOWED_MEDIA_TYPES = ('image/*', 'audio/*', 'video/*', 'text/*', 'application/pdf', 'application/json')


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """The defaults fit any real chat with room to spare; each is an endpoint option of the same name."""

    max_messages: int = DEFAULT_MAX_MESSAGES
    """Messages in one request's history."""
    max_parts_per_message: int = DEFAULT_MAX_PARTS_PER_MESSAGE
    """Parts (Vercel `parts`; AG-UI `content` parts and `toolCalls`) in one message."""
    max_parts: int = DEFAULT_MAX_PARTS
    """Parts in the whole request: each becomes a model object (and a Vercel `step-start` a whole response), the
    costliest thing a body can hold per byte."""
    max_id_length: int = DEFAULT_MAX_ID_LENGTH
    """Characters in any id (ids are echoed back, and other ids are derived from them)."""
    max_string_length: int = DEFAULT_MAX_STRING_LENGTH
    """Characters in a string outside text content."""
    max_json_values: int = DEFAULT_MAX_JSON_VALUES
    """JSON values (objects, arrays, strings, numbers...) in the whole body: the total work budget."""

    def __post_init__(self) -> None:
        for name in (
            'max_messages',
            'max_parts_per_message',
            'max_parts',
            'max_id_length',
            'max_string_length',
            'max_json_values',
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f'{name} must be a positive integer, not {value!r}')


@dataclass(frozen=True, slots=True)
class ChatLimits:
    """What one stored chat may hold (server-managed history). The defaults are the request's own: a chat of
    at most as many messages as one request may carry, and as many bytes (its stored JSON) as one body, which a
    client that sends the whole history back (AG-UI's `HttpAgent`, `useChat` without
    `prepareSendMessagesRequest`) could still send. Each is an endpoint option of the same name."""

    max_chat_messages: int = DEFAULT_MAX_CHAT_MESSAGES
    """Messages the chat holds after what the client adds."""
    max_chat_bytes: int = DEFAULT_MAX_CHAT_BYTES
    """Bytes of the chat's stored messages (the pydantic-ai compatible JSON) after what the client adds."""

    def __post_init__(self) -> None:
        for name in ('max_chat_messages', 'max_chat_bytes'):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f'{name} must be a positive integer, not {value!r}')

    def check(self, kept: Sequence[int], added: Sequence[int]) -> None:
        """Refuse (413) a run after which the chat, its `kept` stored messages and the `added` ones (their sizes
        in bytes), would be past a limit."""
        if len(kept) + len(added) > self.max_chat_messages:
            raise Rejected(
                413,
                f'the chat would hold more than {self.max_chat_messages} messages (max_chat_messages)',
                reason='max_chat_messages',
            )
        if sum(kept) + sum(added) > self.max_chat_bytes:
            raise Rejected(
                413,
                f'the chat would hold more than {self.max_chat_bytes} bytes (max_chat_bytes)',
                reason='max_chat_bytes',
            )


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    """What one file a client sends may be. The defaults take what chat models read (images, audio, video, text,
    PDF, JSON) up to 5 MiB a file (the largest image some providers take; a body of the default 8 MiB carries a
    file that size as base64). Each is an endpoint option of the same name."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    """Bytes of one file that comes inline (a `data:` URL, an AG-UI `data` source): a 413 past it."""
    allowed_media_types: tuple[str, ...] = DEFAULT_ALLOWED_MEDIA_TYPES
    """The media types a file may have (`type/subtype`, `type/*`, `*/*` for any): a 415 for another. A URL or a
    provider's file handle that came without a media type is not checked (nothing here fetches it)."""

    def __post_init__(self) -> None:
        value = getattr(self, 'max_file_bytes')  # noqa: B009 (checked as the untyped value a caller passed)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f'max_file_bytes must be a positive integer, not {value!r}')
        if isinstance(self.allowed_media_types, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f'allowed_media_types must be a list of media types, not {self.allowed_media_types!r}')
        patterns = tuple(check_media_type_pattern(pattern) for pattern in self.allowed_media_types)
        object.__setattr__(self, 'allowed_media_types', patterns)

    def check(self, messages: Sequence[ModelMessage]) -> None:
        """Refuse (413, 415) a history holding a file past the limits, naming the first such file."""
        for attachment in attachments(messages):
            size = attachment.size
            if size is not None and size > self.max_file_bytes:
                raise Rejected(
                    413, f'{attachment.describe()} is {size} bytes, more than max_file_bytes ({self.max_file_bytes})'
                )
            media_type = attachment.media_type
            if media_type is not None and not media_type_allowed(media_type, self.allowed_media_types):
                allowed = ', '.join(self.allowed_media_types)
                raise Rejected(
                    415,
                    f'{attachment.describe()} is {media_type[:100]!r}, a media type allowed_media_types does not '
                    f'allow ({allowed})',
                )


@dataclass(frozen=True)
class QuotaRequest:
    """What the `quota` hook is told about a run it may refuse."""

    principal: str | None
    """Who asks (`authorize`'s answer; `'anonymous'` with a store and no hook, `None` without either)."""
    chat_id: str
    """The chat (Vercel `id`, AG-UI `threadId`): the client's word without a store."""
    protocol: str
    body_bytes: int
    """The request body's size."""
    stored_messages: int | None = None
    """With a store, the messages the chat holds before this run (`None` without one)."""
    stored_bytes: int | None = None
    """With a store, the bytes of the chat's stored messages before this run."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


@dataclass(frozen=True)
class QuotaRefusal:
    """A `quota` hook's refusal: the request gets `status` and `{"error": message}`; nothing runs or is stored."""

    message: str
    status: Literal[413, 429] = 429
    retry_after: int | None = None
    """Seconds, sent as `Retry-After` (a 429's usual companion)."""

    def __post_init__(self) -> None:
        if self.status not in (413, 429):
            raise ValueError(f'a quota refusal is a 413 or a 429, not {self.status!r}')

    def rejected(self) -> Rejected:
        headers = {} if self.retry_after is None else {'retry-after': str(self.retry_after)}
        return Rejected(self.status, self.message, headers=headers, reason='quota')


Quota: TypeAlias = Callable[[QuotaRequest], Awaitable[QuotaRefusal | None]]
"""`async def quota(request: QuotaRequest) -> QuotaRefusal | None`: per-principal accounting, called once per
run before it is prepared; `None` lets it run."""


_CONTENT_KEYS = frozenset(
    {
        'text', 'content', 'delta', 'data', 'url', 'value', 'input', 'output', 'rawInput', 'arguments', 'errorText',
        'error', 'reason', 'state', 'result', 'payload', 'metadata', 'providerMetadata', 'callProviderMetadata',
        'resultProviderMetadata', 'encryptedValue', 'context', 'forwardedProps', 'parameters', 'description',
        'signature', 'title', 'filename', 'activityContent', 'snapshot',
    }
)  # fmt: skip


def _is_id_key(key: str) -> bool:
    return key == 'id' or key.endswith(('Id', '_id'))


@dataclass(frozen=True, slots=True)
class PartCounts:
    """The parts of the first `messages` messages of a list, counted before (the same messages: `_body_memo`): for
    each key of `PART_LISTS`, the parts under it in all and the most one message holds under it."""

    messages: int
    totals: tuple[int, ...]
    most: tuple[int, ...]


def check_limits(
    body: dict[str, Any], limits: RequestLimits, *, later: bool = False, counted: PartCounts | None = None
) -> int:
    """Refuse (413, or 422 for an id no encoder can write) a body past any of `limits`. With `later`, what the
    messages hold is left for `check_message_limits` (their number and parts are counted now): for a server that
    reads only some of them. `counted`: the parts of the first messages, as counted before (only the rest are
    counted now). Returns the `max_json_values` budget left."""
    messages = body.get('messages')
    if isinstance(messages, list):
        items = cast('list[Any]', messages)
        if len(items) > limits.max_messages:
            raise Rejected(
                413, f'more than {limits.max_messages} messages (max_messages)', 'messages', reason='max_messages'
            )
        _count_parts(items, limits, counted)
        if later:
            # The list and each message count as a value now; what a message holds, when it is read.
            envelope = {key: value for key, value in body.items() if key != 'messages'}
            return _walk([(envelope, ())], limits, limits.max_json_values - 1 - len(items))
    return _walk([(body, ())], limits, limits.max_json_values)


_get: Callable[[Any, str], Any] = dict[Any, Any].get  # one C call a message, in `map`

PART_LISTS = ('parts', 'content', 'toolCalls')
"""The keys under which a message holds its parts (Vercel `parts`; AG-UI `content` parts and `toolCalls`)."""


def part_lengths(items: list[Any]) -> list[list[int]] | None:
    """For each key of `PART_LISTS`, how many parts each of `items` holds under it (0 without a list there); `None`
    when no item holds a list under any. In passes that each run in C, but for the lengths of the lists found."""
    objects = set(map(type, items)) <= {dict}
    lengths: list[list[int]] = []
    for key in PART_LISTS:
        if objects and not any(map(operator.contains, items, repeat(key))):  # no message has the key
            lengths.append([])
            continue
        values: list[Any] = list(map(_get, items, repeat(key))) if objects else [
            cast('dict[str, Any]', message).get(key) if isinstance(message, dict) else None for message in items
        ]  # fmt: skip
        if list not in set(map(type, values)):
            lengths.append([])
            continue
        lengths.append([len(cast('list[Any]', value)) if type(value) is list else 0 for value in values])
    return lengths if any(lengths) else None


def _count_parts(items: list[Any], limits: RequestLimits, counted: PartCounts | None = None) -> None:
    # Every message of every request comes through here (with a store, the whole history each AG-UI run): the
    # common case is counted in passes that each run in C (a part list's length looked at only where there is
    # one), past the messages `counted` holds; a request past a limit is counted again message by message, to
    # name the first place it is passed.
    done = counted.messages if counted is not None and counted.messages <= len(items) else 0
    lengths = part_lengths(items[done:] if done else items) or [[] for _ in PART_LISTS]
    total = 0
    for position, found in enumerate(lengths):
        most = max(found, default=0)
        if done:
            assert counted is not None
            most = max(most, counted.most[position])
            total += counted.totals[position]
        if most > limits.max_parts_per_message:
            break
        total += sum(found)
    else:
        if total <= limits.max_parts:
            return
    _refuse_parts(items, limits)


def _refuse_parts(items: list[Any], limits: RequestLimits) -> None:
    total = 0
    for index, message in enumerate(items):
        if not isinstance(message, dict):
            continue
        for key in PART_LISTS:
            parts = cast('dict[str, Any]', message).get(key)
            if not isinstance(parts, list):
                continue
            count = len(cast('list[Any]', parts))
            if count > limits.max_parts_per_message:
                raise Rejected(
                    413,
                    f'more than {limits.max_parts_per_message} parts in one message (max_parts_per_message)',
                    f'messages.{index}.{key}',
                    reason='max_parts_per_message',
                )
            total += count
            if total > limits.max_parts:
                raise Rejected(
                    413,
                    f'more than {limits.max_parts} parts in the request (max_parts)',
                    f'messages.{index}.{key}',
                    reason='max_parts',
                )


def check_message_limits(messages: Iterable[tuple[int, Any]], *, limits: RequestLimits, budget: int) -> int:
    """What `check_limits(later=True)` left: the messages read (each with its index in the body), within the
    `budget` it left (each message counted there already). Returns the budget left."""
    return _walk([(message, ('messages', index)) for index, message in messages], limits, budget, counted=True)


def _walk(
    roots: list[tuple[Any, tuple[str | int, ...]]], limits: RequestLimits, budget: int, *, counted: bool = False
) -> int:
    # An explicit stack: (value, path, inside text content). Paths are kept as tuples and joined only for an
    # error, so the walk costs one tuple per container. `counted`: the roots were counted already.
    stack: list[tuple[Any, tuple[str | int, ...], bool]] = [(value, path, False) for value, path in reversed(roots)]
    budget += len(roots) if counted else 0
    while stack:
        value, path, in_content = stack.pop()
        budget -= 1
        if len(path) >= MAX_JSON_DEPTH:  # a container at this path is nested one level deeper than its path is long
            raise Rejected(422, f'JSON nested deeper than {MAX_JSON_DEPTH} levels')
        if isinstance(value, dict):
            for key, item in cast('dict[str, Any]', value).items():
                if isinstance(item, str):
                    budget -= 1 + _embedded_values(item, (*path, key))
                    _check_string(key, item, (*path, key), in_content, limits)
                elif isinstance(item, dict | list):
                    stack.append((cast('Any', item), (*path, key), in_content or key in _CONTENT_KEYS))
                else:
                    budget -= 1
        elif isinstance(value, list):
            for index, item in enumerate(cast('list[Any]', value)):
                if isinstance(item, dict | list):
                    stack.append((cast('Any', item), (*path, index), in_content))
                else:
                    budget -= 1
                    if isinstance(item, str):
                        budget -= _embedded_values(item, (*path, index))
                        if not in_content and len(item) > limits.max_string_length:
                            _too_long((*path, index), limits)
        if budget < 0:  # checked once per container: what one container holds is bounded by the body size
            raise Rejected(
                413,
                f'more than {limits.max_json_values} JSON values in the body (max_json_values)',
                reason='max_json_values',
            )
    return budget


def _embedded_values(text: str, path: tuple[str | int, ...]) -> int:
    """The JSON values a string may hold, for a string that looks like JSON: the server parses some strings
    (tool arguments, JSON tool results, markers), so what they hold counts against the budget like the body's
    own values, and their nesting is bounded like the body's. An upper bound counted in C (brackets and
    commas), so a string that merely looks like JSON costs its budget share and nothing more."""
    if len(text) < 64 or text.lstrip()[:1] not in ('[', '{'):
        return 0
    try:
        check_depth(text)
    except BodyError:
        raise Rejected(422, f'JSON inside a string nested deeper than {MAX_JSON_DEPTH} levels', _join(path)) from None
    return text.count('[') + text.count('{') + text.count(',')


def _check_string(key: str, value: str, path: tuple[str | int, ...], in_content: bool, limits: RequestLimits) -> None:
    if in_content or key in _CONTENT_KEYS:
        return  # what a tool or the application put there: bounded by the body size alone
    if _is_id_key(key):
        if len(value) > limits.max_id_length:
            raise Rejected(
                413,
                f'an id longer than {limits.max_id_length} characters (max_id_length)',
                _join(path),
                reason='max_id_length',
            )
        if not value.isascii() and LONE_SURROGATE.search(value):
            raise Rejected(422, 'an id that is not valid Unicode text (a lone surrogate)', _join(path))
    elif len(value) > limits.max_string_length:
        _too_long(path, limits)


def _too_long(path: tuple[str | int, ...], limits: RequestLimits) -> None:
    raise Rejected(
        413,
        f'a string outside text content longer than {limits.max_string_length} characters (max_string_length)',
        _join(path),
        reason='max_string_length',
    )


def _join(path: tuple[str | int, ...]) -> str:
    return '.'.join(str(p)[:64] for p in path)[:300]
