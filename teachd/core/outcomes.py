"""A run's statuses as the surfaces act on them (runner.run says when each
is given): which runs tried, so a person's "did it work?" is open, and
which halted at a step the person can show again (a repair), and a run's
steps as they show them; and a health check's verdict."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TRIED = ("success", "unverified", "partial", "failure", "ended")  # "ended": an agent's MCP session
REPAIRABLE = ("failure", "partial")  # halted at a step: before any write, or after some (a half change)


def numbered(steps: Any) -> list[dict[str, Any]]:
    """A run's recorded steps, each with its number ``n``: an MCP session
    recorded before its actions were numbered has them in order (its run
    page must show what the agent did, not fail on it)."""
    rows = [s for s in steps or [] if isinstance(s, dict)]
    return [s if isinstance(s.get("n"), int) else {**s, "n": i} for i, s in enumerate(rows, 1)]


FOUND = "found"  # a health check's word for a step whose target it found (teachd.schedule.health)


def health_verdict(ok: bool, statuses: Iterable[str]) -> str:
    """A health check's word for a skill, from each step's status: *healthy*
    only when every target was found. A check reaches the pages a plain
    visit opens; steps behind a sign-in or an action are not checked, and a
    skill with some of them is *unknown* — never called healthy on a few of
    its targets."""
    if not ok:
        return "needs attention"
    return "healthy" if all(status == FOUND for status in statuses) else "unknown"
