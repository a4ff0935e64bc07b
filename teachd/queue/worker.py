"""``teachd worker``: a process on any machine that takes runs from the
queue — the store's DSN (``TEACHD_DB_URL``) and the deployment key
(``TEACHD_KEY``) are all it needs. ``slots`` replays at a time, each a
Chromium; it listens only on the queues of what it can do (``can``: a
desktop, tags), so a desktop skill's run never reaches a worker without a
display. Its heartbeat (procrastinate's, and the row the Runs page shows)
tells the daemon it is alive; a worker that stops beating has its runs
ended as *interrupted* by the daemon (``sweep.py``), never run again by
itself. SIGTERM (or Ctrl+C) drains it: no new job, the runs under way
finish, then it leaves.

A daemon on the team store takes runs too, as a worker in a thread of its
own (``teachd serve --slots``), so a team needs no worker to start with,
and its runs ask secrets on that daemon's secret page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from typing import Any

from recorder.errors import first_line
from teachd.config import Settings
from teachd.core.errors import BadInput
from teachd.queue.app import Handler, ensure_schema, make_app
from teachd.queue.jobs import DESK, DESKTOP, SECRETS, RunJob, queues_for, secrets_of
from teachd.queue.sweep import STALLED_S
from teachd.store.processes import runner_id
from teachd.store.runs import purge_pictures
from teachd.store.workers import WorkerStore

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0  # seconds between heartbeats
RETRY_S = 5.0  # seconds before a worker whose queue went away looks again


class _OneLine(logging.Filter):
    """procrastinate's own log, as one line a record: a store that restarts
    is a passing state to say, not a traceback in the daemon's output."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            cause = record.exc_info[1].__cause__ or record.exc_info[1]
            record.msg, record.args = f"{record.getMessage()} ({first_line(cause)})", ()
            record.exc_info, record.exc_text = None, None
        return True


def _quiet_procrastinate() -> None:
    logger = logging.getLogger("procrastinate")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("teachd: run queue: %(message)s"))
        handler.addFilter(_OneLine())
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
MEMORY_PER_SLOT = 1.5 * 1024 ** 3  # bytes a replay's Chromium may take


def default_slots() -> int:
    """Replays at a time on this machine: one per core, and no more than the memory holds."""
    cores = os.cpu_count() or 1
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return max(1, cores)
    return max(1, min(cores, int(memory // MEMORY_PER_SLOT)))


def capabilities(settings: Settings, can: list[str], desk: bool = False) -> list[str]:
    """What this worker says it can run: ``desktop`` only where a display is
    set; ``secrets`` (its person's runs that type one) only where TEACHD_OWNER
    says who it was started as and their TEACHD_SECRET_* are set; a secret
    page (``desk``) only in a daemon."""
    out = set()
    for c in sorted(set(can)):
        if c not in (DESKTOP, SECRETS) and not (c.startswith("tag:") and len(c) > 4):
            raise BadInput(f"a worker can run {DESKTOP!r}, {SECRETS!r} or 'tag:NAME', not {c!r}")
        if c == SECRETS:
            if not settings.environ.get("TEACHD_OWNER") or \
                    not any(k.startswith("TEACHD_SECRET_") for k in settings.environ):
                raise BadInput("--can secrets takes the runs of the person this worker is started as: set "
                               "TEACHD_OWNER to that person and their TEACHD_SECRET_<NAME> (anyone else's "
                               "run asks on the daemon's secret page)")
            c = secrets_of(settings.owner)
        out.add(c)
    if DESKTOP in out and not settings.display:
        raise BadInput("--can desktop needs a display: set DISPLAY for the worker")
    if desk:
        out.add(DESK)
    return sorted(out)


class QueueWorker:
    def __init__(self, settings: Settings, db: Any, execute: Handler, slots: int, can: list[str],
                 name: str | None = None, say: Callable[[str], None] = print, desk: bool = False) -> None:
        if not settings.db_url:
            raise BadInput("teachd worker takes runs from the team store's queue: set TEACHD_DB_URL "
                           "(postgresql://…) and TEACHD_KEY as the daemon has them")
        if slots < 1:
            raise BadInput("--slots must be at least 1")
        self.settings, self.slots, self.can = settings, slots, capabilities(settings, can, desk)
        self.db, self.workers, self.execute = db, WorkerStore(db), execute
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.say = say
        self.running: dict[int, str] = {}  # job id → run id
        self.draining = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    def serve(self) -> None:
        """Take runs until drained (``stop``, SIGTERM or Ctrl+C in the main thread)."""
        dsn = self.settings.db_url or ""
        _quiet_procrastinate()
        ensure_schema(dsn)
        queues = queues_for(self.can)
        app = make_app(dsn, worker=True, handler=self._take, purge=self._purge)
        self.workers.register(self.name, socket.gethostname(), runner_id(), self.slots, self.can)
        stop_beating = threading.Event()
        beat = threading.Thread(target=self._beat, args=(stop_beating,), name="teachd-worker-heartbeat",
                                daemon=True)
        beat.start()
        self.say(f"teachd worker {self.name}: {self.slots} slot(s), taking runs from {', '.join(queues)}")
        try:
            while not self.draining.is_set():
                try:
                    asyncio.run(self._work(app, queues))
                except Exception as exc:  # the store away (PostgreSQL restarting): one line, then again
                    self.say(f"teachd worker {self.name}: the run queue is unreachable ({first_line(exc)}); "
                             f"trying again in {RETRY_S:.0f} s")
                self.draining.wait(RETRY_S)
        finally:
            stop_beating.set()
            beat.join(5)
            with contextlib.suppress(Exception):  # the store away: the row shows the worker silent
                self.workers.gone(self.name)
            self.say(f"teachd worker {self.name}: stopped")

    def stop(self) -> None:
        """Drain: no new run; the runs under way finish, then ``serve`` returns."""
        if self.draining.is_set():
            return
        self.draining.set()
        self.say(f"teachd worker {self.name}: draining — no new run; "
                 f"{len(self.running)} under way finish first")
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop ended already (the store was away)
                loop.call_soon_threadsafe(task.cancel)  # procrastinate stops fetching, waits for the runs

    def _take(self, job: RunJob, job_id: int) -> None:
        self.running[job_id] = job.run_id
        self.say(f"teachd worker {self.name}: run {job.run_id} ({job.slug}, of {job.owner})")
        try:
            self.execute(job, job_id)
        finally:
            self.running.pop(job_id, None)

    def _purge(self, days: float) -> None:
        """The retention sweep: every person's step pictures older than ``days``."""
        n = purge_pictures(self.db, days)
        self.say(f"teachd worker {self.name}: retention: purged the step pictures of {n} old run(s)")

    async def _work(self, app: Any, queues: list[str]) -> None:
        self._loop = asyncio.get_running_loop()
        async with app.open_async():
            self._task = asyncio.create_task(app.run_worker_async(
                queues=queues, name=self.name, concurrency=self.slots, install_signal_handlers=False,
                update_heartbeat_interval=HEARTBEAT_S, stalled_worker_timeout=STALLED_S,
                delete_jobs="always"))  # a job's record is the run's: the queue keeps none once done
            if threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.add_signal_handler(sig, self.stop)
            if self.draining.is_set():  # stopped before it began
                self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _beat(self, stop: threading.Event) -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                self.workers.beat(self.name, sorted(self.running.values()),
                                  "draining" if self.draining.is_set() else "taking runs")
            except Exception as exc:  # the store away for a moment: the next beat tells
                log.warning("worker %s: heartbeat not written (%s)", self.name, first_line(exc))
