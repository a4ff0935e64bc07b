"""The run queue on PostgreSQL: procrastinate's tables and functions in the
store's own database, two tasks — a replay (or health check), and the
retention sweep of the team's step pictures — deferred by the daemon and
taken by ``teachd worker`` (or the daemon's own slots).

Why procrastinate: it is the queue the team's PostgreSQL already gives —
``FOR UPDATE SKIP LOCKED`` so no job is taken twice, ``LISTEN/NOTIFY`` so a
worker hears a job at once, locks (our lanes), queueing locks (one firing
of a schedule however many daemons race), worker heartbeats — rather than a
loop of our own.

The daemon's side is synchronous (its request threads and scheduler);
the worker's is procrastinate's asyncio loop, each replay in a thread.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import procrastinate
import psycopg
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException

from recorder.errors import first_line
from teachd.core.errors import Unavailable
from teachd.queue.jobs import PER_PERSON, QUEUE_PREFIX, RunJob, lane, priority
from teachd.store.db import Database

log = logging.getLogger(__name__)

TASK = "teachd.replay"
RETENTION = "teachd.retention"  # the team's old step pictures purged, once a firing (its queueing lock)
_SCHEMA_LOCK = 0x7EAC4E  # advisory lock key: one process installs the queue's schema at a time

# What a worker runs for a job (teachd.queue.execute), bound when the worker starts.
Handler = Callable[[RunJob, int], None]
Purge = Callable[[float], None]  # the retention sweep: pictures of runs older than so many days


def ensure_schema(dsn: str) -> None:
    """procrastinate's tables and functions, installed once per database."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                conn.execute(procrastinate.schema.SchemaManager.get_schema())
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))


def make_app(dsn: str, *, worker: bool = False, handler: Handler | None = None,
             purge: Purge | None = None) -> procrastinate.App:
    """The queue's app: ``worker`` for ``teachd worker`` (asyncio, its
    ``handler`` runs each replay, ``purge`` the retention sweep), else the
    daemon's synchronous one."""
    connector: Any = procrastinate.PsycopgConnector(conninfo=dsn, min_size=1, max_size=4) if worker \
        else procrastinate.SyncPsycopgConnector(conninfo=dsn, min_size=1, max_size=2)
    app = procrastinate.App(connector=connector)

    @app.task(name=TASK, pass_context=True)
    def replay(context: procrastinate.JobContext, **args: Any) -> None:
        if handler is None:
            raise RuntimeError("this process takes no jobs")
        job_id = context.job.id if context.job is not None and context.job.id is not None else 0
        handler(RunJob.from_args(args), job_id)

    @app.task(name=RETENTION)
    def retention(days: float) -> None:
        if purge is None:
            raise RuntimeError("this process takes no jobs")
        purge(float(days))

    return app


@contextmanager
def _reachable() -> Iterator[None]:
    """The queue's store away, said as the store's own outage is (503, try again)."""
    try:
        yield
    except (psycopg.OperationalError, ConnectorException) as exc:
        raise Unavailable(f"the run queue is unreachable ({first_line(exc.__cause__ or exc)})",
                          retry_after=5) from None


class RunQueue:
    """The daemon's way to put runs on the queue and to see it."""

    def __init__(self, dsn: str, db: Database) -> None:
        ensure_schema(dsn)
        self.db = db
        self.app = make_app(dsn)
        self.app.open()

    def close(self) -> None:
        self.app.close()

    def submit(self, job: RunJob, queueing_lock: str | None = None,
               limited: list[str] | None = None) -> int | None:
        """The job's id once it waits in the queue; None when a job with that
        ``queueing_lock`` waits already (another daemon enqueued this firing).
        ``limited``: the skill's own lanes (``skill_lanes``), when its owner
        limited its runs at a time."""
        task = self.app.tasks[TASK]
        with _reachable():
            try:
                mine = limited[0].rsplit("#", 1)[0] if limited else f"person:{job.owner}:{job.queue}"
                busy = self._lanes(_like(mine) + "#%")
                deferrer = task.configure(queue=job.queue, lock=lane(job.owner, job.queue, busy, limited),
                                          priority=priority(self.waiting_of(job.owner)),
                                          queueing_lock=queueing_lock)
                return int(deferrer.defer(**job.as_args()))
            except AlreadyEnqueued:
                return None

    def retention(self, days: float) -> bool:
        """The retention sweep of the team's step pictures older than ``days``,
        for whichever worker comes first (it needs nothing); False when one
        waits already (every firing of every daemon folds into it)."""
        task = self.app.tasks[RETENTION]
        with _reachable():
            try:
                task.configure(queue=QUEUE_PREFIX, queueing_lock=RETENTION).defer(days=float(days))
                return True
            except AlreadyEnqueued:
                return False

    def _lanes(self, like: str) -> dict[str, int]:
        """lock → jobs waiting or running, of the locks ``like`` matches."""
        rows = self.db.query("SELECT lock, count(*) AS n FROM procrastinate_jobs"
                             " WHERE status IN ('todo', 'doing') AND lock LIKE ? GROUP BY lock", (like,))
        return {str(r["lock"]): int(r["n"]) for r in rows}

    def waiting_of(self, owner: str) -> int:
        """How many of this person's jobs wait or run, in every queue."""
        rows = self.db.query("SELECT count(*) AS n FROM procrastinate_jobs WHERE task_name = ?"
                             " AND status IN ('todo', 'doing') AND lock LIKE ?",
                             (TASK, f"person:{_like(owner)}:%"))
        return int(rows[0]["n"])

    def waiting_run(self, queueing_lock: str) -> str | None:
        """The run of the job that waits under ``queueing_lock`` (a schedule's firing), if one does."""
        rows = self.db.query("SELECT args FROM procrastinate_jobs WHERE queueing_lock = ?"
                             " AND status = 'todo'", (queueing_lock,))
        if not rows:
            return None
        return str(job_args(rows[0]["args"]).get("run_id") or "") or None

    def cancel(self, job_id: int) -> bool:
        """A job still waiting is taken off the queue (True); one running is not (False)."""
        rows = self.db.query("SELECT procrastinate_cancel_job_v1(?, false, false) AS id", (job_id,))
        return bool(rows and rows[0]["id"])

    def jobs(self) -> list[dict[str, Any]]:
        """Every job waiting or running, in the order the queue takes them."""
        rows = self.db.query("SELECT id, status, queue_name, priority, lock, args, worker_id"
                             " FROM procrastinate_jobs WHERE task_name = ? AND status IN ('todo', 'doing')"
                             " ORDER BY priority DESC, id ASC", (TASK,))
        out = []
        for r in rows:
            args = job_args(r["args"])
            out.append({"job": int(r["id"]), "status": str(r["status"]), "queue": str(r["queue_name"]),
                        "priority": int(r["priority"]), "lock": r["lock"], "run_id": args.get("run_id"),
                        "owner": args.get("owner"), "slug": args.get("slug")})
        return out

    def depth(self) -> dict[str, int]:
        """How many runs wait, and how many run."""
        jobs = self.jobs()
        return {"waiting": sum(j["status"] == "todo" for j in jobs),
                "running": sum(j["status"] == "doing" for j in jobs)}

    def job_of(self, run_id: str) -> dict[str, Any] | None:
        """The job of a run, while it waits or runs."""
        rows = self.db.query("SELECT id, status, queue_name, priority, lock FROM procrastinate_jobs"
                             " WHERE task_name = ? AND status IN ('todo', 'doing') AND args->>'run_id' = ?",
                             (TASK, run_id))
        if not rows:
            return None
        r = rows[0]
        return {"job": int(r["id"]), "status": str(r["status"]), "queue": str(r["queue_name"]),
                "priority": int(r["priority"]), "lock": r["lock"]}

    def position(self, run_id: str) -> dict[str, Any] | None:
        """Where a waiting run stands: how many jobs of its queue the queue
        takes before it (one count: its page asks at each update); for a
        skill its owner limited, also how many of the skill's runs run and
        wait before it (``skill``)."""
        mine = self.job_of(run_id)
        if mine is None or mine["status"] != "todo":
            return None
        rows = self.db.query("SELECT count(*) AS n FROM procrastinate_jobs"
                             " WHERE task_name = ? AND status = 'todo' AND queue_name = ?"
                             " AND (priority > ? OR (priority = ? AND id < ?))",
                             (TASK, mine["queue"], mine["priority"], mine["priority"], mine["job"]))
        place: dict[str, Any] = {"job": mine["job"], "ahead": int(rows[0]["n"]), "queue": mine["queue"],
                                 "per_person": PER_PERSON}
        if str(mine["lock"] or "").startswith("skill:"):  # its skill's own lanes: it waits for them too
            lanes = _like(str(mine["lock"]).rsplit("#", 1)[0]) + "#%"
            skill = self.db.query("SELECT count(*) FILTER (WHERE status = 'doing') AS running,"
                                  " count(*) FILTER (WHERE status = 'todo' AND id < ?) AS ahead"
                                  " FROM procrastinate_jobs WHERE task_name = ?"
                                  " AND status IN ('todo', 'doing') AND lock LIKE ?",
                                  (mine["job"], TASK, lanes))[0]
            place["skill"] = {"running": int(skill["running"]), "ahead": int(skill["ahead"])}
        return place


def job_args(value: Any) -> dict[str, Any]:
    """A job's arguments as procrastinate's table holds them (JSONB: a dict, or its text)."""
    return dict(value) if isinstance(value, dict) else dict(json.loads(value))


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
