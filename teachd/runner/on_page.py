"""A replay the daemon or a queue's worker runs for a person who is not at
its terminal: its approvals wait on the person's Approvals page (through
the store, so any process may run it), its secrets come from the person's
settings or their secret page (the daemon's desk, in its memory; from a
worker elsewhere, through the store, sealed to that worker)."""

from __future__ import annotations

from typing import Any

from teachd.config import Settings
from teachd.runner.gate import PageApprover
from teachd.runner.policy import Who
from teachd.runner.run import RunOptions, RunOutcome, run_skill
from teachd.runner.secret_desk import DeskSource, SecretDesk, StoreSource, page_secret
from teachd.store.approvals import ApprovalQueue
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from teachd.store.secret_asks import SecretAsks


def run_on_the_page(runs: RunStore, settings: Settings, approvals: ApprovalQueue, desk: SecretDesk | None,
                    slug: str, params: dict[str, str], *, label: str, origin: str, timeout: float,
                    start_url: str | None = None, profile: list[str] | None = None,
                    run_id: str | None = None, followed: bool = False,
                    record: dict[str, Any] | None = None) -> RunOutcome:
    """A replay the daemon runs (from the Runs page, or on a schedule): an
    ordinary recorded run whose approvals and secrets wait on the Approvals
    page for ``timeout`` seconds; ``label`` names it there until it has a run
    id (``run_id``: recorded already, so its page shows it starting).
    ``followed``: a person started it and follows it on its page, where a
    step not found may be shown (not a schedule's run: nobody watches it).
    ``record``: more of the run's record, kept in it (a queued run's job)."""
    opts = RunOptions(params=params, start_url=start_url, headless=not settings.display,
                      chromium=settings.chromium, display=settings.display, environ=settings.environ,
                      profile=profile, origin=origin, run_id=run_id, pictures=True, record=record or {},
                      # the demonstrations this daemon recorded are its owner's: shown on their runs only
                      recordings=settings.recordings_dir if runs.owner == settings.owner else None)
    approver = PageApprover(approvals, label, timeout=timeout, points=followed)
    # a worker elsewhere asks through the store, the value sealed to it (its person types it on a daemon)
    source = DeskSource(desk, "") if desk is not None else \
        StoreSource(SecretAsks(runs.db, runs.owner, runs.skills.cipher))
    secret = page_secret(settings.secret_from_env, source, lambda: approver.run_id, [slug], timeout)

    def started(run_id: str) -> None:
        approver.run_id = run_id

    rules = RuleStore(runs.db, runs.owner).tools()
    who = Who.of(settings, runs.owner)  # another person's settings hold them to public places
    return run_skill(runs, rules, slug, approver, secret, opts, who, on_start=started)
