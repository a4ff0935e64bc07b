"""What a worker does with a job: read what the run was asked to do from
its sealed record, take it (unless it was cancelled while it waited, or its
person was removed), replay it as the person's run — its questions on their
Approvals page, its pictures in its record — or check the skill's health,
and, for a schedule's firing, record the outcome on the schedule. Whatever
goes wrong, the run ends saying so: never left waiting for ever."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from recorder.errors import first_line
from teachd.config import Settings
from teachd.core.errors import Unavailable, as_teachd_error
from teachd.core.outcomes import schedule_outcome
from teachd.queue.jobs import RunJob
from teachd.runner.on_page import run_on_the_page
from teachd.runner.secret_desk import SecretDesk, person_settings
from teachd.schedule.health import health_check
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore
from teachd.store.schedules import ScheduleStore
from teachd.store.skills import SkillStore
from teachd.store.users import UserStore

log = logging.getLogger(__name__)

END_PATIENCE = 600.0  # seconds a worker waits for the store to come back to record a failed run's end
END_RETRY_S = 2.0

# Where a person's run asks, in a daemon that takes runs itself: that person's Approvals page and
# secret desk (the daemon's memory: a secret typed there is never queued, never stored).
Asking = Callable[[str], tuple[ApprovalQueue, SecretDesk]]


def end_on_schedule(person: SkillStore, run_id: str, status: str, message: str) -> None:
    """A queued run ended: its outcome on the schedule whose last firing it is, if one is."""
    ScheduleStore(person).record_end(run_id, schedule_outcome(status, message), message)


class Executor:
    """``asking``: in a daemon, where each person's run asks (its secret
    desk included); a worker elsewhere asks through the store only.
    ``own``: the person this process was started as, whose settings it holds
    (their ``TEACHD_SECRET_*``, their machine's own network): only their runs
    get them; everyone else's run is held to public places, with no secret
    of this machine's (None: nobody's — a worker started without an
    explicit TEACHD_OWNER)."""

    def __init__(self, store: SkillStore, settings: Settings, asking: Asking | None = None,
                 own: str | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.store, self.settings, self.asking, self.own = store, settings, asking, own
        self._clock, self._sleep = clock, sleep

    def __call__(self, queued: RunJob, job_id: int) -> None:
        person = self.store if queued.owner == self.store.owner else self.store.as_person(queued.owner)
        runs = RunStore(person)
        job = queued
        try:
            job = RunJob.from_args(queued.as_args(), runs.detail_of(queued.run_id).get("job") or {})
            self._run(job, job_id, person, runs)
        except Exception as exc:  # noqa: BLE001 — the run's record says what went wrong, and the job ends
            message = f"the run could not run: {first_line(as_teachd_error(exc) or exc)}"
            log.warning("job %s, run %s: %s", job_id, job.run_id, message)
            self._end_when_reachable(person, runs, job.run_id, message)

    def _end_when_reachable(self, person: SkillStore, runs: RunStore, run_id: str, message: str) -> None:
        """End the run with ``message``, waiting out a store that is away (a
        restart, a network cut: the likely reason the run failed at all). Its
        job stays taken meanwhile and this worker keeps beating, so no sweep
        ends it for this worker, and no run is left "running" for ever."""
        deadline = self._clock() + END_PATIENCE
        while True:
            try:
                if runs.one(run_id)["status"] == "running":
                    runs.end(run_id, "failure", message)
                ended = runs.one(run_id)
                end_on_schedule(person, run_id, ended["status"], ended["message"] or message)
                return
            except Unavailable:
                if self._clock() > deadline:
                    log.warning("run %s: the store stayed away; its end is not recorded (%s)",
                                run_id, message)
                    return
                self._sleep(END_RETRY_S)
            except Exception as exc:  # noqa: BLE001 — ended meanwhile (a cancel, the sweep): nothing to add
                log.info("run %s: its end was not recorded (%s)", run_id, first_line(exc))
                return

    def _run(self, job: RunJob, job_id: int, person: SkillStore, runs: RunStore) -> None:
        if not UserStore(self.store.db).known(job.owner):
            message = f"not run: {job.owner} is no longer a person of this store"
            runs.end(job.run_id, "aborted", message)
            end_on_schedule(person, job.run_id, "aborted", message)
            return
        if not runs.take(job.run_id):
            run = runs.one(job.run_id)
            if run["status"] == "running" and run.get("cancelled_by"):  # cancelled while it waited
                message = f"cancelled by {run['cancelled_by']} while it waited in the run queue"
                runs.end(job.run_id, "aborted", message)
                end_on_schedule(person, job.run_id, "aborted", message)
            log.info("job %s: run %s was not waiting any more", job_id, job.run_id)
            return
        settings = self.settings if self.own is not None and job.owner == self.own \
            else person_settings(self.settings)
        if job.kind == "check":
            verdict, _run_id, summary = health_check(ScheduleStore(person), settings, job.slug, job.origin,
                                                     run_id=job.run_id)
            end_on_schedule(person, job.run_id, verdict, summary)
            return
        approvals, desk = self.asking(job.owner) if self.asking is not None \
            else (ApprovalQueue(person, job.timeout), None)
        outcome = run_on_the_page(runs, settings, approvals, desk, job.slug, dict(job.params),
                                  label=job.run_id, origin=job.origin, timeout=job.timeout,
                                  start_url=job.start_url, profile=job.profile, run_id=job.run_id,
                                  followed=job.followed, record=job.record())
        end_on_schedule(person, job.run_id, outcome.status, outcome.message)
