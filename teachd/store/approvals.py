"""Approval requests waiting for a person, kept in the database.

Any process may ask — a replay the daemon runs, ``teachd mcp`` serving an
agent whose client cannot show a question, a scheduled run — and the
daemon's Approvals page answers, because both sides meet in the store. A
request is answered once: the first answer wins, a late one is refused. No
answer before the timeout is a deny (the row says ``expired``); a request
whose run was cancelled is ``withdrawn``. An allow is ``allowed`` (this step)
or ``allowed_run`` (the whole plan the request carried), or ``allowed_like``
(a step found changed, with later steps changed the same way in this run:
``like``, offered only where the request says so), or ``allowed_these`` (a
step found changed, with the later steps of its page the request listed as
changed: ``these``, likewise). A request that asks
*where* (a halted step, shown on its page's picture: ``Gate.point``) is
answered ``here`` with the point (``shown``, the point kept beside it) or
``deny``; it takes no other answer, and no other request takes ``here``.

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

from teachd.core.errors import BadInput, NotFound, Unavailable
from teachd.store.skills import SkillStore

# a person's word → the row's state
_STATE = {"run": "allowed_run", "once": "allowed", "like": "allowed_like", "these": "allowed_these",
          "here": "shown"}
# (anything else: denied)
_WORD = {state: word for word, state in _STATE.items()}
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

    def wait(self, run_id: str, request: Mapping[str, Any], timeout: float | None = None) -> str:
        """Put the request (``Request.as_dict()``) on the page and wait for its
        answer: ``run``, ``once`` or ``deny`` (also no answer in time)."""
        return self.wait_answer(run_id, request, timeout)[0]

    def wait_answer(self, run_id: str, request: Mapping[str, Any],
                    timeout: float | None = None) -> tuple[str, tuple[float, float] | None]:
        """As :meth:`wait`, with the point a ``here`` answer showed."""
        pid = self._put(run_id, request)
        wake = threading.Event()
        with self._lock:
            self._wake[pid] = wake
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            while True:
                try:
                    state = self._state(pid)
                except Unavailable:  # the store away a moment (a restart): the person may still answer
                    state = "pending"
                if state != "pending":
                    return self._answered(pid, state)
                left = deadline - time.monotonic()
                if left <= 0 or self._closed.is_set():
                    self._settle(pid, "expired")
                    return self._answered(pid, self._state(pid))
                wake.wait(min(POLL, left))
        finally:
            with self._lock:
                self._wake.pop(pid, None)

    def _answered(self, pid: int, state: str) -> tuple[str, tuple[float, float] | None]:
        word = _WORD.get(state, "deny")
        if word != "here":
            return word, None
        rows = self.db.query("SELECT answer FROM pending_approvals WHERE id = ? AND owner = ?",
                             (pid, self.owner))
        x, y = (float(v) for v in str(rows[0]["answer"]).split(","))
        return word, (x, y)

    def answer(self, pid: int, word: str, point: tuple[float, float] | None = None) -> None:
        """``run`` (only where the request offered its plan), ``once`` or
        ``deny``; to a request that asks where, ``here`` with ``point`` (the
        fractions of the picture's width and height) or ``deny``."""
        asks = self._request(pid)
        if not asks:
            raise NotFound(f"no pending approval {pid} (answered already, or timed out)")
        where = bool(asks.get("show"))
        if word == "run" and not asks.get("offers_run"):
            raise BadInput("this request does not carry a plan: answer once or deny")
        if word == "like" and not asks.get("like"):
            raise BadInput("this request's step did not change in a way later steps can share: "
                           "answer once or deny")
        if word == "these" and not asks.get("these"):
            raise BadInput("this request lists no other changed steps of its page: answer once or deny")
        if where and word not in ("here", "deny"):
            raise BadInput("this request asks where the step's target is now: answer here with x and y "
                           "(where you clicked on its picture), or deny")
        if word == "here" and not where:
            raise BadInput("this request does not ask where: answer run, once or deny")
        if word == "here" and (point is None or not all(0.0 <= v <= 1.0 for v in point)):
            raise BadInput("here needs x and y: fractions (0 to 1) of the picture's width and height")
        shown = f"{point[0]:.6f},{point[1]:.6f}" if word == "here" and point else None
        if not self._settle(pid, _STATE.get(word, "denied"), shown):
            raise NotFound(f"no pending approval {pid} (answered already, or timed out)")
        with self._lock:
            wake = self._wake.get(pid)
        if wake:
            wake.set()

    def withdraw(self, run_id: str) -> int:
        """A cancelled run's questions leave the page; its waiting step is denied."""
        with self.db.atomic() as tx:
            rows = tx.execute("SELECT id FROM pending_approvals WHERE owner = ? AND run_id = ?"
                              " AND state = 'pending'", (self.owner, run_id))
            tx.execute("UPDATE pending_approvals SET state = 'withdrawn' WHERE owner = ? AND run_id = ?"
                       " AND state = 'pending'", (self.owner, run_id))
        with self._lock:
            wakes = [self._wake[int(r["id"])] for r in rows if int(r["id"]) in self._wake]
        for wake in wakes:
            wake.set()
        return len(rows)

    def waiting(self) -> int:
        rows = self.db.query("SELECT COUNT(*) AS n FROM pending_approvals"
                             " WHERE owner = ? AND state = 'pending'", (self.owner,))
        return int(rows[0]["n"])

    def _request(self, pid: int) -> dict[str, Any]:
        rows = self.db.query("SELECT request FROM pending_approvals WHERE id = ? AND owner = ?",
                             (pid, self.owner))
        return dict(json.loads(self._open(pid, rows[0]["request"]))) if rows else {}

    def pending(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The person's questions waiting for an answer (``run_id``: that run's only)."""
        of_run = (" AND run_id = ?", (run_id,)) if run_id is not None else ("", ())
        rows = self.db.query("SELECT id, run_id, created_at, request FROM pending_approvals"
                             f" WHERE owner = ? AND state = 'pending'{of_run[0]} ORDER BY id",
                             (self.owner, *of_run[1]))
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
            pid = int(tx.execute("INSERT INTO pending_approvals (owner, run_id, created_at, request)"
                                 " VALUES (?, ?, ?, ?) RETURNING id",
                                 (self.owner, run_id, self._clock(), b""))[0]["id"])  # its own, not the last
            tx.execute("UPDATE pending_approvals SET request = ? WHERE id = ?",
                       (self.store.cipher.seal(self.owner, f"approval:{pid}", 0, "request", text), pid))
        return pid

    def _open(self, pid: int, blob: bytes) -> str:
        return self.store.cipher.open(self.owner, f"approval:{pid}", 0, "request", blob)

    def _state(self, pid: int) -> str:
        rows = self.db.query("SELECT state FROM pending_approvals WHERE id = ? AND owner = ?",
                             (pid, self.owner))
        return str(rows[0]["state"]) if rows else "expired"

    def _settle(self, pid: int, state: str, answer: str | None = None) -> bool:
        """The first answer wins: only a pending request changes state."""
        with self.db.atomic() as tx:  # one statement: a second answer waiting on the row finds it settled
            found = tx.execute("UPDATE pending_approvals SET state = ?, answer = ? WHERE id = ? AND owner = ?"
                               " AND state = 'pending' RETURNING id", (state, answer, pid, self.owner))
        return bool(found)
