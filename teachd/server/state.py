"""What the daemon holds while it runs: the store and the things that run in
the background, started and stopped by the app's lifespan."""

from __future__ import annotations

import functools
import logging
import os
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teachd.config import Settings
from teachd.queue.app import RunQueue
from teachd.queue.execute import Executor
from teachd.queue.jobs import DESKTOP, queues_for, starts_in
from teachd.queue.submit import queue_firing
from teachd.queue.sweep import Sweeper
from teachd.queue.worker import QueueWorker, default_slots
from teachd.runner.on_page import run_on_the_page
from teachd.runner.secret_desk import SecretDesk, person_settings
from teachd.schedule.service import ScheduleService
from teachd.server.jobs import Runs, Teaching
from teachd.server.security import Sessions
from teachd.store import SkillStore, open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.orphans import end_orphans
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from teachd.store.secret_asks import SecretAsks
from teachd.store.users import UserStore
from teachd.store.workers import WorkerStore
from teachd.teach.process import CONTROL_FILE

log = logging.getLogger("teachd.server")
TYPICAL_FOR = 30.0  # seconds a person's typical run time is kept (Daemon._typical_run_s)

if TYPE_CHECKING:
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import Services
    from teachd.remote.egress import Egress


@dataclass
class Daemon:
    settings: Settings
    store: SkillStore
    runs: RunStore
    rules: RuleStore
    approvals: ApprovalQueue
    jobs: Runs
    teaching: Teaching
    sessions: Sessions
    login_code: str  # the one-time code in the printed login link
    secrets: SecretDesk
    schedules: ScheduleService
    people: dict[str, Daemon] = field(default_factory=dict)  # each person's view, shared by every view
    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: RunQueue | None = None  # the team store's run queue (PostgreSQL); None: runs in this process
    sweeper: Sweeper | None = None
    worker: QueueWorker | None = None  # this daemon's own slots on the run queue
    worker_thread: threading.Thread | None = None
    typical: dict[str, tuple[float, float | None]] = field(default_factory=dict)  # person → (when, run s)

    @classmethod
    def open(cls, settings: Settings, sessions: Sessions, login_code: str) -> Daemon:
        store = open_store(settings)
        end_orphans(store)  # runs a killed daemon left "running": interrupted where they stopped
        runs = RunStore(store)
        sessions.who = UserStore(store.db).who  # a person's own token is theirs, checked per request
        queue = RunQueue(settings.db_url, store.db) if settings.db_url else None
        approvals, desk = ApprovalQueue(store), SecretDesk().for_person(store.owner, _asks(store, queue))
        daemon = cls(settings, store, runs, RuleStore(store.db, store.owner), approvals,
                     Runs(runs, settings, approvals, desk, queue=queue),
                     Teaching(dict(settings.environ), settings.home / CONTROL_FILE, store.owner), sessions,
                     login_code,
                     desk, ScheduleService(store, settings, approvals, desk, run_on_the_page), queue=queue)
        daemon.schedules.asker = lambda user: daemon.as_user(user).asking()
        if queue is not None:
            daemon.schedules.enqueue = functools.partial(queue_firing, queue)
            daemon.schedules.queue_retention = queue.retention
            daemon.sweeper = Sweeper(store, queue)
            daemon.sweeper.start()
            daemon.take_runs(settings.slots if settings.slots is not None else default_slots())
        return daemon

    def stop_taking(self) -> None:
        """Take no new run from the queue (those under way go on): first, as the daemon stops."""
        if self.worker is not None:
            self.worker.stop()

    def take_runs(self, slots: int) -> None:
        """This daemon takes ``slots`` runs at a time from the run queue, as a
        worker does; each person's run asks on their own page here."""
        if slots < 1:
            return
        execute = Executor(self.store, self.settings, lambda owner: self.as_user(owner).asking(),
                           own=self.store.owner)
        can = [DESKTOP] if self.settings.display else []  # and its secret page (desk)
        self.worker = QueueWorker(self.settings, self.store.db, execute, slots, can, desk=True,
                                  name=f"daemon-{socket.gethostname()}-{os.getpid()}", say=log.info)
        self.worker_thread = threading.Thread(target=self.worker.serve, name="teachd-daemon-worker",
                                              daemon=True)
        self.worker_thread.start()

    def asking(self) -> tuple[ApprovalQueue, SecretDesk]:
        """Where this person's runs ask: their approvals, their secret requests."""
        return self.approvals, self.secrets

    @property
    def user(self) -> str:
        return self.store.owner

    def as_user(self, user: str | None) -> Daemon:
        """The daemon as one person sees it: their skills (and those shared
        with them), runs, approvals, rules and secrets; the background work
        (runs in flight, the recording, the scheduler) is shared."""
        if user is None or user == self.store.owner:
            return self
        with self.lock:
            view = self.people.get(user)
            if view is None:
                store = self.store.as_person(user)
                runs, approvals = RunStore(store), ApprovalQueue(store, self.approvals.timeout)
                desk = self.secrets.for_person(user, _asks(store, self.queue))
                settings = person_settings(self.settings)  # the daemon's environment is the owner's alone
                view = replace(self, settings=settings, store=store, runs=runs,
                               rules=RuleStore(store.db, user), approvals=approvals, secrets=desk,
                               jobs=self.jobs.for_person(runs, approvals, desk, settings))
                self.people[user] = view
        return view

    def run_queue(self) -> dict[str, Any] | None:
        """The run queue as the Runs page and ``GET /api/workers`` show it:
        how many runs wait and run, and each worker (its slots, what it can
        run, its heartbeat); None on the embedded store (runs run here)."""
        if self.queue is None:
            return None
        # how busy each worker is, not whose runs it has
        workers = [{**w, "running": len(w["running"])} for w in WorkerStore(self.store.db).all()]
        return {"queue": self.queue.depth(), "workers": workers}

    def queue_place(self, run: dict[str, Any]) -> dict[str, Any] | None:
        """Where a run stands: waiting (how many before it, about when it
        starts) or on which worker; None when no queue has it."""
        if self.queue is None or run.get("status") != "running":
            return None
        if not run.get("queued"):
            worker = WorkerStore(self.store.db).by_runner().get(self.runs.runner_of(run["run_id"]))
            return {"worker": worker} if worker else None
        place = self.queue.position(run["run_id"])
        if place is None:
            return None
        takers = [w for w in WorkerStore(self.store.db).live() if place["queue"] in queues_for(w["can"])]
        slots, running = sum(w["slots"] for w in takers), sum(len(w["running"]) for w in takers)
        typical = self._typical_run_s()
        when = starts_in(place["ahead"], slots, running, typical)
        at_once = None
        if "skill" in place:  # its skill's own limit holds it too: the later of the two
            at_once = self.store.at_once(str(run.get("slug"))) or 1
            held = starts_in(place["skill"]["ahead"], at_once, place["skill"]["running"], typical)
            when = None if when is None or held is None else max(when, held)
        return {"ahead": place["ahead"], "slots": slots, "starts_in_s": when,
                **({"at_once": at_once} if at_once else {})}

    def _typical_run_s(self) -> float | None:
        """How long this person's recent replays took (their steps' own time),
        read again at most every ``TYPICAL_FOR`` seconds: a waiting run's page
        asks at each of its updates."""
        at, typical = self.typical.get(self.user, (-TYPICAL_FOR, None))
        if time.monotonic() - at >= TYPICAL_FOR:
            took = [sum(int(s.get("ms") or 0) for s in r["steps"]) / 1000 for r in self.runs.recent(20)
                    if r["status"] != "running" and r.get("slug") and r["steps"]]
            typical = statistics.median(took) if took else None
            self.typical[self.user] = (time.monotonic(), typical)
        return typical

    @cached_property
    def egress(self) -> Egress:
        """The one way out to the network, for URL imports (public addresses only)."""
        from teachd.remote.egress import Egress

        return Egress()

    def mcp_server(self, hosts: frozenset[str], base_url: str) -> TeachdMCP:
        """The MCP server at ``/mcp``: the same as ``teachd mcp``, asking on the
        Approvals page when the client cannot be asked itself."""
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        from mcp.server.transport_security import TransportSecuritySettings

        from teachd.mcp.server import IDLE_AFTER, TeachdMCP
        from teachd.mcp.session import services_for
        from teachd.runner.secret_desk import DeskSource
        from teachd.server.run_door import RunDoor
        from teachd.skills.disk import shelf_for

        disk = shelf_for(self.settings, Path.cwd(), Path.home())  # where teachd serve was started

        def services(person: Daemon) -> Services:
            where = "where teachd serve runs" if person is self else ""  # another's env is not read
            made = services_for(person.runs, person.settings, where=where,
                                secrets=DeskSource(person.secrets, base_url), queue=person.approvals,
                                owner=person is self,  # anyone else's browser: no local destinations
                                disk=disk if person is self else None)  # this disk is the owner's
            made.approvals_page = lambda: f"{base_url.rstrip('/')}/approvals"  # this daemon's own
            if self.queue is not None:  # run_skill goes on the run queue, as the person's own click does
                made.run_door = RunDoor(person, base_url)
            return made

        server = TeachdMCP(services(self), lambda user: services(self.as_user(user)), idle_after=IDLE_AFTER)
        security = TransportSecuritySettings(allowed_hosts=sorted(hosts), allowed_origins=[])
        server.streamable_http_app(transport_security=security,  # makes its session manager
                                   session_idle_timeout=IDLE_AFTER)  # idle: forgotten as its run closes
        server.streamable_http_asgi = StreamableHTTPASGIApp(server.session_manager)
        return server

    def close(self) -> None:
        """Stop cleanly: waiting approvals are denied (their runs end with no
        effect, and say so), a recording in progress is stopped and saved.
        Runs waiting in the run queue stay there: a worker takes them."""
        self.schedules.stop()
        self.stop_taking()
        if self.worker_thread is not None:
            for view in [self, *self.people.values()]:
                view.approvals.close()  # its runs' waiting steps are denied: they end at once
            self.secrets.close()  # and a secret still asked for is not given
            self.worker_thread.join(30)
        if self.sweeper is not None:
            self.sweeper.stop()
        self.secrets.close()
        for view in list(self.people.values()):
            view.approvals.close()
        self.jobs.stop_all()
        if self.teaching.process is not None and self.teaching.process.proc.poll() is None:
            self.teaching.stop(self.teaching.owner)
        if self.queue is not None:
            self.queue.close()


def _asks(store: SkillStore, queue: RunQueue | None) -> SecretAsks | None:
    """Where workers elsewhere ask a person's secrets: the store, on a team's (a queue); else nowhere."""
    return SecretAsks(store.db, store.owner, store.cipher) if queue is not None else None
