"""Saved "always allow" approval rules. They never satisfy a skill that
requires approval (the gate decides that); they only spare questions for
tools no loaded skill gates."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from teachd.core.approval import GATED_TOOLS
from teachd.core.errors import BadInput, NotFound
from teachd.store.db import Database


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RuleStore:
    def __init__(self, db: Database, owner: str, clock: Callable[[], str] = _now) -> None:
        self.db, self.owner, self._clock = db, owner, clock

    def allow_always(self, tool: str) -> int:
        if tool not in GATED_TOOLS:
            raise BadInput(f"unknown tool {tool!r}; one of: {', '.join(GATED_TOOLS)}")
        with self.db.atomic() as tx:
            found = tx.execute("SELECT id FROM approval_rules WHERE owner = ? AND tool = ?",
                               (self.owner, tool))
            if found:
                return int(found[0]["id"])
            tx.execute("INSERT INTO approval_rules (owner, tool, created_at) VALUES (?, ?, ?)",
                       (self.owner, tool, self._clock()))
            return int(tx.execute("SELECT id FROM approval_rules WHERE owner = ? AND tool = ?",
                                  (self.owner, tool))[0]["id"])

    def all(self) -> list[dict[str, Any]]:
        return self.db.query("SELECT id, tool, created_at FROM approval_rules WHERE owner = ? ORDER BY id",
                             (self.owner,))

    def tools(self) -> frozenset[str]:
        return frozenset(str(r["tool"]) for r in self.all())

    def revoke(self, rule_id: int) -> None:
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM approval_rules WHERE id = ? AND owner = ?",
                              (rule_id, self.owner)):
                raise NotFound(f"no approval rule {rule_id}")
            tx.execute("DELETE FROM approval_rules WHERE id = ? AND owner = ?", (rule_id, self.owner))
