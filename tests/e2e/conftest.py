from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.register_assert_rewrite('e2e_support')

from e2e_support import LiveServer, live_demo  # noqa: E402


@pytest.fixture(scope='session')
def live_server() -> Iterator[LiveServer]:
    """The demo app under uvicorn on a free loopback port, with its page (the page suite drives it), shared by the
    end-to-end suites (each scenario uses its own chat / thread id, so the recordings never mix)."""
    with live_demo(page=True) as server:
        yield server
