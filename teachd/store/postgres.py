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
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from recorder.errors import first_line
from teachd.core.errors import Conflict, Unavailable
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


def _clash(exc: psycopg.Error) -> bool:
    """Another transaction took or made the same rows at the same moment:
    PostgreSQL rolled this one back (a deadlock, a serialization failure:
    SQLSTATE class 40) or refused its row (unique, foreign key). Any other
    refused row (not null, a check) is a fault, never a "try again"."""
    state = exc.sqlstate or ""
    return state.startswith("40") or state in ("23505", "23503")


def _lost(exc: Exception) -> bool:
    """The connection itself is gone (no answer at all, a closed socket, the
    server shutting down), as opposed to a statement the server refused."""
    state = getattr(exc, "sqlstate", None) or ""
    return isinstance(exc, psycopg.InterfaceError) or not state or state.startswith(("08", "57P"))


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cur = self._conn.execute(to_pg(sql), tuple(params))
        return [dict(r) for r in cur.fetchall()] if cur.description else []


class _Pool:
    """A few connections, each lent to one caller at a time. Home-made on
    purpose, small: a call while the server is away fails at once as
    ``Unavailable`` (a pool that reconnects in the background would hold the
    request until its timeout), and a connection that broke, or was left
    inside a transaction, is dropped: the next call connects anew."""

    def __init__(self, url: str, size: int) -> None:
        self.url = url
        self._free: list[psycopg.Connection[Any]] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()

    @contextmanager
    def lent(self) -> Iterator[psycopg.Connection[Any]]:
        with self._slots:
            with self._lock:
                conn = self._free.pop() if self._free else None
            if conn is None or conn.closed or conn.broken:
                conn = _connect(self.url)
            try:
                yield conn
            finally:
                if conn.broken or conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
                    with suppress(Exception):
                        conn.close()
                else:
                    with self._lock:
                        self._free.append(conn)

    def close(self) -> None:
        """Close the idle connections (those lent are closed or kept as they come back)."""
        with self._lock:
            free, self._free = self._free, []
        for conn in free:
            with suppress(Exception):
                conn.close()


READERS = 8  # connections for reads outside a transaction: most of a daemon's requests only read
WRITERS = 4  # connections for transactions: PostgreSQL's row locks order writes to the same rows


class PostgresDatabase:
    """Transactions on a few connections at once, as several daemons'
    would be: PostgreSQL's row locks order the writes that touch the same
    rows (a skill's row is taken first by each new version: versions stay
    linear), and a write that meets another's unique row at the same moment
    is said as a conflict to try again. Reads outside a transaction go to
    connections of their own, so a listing is not held behind a write; a
    read made inside a transaction stays on its connection and sees what it
    wrote. When the server goes away (a restart, a failover) the call under
    way fails as ``Unavailable`` — nothing it wrote was committed, so
    nothing acknowledged is lost — and the next call connects again."""

    def __init__(self, url: str, readers: int = READERS, writers: int = WRITERS) -> None:
        self.url = url
        _connect(url).close()  # the server answers, and the URL is right: said at start, not at first use
        self._readers, self._writers = _Pool(url, readers), _Pool(url, writers)
        self._tx = threading.local()  # .conn: the connection of this thread's transaction

    @contextmanager
    def atomic(self) -> Iterator[_PgTx]:
        mine: psycopg.Connection[Any] | None = getattr(self._tx, "conn", None)
        try:
            if mine is not None:  # a transaction inside this thread's own: a savepoint in it
                with mine.transaction():
                    yield _PgTx(mine)
                return
            with self._writers.lent() as conn:
                self._tx.conn = conn
                try:
                    with conn.transaction():
                        yield _PgTx(conn)
                finally:
                    self._tx.conn = None
        except psycopg.Error as exc:
            if _clash(exc):
                raise Conflict(f"the store changed at the same moment ({first_line(exc)}): "
                               "nothing was saved; try again") from None
            if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
                raise self._gone(exc) from None
            raise

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        mine: psycopg.Connection[Any] | None = getattr(self._tx, "conn", None)
        if mine is not None:  # in this thread's transaction: on its connection (``atomic`` tells failures)
            return _PgTx(mine).execute(sql, params)
        try:
            with self._readers.lent() as conn:
                return _PgTx(conn).execute(sql, params)
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise self._gone(exc) from None

    def _gone(self, exc: Exception) -> Unavailable:
        """The store did not answer. Where the connection itself was lost (the
        server went away) the idle ones went with it: dropped, so the next
        call connects anew instead of finding each of them broken."""
        if _lost(exc):
            self._readers.close()
            self._writers.close()
        return _gone(exc)

    def migrate(self, migrations: Sequence[tuple[str, str]]) -> list[str]:
        with self.atomic() as tx:
            tx.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))  # daemons starting together
            return apply_migrations(tx, migrations, ddl)

    def leader(self, name: str) -> AdvisoryLeader:
        return AdvisoryLeader(self.url, name)

    def close(self) -> None:
        self._readers.close()
        self._writers.close()


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
