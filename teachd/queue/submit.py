"""Putting a run on the queue, the one way the daemon's Runs page, its API
and a schedule's firing do it: the run's record first (queued, so its page
shows it waiting from the first moment; what it was asked to do sealed in
it), then the job (ids only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from teachd.queue.app import RunQueue
from teachd.queue.jobs import RunJob, needs_of, skill_lanes
from teachd.store.db import Database
from teachd.store.runs import RunStore
from teachd.store.workers import WorkerStore

WAITING = "waiting in the run queue"


def live_capabilities(db: Database) -> set[str]:
    """What the workers that beat lately can do, together."""
    return {c for w in WorkerStore(db).live() for c in w["can"]}


def queue_run(queue: RunQueue, runs: RunStore, slug: str, params: dict[str, str], *, origin: str,
              timeout: float, start_url: str | None = None, followed: bool = False,
              profile: list[str] | None = None, schedule: int | None = None, fired_at: str | None = None,
              queueing_lock: str | None = None, kind: str = "replay", run_id: str | None = None,
              retry_of: str | None = None) -> str | None:
    """The run's id (``run_id``, else a new one), waiting in the queue; None
    when ``queueing_lock`` says this very job waits already (a schedule's
    firing enqueued by another daemon). ``kind`` "check": a health check (its
    record names the skill checked, not a replay of it: nothing to run again,
    nothing acted on to judge). ``retry_of``: the interrupted run it repeats."""
    skill = runs.skills.load(slug)
    run_id = run_id or runs.new_run_id()
    needs = () if kind == "check" else needs_of(skill.current.files, runs.owner, live_capabilities(runs.db))
    job = RunJob(run_id, runs.owner, slug, dict(params), start_url, origin, timeout, followed, profile,
                 schedule, fired_at, needs, kind, retry_of)
    base: dict[str, Any] = {"checked": slug, "origin": origin} if kind == "check" else \
        {"slug": slug, "origin": origin, "used": [slug], "params": params, "start_url": start_url}
    runs.start(run_id, {}, queued=True)
    runs.progress(run_id, {**base, "message": WAITING, **job.record()})
    limited = skill_lanes(skill.owner, slug, skill.at_once) if skill.at_once and kind == "replay" else None
    try:
        job_id = queue.submit(job, queueing_lock, limited)
    except Exception:
        runs.discard(run_id)
        raise
    if job_id is None:
        runs.discard(run_id)
        return None
    return run_id


def queue_firing(queue: RunQueue, runs: RunStore, view: Mapping[str, Any], fired_at: str,
                 profile: list[str] | None) -> tuple[str, str | None, str]:
    """A schedule's firing on the queue: (outcome, run id, note) as the
    schedule records it until the run ends. One firing waits at a time,
    however many daemons fire it (the schedule's queueing lock): a firing
    that comes while the last still waits is folded into it."""
    sid = int(view["id"])
    check = view["kind"] == "check"
    lock = f"schedule-{sid}"
    run_id = queue_run(queue, runs, str(view["slug"]), dict(view["params"]),
                       origin=f"health check (schedule {sid})" if check else f"schedule {sid}",
                       timeout=float(view["timeout_s"]), start_url=view.get("start_url"), profile=profile,
                       schedule=sid, fired_at=fired_at, queueing_lock=lock,
                       kind="check" if check else "replay")
    if run_id is None:
        return ("queued", queue.waiting_run(lock) or view.get("last_run_id"),
                "the last firing still waits in the run queue: this one is folded into it")
    return "queued", run_id, WAITING
