"""Secrets a run asks for, typed by the person on the daemon's secret page.

Never in a chat (the MCP spec forbids sensitive data in form elicitation),
never on disk, never in a log: a value lives in this process's memory from
the moment it is typed until the run that asked takes it — once — and is
then forgotten. An asker that gives up forgets its request.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from teachd.errors import BadInput, NotFound, PolicyStop

SECRET_TIMEOUT = 300.0  # seconds a request waits to be typed


@dataclass
class Asked:
    id: str
    name: str
    run_id: str
    skills: list[str]
    created: float
    owner: str = ""  # whose run asked: only they see it and type it
    value: str | None = field(default=None, repr=False)
    done: threading.Event = field(default_factory=threading.Event)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "run_id": self.run_id, "skills": self.skills,
                "url": f"/secrets/{self.id}", "waiting_s": round(time.monotonic() - self.created)}


class SecretDesk:
    """Every request of this daemon; ``for_person`` is one person's view of
    them (a run's secret is typed by the person whose run it is)."""

    def __init__(self) -> None:
        self._items: dict[str, Asked] = {}
        self._lock = threading.Lock()
        self._owner: str | None = None  # None: the whole desk

    def for_person(self, owner: str) -> SecretDesk:
        view = SecretDesk()
        view._items, view._lock, view._owner = self._items, self._lock, owner
        return view

    def _mine(self, item: Asked | None) -> Asked | None:
        return item if item is not None and self._owner in (None, item.owner) else None

    def ask(self, name: str, run_id: str, skills: list[str]) -> Asked:
        if not name or not name.replace("_", "").isalnum():
            raise BadInput("a secret's name is letters, digits and _")
        item = Asked(secrets.token_urlsafe(16), name, run_id, list(skills), time.monotonic(),
                     self._owner or "")
        with self._lock:
            self._items[item.id] = item
        return item

    def give(self, sid: str, value: str) -> None:
        if not value:
            raise BadInput("type the secret (it is not stored)")
        with self._lock:
            item = self._mine(self._items.get(sid))
            if item is None or item.done.is_set():
                raise NotFound("no secret is asked for there (given already, or no longer needed)")
            item.value = value
        item.done.set()

    def take(self, sid: str, timeout: float) -> str | None:
        """The typed value, once; None when nothing was typed in time."""
        with self._lock:
            item = self._mine(self._items.get(sid))
        if item is None:
            raise NotFound("no such secret request")
        item.done.wait(timeout)
        with self._lock:
            if item.value is None:
                return None
            self._items.pop(sid, None)
            value, item.value = item.value, None
        return value

    def forget(self, sid: str) -> None:
        with self._lock:
            if self._mine(self._items.get(sid)) is not None:
                self._items.pop(sid, None)

    def get(self, sid: str) -> dict[str, Any]:
        with self._lock:
            item = self._mine(self._items.get(sid))
        if item is None or item.done.is_set():
            raise NotFound("no secret is asked for there (given already, or no longer needed)")
        return item.as_dict()

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [i.as_dict() for i in self._items.values()
                    if not i.done.is_set() and self._mine(i) is not None]

    def close(self) -> None:
        """The daemon stops: every request (every person's) is woken, none given."""
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        for item in items:
            item.done.set()


@dataclass(frozen=True)
class Ticket:
    id: str
    url: str  # the page where the person types it


class SecretSource(Protocol):
    def ask(self, name: str, run_id: str, skills: list[str]) -> Ticket: ...

    def take(self, ticket: Ticket, timeout: float, stopping: threading.Event) -> str | None: ...

    def forget(self, ticket: Ticket) -> None: ...


@dataclass
class DeskSource:
    """In the daemon: its own desk."""

    desk: SecretDesk
    base_url: str

    def ask(self, name: str, run_id: str, skills: list[str]) -> Ticket:
        asked = self.desk.ask(name, run_id, skills)
        return Ticket(asked.id, self.base_url + f"/secrets/{asked.id}")

    def take(self, ticket: Ticket, timeout: float, stopping: threading.Event) -> str | None:
        return self.desk.take(ticket.id, timeout)  # the desk is closed with the daemon: it wakes then

    def forget(self, ticket: Ticket) -> None:
        self.desk.forget(ticket.id)


def wait_for_secret(source: SecretSource, name: str, run_id: str, skills: list[str], timeout: float,
                    stopping: threading.Event, before: Callable[[Ticket], None] | None = None,
                    ) -> tuple[Ticket, str | None]:
    """Ask for a secret on the secret page and wait for it: the ticket, and
    the typed value — None when nothing came in time. ``before`` (sending
    the person to the page) may refuse with PolicyStop. The request is
    forgotten either way."""
    ticket = source.ask(name, run_id, skills)
    try:
        if before is not None:
            before(ticket)
        return ticket, source.take(ticket, timeout, stopping) or None
    except PolicyStop:
        raise
    except Exception:  # no answer in time, or the asker's client went away: nothing was given
        return ticket, None
    finally:
        source.forget(ticket)


def desk_secret(environ_secret: Callable[[str], tuple[str, str | None]], desk: SecretDesk,
                run_id: Callable[[], str], skills: list[str], timeout: float) -> Callable[[str], str]:
    """A replay's secrets, for runs the daemon starts (from the Runs page, or
    on a schedule): ``TEACHD_SECRET_<NAME>`` where the daemon runs, else typed
    by the person on the Approvals page; unanswered in time, the run stops
    before typing anything."""
    return page_secret(environ_secret, DeskSource(desk, ""), run_id, skills, timeout)


def page_secret(environ_secret: Callable[[str], tuple[str, str | None]], source: SecretSource,
                run_id: Callable[[], str], skills: list[str], timeout: float) -> Callable[[str], str]:
    """``desk_secret`` for any source: the daemon's own desk, or (from a child
    process the daemon started, such as a repair's recorder) its API."""

    def secret(name: str) -> str:
        var, value = environ_secret(name)
        if value:
            return value
        _ticket, typed = wait_for_secret(source, name, run_id(), skills, timeout,
                                         threading.Event())  # the desk wakes its waiters when it closes
        if not typed:
            raise PolicyStop(f"the secret {name!r} was not typed in time on the Approvals page "
                             f"(or set {var})")
        return typed

    return secret
