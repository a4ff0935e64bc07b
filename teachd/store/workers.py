"""The machines that take runs from the queue (``teachd worker``): what
each says it can run, its slots, its heartbeat and the runs it has now —
what the Runs page and ``teachd workers`` show. The queue itself (which
job which worker holds) is procrastinate's; this is the people's view."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from teachd.store.db import Database

SILENT_AFTER = 30.0  # seconds without a heartbeat after which a worker is shown as gone


def _now() -> datetime:
    return datetime.now(UTC)


class WorkerStore:
    def __init__(self, db: Database, clock: Callable[[], datetime] = _now) -> None:
        self.db, self.clock = db, clock

    def _stamp(self) -> str:
        return self.clock().isoformat(timespec="seconds")

    def register(self, name: str, host: str, runner: str, slots: int, can: list[str]) -> None:
        now = self._stamp()
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM workers WHERE name = ?", (name,))
            tx.execute("INSERT INTO workers (name, host, runner, slots, can, state, started_at, heartbeat_at,"
                       " running) VALUES (?, ?, ?, ?, ?, 'taking runs', ?, ?, '[]')",
                       (name, host, runner, slots, json.dumps(sorted(can)), now, now))

    def beat(self, name: str, running: list[str], state: str | None = None) -> None:
        with self.db.atomic() as tx:
            tx.execute("UPDATE workers SET heartbeat_at = ?, running = ?, state = COALESCE(?, state)"
                       " WHERE name = ?", (self._stamp(), json.dumps(running), state, name))

    def gone(self, name: str) -> None:
        """A worker that stopped cleanly leaves the list."""
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM workers WHERE name = ?", (name,))

    def all(self) -> list[dict[str, Any]]:
        now = self.clock()
        out = []
        for r in self.db.query("SELECT * FROM workers ORDER BY name"):
            beat = datetime.fromisoformat(str(r["heartbeat_at"]))
            silent = (now - beat).total_seconds()
            out.append({"name": r["name"], "host": r["host"], "runner": r["runner"], "slots": int(r["slots"]),
                        "can": json.loads(r["can"]), "started_at": r["started_at"],
                        "heartbeat_at": r["heartbeat_at"], "silent_s": max(0, round(silent)),
                        "state": "gone silent" if silent > SILENT_AFTER else str(r["state"]),
                        "running": json.loads(r["running"])})
        return out

    def live(self) -> list[dict[str, Any]]:
        """The workers that beat lately (``all`` without the ones gone silent)."""
        return [w for w in self.all() if w["state"] != "gone silent"]

    def by_runner(self) -> dict[str, str]:
        """runner id → worker name: which worker a running run is on."""
        return {str(r["runner"]): str(r["name"]) for r in self.db.query("SELECT name, runner FROM workers")}
