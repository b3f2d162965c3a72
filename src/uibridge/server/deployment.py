"""What a server of several worker processes needs: a store they share and one signing key.

Each worker is a process of its own. A `memory:` store is one process's, so a resume or a stop reaching another
worker finds nothing; and a key made at random (no `UIBRIDGE_SECRET`) is one process's too, so what one worker
signed (history, approval requests) never verifies on another: history is dropped, and an approval given is
asked for again.

Where the number of workers is known when an endpoint is built, a deployment that cannot work is refused there,
saying what to do: `WEB_CONCURRENCY`, which uvicorn and gunicorn take as their number of workers, and
`python -m uibridge serve --workers N` (which refuses a `memory:` store itself and shares one key made for the run).
Where it is not (`uvicorn --workers 2 app:app` says it only to uvicorn), the first request that carries signatures
from another key shows it, and the process logs once, at ERROR, what to set (`report_unverified`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..core.provenance import SECRET_ENV, Keyring

if TYPE_CHECKING:
    from .store import ChatStore

logger = logging.getLogger('uibridge.server')

WORKERS_ENV = 'WEB_CONCURRENCY'
"""The number of worker processes a deployment asks for, as uvicorn and gunicorn read it (their default)."""

_reported = False
_lock = threading.Lock()


def declared_workers(environ: Mapping[str, str] = os.environ) -> int:
    """The worker processes `WEB_CONCURRENCY` asks for (1 when it is unset or not a positive number)."""
    try:
        return max(1, int(environ.get(WORKERS_ENV, '1')))
    except ValueError:
        return 1


def check_workers(store: ChatStore | None, keyring: Keyring, workers: int) -> None:
    """Refuse what `workers` processes cannot share: a `memory:` store, a key made at random."""
    if workers <= 1:
        return
    from .store import MemoryStore  # here: the command line reads `declared_workers` without the stores

    asked = f'{WORKERS_ENV}={workers} asks for {workers} worker processes'
    if isinstance(store, MemoryStore):
        raise ValueError(
            f'{asked}, which cannot share a memory: store (each would hold chats of its own, and a resume or a stop '
            'would reach the wrong one): use sqlite:///path.db on one host, or redis://… or postgresql://… across '
            'hosts'
        )
    if keyring.generated:
        raise ValueError(
            f'{asked}, and {SECRET_ENV} is not set: each would sign with a random key of its own, so what one signed '
            f'(history, approval requests) would not verify on another; set the same {SECRET_ENV} on every worker'
        )


def report_unverified(keyring: Keyring, *, items: int, approvals: int) -> None:
    """A request carried `items` signed history items and `approvals` approval answers this process's key does not
    verify. With a key made at random, the likely reason is another worker's key: said once per process."""
    global _reported
    if not keyring.generated or not (items or approvals) or _reported:
        return
    with _lock:
        if _reported:
            return
        _reported = True
    logger.error(
        'Signatures made with another key were seen (%d history item(s), %d approval(s) did not verify). This '
        'process signs with a random key of its own because %s is not set, so what another worker, or this '
        'server before a restart, signed never verifies here: that history is dropped and approvals are asked '
        'again. Set the same %s on every worker.',
        items,
        approvals,
        SECRET_ENV,
        SECRET_ENV,
    )
