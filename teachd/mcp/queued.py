"""An agent's ``run_skill`` on the run queue, where the daemon has one.

On the team store a replay is a job that a worker (any machine) takes; the
Runs page, its API, a schedule and *Run again* all put it there through one
door (server/jobs.py ``Runs``). An agent's run_skill goes through the same
door, so the same limits hold for it (a person's lanes, a skill's own
limit, one run per click) and no Chromium of its opens on the daemon's
machine. The tool call then follows the run's record until it ends:
progress as its steps go, where it waits (its place in the queue, a
question on the Approvals page, a secret on the secret page), and a cancel
of the call cancels the run, waiting or under way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from teachd.core.errors import TeachdError, Unavailable
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore

FOLLOW_EVERY = 0.5  # seconds between looks at the run's record


class RunDoor(Protocol):
    """How runs are put on the run queue and taken off it (server/jobs.py ``Runs``)."""

    def start(self, slug: str, params: dict[str, str], start_url: str | None = None, *,
              origin: str = ..., followed: bool = ...) -> str: ...

    def cancel(self, run_id: str, by: str) -> dict[str, Any]: ...

    def waiting_for(self, run: dict[str, Any]) -> list[str]:
        """What the run (its record) waits for in the daemon's words: its place in the queue, its
        worker, a secret to type on the secret page."""
        ...


def follow(runs: RunStore, questions: ApprovalQueue, door: RunDoor, run_id: str,
           say: Callable[[float, float | None, str], None], cancelled: threading.Event,
           closing: threading.Event, approvals_page: str | None) -> dict[str, Any]:
    """The run's record once it ended — or as it stands when the call was
    ``cancelled`` (the caller cancels the run) or the daemon is ``closing``
    (the run goes on, on its worker). ``say`` gets progress: the steps done
    out of the plan's, and what the run waits for, each time it changes."""
    told = ""
    while True:
        try:
            run = runs.one(run_id)
        except Unavailable:  # the store restarts: the run goes on on its worker; look again
            cancelled.wait(FOLLOW_EVERY)
            continue
        if run["status"] != "running" or cancelled.is_set() or closing.is_set():
            return run
        steps = [s for s in run["steps"] if s.get("status") not in (None, "running")]
        total = len(run.get("plan") or []) or None  # the plan's steps, once the worker made it
        waits = [f"waiting for approval on {approvals_page or 'the Approvals page'}: step {p.get('step')}: "
                 f"{p.get('action')}" for p in questions.pending() if p["run_id"] == run_id]
        words = "; ".join(waits + door.waiting_for(run)) or run["message"] or "running"
        now = f"{len(steps)}/{total}: {words}"
        if now != told:
            say(len(steps), total, words)
            told = now
        cancelled.wait(FOLLOW_EVERY)


def replay_on_queue(door: RunDoor, runs: RunStore, questions: ApprovalQueue, slug: str,
                    params: dict[str, str], origin: str, under_way: set[str],
                    say: Callable[[float, float | None, str], None], cancelled: threading.Event,
                    closing: threading.Event, approvals_page: str | None) -> dict[str, Any]:
    """Put the replay on the queue and follow it (``follow``): its outcome,
    as a replay in the session's browser gives it. While it goes its id is
    in ``under_way`` (a cancel of the call cancels it); a call cancelled
    meanwhile cancels it here too, should the cancel have come first."""
    run_id = door.start(slug, params, origin=origin, followed=False)
    under_way.add(run_id)
    try:
        run = follow(runs, questions, door, run_id, say, cancelled, closing, approvals_page)
        if cancelled.is_set() and run["status"] == "running":
            cancel_quietly(door, run_id, "the agent's client")
    finally:
        under_way.discard(run_id)
    halted = next((s for s in run["steps"] if s.get("status") == "halted"), None)
    ended: dict[str, Any] = {k: run[k] for k in ("run_id", "status", "message", "steps", "skills", "partial")
                             if k in run}
    return {**ended, "halted_step": halted}


def cancel_quietly(door: RunDoor, run_id: str, by: str) -> None:
    """Cancel the run; one that ended meanwhile stays as it ended."""
    try:
        door.cancel(run_id, by)
    except TeachdError:
        pass
