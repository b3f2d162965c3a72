"""Schema versions, for the stores that keep tables (SQLite, PostgreSQL).

Each such database holds its schema's version (a table `uibridge_schema` of one row). A store opening it:
- finds no uibridge tables: creates the current schema (a new database needs nothing run by hand);
- finds the current version: goes on;
- finds an older one: refuses every operation with a `SchemaError` that says to run
  `python -m uibridge store migrate URL`, unless it was made with `migrate=True`, when it migrates first and
  logs that it did (`uibridge.server`, warning). Never silently: a migration changes a database other
  processes, and older releases, may still be using;
- finds a newer one (written by a later uibridge): refuses, with a `SchemaError` saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .base import StoreError


class SchemaError(StoreError):
    """The database's uibridge schema is not the one this uibridge uses; the message says what to do."""


@dataclass(frozen=True)
class SchemaStatus:
    """A database's schema version (`found`; 0 when it has no uibridge tables) and the one this uibridge uses."""

    found: int
    current: int

    @property
    def outdated(self) -> bool:
        return 0 < self.found < self.current


def check_schema(status: SchemaStatus, where: str, url: str) -> None:
    """Raise the `SchemaError` for a database at version `status.found` (an empty one passes: it gets created)."""
    if status.found > status.current:
        raise SchemaError(
            f'{where} holds uibridge schema version {status.found}, made by a later uibridge; this one uses version '
            f'{status.current}: upgrade uibridge'
        )
    if status.outdated:
        raise SchemaError(
            f'{where} holds uibridge schema version {status.found}; this uibridge uses version {status.current}. '
            f'Run `python -m uibridge store migrate {url}` (with a backup first), or make the store with migrate=True'
        )


@runtime_checkable
class VersionedStore(Protocol):
    """A store whose database has a schema version (`SqliteStore`, `PostgresStore`)."""

    async def schema_status(self) -> SchemaStatus:
        """The database's version and this uibridge's, without changing anything."""
        ...

    async def migrate(self) -> SchemaStatus:
        """Bring the database to the current version (creating it when empty); the status before."""
        ...
