"""The options every endpoint takes, typed once, and checked when the endpoint is built.

`EndpointOptions` is what `VercelAIEndpoint`, `AGUIEndpoint` and `create_app` accept as keyword arguments
(`**options: Unpack[EndpointOptions]`), so a misspelt option (`on_complet=`) or a value of the wrong type is
caught by the type checker; `check_*` catch at construction what a type checker cannot (`keep_alive=-1`, a
scheme list given as one string, an agent that is a plain generator function), with an error that says what
to pass instead, rather than a failure on the first request.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypedDict, cast

from ..adapters.vercel_ai import SDK_VERSIONS, SdkVersion
from ..core.provenance import Keyring, Secret
from .approvals import ApprovalLedger
from .auth import Authorize
from .limits import Quota
from .run import OnComplete
from .store import ChatStore
from .telemetry import Telemetry


class EndpointOptions(TypedDict, total=False):
    """The keyword options of a chat endpoint (see `ChatEndpoint` for what each does)."""

    strip_system_prompts: bool
    allowed_file_url_schemes: Iterable[str]
    max_file_bytes: int
    allowed_media_types: Iterable[str]
    allow_file_handles: bool
    max_body_bytes: int
    allowed_content_types: Iterable[str]
    expose_errors: bool
    on_complete: OnComplete | None
    keep_alive: float | None
    secret: Keyring | Secret | Sequence[Secret] | None
    approval_secret: Secret | None
    approval_ledger: ApprovalLedger | None
    body_timeout: float
    max_messages: int
    max_parts_per_message: int
    max_parts: int
    max_id_length: int
    max_string_length: int
    max_json_values: int
    store: ChatStore | str | None
    authorize: Authorize | None
    max_chat_messages: int
    max_chat_bytes: int
    quota: Quota | None
    telemetry: Telemetry | bool


class VercelAIOptions(EndpointOptions, total=False):
    """`VercelAIEndpoint`'s options: every endpoint's, and the `ai` major version its clients run."""

    sdk_version: SdkVersion


class AppOptions(EndpointOptions, total=False):
    """`create_app`'s options: every endpoint's, `vercel_sdk_version` (the Vercel endpoint's `sdk_version`), and
    `stream_log` (a URL: where the store made from `store=`'s URL keeps its stream logs)."""

    vercel_sdk_version: SdkVersion
    stream_log: str | None


def check_sdk_version(value: object) -> SdkVersion:
    """`value` if it is a major version of `ai` uibridge writes for (a string such as `'5'` is refused: the
    setting is a number, and a CLI converts before it passes it on)."""
    for version in SDK_VERSIONS:
        if value == version and type(value) is int:
            return version
    versions = ', '.join(map(str, SDK_VERSIONS))
    raise ValueError(f'sdk_version must be one of {versions} (the major version of `ai`), not {value!r}')


def check_agent(agent: object) -> None:
    """An agent is an async generator function, or any callable returning an async iterator. A plain
    generator function or a coroutine function is a mistake no run could recover from: refused here."""
    if not callable(agent):
        raise TypeError(f'agent must be callable (an async generator function), not {type(agent).__name__}')
    target: Any = agent if inspect.isfunction(agent) or inspect.ismethod(agent) else type(agent).__call__
    if inspect.isgeneratorfunction(target):
        raise TypeError('agent must be an async generator function (`async def ... yield`), not a generator function')
    if inspect.iscoroutinefunction(target):
        raise TypeError(
            'agent must be an async generator function (`async def ... yield event`), not a coroutine function: '
            'it yields events rather than returning a result'
        )


def check_async_hook(name: str, value: object, parameters: Sequence[str]) -> None:
    """`value` is `None` or an async function taking `parameters` (a coroutine function, a `functools.partial` of
    one, or an object whose `__call__` is one). Anything else is refused here, with the definition it needs: a
    plain function's result cannot be awaited, so it would fail every request it is asked about."""
    if value is None:
        return
    wanted = f'async def {name}({", ".join(parameters)})'
    hook: Any = value
    if not callable(hook):
        raise TypeError(f'{name} must be an async function ({wanted}), not {value!r}')
    target: Any = hook.func if isinstance(hook, functools.partial) else hook
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = type(target).__call__
    if not inspect.iscoroutinefunction(target):
        raise TypeError(
            f'{name} must be an async function ({wanted}), not {value!r}: the endpoint awaits what it returns, on '
            'every request; define it with `async def` (a synchronous check can be called from one)'
        )
    try:
        inspect.signature(cast('Callable[..., object]', hook)).bind(*parameters)
    except TypeError:
        taking = f'{len(parameters)} argument{"s" if len(parameters) > 1 else ""}'
        raise TypeError(f'{name} must take {taking}, as {wanted} does; {value!r} does not') from None
    except ValueError:
        pass  # no signature to read (some callables written in C): the call will tell


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f'{name} must be True or False, not {value!r}')
    return value


def check_positive(name: str, value: object, *, optional: bool = False, integer: bool = False) -> Any:
    """`value` if it is a positive number (an `int` where `integer`), or `None` where `optional`."""
    if value is None and optional:
        return None
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value > 0:  # pyright: ignore[reportOperatorIssue]
        kind = 'a positive integer' if integer else 'a positive number'
        raise ValueError(f'{name} must be {kind}{" or None" if optional else ""}, not {value!r}')
    return value


def check_strings(name: str, value: object) -> tuple[str, ...]:
    """An iterable of strings as a tuple; one string alone is refused (`'https'` would be five schemes)."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f'{name} must be a list of strings, such as {name}=[...], not {value!r}')
    items = tuple(value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if not all(isinstance(item, str) for item in items):  # pyright: ignore[reportUnknownVariableType]
        raise TypeError(f'{name} must hold strings only, not {items!r}')
    return items  # pyright: ignore[reportUnknownVariableType]
