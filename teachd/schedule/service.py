"""The daemon's scheduler: started and stopped by ``teachd serve``'s
lifespan, never by the CLI or ``teachd mcp``.

- One per deployment. The daemon that holds the store's ``scheduler``
  leader lock (an flock beside SQLite; a PostgreSQL advisory lock) runs the
  jobs; another one waits and takes over when the holder dies.
- Jobs live in the store's database (``DatabaseJobStore``): a restart keeps
  each next run time; runs missed while no daemon was up are coalesced into
  one, which says how many it stands for.
- The schedules table is the truth; the leader reconciles its jobs with it
  every few seconds, so ``teachd schedule add`` from another process takes
  effect without a restart.
- A scheduled run is an ordinary run (Runs page, chips): its approvals and
  secrets wait on the Approvals page until the schedule's timeout.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from teachd.config import Settings
from teachd.core.errors import NotFound, Unavailable, as_teachd_error
from teachd.core.outcomes import schedule_outcome
from teachd.core.schedules import Spec, missed_note, trigger
from teachd.runner.run import RunOutcome
from teachd.runner.secret_desk import SecretDesk, person_settings
from teachd.schedule.health import health_check
from teachd.store.approvals import ApprovalQueue
from teachd.store.jobstore import FIRE_REF, DatabaseJobStore, job_id
from teachd.store.locks import FileLock
from teachd.store.profiles import resolve_profile
from teachd.store.runs import RunStore, purge_pictures
from teachd.store.schedules import ScheduleStore, spec_of
from teachd.store.skills import SkillStore
from teachd.teach.process import TEACH_LOCK
from teachd.teach.retention import purge_recordings

log = logging.getLogger(__name__)

SYNC_EVERY = 5.0  # seconds between the leader's looks at the schedules table (and a follower's at the lock)
RETENTION_JOB = "retention"
RETENTION_CRON = {"hour": 3, "minute": 17}  # daily, at a quiet hour

# How a scheduled run is replayed: ``teachd.server.jobs.run_on_the_page`` in the daemon — the one
# way a run waits on the Approvals page. It is handed in, so the scheduler sits below the surfaces.
PageRunner = Callable[..., RunOutcome]


class ScheduleService:
    def __init__(self, store: SkillStore, settings: Settings, approvals: ApprovalQueue, desk: SecretDesk,
                 run_page: PageRunner, timezone: Any = None) -> None:
        self.store, self.settings, self.approvals, self.desk = store, settings, approvals, desk
        self.run_page = run_page
        self.leader = store.db.leader("scheduler")
        self.jobs = DatabaseJobStore(store.db, self.fire)
        self.scheduler = BackgroundScheduler(
            jobstores={"default": self.jobs}, executors={"default": {"type": "threadpool", "max_workers": 4}},
            # Two instances: one running, one waiting its turn (``fire`` runs a schedule one at a
            # time). With one, APScheduler drops a firing that comes while the last run winds
            # down: a "Run now" answered 200, then never run.
            job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 2},
            timezone=timezone)
        self.leading = False
        # Where another person's scheduled run asks (their Approvals page); the daemon sets it.
        self.asker: Callable[[str], tuple[ApprovalQueue, SecretDesk]] | None = None
        # On the team store, how a firing goes on the run queue (teachd.queue, above this layer: the
        # daemon sets it): (the person's runs, the schedule, when it fired, its profile's skills) →
        # (outcome, run id, note) until a worker records the run's own.
        self.enqueue: Callable[[RunStore, dict[str, Any], str, list[str] | None],
                               tuple[str, str | None, str] | None] | None = None
        # On the team store, the sweep of old step pictures as a job on the run queue (the daemon
        # sets it): the pictures are the team's, in the shared database, purged by whichever
        # worker takes it; the recordings are this machine's own files, purged here.
        self.queue_retention: Callable[[float], bool] | None = None
        self._stop, self._nudge = threading.Event(), threading.Event()
        self._watch: threading.Thread | None = None
        self._turns: dict[tuple[Any, ...], threading.Lock] = {}  # a job's firings, one after the other
        self._turns_lock = threading.Lock()

    # -- life ---------------------------------------------------------------
    def start(self) -> None:
        self._watch = threading.Thread(target=self._keep, name="teachd-scheduler-watch", daemon=True)
        self._watch.start()

    def stop(self) -> None:
        self._stop.set()
        self._nudge.set()
        if self._watch is not None:
            self._watch.join(10)
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        self.leader.release()
        self.leading = False

    def sync_soon(self) -> None:
        """A schedule changed here: the leader looks now rather than at its next look."""
        self._nudge.set()

    def _keep(self) -> None:
        """Lead when the lock is free; while leading, keep the jobs in step with the schedules."""
        while not self._stop.is_set():
            try:
                if not self.leading and self.leader.try_acquire():
                    if not self.scheduler.running:  # a first sync that failed is tried again
                        self.scheduler.start()
                    self.sync()  # the jobs exist before this daemon says it leads (Run now needs them)
                    self.leading = True
                    log.info("this daemon runs the scheduled jobs")
                elif self.leading:
                    self.sync()
            except Exception as exc:  # a passing database error: try again at the next look
                away = exc if isinstance(exc, Unavailable) else as_teachd_error(exc)
                if isinstance(away, Unavailable):  # the store is away (PostgreSQL restarting): one line
                    log.warning("the scheduler could not look at its schedules: %s", away)
                else:
                    log.exception("the scheduler could not look at its schedules")
            self._nudge.wait(SYNC_EVERY)
            self._nudge.clear()

    # -- jobs ---------------------------------------------------------------
    def sync(self) -> None:
        """Make the jobs say what the schedules say: add the new ones (a job's
        next run time, once set, is kept), pause or resume, remove the gone."""
        wanted: dict[str, dict[str, Any]] = {}
        for owner in self._owners():
            for view in ScheduleStore(self._store(owner)).all():
                wanted[job_id(view["id"])] = view
        have = {job.id: job for job in self.scheduler.get_jobs()}
        for jid, view in wanted.items():
            job = have.get(jid)
            spec = spec_of(view)
            if job is None:
                self.scheduler.add_job(FIRE_REF, trigger(spec, tz=self.scheduler.timezone), id=jid,
                                       args=("schedule", view["id"]), name=f"{spec.kind} {spec.slug}")
                job = self.scheduler.get_job(jid)
            if view["paused"] and job is not None and job.next_run_time is not None:
                self.scheduler.pause_job(jid)
            elif not view["paused"] and job is not None and job.next_run_time is None:
                self.scheduler.resume_job(jid)
        for jid in have:
            if jid.startswith("schedule-") and jid not in wanted:
                self.scheduler.remove_job(jid)
        if RETENTION_JOB not in have:
            self.scheduler.add_job(FIRE_REF, CronTrigger(**RETENTION_CRON, timezone=self.scheduler.timezone),
                                   id=RETENTION_JOB, args=("retention",), name="purge old recordings")
        self.scheduler.wakeup()

    def run_now(self, sid: int) -> None:
        """Fire a schedule at once (its regular times stay as they were)."""
        job = self.jobs.lookup_job(job_id(sid))
        if job is None:
            raise NotFound(f"schedule {sid} has no job yet: is teachd serve running?")
        job.next_run_time = datetime.now(UTC)  # in the store: whichever daemon leads runs it
        self.jobs.update_job(job)
        if self.scheduler.running:
            self.scheduler.wakeup()

    def fire(self, kind: str, *args: Any) -> None:
        """Every job lands here (the job store binds it): one schedule, or
        retention. A firing that comes while the same job runs waits for its end."""
        with self._turns_lock:
            turn = self._turns.setdefault((kind, *args), threading.Lock())
        with turn:
            try:
                if kind == "schedule":
                    self._fire_schedule(int(args[0]))
                elif kind == "retention":
                    self.purge()
            except Exception:
                log.exception("a scheduled job failed")

    # -- what the jobs do ---------------------------------------------------
    def purge(self) -> list[str]:
        holder = FileLock(self.settings.home / TEACH_LOCK).holder() or {}
        writing = str(holder.get("recording_dir") or "")
        keep = {writing.rstrip("/").rsplit("/", 1)[-1]} if writing else set()
        removed = purge_recordings(self.settings.recordings_dir, self.settings.retention_days, keep=keep)
        if removed:
            log.info("purged %d old recording(s)", len(removed))
        if self.queue_retention is not None:
            if self.queue_retention(self.settings.retention_days):
                log.info("the sweep of old step pictures is on the run queue")
            return removed
        pictures = purge_pictures(self.store.db, self.settings.retention_days)
        if pictures:
            log.info("purged the step pictures of %d old run(s)", pictures)
        return removed

    def _fire_schedule(self, sid: int) -> None:
        rows = self.store.db.query("SELECT owner FROM schedules WHERE id = ?", (sid,))
        if not rows:
            try:
                self.scheduler.remove_job(job_id(sid))
            except JobLookupError:
                pass
            return
        schedules = ScheduleStore(self._store(str(rows[0]["owner"])))
        view = schedules.get(sid)
        spec = spec_of(view)
        now = datetime.now(self.scheduler.timezone)
        note = self._missed_note(spec, view, now)
        try:
            queued = self.enqueue(RunStore(schedules.skills), view, now.isoformat(timespec="seconds"),
                                  resolve_profile(self.settings, schedules.skills, view["profile"])) \
                if self.enqueue is not None else None
            if queued is not None:  # a worker runs it, and records its outcome here when it ends
                outcome, run_id, detail = queued
            elif spec.kind == "check":
                outcome, run_id, detail = self._check(schedules, spec.slug, f"health check (schedule {sid})")
            else:
                outcome, run_id, detail = self._run(schedules, view)
        except Exception as exc:  # the skill was deleted or disabled, Chromium is missing…: said, not lost
            mapped = as_teachd_error(exc) or exc
            outcome, run_id, detail = "failed", None, str(mapped)
        schedules.record(sid, now.isoformat(timespec="seconds"), run_id, outcome,
                         "; ".join(x for x in (note, detail) if x))

    def _missed_note(self, spec: Spec, view: dict[str, Any], now: datetime) -> str:
        since = datetime.fromisoformat(view["last_at"] or view["created_at"])
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
        return missed_note(trigger(spec, start=since, tz=self.scheduler.timezone), since, now)

    def _run(self, schedules: ScheduleStore, view: dict[str, Any]) -> tuple[str, str | None, str]:
        store = schedules.skills
        profile = resolve_profile(self.settings, store, view["profile"])
        approvals, desk, settings = self.approvals, self.desk, self.settings
        if store.owner != self.store.owner:  # another person's run: their page asks; the env is the owner's
            settings = person_settings(self.settings)
            if self.asker is None:
                raise NotFound(f"no secret page for {store.owner}'s scheduled run")
            approvals, desk = self.asker(store.owner)
        outcome = self.run_page(RunStore(store), settings, approvals, desk, view["slug"],
                                dict(view["params"]), label=f"schedule-{view['id']}",
                                origin=f"schedule {view['id']}", timeout=float(view["timeout_s"]),
                                profile=profile,
                                start_url=view.get("start_url"))
        return schedule_outcome(outcome.status, outcome.message), outcome.run_id, outcome.message

    def _check(self, schedules: ScheduleStore, slug: str, origin: str) -> tuple[str, str | None, str]:
        store = schedules.skills
        s = self.settings if store.owner == self.store.owner else person_settings(self.settings)
        return health_check(schedules, s, slug, origin)

    def _owners(self) -> list[str]:
        rows = self.store.db.query("SELECT DISTINCT owner FROM schedules ORDER BY owner")
        return [str(r["owner"]) for r in rows]

    def _store(self, owner: str) -> SkillStore:
        if owner == self.store.owner:
            return self.store
        return self.store.as_person(owner)
