"""Secrets that runs on workers ask their person for, met in the store.

A run on another machine cannot reach a daemon's memory (its secret desk),
so its question goes in a row: the secret's name, the run, and the public
key the asking worker made for this one question (store/sealing.py). The
person sees it with the desk's own questions and types it on a daemon's
page; the daemon seals the value to that key; the worker takes the sealed
value, opens it in its memory and deletes the row. No value is ever in the
row readable, in the queue, or in a log. A question whose run is no longer
running is not shown, and is deleted by the next question of its person.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from teachd.core.errors import NotFound, TooMany
from teachd.store.db import Database, Row
from teachd.store.sealing import seal_to

MAX_AGE = timedelta(hours=24)  # any question older is dropped, waited on or not
_RUNNING = "SELECT id FROM runs WHERE owner = ? AND status = 'running'"


def _now() -> datetime:
    return datetime.now(UTC)


def bound(ask_id: str, owner: str, run_id: str, name: str) -> bytes:
    """What a sealed value is bound to: this question, of this person's run, for this secret."""
    return json.dumps(["teachd-secret-ask/1", ask_id, owner, run_id, name]).encode()


class SecretAsks:
    def __init__(self, db: Database, owner: str, clock: Callable[[], datetime] = _now) -> None:
        self.db, self.owner, self._clock = db, owner, clock

    def ask(self, name: str, run_id: str, skills: list[str], reader: bytes, max_open: int) -> str:
        """A new question's id (name, run and skills checked by the caller)."""
        ask_id = secrets.token_urlsafe(16)
        now = self._clock()
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM secret_asks WHERE owner = ? AND (created_at < ?"
                       f" OR run_id NOT IN ({_RUNNING}))",
                       (self.owner, (now - MAX_AGE).isoformat(), self.owner))
            open_ = tx.execute("SELECT COUNT(*) AS n FROM secret_asks WHERE owner = ? AND sealed IS NULL",
                               (self.owner,))
            if int(open_[0]["n"]) >= max_open:
                raise TooMany(f"{open_[0]['n']} secrets are already asked and not typed: at most {max_open} "
                              "at once; type or drop some first")
            tx.execute("INSERT INTO secret_asks (id, owner, run_id, name, skills, reader, sealed, created_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
                       (ask_id, self.owner, run_id, name, json.dumps(skills), reader, now.isoformat()))
        return ask_id

    def pending(self) -> list[dict[str, Any]]:
        """The person's questions not typed yet, of runs still running."""
        rows = self.db.query(f"SELECT id, run_id, name, skills, created_at FROM secret_asks WHERE owner = ?"
                             f" AND sealed IS NULL AND run_id IN ({_RUNNING}) ORDER BY created_at, id",
                             (self.owner, self.owner))
        return [self._view(r) for r in rows]

    def get(self, ask_id: str) -> dict[str, Any] | None:
        return next((a for a in self.pending() if a["id"] == ask_id), None)

    def give(self, ask_id: str, value: str) -> bool:
        """Seal ``value`` to the asking worker's key; False when no such question waits."""
        rows = self.db.query(f"SELECT id, run_id, name, reader FROM secret_asks WHERE id = ? AND owner = ?"
                             f" AND sealed IS NULL AND run_id IN ({_RUNNING})",
                             (ask_id, self.owner, self.owner))
        if not rows:
            return False
        r = rows[0]
        about = bound(ask_id, self.owner, str(r["run_id"]), str(r["name"]))
        sealed = seal_to(bytes(r["reader"]), value, about)
        with self.db.atomic() as tx:
            done = tx.execute("UPDATE secret_asks SET sealed = ? WHERE id = ? AND owner = ?"
                              " AND sealed IS NULL RETURNING id", (sealed, ask_id, self.owner))
        return bool(done)

    def sealed(self, ask_id: str) -> bytes | None:
        """The sealed value, once typed (the row stays until ``forget``)."""
        rows = self.db.query("SELECT sealed FROM secret_asks WHERE id = ? AND owner = ?",
                             (ask_id, self.owner))
        if not rows:
            raise NotFound("the secret's question was withdrawn (its run was cancelled or ended)")
        return None if rows[0]["sealed"] is None else bytes(rows[0]["sealed"])

    def forget(self, ask_id: str) -> None:
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM secret_asks WHERE id = ? AND owner = ?", (ask_id, self.owner))

    def withdraw(self, run_id: str) -> int:
        """A cancelled (or ended) run's questions go: its worker, waiting, gets nothing."""
        with self.db.atomic() as tx:
            gone = tx.execute("DELETE FROM secret_asks WHERE owner = ? AND run_id = ? AND sealed IS NULL"
                              " RETURNING id", (self.owner, run_id))
            tx.execute("DELETE FROM secret_asks WHERE owner = ? AND run_id = ?", (self.owner, run_id))
        return len(gone)

    def _view(self, r: Row) -> dict[str, Any]:
        created = datetime.fromisoformat(str(r["created_at"]))
        return {"id": str(r["id"]), "name": str(r["name"]), "run_id": str(r["run_id"]),
                "skills": list(json.loads(str(r["skills"]))), "url": f"/secrets/{r['id']}",
                "waiting_s": max(0, round((self._clock() - created).total_seconds()))}
