"""Runs, feedback and saved approval rules.

A run's detail (steps, parameters used) is encrypted like skill content;
secrets are never part of it. Feedback appends a History line as a new skill
version and records the outcome in the same transaction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from teachd.errors import InvalidSkill, NotFound, TeachdError
from teachd.skills.approval import GATED_TOOLS
from teachd.skills.history import RUN_REF, append_history, history_line, mark_validated
from teachd.store.crypto import Cipher
from teachd.store.db import Database
from teachd.store.models import Skill, SkillContent
from teachd.store.skills import SkillStore

OUTCOMES = ("success", "failure")


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class RunRecord:
    id: str
    status: str
    started_at: str
    finished_at: str | None
    skills: dict[str, int]
    detail: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.id, "status": self.status, "started_at": self.started_at,
                "finished_at": self.finished_at, "skills": self.skills, **self.detail}


class RunStore:
    def __init__(self, skills: SkillStore, clock: Callable[[], datetime] = _now) -> None:
        self.skills = skills
        self.db: Database = skills.db
        self.owner = skills.owner
        self._cipher: Cipher = skills._cipher  # one key for all encrypted rows
        self._clock = clock

    # -- runs ------------------------------------------------------------
    def new_run_id(self) -> str:
        return f"run-{self._clock():%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"

    def start(self, run_id: str, skills: dict[str, int]) -> None:
        with self.db.atomic() as tx:
            tx.execute(
                "INSERT INTO runs (id, owner, status, started_at, skills, detail) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, self.owner, "running", self._clock().isoformat(timespec="seconds"),
                 json.dumps(skills, sort_keys=True), self._seal(run_id, {})),
            )

    def finish(self, run_id: str, status: str, detail: dict[str, Any]) -> None:
        with self.db.atomic() as tx:
            tx.execute(
                "UPDATE runs SET status = ?, finished_at = ?, detail = ? WHERE id = ? AND owner = ?",
                (status, self._clock().isoformat(timespec="seconds"), self._seal(run_id, detail),
                 run_id, self.owner),
            )

    def get(self, run_id: str) -> RunRecord:
        rows = self.db.query("SELECT * FROM runs WHERE id = ? AND owner = ?", (run_id, self.owner))
        if not rows:
            raise NotFound(f"no run {run_id!r}")
        r = rows[0]
        detail = json.loads(self._cipher.open(self.owner, "run:" + r["id"], 0, "detail", r["detail"]))
        return RunRecord(r["id"], r["status"], r["started_at"], r["finished_at"],
                         json.loads(r["skills"]), detail)

    def _seal(self, run_id: str, detail: dict[str, Any]) -> bytes:
        return self._cipher.seal(self.owner, "run:" + run_id, 0, "detail",
                                 json.dumps(detail, sort_keys=True))

    # -- feedback --------------------------------------------------------
    def feedback(self, run_ref: str, slug: str, outcome: str, note: str | None = None) -> Skill:
        """One click after a run: a dated History line, saved as a new version."""
        if outcome not in OUTCOMES:
            raise TeachdError(f"feedback is success or failure, not {outcome!r}")
        if not RUN_REF.match(run_ref):
            raise InvalidSkill(f"run reference {run_ref!r} is not a valid id")
        rows = self.db.query("SELECT skills FROM runs WHERE id = ? AND owner = ?", (run_ref, self.owner))
        ran_version = json.loads(rows[0]["skills"]).get(slug) if rows else None
        if rows and ran_version is None:
            raise NotFound(f"run {run_ref} did not load skill {slug!r}")
        now = self._clock()
        date = now.strftime("%Y-%m-%d")
        line = history_line(date, outcome, run_ref, note)

        def edit(current: SkillContent) -> SkillContent:
            body = append_history(current.instructions, line)
            if outcome == "success":
                body = mark_validated(body, date, run_ref)
            return SkillContent(current.name, current.description, body, dict(current.files),
                                current.approval, dict(current.metadata))

        def record(tx: Any, new_version: int) -> None:
            tx.execute(
                "INSERT INTO feedback (owner, slug, version, run_ref, outcome, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (self.owner, slug, ran_version or new_version - 1, run_ref, outcome,
                 now.isoformat(timespec="seconds")),
            )

        return self.skills.update(slug, edit, note=f"feedback: {outcome} (run {run_ref})", also=record)

    def outcome_counts(self, slug: str) -> dict[int, dict[str, int]]:
        rows = self.db.query(
            "SELECT version, outcome, COUNT(*) AS n FROM feedback WHERE owner = ? AND slug = ?"
            " GROUP BY version, outcome", (self.owner, slug))
        counts: dict[int, dict[str, int]] = {}
        for r in rows:
            counts.setdefault(int(r["version"]), {"success": 0, "failure": 0})[r["outcome"]] = int(r["n"])
        return counts

    # -- saved "always allow" rules --------------------------------------
    def allow_always(self, tool: str) -> int:
        if tool not in GATED_TOOLS:
            raise TeachdError(f"unknown tool {tool!r}; one of: {', '.join(GATED_TOOLS)}")
        with self.db.atomic() as tx:
            found = tx.execute("SELECT id FROM approval_rules WHERE owner = ? AND tool = ?",
                               (self.owner, tool))
            if found:
                return int(found[0]["id"])
            tx.execute("INSERT INTO approval_rules (owner, tool, created_at) VALUES (?, ?, ?)",
                       (self.owner, tool, self._clock().isoformat(timespec="seconds")))
            return int(tx.execute("SELECT id FROM approval_rules WHERE owner = ? AND tool = ?",
                                  (self.owner, tool))[0]["id"])

    def rules(self) -> list[dict[str, Any]]:
        return self.db.query("SELECT id, tool, created_at FROM approval_rules WHERE owner = ? ORDER BY id",
                             (self.owner,))

    def revoke(self, rule_id: int) -> None:
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM approval_rules WHERE id = ? AND owner = ?",
                              (rule_id, self.owner)):
                raise NotFound(f"no approval rule {rule_id}")
            tx.execute("DELETE FROM approval_rules WHERE id = ? AND owner = ?", (rule_id, self.owner))
