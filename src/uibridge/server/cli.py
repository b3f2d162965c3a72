"""`python -m uibridge serve [MODULE:AGENT]`: a development server for an agent, yours or the built-in demo's,
with the chat page at `/` and both protocols, under uvicorn."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .auth import ANONYMOUS, RequestInfo
from .options import check_agent
from .run import Agent

if TYPE_CHECKING:
    from .store import ChatStore

__all__ = ['TargetError', 'demo_authorize', 'load_agent', 'main']

DEMO_USER_HEADER = 'x-demo-user'
USAGE_ERROR = 2
"""The exit status of a command line that cannot be served (argparse's own for a bad option): nothing ran."""
AGENT_KINDS = (
    'an async generator function taking the run (`async def agent(run): yield ...`), an object called so, '
    'or a pydantic-ai Agent'
)


async def demo_authorize(request: RequestInfo) -> str | None:
    """The dev server's `authorize`: the principal is whatever the `x-demo-user` header says (`anonymous`
    without it). Enough to show and test ownership; a real app takes it from a verified session or token."""
    return request.headers.get(DEMO_USER_HEADER) or ANONYMOUS


class TargetError(Exception):
    """The command line asks for something that cannot be served; the message says what to fix."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_options(args)
    except TargetError as error:
        return _refuse(error)
    if importlib.util.find_spec('uvicorn') is None:
        print('uibridge serve needs uvicorn: pip install "uibridge[server]"', file=sys.stderr)
        return 1
    try:
        return asyncio.run(_serve(args))
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C it shut down on, once it has
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='python -m uibridge', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    serve = commands.add_parser(
        'serve',
        help='serve an agent (yours, or the demo: no API key needed) with the chat page',
        description='Serve an agent with the chat page at / and both protocols (Vercel AI: POST /api/chat, AG-UI: '
        'POST /ag-ui). The signing key comes from the UIBRIDGE_SECRET environment variable, never from the '
        'command line. A development server: with --store, the principal is the x-demo-user header.',
    )
    serve.add_argument(
        'target',
        nargs='?',
        metavar='MODULE:AGENT',
        help='your agent, as uvicorn names an app: the module (importable from the current directory or '
        f'--app-dir) and the attribute, dotted attributes allowed (chat.app:agents.support). It is {AGENT_KINDS} '
        '(served by uibridge.integrations.pydantic_ai.PydanticAIAgent). Without it, the built-in demo agent',
    )
    serve.add_argument(
        '--factory',
        action='store_true',
        help='MODULE:AGENT is a function that takes no arguments and returns the agent (sync or async), '
        'called once at startup',
    )
    serve.add_argument('--app-dir', default='.', help='the folder MODULE is imported from (default: the current one)')
    serve.add_argument('--host', default='127.0.0.1', help='interface to bind (default 127.0.0.1)')
    serve.add_argument('--port', type=int, default=8000, help='port (default 8000)')
    serve.add_argument('--expose-errors', action='store_true', help="show the agent's exception text in the UI")
    serve.add_argument(
        '--store',
        metavar='URL',
        help='keep the history on the server (server-managed history, resumable streams): memory:, '
        'sqlite:///path.db or redis://host:port/N; without it the client holds the history',
    )
    serve.add_argument(
        '--lease', type=float, default=None, help="seconds a run's claim holds without a heartbeat (default 10)"
    )
    serve.add_argument(
        '--vercel-sdk-version',
        type=int,
        choices=(5, 6, 7),
        default=7,
        help='the major version of `ai` the Vercel clients run; older ones get what they accept (default 7)',
    )
    serve.add_argument(
        '--delay', type=float, default=None, help='the demo agent: seconds between streamed words (default 0.02)'
    )
    serve.add_argument(
        '--slow-seconds', type=float, default=None, help='the demo agent: how long `slow` streams (default 5)'
    )
    remote = serve.add_mutually_exclusive_group()
    remote.add_argument('--remote-ag-ui', metavar='URL', help='serve the page from a remote AG-UI agent at URL')
    remote.add_argument('--remote-vercel', metavar='URL', help='serve the page from a remote Vercel AI chat route')
    # Refused with a pointer to UIBRIDGE_SECRET: a key on a command line is in `ps` and in shell history.
    serve.add_argument('--secret', help=argparse.SUPPRESS)
    return parser


def _check_options(args: argparse.Namespace) -> None:
    if args.secret is not None:
        raise TargetError(
            'the signing key is not taken on the command line (other users see it in `ps`, and shell history '
            'keeps it): set UIBRIDGE_SECRET in the environment'
        )
    if args.target is None and args.factory:
        raise TargetError('--factory needs MODULE:FACTORY, the function that makes your agent')
    remote = args.remote_ag_ui or args.remote_vercel
    if args.target is not None and remote is not None:
        raise TargetError(f'serve either {args.target} or a remote agent, not both')
    served = args.target or remote
    if served is not None:
        for option in ('delay', 'slow_seconds'):
            if getattr(args, option) is not None:
                flag = '--' + option.replace('_', '-')
                raise TargetError(f'{flag} is an option of the demo agent, not of {served}')


def _refuse(error: TargetError) -> int:
    print(f'uibridge serve: {error}', file=sys.stderr)
    return USAGE_ERROR


async def _serve(args: argparse.Namespace) -> int:
    """Make the agent, the store and the app, then serve them, all on the loop uvicorn serves on (so an async
    factory's connections and the store's belong to it)."""
    import uvicorn

    from .app import create_app

    try:
        agent = await _agent(args)
        store = None if args.store is None else _store(args.store, args.lease)
    except TargetError as error:
        return _refuse(error)
    sdk_version = args.vercel_sdk_version
    app = create_app(
        agent,
        page=True,
        expose_errors=args.expose_errors,
        vercel_sdk_version=sdk_version,
        store=store,
        authorize=None if store is None else demo_authorize,
    )
    where = f'http://{args.host}:{args.port}/'
    kept = f'history kept in {args.store}' if args.store else 'history kept by the client'
    served = args.target or args.remote_ag_ui or args.remote_vercel
    what = 'uibridge demo:' if served is None else f'uibridge: {served} on'
    print(f'{what} {where}  (Vercel AI: /api/chat for ai@{sdk_version}, AG-UI: /ag-ui; {kept})', flush=True)
    try:
        await uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level='info')).serve()
    finally:
        if store is not None:
            await store.aclose()
    return 0


async def _agent(args: argparse.Namespace) -> Agent:
    if (remote := _remote_agent(args.remote_ag_ui, args.remote_vercel)) is not None:
        return remote
    if args.target is None:
        from .demo import DemoAgent

        delay = 0.02 if args.delay is None else args.delay
        return DemoAgent(delay=delay, slow_seconds=5.0 if args.slow_seconds is None else args.slow_seconds)
    return await load_agent(args.target, factory=args.factory, app_dir=args.app_dir)


def _remote_agent(ag_ui: str | None, vercel: str | None) -> Agent | None:
    """The remote agent the page talks to (`uibridge.bridge`), declaring the page's client tool to an AG-UI remote
    (the page's `useChat` requests name none)."""
    if ag_ui is None and vercel is None:
        return None
    from ..bridge import RemoteAGUIAgent, RemoteVercelAgent
    from ..core.run import ClientTool

    if vercel is not None:
        return RemoteVercelAgent(vercel)
    assert ag_ui is not None
    page_tool = ClientTool('get_local_time', "The browser's local time", {'type': 'object', 'properties': {}})
    return RemoteAGUIAgent(ag_ui, tools=[page_tool])


def _store(url: str, lease: float | None) -> ChatStore:
    from .store import store_from_url

    if url.lower().startswith('sqlite:///'):  # `make serve`'s file sits in an ignored folder a fresh clone lacks
        Path(url[len('sqlite:///') :]).parent.mkdir(parents=True, exist_ok=True)
    try:
        return store_from_url(url, **({'lease': lease} if lease else {}))
    except ValueError as error:
        raise TargetError(str(error)) from None
    except ImportError as error:
        raise TargetError(f'the store {url!r} needs {error.name!r}: pip install "uibridge[{error.name}]"') from None


async def load_agent(target: str, *, factory: bool = False, app_dir: str = '.') -> Agent:
    """The agent `target` names (`module:attribute`, dotted attributes allowed), imported with `app_dir` first on
    `sys.path` as uvicorn does; with `factory`, what calling it with no arguments returns (awaited when it is
    awaitable). A pydantic-ai `Agent` comes back wrapped in `PydanticAIAgent`. Raises `TargetError`, whose
    message says what to fix, when the target cannot be imported, is not an agent, or its factory fails."""
    found = _import(target, app_dir)
    if factory:
        if not callable(found):
            raise TargetError(f'{target} is {_kind(found)}, not a factory (a function that returns the agent)')
        try:
            made = found()
            if inspect.isawaitable(made):
                made = await made
        except Exception as error:
            raise TargetError(f'the factory {target} failed: {_error(error)}') from None
        return _as_agent(made, f'what {target}() returned')
    return _as_agent(found, target)


def _import(target: str, app_dir: str) -> object:
    module_name, _, path = target.partition(':')
    if not module_name or not path or not all(name.isidentifier() for name in path.split('.')):
        raise TargetError(f'{target!r} is not MODULE:AGENT (app:agent, chat.app:agents.support)')
    folder = str(Path(app_dir).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name + '.').startswith(error.name + '.'):
            where = 'the current directory' if app_dir == '.' else os.fspath(app_dir)
            raise TargetError(
                f'no module {error.name!r} to import from {where} (run from the folder that holds {module_name!r}, '
                'or pass --app-dir)'
            ) from None
        raise TargetError(f'importing {module_name!r} failed: {_error(error)}') from None
    except Exception as error:
        raise TargetError(f'importing {module_name!r} failed: {_error(error)}') from None
    for depth, name in enumerate(path.split('.')):
        try:
            found = getattr(found, name)
        except AttributeError:
            owner = ':'.join((module_name, '.'.join(path.split('.')[:depth]))).rstrip(':')
            raise TargetError(f'{owner} has no attribute {name!r}') from None
    return found


def _as_agent(found: object, what: str) -> Agent:
    pydantic_ai = sys.modules.get('pydantic_ai')  # an Agent of pydantic-ai exists only once its module is imported
    if pydantic_ai is not None:
        from pydantic_ai.agent import AbstractAgent

        if isinstance(found, AbstractAgent):
            from ..integrations.pydantic_ai import PydanticAIAgent

            return PydanticAIAgent(cast('AbstractAgent[object, object]', found))
    if not callable(found):
        raise TargetError(f'{what} is {_kind(found)}, not an agent: an agent is {AGENT_KINDS}')
    try:
        check_agent(found)
    except TypeError as error:
        raise TargetError(f'{what} is not an agent: {error}') from None
    if not _takes(found, 1):
        hint = '; to call it with no arguments for the agent, pass --factory' if _takes(found, 0) else ''
        raise TargetError(f'{what} is not an agent: it does not take the run as its one argument{hint}')
    return cast('Agent', found)


def _takes(function: Callable[..., object], count: int) -> bool:
    """Whether `function` can be called with `count` positional arguments (True when it has no signature to read,
    as some builtins do: it is then called as it is)."""
    try:
        inspect.signature(function).bind(*[None] * count)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _kind(found: object) -> str:
    name = type(found).__name__
    return f'{"an" if name[:1].lower() in "aeiou" else "a"} {name}'


def _error(error: BaseException) -> str:
    return f'{type(error).__name__}: {error}' if str(error) else type(error).__name__
