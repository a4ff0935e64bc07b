"""The database edge: one class owning the connection, ``atomic()`` writes,
named migrations recorded in a table.

SQL in teachd is written once with ``?`` placeholders; a backend translates
what it must. ``SQLiteDatabase`` is the embedded default; ``postgres.py``
is the same small interface on PostgreSQL, for teams.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

Row = dict[str, Any]


class Transaction(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...


class Leader(Protocol):
    """"Exactly one of us does this": held until released or until its holder dies."""

    def try_acquire(self) -> bool: ...

    def release(self) -> None: ...


class Database(Protocol):
    """What the store needs of a database, and nothing more."""

    def leader(self, name: str) -> Leader: ...

    def atomic(self) -> AbstractContextManager[Transaction]: ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def migrate(self, migrations: Sequence[tuple[str, str]]) -> list[str]: ...

    def close(self) -> None: ...


class _SQLiteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cur = self._conn.execute(sql, tuple(params))
        return [dict(r) for r in cur.fetchall()] if cur.description else []


class SQLiteDatabase:
    def __init__(self, path: Path, timeout: float = 30.0) -> None:
        self.path = path
        new = not path.exists()
        self._conn = sqlite3.connect(
            str(path), timeout=timeout, isolation_level=None, check_same_thread=False
        )
        if new:
            path.chmod(0o600)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = FULL")
        # One connection, shared by the daemon's threads (requests, runs): a
        # transaction holds it whole, so two threads never interleave one.
        self._lock = threading.RLock()

    @contextmanager
    def atomic(self) -> Iterator[_SQLiteTx]:
        """A write transaction that takes the lock up front (BEGIN IMMEDIATE),
        so two writers serialize instead of failing on upgrade."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SQLiteTx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            return _SQLiteTx(self._conn).execute(sql, params)

    def migrate(self, migrations: Sequence[tuple[str, str]]) -> list[str]:
        with self.atomic() as tx:
            return apply_migrations(tx, migrations)

    def leader(self, name: str) -> Leader:
        """An flock beside the database: every process on this store sees it."""
        from teachd.store.locks import FileLock

        return FileLock(self.path.parent / f"{name}.lock")

    def close(self) -> None:
        self._conn.close()


def apply_migrations(tx: Transaction, migrations: Sequence[tuple[str, str]],
                     dialect: Callable[[str], str] = lambda sql: sql) -> list[str]:
    """Apply, in one transaction, the named migrations not applied yet; record
    each. ``dialect`` turns the portable DDL into the backend's own."""
    tx.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {r["name"] for r in tx.execute("SELECT name FROM migrations")}
    applied: list[str] = []
    for name, sql in migrations:
        if name in done:
            continue
        for statement in statements(dialect(sql)):
            tx.execute(statement)
        tx.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                   (name, datetime.now(UTC).isoformat(timespec="seconds")))
        applied.append(name)
    return applied


def statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
