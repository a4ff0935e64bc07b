"""The database edge: one class owning the connection, ``atomic()`` writes,
named migrations recorded in a table.

SQL in teachd is written once with ``?`` placeholders; a backend translates
what it must. ``SQLiteDatabase`` is the embedded default; ``postgres.py``
is the same small interface on PostgreSQL, for teams.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from teachd.core.errors import Unavailable

Row = dict[str, Any]
_SQLITE_IOERR, _SQLITE_FULL = 10, 13  # SQLite's primary result codes
_NEARLY_FULL = 1024 * 1024  # bytes free under which an I/O error is the disk being full


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
        with self._disk_errors():  # the WAL's files are made now: a full disk says so here already
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
        so two writers serialize instead of failing on upgrade. A disk that
        fills up fails it whole (SQLite rolls it back): said as ``Unavailable``."""
        with self._lock, self._disk_errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SQLiteTx(self._conn)
            except BaseException:
                if self._conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock, self._disk_errors():
            return _SQLiteTx(self._conn).execute(sql, params)

    @contextmanager
    def _disk_errors(self) -> Iterator[None]:
        """SQLite's "disk I/O error" and "database or disk is full" as one
        line that says what to do; nothing of the transaction was kept."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            primary = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
            if primary not in (_SQLITE_IOERR, _SQLITE_FULL):
                raise
            free = shutil.disk_usage(self.path.parent).free
            if primary == _SQLITE_FULL or free < _NEARLY_FULL:
                raise Unavailable(f"the disk holding {self.path.parent} is full ({free // 1024} KB free): "
                                  "nothing was saved; free some space and try again") from None
            raise Unavailable(f"the store's disk could not be written or read ({exc}): "
                              "nothing was saved") from None

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
