"""What the daemon holds while it runs: the store and the things that run in
the background, started and stopped by the app's lifespan."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from teachd.config import Settings
from teachd.runner.secret_desk import SecretDesk, person_settings
from teachd.schedule.service import ScheduleService
from teachd.server.jobs import Runs, Teaching, run_on_the_page
from teachd.server.security import Sessions
from teachd.store import SkillStore, open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.orphans import end_orphans
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from teachd.store.users import UserStore
from teachd.teach.process import CONTROL_FILE

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

    @classmethod
    def open(cls, settings: Settings, sessions: Sessions, login_code: str) -> Daemon:
        store = open_store(settings)
        end_orphans(store)  # runs a killed daemon left "running": aborted where they stopped
        runs = RunStore(store)
        approvals, desk = ApprovalQueue(store), SecretDesk().for_person(store.owner)
        sessions.who = UserStore(store.db).who  # a person's own token is theirs, checked per request
        daemon = cls(settings, store, runs, RuleStore(store.db, store.owner), approvals,
                     Runs(runs, settings, approvals, desk),
                     Teaching(dict(settings.environ), settings.home / CONTROL_FILE, store.owner), sessions,
                     login_code,
                     desk, ScheduleService(store, settings, approvals, desk, run_on_the_page))
        daemon.schedules.asker = lambda user: daemon.as_user(user).asking()
        return daemon

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
                desk = self.secrets.for_person(user)
                settings = person_settings(self.settings)  # the daemon's environment is the owner's alone
                view = replace(self, settings=settings, store=store, runs=runs,
                               rules=RuleStore(store.db, user), approvals=approvals, secrets=desk,
                               jobs=self.jobs.for_person(runs, approvals, desk, settings))
                self.people[user] = view
        return view

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
        from teachd.skills.disk import shelf_for

        disk = shelf_for(self.settings, Path.cwd(), Path.home())  # where teachd serve was started

        def services(person: Daemon) -> Services:
            where = "where teachd serve runs" if person is self else ""  # another's env is not read
            made = services_for(person.runs, person.settings, where=where,
                                secrets=DeskSource(person.secrets, base_url), queue=person.approvals,
                                owner=person is self,  # anyone else's browser: no local destinations
                                disk=disk if person is self else None)  # this disk is the owner's
            made.approvals_page = lambda: f"{base_url.rstrip('/')}/approvals"  # this daemon's own
            return made

        server = TeachdMCP(services(self), lambda user: services(self.as_user(user)), idle_after=IDLE_AFTER)
        security = TransportSecuritySettings(allowed_hosts=sorted(hosts), allowed_origins=[])
        server.streamable_http_app(transport_security=security,  # makes its session manager
                                   session_idle_timeout=IDLE_AFTER)  # idle: forgotten as its run closes
        server.streamable_http_asgi = StreamableHTTPASGIApp(server.session_manager)
        return server

    def close(self) -> None:
        """Stop cleanly: waiting approvals are denied (their runs end with no
        effect, and say so), a recording in progress is stopped and saved."""
        self.schedules.stop()
        self.secrets.close()
        for view in list(self.people.values()):
            view.approvals.close()
        self.jobs.stop_all()
        if self.teaching.process is not None and self.teaching.process.proc.poll() is None:
            self.teaching.stop(self.teaching.owner)

