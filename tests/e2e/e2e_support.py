"""The live demo server and the Node drivers the end-to-end suites share."""

from __future__ import annotations

import asyncio
import atexit
import collections
import functools
import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn

from neutral_views import without_extras
from uibridge import (
    ModelMessagesTypeAdapter,
    RetryFeedbackPart,
    RetryPromptPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from uibridge.core.events import AgentEvent
from uibridge.core.messages import ModelMessage
from uibridge.server import AgentRun
from uibridge.server.demo import DemoAgent

CLIENTS = Path(__file__).resolve().parent.parent / 'clients'
NODE_TIMEOUT = 120
DRIVERS = {
    'vercel': ('e2e_vercel.mjs', 'api', '/api/chat', 'chatId'),
    'agui': ('e2e_agui.mjs', 'url', '/ag-ui', 'threadId'),
}
"""Per protocol, its Node driver in tests/clients, the spec key of the endpoint's URL, the endpoint's path and
the scenario key of the thread id."""


@dataclass
class Recorder:
    """What the server saw: every `AgentRun` (`run.input.history` is the history before sanitizing) and
    every `on_complete` call (the new messages the encoder collected). Filled from the server's thread."""

    runs: list[AgentRun] = field(default_factory=list[AgentRun])
    completed: list[tuple[list[ModelMessage], AgentRun]] = field(
        default_factory=list[tuple[list[ModelMessage], AgentRun]]
    )

    def runs_for(self, thread_id: str) -> list[AgentRun]:
        return [run for run in self.runs if run.thread_id == thread_id]

    def completed_for(self, thread_id: str) -> list[list[ModelMessage]]:
        return [messages for messages, run in self.completed if run.thread_id == thread_id]

    async def on_complete(self, messages: list[ModelMessage], run: AgentRun) -> None:
        self.completed.append((messages, run))

    def settle(self, timeout: float = 10) -> None:
        """Wait for `on_complete` of every run: the server calls it just after the client saw the end."""
        deadline = time.monotonic() + timeout
        while len(self.completed) < len(self.runs):
            assert time.monotonic() < deadline, 'a run never reached on_complete'
            time.sleep(0.01)


@dataclass
class LiveServer:
    base_url: str
    recorder: Recorder
    demo: DemoAgent

    def drive(self, script: str, spec: dict[str, Any]) -> dict[str, Any]:
        """`run_node`, then wait until the server has finished every run the scenarios started."""
        result = run_node(script, spec)
        self.recorder.settle()
        return result

    def drive_each(self, plays: Mapping[str, tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        """`drive` for each of `plays` (key -> Node driver and its spec), the drivers running side by side."""
        results = run_nodes(plays)
        self.recorder.settle()
        return results


SERVERS = ('uvicorn', 'hypercorn', 'hypercorn-trio')
"""The ASGI servers `serve` runs an app under: uvicorn (asyncio; waits for the socket to drain, then writes),
hypercorn on asyncio (writes, then drains) and hypercorn on trio."""


@contextmanager
def serve(
    app: Any, server: str = 'uvicorn', *, send_buffer: int | None = None, lifespan: bool = False
) -> Iterator[str]:
    """`app` under `server` (one of `SERVERS`) on a free loopback port, in a thread; yields the base URL; stops
    cleanly. `send_buffer` caps the kernel's send buffer of every connection (a bounded backpressure test
    counts what is buffered). `lifespan` (uvicorn): run the app's lifespan, its shutdown once the server stops."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if send_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)  # accepted sockets inherit it
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    if server == 'uvicorn':
        runner = _UvicornThread(app, sock, lifespan=lifespan)
    else:
        runner = _HypercornThread(app, sock, trio=server == 'hypercorn-trio')
    runner.start()
    try:
        yield f'http://127.0.0.1:{port}'
    finally:
        runner.stop()
        sock.close()


class _UvicornThread:
    def __init__(self, app: Any, sock: socket.socket, *, lifespan: bool = False) -> None:
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level='warning', lifespan='on' if lifespan else 'off', timeout_graceful_shutdown=5)
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={'sockets': [sock]}, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError('uvicorn did not start')
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        assert not self.thread.is_alive(), 'uvicorn did not stop'


class _HypercornThread:
    """hypercorn's `serve` on asyncio or trio in a thread, listening on a duplicate of the bound socket (it
    closes what it is given)."""

    def __init__(self, app: Any, sock: socket.socket, *, trio: bool) -> None:
        from hypercorn.config import Config

        sock.listen(128)  # connections queue until hypercorn accepts them: no start-up race
        self.config = Config()
        self.config.bind = [f'fd://{os.dup(sock.fileno())}']
        self.config.loglevel = 'WARNING'
        self.config.accesslog = None
        self.config.graceful_timeout = 5
        self.app = app
        self.trio = trio
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def shutdown() -> None:
            while not self.stopping.is_set():
                await anyio.sleep(0.02)

        if self.trio:
            import trio
            from hypercorn.trio import serve as serve_trio

            trio.run(functools.partial(serve_trio, self.app, self.config, shutdown_trigger=shutdown))
        else:
            from hypercorn.asyncio import serve as serve_asyncio

            asyncio.run(serve_asyncio(self.app, self.config, shutdown_trigger=shutdown))

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), 'hypercorn did not stop'


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving_command(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """`ARGS --port N` (a server's command line: `python -m uibridge serve ...`, `python -m uvicorn app:app`) on a
    free loopback port, in `cwd`; yields its base URL once `GET /healthz` answers, and stops it at the end."""
    port = free_port()
    process = subprocess.Popen(
        [*args, '--port', str(port)], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base = f'http://127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + 60  # a hang guard for a loaded machine, not a measurement
        while not _healthy(base):
            if process.poll() is not None:
                output = process.stdout.read() if process.stdout else ''
                pytest.fail(f'{" ".join(args)} exited ({process.returncode}):\n{output[-4000:]}')
            assert time.monotonic() < deadline, f'{" ".join(args)} did not start'
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def _healthy(base: str) -> bool:
    try:
        return httpx.get(base + '/healthz', timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def live_demo(server: str = 'uvicorn', **options: Any) -> Iterator[LiveServer]:
    """The demo app (`create_app`) with the demo agent (no delays) wrapped to record what it was given, under
    `server` (`serve`)."""
    demo = DemoAgent(delay=0)
    recorder = Recorder()

    def agent(run: AgentRun) -> AsyncIterator[AgentEvent | ModelMessage]:
        recorder.runs.append(run)
        return demo(run)

    from uibridge.server.app import create_app

    app = create_app(agent, on_complete=recorder.on_complete, **options)
    with serve(app, server) as base_url:
        yield LiveServer(base_url, recorder, demo)


class _NodeDriver:
    """One `node driver.mjs` (tests/clients): it runs the drivers there one after another, loading the client
    libraries once. Used by one run at a time; a run that fails or times out ends it (the next run gets a new one)."""

    def __init__(self, node: str) -> None:
        self.process = subprocess.Popen(
            [node, 'driver.mjs'],
            cwd=CLIENTS,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding='utf-8',
        )
        self.stderr: collections.deque[str] = collections.deque(maxlen=200)
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def run(self, script: str, argv: Sequence[str]) -> tuple[str | None, str]:
        """What `script` wrote to stdout, or `None` and why it failed."""
        assert self.process.stdin is not None and self.process.stdout is not None
        timer = threading.Timer(NODE_TIMEOUT, self.process.kill)
        timer.start()
        try:
            self.process.stdin.write(json.dumps({'script': script, 'argv': list(argv)}) + '\n')
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except OSError as error:  # the process ended before it took the run
            line = ''
            self.stderr.append(f'(writing the run: {error})')
        finally:
            timer.cancel()
        if not line:
            ended = f'timed out after {NODE_TIMEOUT} s or the driver process ended'
            return None, f'{ended}:\n{"".join(self.stderr)[-4000:]}'
        answer = json.loads(line)
        if answer['error'] is not None:
            return None, answer['error'][-4000:] + '\n' + ''.join(self.stderr)[-2000:]
        return answer['stdout'], ''

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class _NodeDrivers:
    """The idle `_NodeDriver`s of this process (two at most are busy at once: `run_nodes`); closed at exit."""

    def __init__(self) -> None:
        self.idle: list[_NodeDriver] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def run(self, node: str, script: str, argv: Sequence[str]) -> tuple[str | None, str]:
        with self.lock:
            driver = self.idle.pop() if self.idle else None
        driver = driver or _NodeDriver(node)
        stdout, why = driver.run(script, argv)
        if stdout is None:
            driver.process.kill()
            driver.process.wait()
        else:
            with self.lock:
                self.idle.append(driver)
        return stdout, why

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for driver in idle:
            driver.close()


_DRIVERS = _NodeDrivers()


def run_node(
    script: str, spec: dict[str, Any] | None = None, *, args: Sequence[str] = (), own_process: bool = False
) -> dict[str, Any]:
    """Run a Node driver in tests/clients (on `spec`, written to a file, or on `args`); its stdout is one
    JSON document. The drivers share one Node process per worker (`driver.mjs`: the client libraries load once);
    `own_process` runs `script` as `node script`, as a user would run it (a README's snippet, a browser's driver)."""
    node = shutil.which('node')
    assert node is not None, 'Node 20 is required for the end-to-end suites (see README)'
    path: str | None = None
    if spec is not None:
        with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as handle:
            json.dump(spec, handle)
            path = handle.name
    argv = [*([path] if path else []), *args]
    try:
        if own_process:
            done = subprocess.run(
                [node, script, *argv], cwd=CLIENTS, capture_output=True, text=True, timeout=NODE_TIMEOUT, check=False
            )
            assert done.returncode == 0, f'{script} failed ({done.returncode}):\n{done.stderr[-4000:]}'
            stdout = done.stdout
        else:
            output, why = _DRIVERS.run(node, script, argv)
            assert output is not None, f'{script} failed:\n{why}'
            stdout = output
    finally:
        if path is not None:
            Path(path).unlink()
    result: dict[str, Any] = json.loads(stdout)
    crashed = {name: r['crashed'] for name, r in result.items() if isinstance(r, dict) and 'crashed' in r}
    assert not crashed, f'{script} scenarios crashed: {crashed}'
    return result


def run_nodes(plays: Mapping[str, tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """`run_node` for each of `plays` (key -> Node driver and its spec) at once: the suite mostly waits on Node,
    so two drivers side by side (on scenarios of their own threads, which never mix) take little longer than one."""
    with ThreadPoolExecutor(max_workers=len(plays)) as pool:
        futures = {key: pool.submit(run_node, script, spec) for key, (script, spec) in plays.items()}
        return {key: future.result() for key, future in futures.items()}


def model_view(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """A history as the model sees it: every message and part, with the bookkeeping no model reads
    (timestamps, the response's model/provider names, finish reason, metadata, part ids) left out."""
    dumped = ModelMessagesTypeAdapter.dump_python(without_extras(messages), mode='json')
    view: list[dict[str, Any]] = []
    for message in dumped:
        kept = {k: v for k, v in message.items() if k in ('kind', 'instructions')}
        kept['parts'] = [_part_view(part) for part in message['parts']]
        view.append(kept)
    return view


def _part_view(part: dict[str, Any]) -> dict[str, Any]:
    view = {k: v for k, v in part.items() if k not in ('timestamp', 'id')}
    if part['part_kind'] == 'retry-feedback' and isinstance(part['content'], list):
        # Rendered feedback shows no error's `input` or `ctx` (and the UI marker does not carry them).
        view['content'] = [{k: v for k, v in e.items() if k not in ('input', 'ctx')} for e in part['content']]
    return view


def completed_by_run(recorder: Recorder) -> dict[int, list[ModelMessage]]:
    return {id(run): messages for messages, run in recorder.completed}


def assert_steps_succeeded(protocol: str, name: str, result: dict[str, Any]) -> None:
    """Every step a Node driver played for scenario `name` succeeded in the real client: no error; on Vercel the
    chat is ready and `safeValidateUIMessages` accepts what it built; on AG-UI each run started and finished."""
    for step in result['steps']:
        assert step['error'] is None, (name, step['op'], step['error'])
        if protocol == 'vercel':
            assert step['status'] == 'ready'
            assert step['valid'] is True, step['valid']
        elif step['op'] != 'set-messages':
            assert step['wireEvents'][0] == 'RUN_STARTED'
            assert step['wireEvents'][-1] == 'RUN_FINISHED'


def assert_round_trip(recorder: Recorder, thread_id: str) -> list[AgentRun]:
    """Each request in the thread carried back, before sanitizing, exactly the history of the request before
    it plus every message the server produced for it (compared as the model sees them), then whatever the
    client added. Returns the thread's runs."""
    runs = recorder.runs_for(thread_id)
    produced = completed_by_run(recorder)
    assert len(runs) >= 2
    for before, after in itertools.pairwise(runs):
        assert before.input is not None and after.input is not None
        expected = model_view([*before.input.history, *produced[id(before)]])
        received = model_view(after.input.history)
        assert received[: len(expected)] == expected
    return runs


def all_parts(messages: Sequence[Any]) -> list[Any]:
    return [part for message in messages for part in message.parts]


# What a round trip must preserve, whatever the protocol: each check reads the recorded runs of one thread
# (the demo agent's `think`, `retry the weather` and `feedback` scenarios) and asserts on the neutral model.


def check_thinking_comes_back_signed(recorder: Recorder, thread_id: str) -> None:
    first, second = recorder.runs_for(thread_id)
    produced = [p for p in all_parts(completed_by_run(recorder)[id(first)]) if isinstance(p, ThinkingPart)]
    assert second.input is not None
    received = [p for p in all_parts(second.input.history) if isinstance(p, ThinkingPart)]
    assert received == produced
    assert produced[0].signature is not None and produced[0].signature.startswith('demo-sig-')


def check_tool_calls_come_back_answered(recorder: Recorder, thread_id: str) -> None:
    _, second = recorder.runs_for(thread_id)
    assert second.input is not None
    parts = all_parts(second.input.history)
    assert [type(p).__name__ for p in parts] == [
        'UserPromptPart',
        'ToolCallPart',
        'RetryPromptPart',
        'ToolCallPart',
        'ToolReturnPart',
        'TextPart',
        'UserPromptPart',
    ]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    answers = [p for p in parts if isinstance(p, RetryPromptPart | ToolReturnPart)]
    assert [c.tool_call_id for c in calls] == [a.tool_call_id for a in answers]
    assert calls[1].args == '{"city": "Paris"}'  # byte for byte the text the demo model streamed
    assert isinstance(answers[1], ToolReturnPart)
    assert answers[1].content == {'city': 'Paris', 'forecast': 'sunny', 'temperature_c': 21}
    # What the model is given keeps all of it (tool results are not client-forged system text).
    assert all_parts(second.messages) == parts


def check_feedback_comes_back_from_its_marker(recorder: Recorder, thread_id: str) -> None:
    first, second = recorder.runs_for(thread_id)
    produced = [p for p in all_parts(completed_by_run(recorder)[id(first)]) if isinstance(p, RetryFeedbackPart)]
    assert [p.cause for p in produced] == ['validation_error', 'no_output', 'model_retry']
    assert second.input is not None
    received = [p for p in all_parts(second.input.history) if isinstance(p, RetryFeedbackPart)]
    assert [p.model_dump(exclude={'content'}) for p in received] == [
        p.model_dump(exclude={'content'}) for p in produced
    ]
    # The marker discloses no validation `input`, so that is the one thing that does not come back.
    assert received[0].content == [{k: v for k, v in e.items() if k != 'input'} for e in produced[0].content]
    assert received[1].content == produced[1].content
    assert received[2].content == produced[2].content
    # Signed by the server, it verifies, so the agent gets it back as the application's own feedback
    # (a forged or edited marker never does: tests/e2e/test_forgery.py).
    assert [p for p in all_parts(second.messages) if isinstance(p, RetryFeedbackPart)] == received


def scenarios_spec(
    protocol: str, base_url: str, scenarios: Mapping[str, list[dict[str, Any]]], thread: Callable[[str], str]
) -> dict[str, Any]:
    """The spec for the Node driver of `protocol`: each scenario (name -> steps) in the thread `thread(name)`."""
    _, url_key, path, id_key = DRIVERS[protocol]
    return {
        url_key: f'{base_url}{path}',
        'scenarios': [{'name': name, id_key: thread(name), 'steps': steps} for name, steps in scenarios.items()],
    }


def drive_scenarios(
    server: LiveServer, protocol: str, scenarios: Mapping[str, list[dict[str, Any]]], thread: Callable[[str], str]
) -> dict[str, Any]:
    """Play the scenarios through the real client of `protocol` against `server` (`scenarios_spec`, then
    `LiveServer.drive`): the driver's result, one entry per scenario."""
    return server.drive(DRIVERS[protocol][0], scenarios_spec(protocol, server.base_url, scenarios, thread))


def drive_protocols(
    server: LiveServer,
    scenarios: Mapping[str, Mapping[str, list[dict[str, Any]]]],
    thread: Callable[[str, str], str],
) -> dict[str, dict[str, Any]]:
    """`drive_scenarios` for each protocol of `scenarios` (protocol -> its scenarios), in the threads
    `thread(protocol, name)`, the protocols' drivers running side by side: protocol -> the driver's result."""
    base = server.base_url
    return server.drive_each(
        {
            protocol: (DRIVERS[protocol][0], scenarios_spec(protocol, base, played, partial(thread, protocol)))
            for protocol, played in scenarios.items()
        }
    )


def scenarios_fixture(
    scenarios: Mapping[str, Callable[[], Mapping[str, list[dict[str, Any]]]]], thread: Callable[[str, str], str]
) -> Any:
    """A module-scoped fixture with one param per protocol of `scenarios` (protocol -> its scenarios): every
    scenario played once through that protocol's real client on the session's `live_server`, in the thread
    `thread(protocol, name)`; its value is `(protocol, the driver's result, the live server)`. Assign it to the
    fixture's name in the test module. The first param's setup plays every protocol's scenarios at once
    (`drive_protocols`); the other params take their results from it."""
    played: dict[str, dict[str, Any]] = {}

    @pytest.fixture(scope='module', params=list(scenarios))
    def driven(request: pytest.FixtureRequest, live_server: LiveServer) -> tuple[str, dict[str, Any], LiveServer]:
        protocol: str = request.param
        if protocol not in played:
            played.update(drive_protocols(live_server, {p: make() for p, make in scenarios.items()}, thread))
        return protocol, played[protocol], live_server

    return driven


def one_turn_spec(protocol: str, base_url: str) -> dict[str, Any]:
    """One 'weather' turn for the Node driver of `protocol`."""
    return scenarios_spec(protocol, base_url, {'slow': [{'op': 'send', 'text': 'weather'}]}, lambda name: name)
