"""The run queue as an agent's MCP session reaches it: the person's own
``Runs`` (the door the Runs page and its API use), and where a run waits in
the daemon's words — so an agent's run_skill is queued, limited and
cancelled exactly as a person's click is (teachd/mcp/queued.py)."""

from __future__ import annotations

from typing import Any, Protocol

from teachd.runner.secret_desk import SecretDesk
from teachd.server.jobs import Runs


class Person(Protocol):
    """What the door needs of a person's view of the daemon (``Daemon.as_user``)."""

    jobs: Runs
    secrets: SecretDesk

    def queue_place(self, run: dict[str, Any]) -> dict[str, Any] | None: ...


class RunDoor:
    def __init__(self, person: Person, base_url: str) -> None:
        self.person, self.base_url = person, base_url.rstrip("/")

    def start(self, slug: str, params: dict[str, str], start_url: str | None = None, *,
              origin: str = "web UI", followed: bool = True) -> str:
        return self.person.jobs.start(slug, params, start_url, origin=origin, followed=followed)

    def cancel(self, run_id: str, by: str) -> dict[str, Any]:
        return self.person.jobs.cancel(run_id, by)

    def waiting_for(self, run: dict[str, Any]) -> list[str]:
        out = []
        place = self.person.queue_place(run)
        if place and "ahead" in place:
            when = place.get("starts_in_s")
            out.append(f"waiting in the run queue: {place['ahead']} run(s) before it"
                       + (f", starting in about {round(when)} s" if when is not None else ""))
        elif place and place.get("worker"):
            out.append(f"on worker {place['worker']}")
        out += [f"waiting for you to type the secret {s['name']} at {self.base_url}{s['url']}"
                for s in self.person.secrets.pending() if s.get("run_id") == run["run_id"]]
        return out
