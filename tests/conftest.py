"""Settings every test shares: one signing key, and the Hypothesis profiles.

Every test signs and verifies with one known key, so golden files hold the same signatures on every run
(without it, `uibridge.core.provenance.default_keyring` picks a random key per process).

Property tests take their example count from the active Hypothesis profile, not from their own decorators:
- `quick` (the default: `make test`): 30 examples a test, enough to reach every strategy's branches on each
  run while the whole suite stays under a minute on a 2-core machine.
- `thorough` (`make test-deep`, or a nightly CI job): 1,000 a test, for the rare shapes a quick run reaches
  only over many runs; a failure prints the blob that replays it (`@reproduce_failure`).
Choose one with `HYPOTHESIS_PROFILE=thorough` or pytest's own `--hypothesis-profile thorough` (the option wins).
Failing examples are kept in `.hypothesis/` and replayed first by either profile.
"""

import faulthandler
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import background
from services_support import postgres_cluster, redis_server

os.environ.setdefault('UIBRIDGE_SECRET', 'uibridge-test-secret')

# No deadline in either profile: a loaded machine (CI, or several suites at once) makes single examples slow
# for reasons that are not the code's, and a deadline would turn that into a flaky failure.
settings.register_profile('quick', max_examples=30, deadline=None)
settings.register_profile('thorough', max_examples=1000, deadline=None, print_blob=True)
# Loaded here, before any test module builds its `@settings(...)` (which copy the active profile's values
# for what they leave unset); the pytest plugin's `--hypothesis-profile` loads its choice after this.
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'quick'))


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    """Async tests run on asyncio. anyio's own fixture would run each on every backend installed, and trio is
    installed for the streaming tests, which ask for both (`tests/server/test_streaming.py`)."""
    return 'asyncio'


SLOWEST_FIRST = (
    'e2e/test_quickstart.py',
    'e2e/test_matrix.py',
    'server/store/test_workers.py',
    'server/store/test_resume_processes.py',
    'e2e/test_page.py',
    'e2e/test_forgery_corpus.py',
    'e2e/test_signed_history.py',
    'bridge/test_remote_agents.py',
    'e2e/test_hostile_load.py',
    'e2e/test_keep_alive.py',
    'e2e/test_page_reload.py',
    'e2e/test_serve_command.py',
    'bridge/test_cli_remote.py',
    'e2e/test_errors_and_cancel.py',
    'server/test_attachment_limits.py',
    'client/test_clients.py',
)
"""The modules that take longest, longest first (under tests/): each starts servers, a browser, Node drivers or
fresh environments, and holds few tests. `make test`'s two workers take whole modules in the session's order
(`--dist loadfile`, with `--no-loadscope-reorder` in pyproject.toml: xdist's own order puts the modules with
the most tests first, and so these last, where one of them would keep a worker busy long after the other is
done). The order is only a schedule: what runs, and what each test asserts, is the same in any order."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of `SLOWEST_FIRST` first, in its order, then the others, those with the most tests first (as
    xdist would order them); each module's tests in their own order. Every worker collects alike, so every worker
    sorts alike."""
    tests = Path(__file__).parent
    first = {tests / name: rank for rank, name in enumerate(SLOWEST_FIRST)}
    counts = Counter(item.path for item in items)
    items.sort(key=lambda item: (first.get(item.path, len(first)), -counts[item.path], str(item.path)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the slow jobs the selected test modules declare (tests/background.py) on the background worker, so
    they run beside the tests before theirs. Under pytest-xdist the other worker keeps the second core busy
    already: there a job runs when its test asks for it."""
    if 'PYTEST_XDIST_WORKER' in os.environ:
        return
    modules = {getattr(item, 'module', None): None for item in session.items}  # in order, each once
    background.start_jobs(module for module in modules if module is not None)


@pytest.fixture(scope='session')
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `redis-server` for the test process (`services_support`): the store suite and the end-to-end matrix
    share it, each in key spaces or databases of its own."""
    with redis_server(tmp_path_factory.mktemp('redis')) as url:
        yield url


@pytest.fixture(scope='session')
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster for the test process (`services_support`); each test that uses it makes a
    schema of its own (`services_support.postgres_schema`)."""
    with postgres_cluster() as url:
        yield url


def pytest_sessionfinish() -> None:
    # The jobs started for tests that did not get to run (a run stopped by -x, say) are not waited for.
    background.drop_pending()


EXIT_WATCHDOG_SECONDS = 120
SESSION_LIMIT_SECONDS = 1200
"""The whole session's bound: about seven times what `make test` takes on 2 cores. Past it, something hangs."""


def pytest_configure() -> None:
    """If the session is still running after `SESSION_LIMIT_SECONDS`, print every thread's stack and exit with an
    error. pytest-timeout bounds each test, but a run can still hang between tests: seen once, pytest-xdist's
    controller waiting forever after a worker that pytest-timeout had stopped was replaced. Only in the session's
    own process (an xdist worker is bounded by it: its input closes when the session exits)."""
    if 'PYTEST_XDIST_WORKER' in os.environ:
        return
    faulthandler.dump_traceback_later(SESSION_LIMIT_SECONDS, exit=True, file=sys.__stderr__)


def pytest_unconfigure() -> None:
    """If the session's process has not exited two minutes after pytest is done with it (a thread that never ends,
    a child that is waited for forever), print every thread's stack and exit with an error: a hang after the last
    test fails the run where it can be read, instead of holding CI until its time limit. pytest-timeout covers
    each test and its fixtures' teardown, pytest-xdist a worker that does not exit when told to; this covers what
    runs after them. Not in an xdist worker: one that is done waits, idle, until every other worker is."""
    if 'PYTEST_XDIST_WORKER' in os.environ:
        return
    faulthandler.dump_traceback_later(EXIT_WATCHDOG_SECONDS, exit=True, file=sys.__stderr__)  # replaces the bound
