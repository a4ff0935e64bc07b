"""What the daemon holds while it runs: the store and the things that run in
the background, started and stopped by the app's lifespan."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from teachd.config import Settings
from teachd.schedule.service import ScheduleService
from teachd.server.jobs import Runs, Teaching
from teachd.server.secrets import SecretDesk
from teachd.server.security import Sessions
from teachd.store import SkillStore, open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.rules import RuleStore
from teachd.store.runs import RunStore
from teachd.teach.process import CONTROL_FILE

if TYPE_CHECKING:
    from teachd.mcp.server import TeachdMCP
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

    @classmethod
    def open(cls, settings: Settings, sessions: Sessions, login_code: str) -> Daemon:
        store = open_store(settings)
        runs = RunStore(store)
        approvals, desk = ApprovalQueue(store), SecretDesk()
        return cls(settings, store, runs, RuleStore(store.db, store.owner), approvals,
                   Runs(runs, settings, approvals, desk),
                   Teaching(dict(settings.environ), settings.home / CONTROL_FILE), sessions, login_code,
                   desk, ScheduleService(store, settings, approvals, desk))

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

        from teachd.mcp.server import TeachdMCP
        from teachd.mcp.session import services_for
        from teachd.server.secrets import DeskSource

        server = TeachdMCP(services_for(self.runs, self.settings, where="where teachd serve runs",
                                        secrets=DeskSource(self.secrets, base_url), queue=self.approvals))
        security = TransportSecuritySettings(allowed_hosts=sorted(hosts), allowed_origins=[])
        server.streamable_http_app(transport_security=security)  # makes its session manager
        server.streamable_http_asgi = StreamableHTTPASGIApp(server.session_manager)
        return server

    def close(self) -> None:
        """Stop cleanly: waiting approvals are denied (their runs end with no
        effect, and say so), a recording in progress is stopped and saved."""
        self.schedules.stop()
        self.secrets.close()
        self.jobs.stop_all()
        if self.teaching.process is not None and self.teaching.process.proc.poll() is None:
            self.teaching.stop()
