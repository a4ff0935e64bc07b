"""Runs whose worker died: a job procrastinate holds as *doing* for a
worker whose heartbeats stopped (killed, its machine lost) is ended here —
its run *interrupted at step N* with the writes it made, its questions
withdrawn, the job ended so that nothing takes it again. A run is not
re-run by itself — what it wrote may not be safe to write twice; a person
runs it again — unless its skill's owner marked it safe to repeat: then it
is queued again once, as a new run that names the one it repeats. The
daemon sweeps every few seconds (each daemon: the run is ended by one of
them, and only that one queues it again).

Dead means both heartbeats stopped: procrastinate's (which its worker stops
as it begins to drain) and teachd's own ``workers`` row, which a draining
worker keeps beating until its last run ends — a drain is not a death.

Also ended: a run left waiting whose job is gone from the queue (its
worker failed to read it while the store was away), after ``LOST_AFTER``.

And the retention sweep a dead worker held: it is safe to repeat (it only
deletes what is old enough), so it waits again for the next worker — at
most ``RETENTION_TRIES`` times in all, and not while a later firing's waits
already, which does the same; then it is ended. Not while a worker drains:
procrastinate's heartbeat stops as a drain begins, and which worker holds
the sweep is not told, so a drain is let end first.

And moved: a waiting run that types a secret waits for a worker started
as its person with their secrets while one beats, else for any worker (which
asks its person: the value sealed to that worker) — ``reroute``; so a run
queued before that worker came up, or after it went away, is not stranded.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from recorder.errors import first_line
from teachd.queue.app import RETENTION, TASK, RunQueue, job_args
from teachd.queue.execute import end_on_schedule
from teachd.queue.jobs import DESK, SECRETS, RunJob, queue_for, secrets_of
from teachd.queue.submit import live_capabilities, queue_run
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import QUEUED, RunStore
from teachd.store.schedules import ScheduleStore
from teachd.store.secret_asks import purge
from teachd.store.skills import SkillStore
from teachd.store.workers import WorkerStore

log = logging.getLogger(__name__)

SWEEP_EVERY = 3.0  # seconds between the daemon's looks for dead workers
STALLED_S = 10.0  # a worker silent this long is taken for dead (it beats every 2 s: queue.worker)
LOST_AFTER = 60.0  # seconds a waiting run may have no job before it is ended (a submit takes far less)
GAP_S = 5.0  # a look this much later than due means the store (or this daemon) was away meanwhile
RETENTION_TRIES = 3  # a retention sweep whose workers die this often is ended (the next firing makes another)


def _person(store: SkillStore, owner: str) -> SkillStore:
    return store if owner == store.owner else store.as_person(owner)


def sweep(store: SkillStore, stalled_s: float, queue: RunQueue | None = None) -> list[str]:
    """End the runs of workers silent for ``stalled_s`` seconds (queued again
    on ``queue`` where safe to repeat), and the runs whose job left the queue
    unrun; their ids."""
    rows = store.db.query(
        "SELECT j.id, j.args, j.task_name FROM procrastinate_jobs j"
        " LEFT JOIN procrastinate_workers w ON w.id = j.worker_id"
        " WHERE j.task_name IN (?, ?) AND j.status = 'doing'"
        " AND (w.id IS NULL OR w.last_heartbeat < NOW() - make_interval(secs => ?))",
        (TASK, RETENTION, stalled_s))
    workers = {w["runner"]: w for w in WorkerStore(store.db).all()}
    draining = any(w["state"] == "draining" for w in workers.values())
    ended = []
    for row in rows:
        if row["task_name"] == RETENTION:
            if not draining:
                _retention_again(store, int(row["id"]))
            continue
        args = job_args(row["args"])
        try:
            runner = RunStore(_person(store, str(args.get("owner")))).runner_of(str(args.get("run_id")))
            worker = workers.get(runner)
            if worker is not None and worker["silent_s"] < stalled_s:
                continue  # its worker still beats: draining, not dead
            if (run_id := _interrupt(store, args, runner, worker, queue)) is not None:
                ended.append(run_id)
            store.db.query("SELECT procrastinate_finish_job_v1(?, 'failed', true)", (int(row["id"]),))
        except Exception as exc:  # another daemon swept it first, or the run is gone: the next row
            log.info("the run queue's sweep left job %s (%s)", row["id"], first_line(exc))
    ended.extend(_lost(store))
    reroute(store)
    purge(store.db)  # secret questions of runs that ended, whoever asked them: none outlives its run
    return ended


def _retention_again(store: SkillStore, job_id: int) -> None:
    """A retention sweep its dead worker held waits again (procrastinate's own
    retry: the job, its attempts counted); or ends, when a later firing's
    sweep waits already (one at a time waits: its queueing lock) or it was
    tried ``RETENTION_TRIES`` times. Under the job's row lock, and only while
    it is still *doing*: two daemons sweeping at once act on it once."""
    try:
        with store.db.atomic() as tx:
            held = tx.execute("SELECT attempts FROM procrastinate_jobs WHERE id = ? AND status = 'doing'"
                              " FOR UPDATE", (job_id,))
            if not held:
                return  # another daemon's sweep came first
            waiting = tx.execute("SELECT 1 FROM procrastinate_jobs WHERE queueing_lock = ?"
                                 " AND status = 'todo'", (RETENTION,))
            if waiting or int(held[0]["attempts"]) + 1 >= RETENTION_TRIES:
                tx.execute("SELECT procrastinate_finish_job_v1(?, 'failed', true)", (job_id,))
            else:
                tx.execute("SELECT procrastinate_retry_job_v2(?, NOW(), NULL, NULL, NULL)", (job_id,))
    except Exception as exc:  # the store away: the next sweep looks again
        log.info("the retention sweep of job %s was left (%s)", job_id, first_line(exc))


def reroute(store: SkillStore) -> int:
    """Move the waiting runs that type a secret to where it can be given now; how many moved."""
    can = live_capabilities(store.db)
    rows = store.db.query("SELECT id, args FROM procrastinate_jobs WHERE task_name = ? AND status = 'todo'"
                          " AND (queue_name LIKE ? OR queue_name LIKE ?)",
                          (TASK, f"%{DESK}%", f"%{SECRETS}@%"))
    moved = 0
    for row in rows:
        args = job_args(row["args"])
        needs = [str(n) for n in args.get("needs") or []]
        mine = secrets_of(str(args.get("owner")))
        kept = [n for n in needs if n != DESK and not n.startswith(f"{SECRETS}@")]
        want = sorted([*kept, mine] if mine in can else kept)
        if want != sorted(needs):
            store.db.query("UPDATE procrastinate_jobs SET queue_name = ?,"
                           " args = jsonb_set(args, '{needs}', ?::jsonb) WHERE id = ? AND status = 'todo'"
                           " RETURNING id", (queue_for(want), json.dumps(want), int(row["id"])))
            moved += 1
    return moved


def _interrupt(store: SkillStore, args: dict[str, Any], runner: str,
               worker: dict[str, Any] | None, queue: RunQueue | None) -> str | None:
    run_id, owner = str(args.get("run_id")), str(args.get("owner"))
    person = _person(store, owner)
    runs = RunStore(person)
    name = worker["name"] if worker is not None else (runner.split(":", 1)[0] or "its worker")
    why = f"its worker ({name}) stopped answering: killed, or its machine lost"
    again = _again(person, runs, args) if queue is not None else None
    runs.cancel(run_id, "the run queue")  # a worker alive after all stops at its next step
    then = f" — run again by itself as {again.run_id} (its skill is marked safe to repeat)" if again else ""
    message = runs.abandon(run_id, why, then=then)
    if message is None:  # ended already, or by another daemon's sweep: that one queues it again
        return None
    ApprovalQueue(person).withdraw(run_id)  # its secret questions go with the sweep's ``purge``
    end_on_schedule(person, run_id, "interrupted", message)
    log.warning("run %s of %s: %s", run_id, owner, message)
    if again is not None and queue is not None:
        try:
            queue_run(queue, runs, again.slug, again.params, origin=again.origin, timeout=again.timeout,
                      start_url=again.start_url, profile=again.profile, schedule=again.schedule,
                      fired_at=again.fired_at, run_id=again.run_id, retry_of=run_id)
            ScheduleStore(person).follow(run_id, again.run_id, f"{message} — waiting in the run queue")
        except Exception as exc:  # said in the log; the interrupted run's page offers Run again
            log.warning("run %s could not be queued again (%s)", run_id, first_line(exc))
    return run_id


def _again(person: SkillStore, runs: RunStore, args: dict[str, Any]) -> RunJob | None:
    """The run to queue again by itself in place of the interrupted one: a
    replay (not a health check) of a skill its owner marked safe to repeat
    (and that its person may still load), itself not a repeat (once, never a
    loop), that nobody cancelled, whose record still says what it was asked
    to do; else None — the run is ended all the same."""
    run_id = str(args.get("run_id"))
    try:
        detail = runs.detail_of(run_id)
        if detail.get("job") is None or runs.cancelled_by(run_id) is not None:
            return None
        job = RunJob.from_args(args, detail["job"])
        if job.kind != "replay" or job.retry_of or not person.repeatable(job.slug):
            return None
        person.load(job.slug)  # deleted, unshared or disabled since: not run again
    except Exception as exc:  # noqa: BLE001 — whatever stops a repeat, the interrupted run still ends
        log.info("run %s is not run again by itself (%s)", run_id, first_line(exc))
        return None
    return replace(job, run_id=runs.new_run_id(), retry_of=run_id)


def _lost(store: SkillStore) -> list[str]:
    """Runs still waiting whose job no longer waits or runs in the queue."""
    cutoff = (datetime.now(UTC) - timedelta(seconds=LOST_AFTER)).isoformat(timespec="seconds")
    rows = store.db.query(
        "SELECT r.id, r.owner FROM runs r WHERE r.status = 'running' AND r.runner = ? AND r.started_at < ?"
        " AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j WHERE j.task_name = ?"
        " AND j.status IN ('todo', 'doing') AND j.args->>'run_id' = r.id)", (QUEUED, cutoff, TASK))
    ended = []
    for row in rows:
        try:
            person, run_id = _person(store, str(row["owner"])), str(row["id"])
            message = "its job left the run queue without running it (its worker could not read it)"
            RunStore(person).end(run_id, "failure", message)
            end_on_schedule(person, run_id, "failure", message)
            ended.append(run_id)
        except Exception as exc:  # the next sweep tries again
            log.info("the run queue's sweep left run %s (%s)", row["id"], first_line(exc))
    return ended


class Sweeper:
    """The daemon's thread that sweeps every ``SWEEP_EVERY`` seconds.

    It judges no worker dead before it has itself reached the store without
    a gap for ``stalled_s``: a worker's heartbeats stop when PostgreSQL is
    away (restarted, a network cut) as surely as when the worker dies, and
    a sweep right after the store came back would take every worker for
    dead — ending runs still under way, and queueing the repeatable ones a
    second time while the first still runs. So after its own start, after
    a failed look and after a look that came late (a query that hung), it
    waits until the workers have had time to beat again."""

    def __init__(self, store: SkillStore, queue: RunQueue | None = None,
                 stalled_s: float = STALLED_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.store, self.queue, self.stalled_s, self._clock = store, queue, stalled_s, clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="teachd-queue-sweep", daemon=True)
        self._reached_since = clock()  # since when the store answered every look without a gap
        self._reached_at = self._reached_since  # its last answer

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _keep(self) -> None:
        while not self._stop.wait(SWEEP_EVERY):
            self.once()

    def once(self) -> list[str]:
        """One look: the runs it ended (none while the store is newly reached)."""
        try:
            self.store.db.query("SELECT 1")
            now = self._clock()
            if now - self._reached_at > SWEEP_EVERY + GAP_S:  # this look came late: the store was away
                self._reached_since = now
            self._reached_at = now
            if now - self._reached_since < self.stalled_s + SWEEP_EVERY:
                return []  # the workers' heartbeats may not have come back yet
            ended = sweep(self.store, self.stalled_s, self.queue)
            self._reached_at = self._clock()
            return ended
        except Exception as exc:  # the store away for a moment: the next look tells
            log.warning("the run queue's sweep failed (%s)", first_line(exc))
            return []
