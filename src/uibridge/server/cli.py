"""`python -m uibridge serve [MODULE:AGENT]`: a development server for an agent, yours or the built-in demo's,
with the chat page at `/` and both protocols, under uvicorn (`--workers N`: N processes).

`python -m uibridge store migrate URL` / `store status URL`: a store's schema version (SQLite, PostgreSQL)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .auth import ANONYMOUS, RequestInfo
from .deployment import declared_workers
from .options import check_agent
from .run import Agent

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from .asgi import Receive, Scope, Send
    from .store import ChatStore

DEMO_USER_HEADER = 'x-demo-user'
USAGE_ERROR = 2
"""The exit status of a command line that cannot be served (argparse's own for a bad option): nothing ran."""
WORKER_ARGS = 'UIBRIDGE_SERVE_ARGS'
"""How `serve --workers N` hands its command line to the worker processes uvicorn starts (the environment they
inherit): each builds its own agent, store and app from it."""
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
    if args.command == 'store':
        return _store_command(args)
    try:
        _check_options(args)
    except TargetError as error:
        return _refuse(error)
    if importlib.util.find_spec('uvicorn') is None:
        print('uibridge serve needs uvicorn: pip install "uibridge[server]"', file=sys.stderr)
        return 1
    try:
        if args.workers > 1:
            return _serve_workers(args, list(sys.argv[1:] if argv is None else argv))
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
    serve.add_argument(
        '--workers',
        type=int,
        default=declared_workers(),
        metavar='N',
        help="serve from N processes (uvicorn's workers; default $WEB_CONCURRENCY, else 1, as uvicorn's). Needs a "
        'store the processes share (sqlite, redis, postgresql) when there is a store; without UIBRIDGE_SECRET they '
        'share a key made for this run',
    )
    serve.add_argument('--expose-errors', action='store_true', help="show the agent's exception text in the UI")
    serve.add_argument(
        '--store',
        metavar='URL',
        help='keep the history on the server (server-managed history, resumable streams): memory:, '
        'sqlite:///path.db, redis://host:port/N or postgresql://user@host/db; without it the client holds the '
        'history',
    )
    serve.add_argument(
        '--stream-log',
        metavar='URL',
        help="with --store: keep the streams' logs in Redis (redis://host:port/N), the chats staying in the store "
        '(postgresql://… for the chats, Redis for the live streams: resume on any host)',
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
    store = commands.add_parser(
        'store',
        help="a store's schema: migrate it, or see its version",
        description='The SQLite and PostgreSQL stores keep a schema version in their database. A store refuses an '
        'older one until it is migrated: run `store migrate URL` once, from one place, before starting a newer '
        'uibridge (with a backup first). memory: and redis:// stores keep no schema.',
    )
    actions = store.add_subparsers(dest='action', required=True)
    for action, text in (
        ('migrate', "bring the store's schema to this uibridge's version (creating it in an empty database)"),
        ('status', 'print the schema version found and the one this uibridge uses; exit 1 when a migration is due'),
    ):
        actions.add_parser(action, help=text, description=text).add_argument(
            'url', metavar='URL', help='the store URL, as --store takes it (sqlite:///path.db, postgresql://…)'
        )
    return parser


def _check_options(args: argparse.Namespace) -> None:
    if args.secret is not None:
        raise TargetError(
            'the signing key is not taken on the command line (other users see it in `ps`, and shell history '
            'keeps it): set UIBRIDGE_SECRET in the environment'
        )
    if args.workers < 1:
        raise TargetError(f'--workers must be 1 or more, not {args.workers}')
    if args.workers > 1 and args.store is not None and args.store.lower().startswith('memory:'):
        raise TargetError(
            f'--workers {args.workers} cannot share a memory: store (each process would hold chats of its own, and '
            'a resume or a stop would reach the wrong one): use --store sqlite:///path.db on one host, or '
            'redis://… or postgresql://… across hosts'
        )
    if args.stream_log is not None and args.store is None:
        raise TargetError('--stream-log keeps the stream logs of a store apart: it needs --store too')
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

    try:
        app, store = await _build(args)
        if store is not None:
            await _check_store(store)
    except TargetError as error:
        return _refuse(error)
    _announce(args)
    try:
        await uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level='info')).serve()
    finally:
        if store is not None:
            await store.aclose()
    return 0


async def _build(args: argparse.Namespace) -> tuple[Starlette, ChatStore | None]:
    """The app the command line asks for, and its store (the caller closes it)."""
    from .app import create_app

    agent = await _agent(args)
    store = None if args.store is None else _store(args.store, args.lease, args.stream_log)
    app = create_app(
        agent,
        page=True,
        expose_errors=args.expose_errors,
        vercel_sdk_version=args.vercel_sdk_version,
        store=store,
        authorize=None if store is None else demo_authorize,
    )
    return app, store


async def _check_store(store: ChatStore) -> None:
    """Refuse to serve from a store whose schema must be migrated first (the message says how)."""
    from .store import SchemaError

    try:
        await store.ping()
    except SchemaError as error:
        raise TargetError(str(error)) from None
    except Exception:
        pass  # a store that cannot be reached yet: `/readyz` says so until it can


def _announce(args: argparse.Namespace) -> None:
    where = f'http://{args.host}:{args.port}/'
    kept = f'history kept in {args.store}' if args.store else 'history kept by the client'
    served = args.target or args.remote_ag_ui or args.remote_vercel
    what = 'uibridge demo:' if served is None else f'uibridge: {served} on'
    processes = f'; {args.workers} worker processes' if args.workers > 1 else ''
    sdk = args.vercel_sdk_version
    print(f'{what} {where}  (Vercel AI: /api/chat for ai@{sdk}, AG-UI: /ag-ui; {kept}{processes})', flush=True)


def _serve_workers(args: argparse.Namespace, argv: list[str]) -> int:
    """`serve --workers N`: uvicorn's worker processes, each importing `worker_app` and building its own agent,
    store and app from the same command line. They share the signing key: UIBRIDGE_SECRET, or else one made
    here for this run (a key of each worker's own would make each refuse what the others signed)."""
    import uvicorn

    async def check() -> None:
        if args.store is not None:
            store = _store(args.store, args.lease, args.stream_log)
            try:
                await _check_store(store)
            finally:
                await store.aclose()

    try:
        asyncio.run(check())
        if args.target is not None:  # refuse a target that cannot be served here, before N processes fail on it
            asyncio.run(_agent(args))
    except TargetError as error:
        return _refuse(error)
    if not os.environ.get('UIBRIDGE_SECRET'):
        os.environ['UIBRIDGE_SECRET'] = secrets.token_urlsafe(32)
        print('uibridge: UIBRIDGE_SECRET is not set: the workers share a key made for this run', flush=True)
    os.environ[WORKER_ARGS] = json.dumps(argv)
    _announce(args)
    uvicorn.run(
        'uibridge.server.cli:worker_app',
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        lifespan='on',
        log_level='info',
    )
    return 0


def worker_app() -> _WorkerApp:
    """The app of one `serve --workers N` process (uvicorn calls it in each): the command line comes from the
    environment `_serve_workers` set."""
    return _WorkerApp(_parser().parse_args(json.loads(os.environ[WORKER_ARGS])))


class _WorkerApp:
    """Builds the app when the server starts it (an async agent factory and the store need the worker's event
    loop), then hands everything to it; closes the store after the app's shutdown."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.app: Starlette | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app is not None:
            await self.app(scope, receive, send)
            return
        if scope['type'] != 'lifespan':  # pragma: no cover - uvicorn runs the lifespan first (lifespan='on')
            raise RuntimeError('the app is built at startup')
        self.app, store = await _build(self.args)
        try:
            await self.app(scope, receive, send)
        finally:
            if store is not None:
                await store.aclose()


def _store_command(args: argparse.Namespace) -> int:
    """`store migrate URL` and `store status URL`."""
    from .store import SchemaError, VersionedStore, store_from_url

    async def run() -> int:
        try:
            store = store_from_url(args.url)
        except (ValueError, ImportError) as error:
            print(f'uibridge store: {error}', file=sys.stderr)
            return USAGE_ERROR
        try:
            if not isinstance(store, VersionedStore):
                print(f'the store {args.url!r} keeps no schema: nothing to migrate')
                return 0
            if args.action == 'status':
                status = await store.schema_status()
                found = 'no uibridge schema yet' if status.found == 0 else f'schema version {status.found}'
                due = ' (run `store migrate`)' if status.outdated else ''
                print(f'{found}; this uibridge uses version {status.current}{due}')
                return 1 if status.outdated or status.found > status.current else 0
            before = await store.migrate()
            if before.found == before.current:
                print(f'schema version {before.current}: up to date, nothing to do')
            else:
                print(f'schema version {before.found or "(none)"} -> {before.current}: migrated')
            return 0
        except SchemaError as error:
            print(f'uibridge store: {error}', file=sys.stderr)
            return 1
        finally:
            await store.aclose()

    return asyncio.run(run())


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


def _store(url: str, lease: float | None, stream_log: str | None = None) -> ChatStore:
    from .store import store_from_url

    if url.lower().startswith('sqlite:///'):  # `make serve`'s file sits in an ignored folder a fresh clone lacks
        Path(url[len('sqlite:///') :]).parent.mkdir(parents=True, exist_ok=True)
    try:
        return store_from_url(url, stream_log=stream_log, **({'lease': lease} if lease else {}))
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
