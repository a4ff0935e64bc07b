"""The team store: teachd's small ``Database`` interface on PostgreSQL
(psycopg 3), for ``TEACHD_DB_URL=postgresql://…``. The SQL above it is the
same text as on SQLite: ``?`` placeholders become ``%s`` here, and the
migrations' two SQLite words become PostgreSQL's (BLOB → BYTEA, an
autoincrementing key → BIGSERIAL).

"Exactly one of us" (the scheduler) is a session-level advisory lock on a
connection of its own: PostgreSQL lets go of it the moment that connection
dies, so a daemon that is killed hands over without anyone cleaning up.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
from psycopg.rows import dict_row

from recorder.errors import first_line
from teachd.core.errors import Unavailable
from teachd.store.db import Row, apply_migrations

_MIGRATION_LOCK = 0x7EAC4D  # advisory lock key: one process migrates at a time
# Case-sensitive on purpose: types are written upper case, and a column may be called blob.
_DDL = ((re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"), "BIGSERIAL PRIMARY KEY"),
        (re.compile(r"\bBLOB\b"), "BYTEA"))


def to_pg(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal % doubled first)."""
    return sql.replace("%", "%%").replace("?", "%s")


def ddl(sql: str) -> str:
    for pattern, replacement in _DDL:
        sql = pattern.sub(replacement, sql)
    return sql


RETRY_AFTER = 5  # seconds a client is told to wait while the store is unreachable


def _gone(exc: Exception) -> Unavailable:
    first = first_line(exc)
    return Unavailable(f"the PostgreSQL store is unreachable ({first}); try again in a few seconds",
                       retry_after=RETRY_AFTER)


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise _gone(exc) from None


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cur = self._conn.execute(to_pg(sql), tuple(params))
        return [dict(r) for r in cur.fetchall()] if cur.description else []


class PostgresDatabase:
    """One connection, shared by the daemon's threads. When the server goes
    away (a restart, a failover) the call under way fails as ``Unavailable``
    — nothing it wrote was committed, so nothing acknowledged is lost — and
    the next call connects again by itself."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[Any] | None = _connect(url)
        self._lock = threading.RLock()

    def _live(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            if conn is not None:
                with suppress(Exception):
                    conn.close()
            self._conn = None
            self._conn = conn = _connect(self.url)  # Unavailable while the server is still away
        return conn

    @contextmanager
    def atomic(self) -> Iterator[_PgTx]:
        with self._lock:
            conn = self._live()
            try:
                with conn.transaction():
                    yield _PgTx(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise _gone(exc) from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            conn = self._live()
            try:
                return _PgTx(conn).execute(sql, params)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                raise _gone(exc) from None

    def migrate(self, migrations: Sequence[tuple[str, str]]) -> list[str]:
        with self.atomic() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))  # daemons starting together
            return apply_migrations(tx, migrations, ddl)

    def leader(self, name: str) -> AdvisoryLeader:
        return AdvisoryLeader(self.url, name)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class AdvisoryLeader:
    """Held while its own connection lives; released by PostgreSQL if the holder dies."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.key = int.from_bytes(hashlib.sha256(f"teachd:{name}".encode()).digest()[:8], "big", signed=True)
        self._conn: psycopg.Connection[Any] | None = None

    def try_acquire(self) -> bool:
        if self._conn is not None and not self._conn.closed:
            return True
        conn = _connect(self.url)
        row = conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (self.key,)).fetchone()
        if row and row["got"]:
            self._conn = conn
            return True
        conn.close()
        return False

    def release(self) -> None:
        if self._conn is not None:
            self._conn.close()  # the lock goes with the session
            self._conn = None
