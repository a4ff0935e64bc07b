"""APScheduler's job store over teachd's own ``Database``: the scheduler's
state (each job's trigger and next run time) lives in the same database as
the skills, SQLite or PostgreSQL, so a restart keeps every next run time and
a missed run is seen (and coalesced) when the daemon comes back.

A job's callable is not taken from the pickle: every job fires the service
that loaded it (``fire``), with the job's own arguments. So no module-level
registry routes a job to its daemon, and a stored job can never name some
other function to call.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from datetime import datetime
from typing import Any

from apscheduler.job import Job
from apscheduler.jobstores.base import BaseJobStore, ConflictingIdError, JobLookupError
from apscheduler.util import datetime_to_utc_timestamp, utc_timestamp_to_datetime

from teachd.store.db import Database

FIRE_REF = "teachd.store.jobstore:unbound"


def job_id(sid: int) -> str:
    return f"schedule-{sid}"


def next_runs(db: Database) -> dict[int, str | None]:
    """schedule id → its next run time (ISO; None: paused), as the scheduler's
    own state says — readable by any process, the scheduler running or not."""
    out: dict[int, str | None] = {}
    for row in db.query("SELECT id, job_state FROM scheduler_jobs WHERE id LIKE 'schedule-%'"):
        when = pickle.loads(bytes(row["job_state"]))["next_run_time"]
        out[int(str(row["id"]).split("-", 1)[1])] = when.isoformat(timespec="seconds") if when else None
    return out


def unbound(*args: Any) -> None:
    """What a stored job names as its callable; the store binds it to its service."""
    raise RuntimeError("a teachd job ran without its scheduler")


class DatabaseJobStore(BaseJobStore):
    def __init__(self, db: Database, fire: Callable[..., Any]) -> None:
        super().__init__()
        self.db, self.fire = db, fire

    # -- reads --------------------------------------------------------------
    def lookup_job(self, job_id: str) -> Job | None:
        rows = self.db.query("SELECT job_state FROM scheduler_jobs WHERE id = ?", (job_id,))
        return self._job(rows[0]["job_state"]) if rows else None

    def get_due_jobs(self, now: datetime) -> list[Job]:
        ts = datetime_to_utc_timestamp(now)
        return self._jobs("WHERE next_run_time <= ?", (ts,))

    def get_next_run_time(self) -> datetime | None:
        rows = self.db.query("SELECT next_run_time FROM scheduler_jobs WHERE next_run_time IS NOT NULL"
                             " ORDER BY next_run_time LIMIT 1")
        return utc_timestamp_to_datetime(rows[0]["next_run_time"]) if rows else None

    def get_all_jobs(self) -> list[Job]:
        jobs = self._jobs()
        self._fix_paused_jobs_sorting(jobs)
        return jobs

    # -- writes -------------------------------------------------------------
    def add_job(self, job: Job) -> None:
        with self.db.atomic() as tx:
            if tx.execute("SELECT 1 FROM scheduler_jobs WHERE id = ?", (job.id,)):
                raise ConflictingIdError(job.id)
            tx.execute("INSERT INTO scheduler_jobs (id, next_run_time, job_state) VALUES (?, ?, ?)",
                       (job.id, datetime_to_utc_timestamp(job.next_run_time), self._state(job)))

    def update_job(self, job: Job) -> None:
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM scheduler_jobs WHERE id = ?", (job.id,)):
                raise JobLookupError(job.id)
            tx.execute("UPDATE scheduler_jobs SET next_run_time = ?, job_state = ? WHERE id = ?",
                       (datetime_to_utc_timestamp(job.next_run_time), self._state(job), job.id))

    def remove_job(self, job_id: str) -> None:
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM scheduler_jobs WHERE id = ?", (job_id,)):
                raise JobLookupError(job_id)
            tx.execute("DELETE FROM scheduler_jobs WHERE id = ?", (job_id,))

    def remove_all_jobs(self) -> None:
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM scheduler_jobs")

    # -- (de)serializing ----------------------------------------------------
    @staticmethod
    def _state(job: Job) -> bytes:
        state = job.__getstate__()
        state["func"] = FIRE_REF
        return pickle.dumps(state, pickle.HIGHEST_PROTOCOL)

    def _job(self, blob: bytes) -> Job:
        state = pickle.loads(bytes(blob))  # written by this class only, in the store's own database
        state["func"] = FIRE_REF
        job = Job.__new__(Job)
        job.__setstate__(state)
        job._scheduler = self._scheduler
        job._jobstore_alias = self._alias
        job.func = self.fire
        return job

    def _jobs(self, where: str = "", params: tuple[Any, ...] = ()) -> list[Job]:
        rows = self.db.query(f"SELECT id, job_state FROM scheduler_jobs {where} ORDER BY next_run_time",
                             params)
        return [self._job(r["job_state"]) for r in rows]
