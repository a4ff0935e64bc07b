"""A run's statuses as the surfaces act on them (runner.run says when each
is given): which runs tried, so a person's "did it work?" is open, and
which halted at a step the person can show again (a repair), and a run's
steps as they show them; and a health check's verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TRIED = ("success", "unverified", "partial", "failure", "ended")  # "ended": an agent's MCP session
REPAIRABLE = ("failure", "partial")  # halted at a step: before any write, or after some (a half change)


def feedback_refused(run: Mapping[str, Any], *, own_session: bool = False) -> str | None:
    """Why a person cannot say whether this teachd run worked, or None: the
    one rule for the Runs list, the run page, the API, the command line and
    MCP. A run still running, one stopped by a deny or a cancel, and a
    replay that ended before its first step (Chromium missing, a plan it
    could not read) showed nothing to judge. An agent's session is judged
    whatever it acted on (its skill may be one the agent followed by hand),
    and by the agent in it while it runs (``own_session``): the agent knows
    when its task is done."""
    status = str(run.get("status") or "")
    if status == "running" and own_session:
        return None
    if status == "running":
        return "this run is still running: say whether it worked once it has ended"
    if status not in TRIED:
        return ("this run was stopped (denied or cancelled) before it could show whether the skill works: "
                "there is nothing to judge")
    if run.get("slug") and not numbered(run.get("steps")):
        return "this run ended before its first step: there is nothing to judge"
    return None


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


def schedule_outcome(status: str, message: str) -> str:
    """A scheduled run's outcome as its schedule shows it: a run stopped
    because nobody approved it in time says so, apart from other stops."""
    return "not approved" if status == "aborted" and message.startswith("not approved") else status
