"""Approval requests waiting for a person, kept in the database.

Any process may ask — a replay the daemon runs, ``teachd mcp`` serving an
agent whose client cannot show a question, a scheduled run — and the
daemon's Approvals page answers, because both sides meet in the store. A
request is answered once: the first answer wins, a late one is refused. No
answer before the timeout is a deny (the row says ``expired``).

The request's text (what would be done, where) is sealed like a run's
detail; it never holds a secret's value, only ``{{secret:NAME}}``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from teachd.errors import NotFound
from teachd.store.skills import SkillStore

APPROVAL_TIMEOUT = 300.0  # seconds a request waits for a person; then it is a deny
POLL = 0.2  # seconds between looks at the database for another process's answer


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class ApprovalQueue:
    def __init__(self, store: SkillStore, timeout: float = APPROVAL_TIMEOUT,
                 clock: Callable[[], str] = _now) -> None:
        self.store, self.db, self.owner = store, store.db, store.owner
        self.timeout, self._clock = timeout, clock
        self._wake: dict[int, threading.Event] = {}  # answered in this process: no need to poll
        self._lock = threading.Lock()
        self._closed = threading.Event()

    def wait(self, run_id: str, request: Mapping[str, Any], timeout: float | None = None) -> bool:
        """Put the request (``Request.as_dict()``) on the page and wait for its
        answer: True only for an allow; no answer in time is a deny."""
        pid = self._put(run_id, request)
        wake = threading.Event()
        with self._lock:
            self._wake[pid] = wake
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            while True:
                state = self._state(pid)
                if state != "pending":
                    return state == "allowed"
                left = deadline - time.monotonic()
                if left <= 0 or self._closed.is_set():
                    self._settle(pid, "expired")
                    return self._state(pid) == "allowed"
                wake.wait(min(POLL, left))
        finally:
            with self._lock:
                self._wake.pop(pid, None)

    def answer(self, pid: int, allow: bool) -> None:
        if not self._settle(pid, "allowed" if allow else "denied"):
            raise NotFound(f"no pending approval {pid} (answered already, or timed out)")
        with self._lock:
            wake = self._wake.get(pid)
        if wake:
            wake.set()

    def pending(self) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT id, run_id, created_at, request FROM pending_approvals"
                             " WHERE owner = ? AND state = 'pending' ORDER BY id", (self.owner,))
        return [{"id": int(r["id"]), "run_id": r["run_id"], "created_at": r["created_at"],
                 **json.loads(self._open(int(r["id"]), r["request"]))} for r in rows]

    def close(self) -> None:
        """Stop waiting: every request this process is waiting on is denied now."""
        self._closed.set()
        with self._lock:
            wakes = list(self._wake.values())
        for wake in wakes:
            wake.set()

    # -- rows ---------------------------------------------------------------
    def _put(self, run_id: str, request: Mapping[str, Any]) -> int:
        text = json.dumps(dict(request), sort_keys=True)
        with self.db.atomic() as tx:
            tx.execute("INSERT INTO pending_approvals (owner, run_id, created_at, request)"
                       " VALUES (?, ?, ?, ?)", (self.owner, run_id, self._clock(), b""))
            pid = int(tx.execute("SELECT MAX(id) AS id FROM pending_approvals WHERE owner = ?",
                                 (self.owner,))[0]["id"])
            tx.execute("UPDATE pending_approvals SET request = ? WHERE id = ?",
                       (self.store.cipher.seal(self.owner, f"approval:{pid}", 0, "request", text), pid))
        return pid

    def _open(self, pid: int, blob: bytes) -> str:
        return self.store.cipher.open(self.owner, f"approval:{pid}", 0, "request", blob)

    def _state(self, pid: int) -> str:
        rows = self.db.query("SELECT state FROM pending_approvals WHERE id = ? AND owner = ?",
                             (pid, self.owner))
        return str(rows[0]["state"]) if rows else "expired"

    def _settle(self, pid: int, state: str) -> bool:
        """The first answer wins: only a pending request changes state."""
        with self.db.atomic() as tx:
            found = tx.execute("SELECT id FROM pending_approvals WHERE id = ? AND owner = ?"
                               " AND state = 'pending'", (pid, self.owner))
            if found:
                tx.execute("UPDATE pending_approvals SET state = ? WHERE id = ?", (state, pid))
        return bool(found)
