"""Every combination works: each agent kind (a hand-written generator, `PydanticAIAgent`, the OpenAI and the
Anthropic tool loops) with each store (none, memory, SQLite, Redis, PostgreSQL) through each protocol's real
client (`ai@7`, `@ag-ui/client`; a subset through `ai@5` and `ai@6`), in each scenario (text, a server tool, a
client tool, an approval given and one denied, shared state, a failing model, a reload that resumes the answer in
flight). What each cell plays and must show is `matrix_support`'s; a cell that cannot apply says why.

Beside the cells, per store: a chat whose every next turn leaves the moment the last answer was read to its end
(`ai`'s `sendAutomaticallyWhen`, after a client tool) is never refused with a 409.

Every cell is played once, when the module starts: one uvicorn serving one app per agent, store and `ai` version,
and one Node process per protocol playing all of its cells, many at once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2e_support import run_nodes

pytest.register_assert_rewrite('matrix_support')

from matrix_support import (  # noqa: E402
    Cell,
    Matrix,
    all_cells,
    check_cell,
    check_quick_turns,
    plans,
    quick_turn_cells,
    serve_matrix,
)

CELLS = all_cells()


@pytest.fixture(scope='module')
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    services = {'sqlite': str(tmp_path_factory.mktemp('matrix')), 'redis': request.getfixturevalue('redis_url')}
    services['redis'] = services['redis'].rsplit('/', 1)[0] + '/7'  # a database of its own
    skipped: str | None = None
    try:
        services['postgresql'] = request.getfixturevalue('postgres_url')
    except pytest.skip.Exception as why:
        skipped = str(why)
    with serve_matrix(services, skipped) as served:
        results = run_nodes({protocol: ('matrix.mjs', plan) for protocol, plan in plans(served, CELLS).items()})
        for protocol_results in results.values():
            served.results.update(protocol_results)
        for app in served.apps.values():
            app.recorder.settle()
        yield served


def _param(cell: Cell) -> Any:
    reason = cell.not_applicable
    return pytest.param(cell, id=cell.id, marks=[pytest.mark.skip(reason=reason)] if reason else [])


@pytest.mark.parametrize('cell', [_param(cell) for cell in CELLS])
def test_cell(matrix: Matrix, cell: Cell) -> None:
    if cell.store == 'postgresql' and matrix.postgres_skipped is not None:
        pytest.skip(matrix.postgres_skipped)
    check_cell(cell, matrix.results[cell.id], matrix.app(cell))


@pytest.mark.parametrize(('store', 'chat'), quick_turn_cells())
def test_turns_sent_the_moment_an_answer_ends_are_never_a_409(matrix: Matrix, store: str, chat: str) -> None:
    if store == 'postgresql' and matrix.postgres_skipped is not None:
        pytest.skip(matrix.postgres_skipped)
    check_quick_turns(matrix.results[chat])
