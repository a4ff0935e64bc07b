"""Runs and the feedback rows that count outcomes per skill version.

A run's detail (steps, messages) is encrypted like skill content, with the
store's one key; secrets are never part of it. What feedback *means* — the
History line, the new version — is the runner's (``runner/feedback.py``);
this module only keeps the rows.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from teachd.core.errors import NotFound
from teachd.core.outcomes import numbered
from teachd.store.db import Database, Transaction
from teachd.store.processes import runner_id
from teachd.store.skills import SkillStore

QUEUED = "queue"  # the runner of a run that waits on the run queue (teachd.queue)


def _now() -> datetime:
    return datetime.now(UTC)


def purge_pictures(db: Database, days: float, now: datetime | None = None) -> int:
    """The step pictures of runs started more than ``days`` ago, everyone's
    (they are raw screens, like recordings; the run's record stays)."""
    cutoff = ((now or _now()) - timedelta(days=days)).isoformat(timespec="seconds")
    with db.atomic() as tx:
        old = tx.execute("SELECT DISTINCT p.run_id FROM run_pictures p JOIN runs r ON r.id = p.run_id"
                         " WHERE r.started_at < ?", (cutoff,))
        for row in old:
            tx.execute("DELETE FROM run_pictures WHERE run_id = ?", (row["run_id"],))
    return len(old)


class RunStore:
    def __init__(self, skills: SkillStore, clock: Callable[[], datetime] = _now) -> None:
        self.skills = skills
        self.db = skills.db
        self.owner = skills.owner
        self.clock = clock

    def new_run_id(self) -> str:
        return f"run-{self.clock():%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"

    def start(self, run_id: str, skills: dict[str, int], queued: bool = False) -> None:
        """``queued``: it waits on the run queue, no process runs it yet
        (``QUEUED`` as its runner names no machine, so no daemon that starts
        ends it as an orphan; the worker that takes it says so: ``take``)."""
        with self.db.atomic() as tx:
            tx.execute(
                "INSERT INTO runs (id, owner, status, started_at, skills, detail, runner)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, self.owner, "running", self._stamp(), json.dumps(skills, sort_keys=True),
                 self._seal(run_id, {}), QUEUED if queued else runner_id()),
            )

    def take(self, run_id: str) -> bool:
        """A worker takes a queued run: this process runs it now. False when
        it ended or was cancelled while it waited."""
        with self.db.atomic() as tx:  # one statement: two takers of one run, one gets it
            found = tx.execute("UPDATE runs SET runner = ? WHERE id = ? AND owner = ? AND status = 'running'"
                               " AND runner = ? AND cancelled_by IS NULL RETURNING id",
                               (runner_id(), run_id, self.owner, QUEUED))
        return bool(found)

    def detail_of(self, run_id: str) -> dict[str, Any]:
        """A run's whole detail as sealed (what a queued run was asked to do, under "job")."""
        rows = self.db.query("SELECT * FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        if not rows:
            raise NotFound(f"no run {run_id!r}")
        return self._opened(rows[0])

    def end(self, run_id: str, status: str, message: str) -> None:
        """End a running run with ``message``, its record otherwise as it
        stands (a queued run's: what it was asked to do, without the job's
        own fields)."""
        detail = self.detail_of(run_id)
        detail.pop("job", None)
        self.finish(run_id, status, {**detail, "message": message})

    def runner_of(self, run_id: str) -> str:
        rows = self.db.query("SELECT runner FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        return str(rows[0]["runner"] or "") if rows else ""

    def set_skills(self, run_id: str, skills: dict[str, int]) -> None:
        """A skill loaded mid-run joins the run's record (and its feedback chips)."""
        with self.db.atomic() as tx:
            tx.execute("UPDATE runs SET skills = ? WHERE id = ? AND owner = ?",
                       (json.dumps(skills, sort_keys=True), run_id, self.owner))

    def progress(self, run_id: str, detail: dict[str, Any]) -> None:
        """A running run's detail so far (its plan, its steps as they happen):
        what the run page follows. Never after the run ended."""
        with self.db.atomic() as tx:
            tx.execute("UPDATE runs SET detail = ? WHERE id = ? AND owner = ? AND status = 'running'",
                       (self._seal(run_id, detail), run_id, self.owner))

    def put_picture(self, run_id: str, n: int, kind: str, jpeg: bytes) -> None:
        # sealed as text (base64), like every sealed value: key rotation re-seals it with the rest
        sealed = self.skills.cipher.seal(self.owner, f"picture:{run_id}", n, kind,
                                         base64.b64encode(jpeg).decode())
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM run_pictures WHERE owner = ? AND run_id = ? AND n = ? AND kind = ?",
                       (self.owner, run_id, n, kind))
            tx.execute("INSERT INTO run_pictures (owner, run_id, n, kind, image) VALUES (?, ?, ?, ?, ?)",
                       (self.owner, run_id, n, kind, sealed))

    def picture(self, run_id: str, n: int, kind: str) -> bytes:
        rows = self.db.query("SELECT image FROM run_pictures WHERE owner = ? AND run_id = ? AND n = ?"
                             " AND kind = ?", (self.owner, run_id, n, kind))
        if not rows:
            raise NotFound(f"no {kind} picture of step {n} in run {run_id!r}")
        text = self.skills.cipher.open(self.owner, f"picture:{run_id}", n, kind, rows[0]["image"])
        return base64.b64decode(text)

    def pictures_of(self, run_id: str) -> set[tuple[int, str]]:
        rows = self.db.query("SELECT n, kind FROM run_pictures WHERE owner = ? AND run_id = ?",
                             (self.owner, run_id))
        return {(int(r["n"]), str(r["kind"])) for r in rows}

    def discard(self, run_id: str) -> None:
        """A run that never acted and is started again (its question went to
        an MCP client in a round of its own): no record of it stays."""
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM run_pictures WHERE owner = ? AND run_id = ?", (self.owner, run_id))
            tx.execute("DELETE FROM runs WHERE id = ? AND owner = ? AND status = 'running'",
                       (run_id, self.owner))

    def cancel(self, run_id: str, by: str) -> bool:
        """Ask a running run to stop between steps (whichever process runs it)."""
        with self.db.atomic() as tx:
            found = tx.execute("UPDATE runs SET cancelled_by = ? WHERE id = ? AND owner = ?"
                               " AND status = 'running' RETURNING id", (by, run_id, self.owner))
        return bool(found)

    def cancelled_by(self, run_id: str) -> str | None:
        rows = self.db.query("SELECT cancelled_by FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        return str(rows[0]["cancelled_by"]) if rows and rows[0]["cancelled_by"] else None

    def finish(self, run_id: str, status: str, detail: dict[str, Any]) -> bool:
        """``status``: success, unverified (nothing could confirm the effect),
        partial (stopped after a write), failure or aborted (runner.run); a
        running run has none yet. Whether this call ended it."""
        with self.db.atomic() as tx:  # once: a run that ended (interrupted by a sweep, say) stays as it ended
            return bool(tx.execute(
                "UPDATE runs SET status = ?, finished_at = ?, detail = ? WHERE id = ? AND owner = ?"
                " AND status = 'running' RETURNING id",
                (status, self._stamp(), self._seal(run_id, detail), run_id, self.owner),
            ))

    def abandon(self, run_id: str, why: str, runner: str | None = None, then: str = "") -> str | None:
        """A running run whose process is gone (its daemon or its worker
        killed): ``interrupted`` at the step it reached (the step under way
        marked so), with what it wrote so far (``partial``, as a run that
        stopped half way reports it), its record otherwise kept; ``then``
        ends its message (what happens next). Run again by a person, or by
        the run queue's sweep where its owner marked the skill safe to
        repeat. ``runner``: only while that process is still the one
        recorded as running it. Returns the message, or None when this call
        did not end it (it had ended, or another process ended it first)."""
        rows = self.db.query("SELECT * FROM runs WHERE id = ? AND owner = ? AND status = 'running'",
                             (run_id, self.owner))
        if not rows or (runner is not None and rows[0]["runner"] != runner):
            return None
        detail = self._opened(rows[0])
        steps = [dict(s) for s in numbered(detail.get("steps"))]
        for step in steps:
            if step.get("status") == "running":
                step.update(status="interrupted", detail=why)
        reached = max((int(s["n"]) for s in steps), default=0)
        message = f"interrupted at step {reached}: {why}" if reached \
            else f"interrupted before its first step: {why}"
        wrote = list(detail.pop("wrote", None) or [])
        partial = None
        if wrote and reached:
            plan = [int(p["n"]) for p in detail.get("plan") or [] if isinstance(p, dict) and "n" in p]
            partial = {"wrote": wrote, "stopped_at": reached, "not_done": [n for n in plan if n >= reached]}
            described = ", ".join(f"{w.get('method')} {w.get('path')} ({w.get('status') or 'no answer yet'}, "
                                  f"step {w.get('step')})" for w in wrote)
            message += f" — partial change: the app answered {described} before it stopped"
        message += then
        ended = self.finish(run_id, "interrupted", {**detail, "steps": steps, "message": message,
                                                    **({"partial": partial} if partial else {})})
        return message if ended else None

    def loaded_versions(self, run_id: str) -> dict[str, int] | None:
        """The skills (and versions) a teachd run loaded; None for a run teachd did not keep."""
        rows = self.db.query("SELECT skills FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        return {str(k): int(v) for k, v in json.loads(rows[0]["skills"]).items()} if rows else None

    def record_feedback(self, tx: Transaction, slug: str, version: int, run_ref: str, outcome: str,
                        at: datetime, skill_owner: str | None = None) -> None:
        """The click's row: given by this person, on ``skill_owner``'s skill
        (their own unless it was shared with them)."""
        tx.execute(
            "INSERT INTO feedback (owner, slug, version, run_ref, outcome, created_at, skill_owner)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.owner, slug, version, run_ref, outcome, at.isoformat(timespec="seconds"),
             skill_owner or self.owner),
        )

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest runs, newest first, with their detail opened."""
        rows = self.db.query("SELECT * FROM runs WHERE owner = ? ORDER BY started_at DESC, id DESC LIMIT ?",
                             (self.owner, limit))
        return [self._view(r) for r in rows]

    def one(self, run_id: str) -> dict[str, Any]:
        rows = self.db.query("SELECT * FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        if not rows:
            raise NotFound(f"no run {run_id!r}")
        return self._view(rows[0])

    def _opened(self, r: dict[str, Any]) -> dict[str, Any]:
        sealed = self.skills.cipher.open(self.owner, "run:" + r["id"], 0, "detail", r["detail"])
        return dict(json.loads(sealed))

    def _view(self, r: dict[str, Any]) -> dict[str, Any]:
        detail = self._opened(r)
        return {"run_id": r["id"], "status": r["status"], "started_at": r["started_at"],
                "finished_at": r["finished_at"], "skills": json.loads(r["skills"]),
                "message": detail.get("message", ""), "slug": detail.get("slug"),
                "origin": detail.get("origin", ""),
                "steps": detail.get("steps", []), "plan": detail.get("plan"),
                "params": detail.get("params", {}), "start_url": detail.get("start_url"),
                "used": detail.get("used") or ([detail["slug"]] if detail.get("slug") else []),
                "cancelled_by": r.get("cancelled_by"), "queued": r.get("runner") == QUEUED,
                "gate": detail.get("gate", []),  # each question the gate asked or let through, and how
                **({"partial": detail["partial"]} if detail.get("partial") else {}),
                **({"retry_of": detail["retry_of"]} if detail.get("retry_of") else {})}

    def of_skill(self, slug: str, limit: int = 50) -> list[dict[str, Any]]:
        """The runs that used the skill ``slug`` names for this person: for its
        owner, theirs and those of the people it is shared with (who ran *this*
        skill, not one of their own of the same name); for someone it is
        shared with, only their own. Newest first."""
        mine, _can = self.skills.access(slug)
        rows = self.db.query("SELECT id, owner, status, started_at, finished_at, skills, detail FROM runs"
                             " WHERE skills LIKE ? ORDER BY started_at DESC, id DESC LIMIT ?",
                             (f"%{json.dumps(slug)}%", limit * 4))
        given = {str(r["run_ref"]): str(r["outcome"]) for r in self.db.query(
            "SELECT run_ref, outcome FROM feedback WHERE slug = ? AND COALESCE(skill_owner, owner) = ?"
            " ORDER BY id", (slug, mine))}
        whose: dict[str, bool] = {}
        out = []
        for r in rows:
            who = str(r["owner"])
            if mine != self.owner and who != self.owner:
                continue  # a grantee sees their own runs of it, not the owner's or other grantees'
            if who not in whose:
                try:
                    whose[who] = self.skills.as_person(who).access(slug)[0] == mine
                except NotFound:
                    whose[who] = False
            version = json.loads(r["skills"]).get(slug)
            if not whose[who] or version is None:
                continue
            detail = json.loads(self.skills.cipher.open(who, "run:" + r["id"], 0, "detail", r["detail"]))
            if slug not in (detail.get("used") or ([detail["slug"]] if detail.get("slug") else [])):
                continue  # loaded, never used
            out.append({"run_id": r["id"], "by": who, "status": r["status"], "started_at": r["started_at"],
                        "finished_at": r["finished_at"], "version": int(version),
                        "feedback": given.get(r["id"])})
            if len(out) >= limit:
                break
        return out

    def feedback_given(self, run_ref: str) -> dict[str, str]:
        """slug → outcome of the feedback already recorded for a run."""
        rows = self.db.query("SELECT slug, outcome FROM feedback WHERE owner = ? AND run_ref = ? ORDER BY id",
                             (self.owner, run_ref))
        return {str(r["slug"]): str(r["outcome"]) for r in rows}

    def feedback_of(self, run_ref: str, undo_seconds: float) -> tuple[dict[str, str], dict[str, int]]:
        """What ``feedback_given`` says, and slug → whole seconds left to take
        each back (given less than ``undo_seconds`` ago: the Undo a page shows,
        whichever page, after a reload or a visit elsewhere) — one read."""
        rows = self.db.query("SELECT slug, outcome, created_at FROM feedback WHERE owner = ? AND run_ref = ?"
                             " ORDER BY id", (self.owner, run_ref))
        now, given, left = self.clock(), {}, {}
        for r in rows:
            given[str(r["slug"])] = str(r["outcome"])
            remaining = undo_seconds - (now - datetime.fromisoformat(str(r["created_at"]))).total_seconds()
            if remaining >= 1:
                left[str(r["slug"])] = int(remaining)
        return given, left

    def outcome_counts(self, slug: str, since: int = 1) -> dict[int, dict[str, int]]:
        """✓/✗ per version of the skill the slug names for this person, whoever
        clicked; those of versions before ``since`` summed under version 0."""
        owner, _can = self.skills.access(slug)
        rows = self.db.query(
            "SELECT CASE WHEN version >= ? THEN version ELSE 0 END AS version, outcome, COUNT(*) AS n"
            " FROM feedback WHERE slug = ? AND COALESCE(skill_owner, owner) = ?"
            " GROUP BY 1, 2", (since, slug, owner))
        counts: dict[int, dict[str, int]] = {}
        for r in rows:
            counts.setdefault(int(r["version"]), {"success": 0, "failure": 0})[r["outcome"]] = int(r["n"])
        return counts

    def _stamp(self) -> str:
        return self.clock().isoformat(timespec="seconds")

    def _seal(self, run_id: str, detail: dict[str, Any]) -> bytes:
        return self.skills.cipher.seal(self.owner, "run:" + run_id, 0, "detail",
                                       json.dumps(detail, sort_keys=True))
