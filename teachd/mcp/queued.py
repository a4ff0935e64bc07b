"""An agent's ``run_skill`` on the run queue, where the daemon has one.

On the team store a replay is a job that a worker (any machine) takes; the
Runs page, its API, a schedule and *Run again* all put it there through one
door (server/jobs.py ``Runs``). An agent's run_skill goes through the same
door, so the same limits hold for it (a person's lanes, a skill's own
limit, one run per click) and no Chromium of its opens on the daemon's
machine. The tool call then follows the run's record on the event loop
(each look a short read on a worker thread; no thread is held while it
waits) until it ends: progress as its steps go and where it waits (its
place in the queue, its worker, a question on the Approvals page, a secret
on the secret page). A call that stops — its client cancelled it, or the
daemon is stopping — cancels the run, waiting or under way: what the call
started does not go on unseen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import anyio
import anyio.to_thread

from teachd.core.errors import TeachdError, Unavailable
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore

FOLLOW_EVERY = 1.0  # seconds between looks at the run's record
Say = Callable[[float, float | None, str], None]  # progress: steps done, of how many, what it waits for


class RunDoor(Protocol):
    """How runs are put on the run queue and taken off it (server/jobs.py ``Runs``)."""

    def start(self, slug: str, params: dict[str, str], start_url: str | None = None, *,
              origin: str = ..., followed: bool = ...) -> str: ...

    def cancel(self, run_id: str, by: str) -> dict[str, Any]: ...

    def waiting_for(self, run: dict[str, Any]) -> list[str]:
        """What the run (its record) waits for in the daemon's words: its place in the queue, its
        worker, a secret to type on the secret page."""
        ...


async def replay_on_queue(door: RunDoor, runs: RunStore, questions: ApprovalQueue, slug: str,
                          params: dict[str, str], origin: str, say: Say,
                          approvals_page: str | None) -> dict[str, Any]:
    """Put the replay on the queue and follow it to its end: its outcome, as
    a replay in the session's browser gives it. Cancelled meanwhile, it
    cancels the run (one cancelled while it was being queued included)."""
    started: list[str] = []
    try:
        await anyio.to_thread.run_sync(lambda: started.append(door.start(slug, params, origin=origin,
                                                                          followed=False)))
        run = await follow(runs, questions, door, started[0], say, approvals_page)
    except anyio.get_cancelled_exc_class():
        if started:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(cancel_quietly, door, started[0], "the agent's client")
        raise
    return with_halted_step({k: run[k] for k in ("run_id", "status", "message", "steps", "skills", "partial")
                             if k in run})


def with_halted_step(outcome: dict[str, Any]) -> dict[str, Any]:
    """A replay's outcome as ``run_skill`` answers it, wherever it ran: with the step that halted, if any."""
    halted = next((s for s in outcome["steps"] if s.get("status") == "halted"), None)
    return {**outcome, "halted_step": halted}


async def follow(runs: RunStore, questions: ApprovalQueue, door: RunDoor, run_id: str, say: Say,
                 approvals_page: str | None) -> dict[str, Any]:
    """The run's record once it ended; ``say`` hears the steps done of the
    plan's and what it waits for, each time that changes. A store that is
    away (a restart) is waited out: the run goes on on its worker."""
    told = ""
    while True:
        seen = await anyio.to_thread.run_sync(_look, runs, questions, door, run_id, approvals_page)
        if seen is not None:
            run, words = seen
            if run["status"] != "running":
                return run
            done = sum(1 for s in run["steps"] if s.get("status") not in (None, "running"))
            total = len(run.get("plan") or []) or None  # the plan's steps, once the worker made it
            if f"{done}/{total}: {words}" != told:
                say(done, total, words)
                told = f"{done}/{total}: {words}"
        await anyio.sleep(FOLLOW_EVERY)


def _look(runs: RunStore, questions: ApprovalQueue, door: RunDoor, run_id: str,
          approvals_page: str | None) -> tuple[dict[str, Any], str] | None:
    """The run's record and what it waits for; None while the store is away."""
    try:
        run = runs.one(run_id)
        if run["status"] != "running":
            return run, ""
        waits = [f"waiting for approval on {approvals_page or 'the Approvals page'}: step {p.get('step')}: "
                 f"{p.get('action')}" for p in questions.pending(run_id)]
        return run, "; ".join(waits + door.waiting_for(run)) or run["message"] or "running"
    except Unavailable:
        return None


def cancel_quietly(door: RunDoor, run_id: str, by: str) -> None:
    """Cancel the run; one that ended meanwhile stays as it ended."""
    try:
        door.cancel(run_id, by)
    except TeachdError:
        pass
