"""What the daemon holds while it runs: the store and the things that run in
the background, started and stopped by the app's lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from teachd.config import Settings
from teachd.server.jobs import Approvals, Runs, Teaching
from teachd.server.security import Sessions
from teachd.store import SkillStore, open_store
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from teachd.teach.process import CONTROL_FILE


@dataclass
class Daemon:
    settings: Settings
    store: SkillStore
    runs: RunStore
    rules: RuleStore
    approvals: Approvals
    jobs: Runs
    teaching: Teaching
    sessions: Sessions
    login_code: str  # the one-time code in the printed login link

    @classmethod
    def open(cls, settings: Settings, sessions: Sessions, login_code: str) -> Daemon:
        store = open_store(settings)
        runs = RunStore(store)
        approvals = Approvals()
        return cls(settings, store, runs, RuleStore(store.db, store.owner), approvals,
                   Runs(runs, settings, approvals),
                   Teaching(dict(settings.environ), settings.home / CONTROL_FILE), sessions, login_code)

    def close(self) -> None:
        """Stop cleanly: waiting approvals are denied (their runs end with no
        effect, and say so), a recording in progress is stopped and saved."""
        self.jobs.stop_all()
        if self.teaching.process is not None and self.teaching.process.proc.poll() is None:
            self.teaching.stop()
