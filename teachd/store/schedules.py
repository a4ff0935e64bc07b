"""Schedules as the person set them, their last outcome, and each skill's
last health check. When a schedule fires next is the scheduler's own state
(``scheduler_jobs``); this is what it was asked to do."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from compiler.plan import PlanError, Procedure
from teachd.core.errors import BadInput, NotFound
from teachd.core.outcomes import health_verdict
from teachd.core.schedules import Spec
from teachd.store.skills import SkillStore


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def spec_of(view: dict[str, Any]) -> Spec:
    """The schedule a row describes (as ``ScheduleStore`` shows it)."""
    return Spec(view["slug"], view["kind"], view["cron"], view["every_s"], dict(view["params"]),
                view["profile"], int(view["timeout_s"]), view.get("start_url"))


class ScheduleStore:
    def __init__(self, skills: SkillStore, clock: Callable[[], str] = _now) -> None:
        self.skills, self.db, self.owner, self._clock = skills, skills.db, skills.owner, clock

    def add(self, spec: Spec) -> int:
        spec.check()
        skill = self.skills.get(spec.slug)  # a schedule for a skill that does not exist is refused now
        try:  # refused now, not at 9 on Monday morning: a schedule replays or checks the taught steps
            proc = Procedure.from_files(skill.current.files)
        except PlanError:
            raise BadInput(f"{spec.slug} is not a taught skill: it has no steps to "
                           f"{'check' if spec.kind == 'check' else 'replay'}; agents use it as instructions, "
                           "a schedule cannot run it") from None
        unknown = sorted(set(spec.params) - set(proc.parameters))
        if unknown:
            raise BadInput(f"unknown parameter(s) {', '.join(unknown)}; "
                           f"this skill takes: {', '.join(proc.parameters) or 'none'}")
        with self.db.atomic() as tx:
            found = tx.execute(
                "INSERT INTO schedules (owner, slug, kind, cron, every_s, params, profile, timeout_s,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (self.owner, spec.slug, spec.kind, spec.cron, spec.every_s, b"", spec.profile, spec.timeout_s,
                 self._clock()))
            sid = int(found[0]["id"])  # its own row's, not the newest of another add at the same moment
            tx.execute("UPDATE schedules SET params = ?, start_url = ? WHERE id = ?",
                       (self._seal(sid, spec.params), spec.start_url, sid))
        return sid

    def all(self) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT * FROM schedules WHERE owner = ? ORDER BY id", (self.owner,))
        return [self._view(r) for r in rows]

    def get(self, sid: int) -> dict[str, Any]:
        rows = self.db.query("SELECT * FROM schedules WHERE id = ? AND owner = ?", (sid, self.owner))
        if not rows:
            raise NotFound(f"no schedule {sid}")
        return self._view(rows[0])

    def set_paused(self, sid: int, paused: bool) -> dict[str, Any]:
        self.get(sid)
        with self.db.atomic() as tx:
            tx.execute("UPDATE schedules SET paused = ? WHERE id = ? AND owner = ?",
                       (int(paused), sid, self.owner))
        return self.get(sid)

    def remove(self, sid: int) -> None:
        self.get(sid)
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM schedules WHERE id = ? AND owner = ?", (sid, self.owner))

    def record(self, sid: int, at: str, run_id: str | None, outcome: str, note: str) -> None:
        with self.db.atomic() as tx:
            tx.execute("UPDATE schedules SET last_at = ?, last_run_id = ?, last_outcome = ?, last_note = ?"
                       " WHERE id = ? AND owner = ?", (at, run_id, outcome, note, sid, self.owner))

    def record_end(self, run_id: str, outcome: str, note: str) -> None:
        """A queued firing's run ended (a worker ran it, it was cancelled
        while it waited, its worker died): its outcome, on the schedule whose
        last firing it still is (a later firing is not overwritten); nothing
        for a run no schedule fired."""
        with self.db.atomic() as tx:
            tx.execute("UPDATE schedules SET last_outcome = ?, last_note = ? WHERE owner = ?"
                       " AND last_run_id = ?", (outcome, note, self.owner, run_id))

    def follow(self, run_id: str, repeat_id: str, note: str) -> None:
        """A firing's run was interrupted and is run again by itself
        (queue.sweep): the schedule's last firing is now the repeat, queued."""
        with self.db.atomic() as tx:
            tx.execute("UPDATE schedules SET last_run_id = ?, last_outcome = 'queued', last_note = ?"
                       " WHERE owner = ? AND last_run_id = ?", (repeat_id, note, self.owner, run_id))

    # -- health -------------------------------------------------------------
    def set_health(self, slug: str, report: dict[str, Any], summary: str) -> None:
        bad = next((s for s in report["steps"] if s["status"] in ("ambiguous", "not found")), None)
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM skill_health WHERE owner = ? AND slug = ?", (self.owner, slug))
            tx.execute("INSERT INTO skill_health (owner, slug, checked_at, ok, step, reason, report)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (self.owner, slug, self._clock(), int(bad is None), bad["n"] if bad else None,
                        summary, json.dumps(report, sort_keys=True)))

    def health(self) -> dict[str, dict[str, Any]]:
        """slug → the last check: ok, its verdict (``health_verdict``: healthy
        only when every target was found), checked_at, step, reason (the
        summary), report."""
        rows = self.db.query("SELECT * FROM skill_health WHERE owner = ?", (self.owner,))
        out = {}
        for r in rows:
            report = json.loads(r["report"])
            ok = bool(r["ok"])
            verdict = health_verdict(ok, (s.get("status") for s in report.get("steps") or []))
            out[r["slug"]] = {"ok": ok, "verdict": verdict,
                              "checked_at": r["checked_at"], "step": r["step"], "reason": r["reason"],
                              "report": report}
        return out

    def listed(self) -> list[dict[str, Any]]:
        """The schedules as the CLI and the Schedules page show them: when, and
        the next run time the scheduler's own state holds."""
        from teachd.store.jobstore import next_runs

        nexts = next_runs(self.db)
        return [{**v, "when": spec_of(v).when, "next_run": nexts.get(v["id"])} for v in self.all()]

    # -- rows ---------------------------------------------------------------
    def _view(self, r: dict[str, Any]) -> dict[str, Any]:
        sid = int(r["id"])
        params = json.loads(self.skills.cipher.open(self.owner, f"schedule:{sid}", 0, "params", r["params"]))
        view = {k: r[k] for k in ("slug", "kind", "cron", "every_s", "profile", "timeout_s", "created_at",
                                  "last_at", "last_run_id", "last_outcome", "last_note", "start_url")}
        return {"id": sid, **view, "params": params, "paused": bool(r["paused"])}

    def _seal(self, sid: int, params: dict[str, str]) -> bytes:
        return self.skills.cipher.seal(self.owner, f"schedule:{sid}", 0, "params",
                                       json.dumps(params, sort_keys=True))
