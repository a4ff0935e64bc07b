"""Where one run's browser may go, decided once for the run from who asked.

The daemon's Chromium runs on its owner's machine, inside the owner's
network. A run of anyone else — started on the Runs page, by a ``start_url``,
a schedule, a health check or an ``/mcp`` session — that could point that
browser at ``127.0.0.1``, ``10.x`` or the cloud metadata address and read the
page back (as the run's step pictures, a snapshot or an error) would make
the daemon a proxy into that network. So every browser a run opens gets its
rules here, in one place (:func:`teachd.runner.run.open_chromium` takes a
:class:`RunPolicy` and arms it before the first page exists): for anyone
but the owner, every request (page, frame, subresource, WebSocket,
redirect hop) is held to public destinations. No skill vouches for a
local place (DESIGN §3.5: only the owner's runs may reach the daemon
host's loopback or private network).

Before, the rule lived in the MCP session alone, and the same person
reached the same addresses through the Runs page and their schedules.
``tests/security/test_entry_points.py`` lists every path that opens a
browser for a run and fails on one that does not pass here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

    from teachd.config import Settings
    from teachd.remote.destinations import Destinations
    from teachd.remote.egress import Resolver
    from teachd.remote.proxy import Dial
    from teachd.runner.guard import RequestGuard

log = logging.getLogger("teachd.runner.policy")
NETWORK_RULE = "destinations: the daemon host's own network is its owner's"


@dataclass(frozen=True)
class Who:
    """Who asked for a run: the person, and whether the browser may reach
    the daemon host's loopback and private network (its owner, or the
    local user of ``teachd run`` / ``teachd mcp``, only)."""

    person: str
    host_network: bool
    # the network as seen from here: names → addresses, and how an address is connected to
    # (tests inject both: the public internet cannot exist here)
    resolver: Resolver | None = field(default=None, compare=False)
    dial: Dial | None = field(default=None, compare=False)
    # local origins the daemon's owner lets every person reach (config.yaml team_origins)
    allowed: frozenset[str] = frozenset()

    @classmethod
    def of(cls, settings: Settings, person: str, resolver: Resolver | None = None,
           dial: Dial | None = None) -> Who:
        """``person``'s runs under ``settings`` (another person's are ``person_settings``)."""
        return cls(person, settings.host_network, resolver, dial, settings.team_origins)


@dataclass(frozen=True)
class Decision:
    rule: str
    url: str
    why: str


class RunPolicy:
    """One run's network rule: for anyone but the owner, public destinations
    only. No skill vouches for a local place — not even the person's own
    taught one: its ``127.0.0.1`` was the machine it was taught on, and on
    a team store anyone may compile a recording of their own making."""

    def __init__(self, who: Who) -> None:
        self.who = who
        self._destinations: Destinations | None = None
        if not who.host_network:
            from teachd.remote.destinations import Destinations
            from teachd.remote.egress import SystemResolver

            self._destinations = Destinations(who.resolver or SystemResolver(), who.allowed)
        self.decisions: list[Decision] = []  # what the rule refused in this run, with the rule
        self._guard: RequestGuard | None = None

    def network_refusal(self, url: str) -> str | None:
        """Why this run's browser may not reach ``url``; None when it may."""
        if self._destinations is None:
            return None
        why = self._destinations.refusal(url)
        return None if why is None else self._refused(url, why)

    def _refused(self, place: str, why: str) -> str:
        """A refusal, recorded with the rule that made it; the words the run says."""
        why = f"{why} (this browser runs on the daemon's host, not yours)"
        self.decisions.append(Decision(NETWORK_RULE, place, why))
        log.info("run of %s: refused %s — %s", self.who.person, place, NETWORK_RULE)
        return why

    @contextlib.contextmanager
    def network(self) -> Iterator[list[str]]:
        """Chromium's arguments for this run's browser, and what they need
        running: for anyone but the owner, a proxy every connection goes
        through (teachd.remote.proxy: what the request interception never
        sees — a Worker's WebSocket, WebRTC — is judged there too)."""
        if self._destinations is None:
            yield []
            return
        from teachd.remote.proxy import GuardedProxy, chromium_args

        proxy = GuardedProxy(self._destinations, self._refused_connection, self.who.dial)
        try:
            yield chromium_args(proxy.port)
        finally:
            proxy.close()
            self._guard = None  # the browser is gone: hold nothing of its Playwright

    def _refused_connection(self, host: str, port: int, why: str) -> None:
        """The proxy refused a connection: recorded, and the run told (it stops
        at the step under way, saying so: the guard's list of what was stopped)."""
        why = self._refused(f"{host}:{port}", why)
        if self._guard is not None:
            from teachd.runner.guard import Stopped

            self._guard.stopped.append(Stopped(f"{host}:{port}", "a connection", why))

    def arm(self, context: BrowserContext) -> None:
        """Put the rule on the browser's request guard, before any page loads."""
        if self._destinations is None:
            return
        from teachd.runner.guard import Layer, guard_for

        self._guard = guard_for(context)
        self._guard.add(Layer(self.network_refusal, navigations_only=False))
