"""Secrets that runs on workers ask their person for, met in the store.

A run on another machine cannot reach a daemon's memory (its secret desk),
so its question goes in a row: the secret's name, the run, and the public
key the asking worker made for this one question (store/sealing.py). The
person sees it with the desk's own questions and types it on a daemon's
page; the daemon seals the value to that key; the worker takes the sealed
value, opens it in its memory and deletes the row. No value is ever in the
row readable, in the queue, or in a log.

Only a holder of the store's key takes part: the question carries itself
sealed with that key (``proof``: a row someone wrote into the database
without the key — to be handed a person's secret — is never shown), and
the value is sealed to the worker's key and then with the store's (a value
written without the key never opens). A question whose run is no longer
running, or was cancelled, is not shown nor answered; such rows are deleted
by the daemon's sweep (``purge``) and by the next question of its person.
"""

from __future__ import annotations

import base64
import hmac
import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from teachd.core.errors import KeyProblem, NotFound, TooMany
from teachd.store.crypto import Cipher
from teachd.store.db import Database, Row
from teachd.store.sealing import seal_to

MAX_AGE = timedelta(hours=24)  # any question older is dropped, waited on or not
_RUNNING = "SELECT id FROM runs WHERE owner = ? AND status = 'running' AND cancelled_by IS NULL"
_ASK = "secret-ask:"  # the store cipher's "slug" of a question's sealed parts


def _now() -> datetime:
    return datetime.now(UTC)


def bound(ask_id: str, owner: str, run_id: str, name: str) -> bytes:
    """What a sealed value is bound to: this question, of this person's run, for this secret."""
    return json.dumps(["teachd-secret-ask/1", ask_id, owner, run_id, name]).encode()


def _question(run_id: str, name: str, skills: list[str], reader: bytes) -> str:
    return json.dumps([run_id, name, skills, reader.hex()])


class SecretAsks:
    def __init__(self, db: Database, owner: str, cipher: Cipher,
                 clock: Callable[[], datetime] = _now) -> None:
        self.db, self.owner, self.cipher, self._clock = db, owner, cipher, clock

    def ask(self, name: str, run_id: str, skills: list[str], reader: bytes, max_open: int) -> str:
        """A new question's id (name, run and skills checked by the caller)."""
        ask_id = secrets.token_urlsafe(16)
        now = self._clock()
        said = _question(run_id, name, skills, reader)
        proof = self.cipher.seal(self.owner, _ASK + ask_id, 0, "question", said)
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM secret_asks WHERE owner = ? AND (created_at < ?"
                       f" OR run_id NOT IN ({_RUNNING}))",
                       (self.owner, (now - MAX_AGE).isoformat(), self.owner))
            open_ = tx.execute("SELECT COUNT(*) AS n FROM secret_asks WHERE owner = ?", (self.owner,))
            if int(open_[0]["n"]) >= max_open:
                raise TooMany(f"{open_[0]['n']} secrets are already asked and not taken: at most {max_open} "
                              "at once; type or drop some first")
            tx.execute("INSERT INTO secret_asks (id, owner, run_id, name, skills, reader, proof, sealed,"
                       " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                       (ask_id, self.owner, run_id, name, json.dumps(skills), reader, proof, now.isoformat()))
        return ask_id

    def pending(self) -> list[dict[str, Any]]:
        """The person's questions not typed yet, of runs still running, each asked by a key holder."""
        rows = self.db.query(f"SELECT * FROM secret_asks WHERE owner = ? AND sealed IS NULL"
                             f" AND run_id IN ({_RUNNING}) ORDER BY created_at, id", (self.owner, self.owner))
        return [self._view(r) for r in rows if self._proven(r)]

    def get(self, ask_id: str) -> dict[str, Any] | None:
        return next((a for a in self.pending() if a["id"] == ask_id), None)

    def give(self, ask_id: str, value: str) -> bool:
        """Seal ``value`` to the asking worker's key; False when no such question waits."""
        rows = self.db.query(f"SELECT * FROM secret_asks WHERE id = ? AND owner = ? AND sealed IS NULL"
                             f" AND run_id IN ({_RUNNING})", (ask_id, self.owner, self.owner))
        if not rows or not self._proven(rows[0]):
            return False
        r = rows[0]
        about = bound(ask_id, self.owner, str(r["run_id"]), str(r["name"]))
        inner = seal_to(bytes(r["reader"]), value, about)
        sealed = self.cipher.seal(self.owner, _ASK + ask_id, 0, "value", base64.b64encode(inner).decode())
        with self.db.atomic() as tx:
            done = tx.execute(f"UPDATE secret_asks SET sealed = ? WHERE id = ? AND owner = ?"
                              f" AND sealed IS NULL AND run_id IN ({_RUNNING}) RETURNING id",
                              (sealed, ask_id, self.owner, self.owner))
        return bool(done)

    def sealed(self, ask_id: str) -> bytes | None:
        """The value sealed to the asker's key, once typed (the row stays until ``forget``);
        None until then, and for a value no key holder sealed."""
        rows = self.db.query("SELECT sealed FROM secret_asks WHERE id = ? AND owner = ?",
                             (ask_id, self.owner))
        if not rows:
            raise NotFound("the secret's question was withdrawn (its run was cancelled or ended)")
        if rows[0]["sealed"] is None:
            return None
        try:
            return base64.b64decode(self.cipher.open(self.owner, _ASK + ask_id, 0, "value",
                                                     bytes(rows[0]["sealed"])))
        except (KeyProblem, ValueError):
            return None

    def forget(self, ask_id: str) -> None:
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM secret_asks WHERE id = ? AND owner = ?", (ask_id, self.owner))

    def withdraw(self, run_id: str) -> int:
        """A cancelled (or ended) run's questions go: its worker, waiting, gets nothing."""
        with self.db.atomic() as tx:
            gone = tx.execute("DELETE FROM secret_asks WHERE owner = ? AND run_id = ? RETURNING sealed",
                              (self.owner, run_id))
        return sum(1 for r in gone if r["sealed"] is None)  # the questions still asked

    def _proven(self, r: Row) -> bool:
        """The row is the question a key holder asked: its proof opens and says just what the row says."""
        try:
            said = self.cipher.open(self.owner, _ASK + str(r["id"]), 0, "question", bytes(r["proof"]))
        except KeyProblem:
            return False
        row = _question(str(r["run_id"]), str(r["name"]), list(json.loads(str(r["skills"]))),
                        bytes(r["reader"]))
        return hmac.compare_digest(said.encode(), row.encode())

    def _view(self, r: Row) -> dict[str, Any]:
        created = datetime.fromisoformat(str(r["created_at"]))
        return {"id": str(r["id"]), "name": str(r["name"]), "run_id": str(r["run_id"]),
                "skills": list(json.loads(str(r["skills"]))), "url": f"/secrets/{r['id']}",
                "waiting_s": max(0, round((self._clock() - created).total_seconds()))}


def purge(db: Database, clock: Callable[[], datetime] = _now) -> int:
    """Every person's questions whose run is no longer running (or was
    cancelled), or older than ``MAX_AGE``: the daemon's sweep, so that no
    row outlives its run, whoever asked it and whatever became of its worker."""
    with db.atomic() as tx:
        gone = tx.execute("DELETE FROM secret_asks WHERE created_at < ? OR run_id NOT IN (SELECT id FROM runs"
                          " WHERE status = 'running' AND cancelled_by IS NULL) RETURNING id",
                          ((clock() - MAX_AGE).isoformat(),))
    return len(gone)
