"""Secrets a run asks for, typed by the person on the daemon's secret page.

Never in a chat (the MCP spec forbids sensitive data in form elicitation),
never on disk, never in a log: a value lives in this process's memory from
the moment it is typed until the run that asked takes it — once — and is
then forgotten. An asker that gives up forgets its request.

Secrets are a person's own. The daemon's environment (``TEACHD_SECRET_*``)
is its owner's: only the owner's runs read it; anyone else's run asks that
person on their own secret page, and a child process started for them gets
an environment with no ``TEACHD_SECRET_*`` in it (``without_secrets``).

The desk is bounded, since any person with a token can ask on their own
desk: at most ``MAX_OPEN`` requests open per person, a name of at most
``MAX_NAME`` characters, a value of at most ``MAX_VALUE``; a request nobody
waits on for ``IDLE_TTL`` seconds, a typed value nobody takes within
``GIVEN_TTL``, and anything older than ``MAX_AGE`` are forgotten.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from teachd.core.errors import BadInput, LimitExceeded, NotFound, PolicyStop, TooMany
from teachd.runner.secrecy import without_secrets
from teachd.store.sealing import Opener

if TYPE_CHECKING:
    from teachd.config import Settings
    from teachd.store.secret_asks import SecretAsks

MAX_OPEN = 16  # open requests per person
MAX_NAME = 64  # characters of a secret's name
MAX_VALUE = 4096  # characters of a typed secret
MAX_RUN_ID = 128  # characters of the run id a request names
MAX_SKILLS = 32  # slugs a request names
IDLE_TTL = 120.0  # seconds a request lives with nobody waiting for it (an asker polls every few seconds)
GIVEN_TTL = 120.0  # seconds a typed value waits for its run to take it
MAX_AGE = 24 * 3600.0  # seconds any request lives, waited on or not


def person_settings(settings: Settings) -> Settings:
    """The daemon's settings as another person's runs and sessions get them:
    the same store, browser and display, but none of the owner's
    ``TEACHD_SECRET_*`` (the daemon's environment is its owner's alone, so
    another person's secret is asked on their own secret page), and none of
    the daemon host's own network (``host_network``: teachd.runner.policy)."""
    from dataclasses import replace

    return replace(settings, environ=without_secrets(settings.environ), host_network=False)


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
    touched: float = 0.0  # when someone last waited for it
    waiters: int = 0  # takers waiting right now
    given_at: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "run_id": self.run_id, "skills": self.skills,
                "url": f"/secrets/{self.id}", "waiting_s": round(time.monotonic() - self.created)}

    def expired(self, now: float) -> bool:
        if now - self.created > MAX_AGE:
            return True
        if self.given_at is not None:
            return now - self.given_at > GIVEN_TTL
        return self.waiters == 0 and now - self.touched > IDLE_TTL


class SecretDesk:
    """Every request of this daemon; ``for_person`` is one person's view of
    them (a run's secret is typed by the person whose run it is)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: dict[str, Asked] = {}
        self._lock = threading.Lock()
        self._owner: str | None = None  # None: the whole desk
        self._clock = clock
        self._asks: SecretAsks | None = None  # the person's questions from runs on workers elsewhere

    def for_person(self, owner: str, asks: SecretAsks | None = None) -> SecretDesk:
        """One person's view; with ``asks``, their runs' questions from
        workers on other machines too (in the store, typed here, sealed to
        the worker that asked), as one list with the desk's own."""
        view = SecretDesk(self._clock)
        view._items, view._lock, view._owner, view._asks = self._items, self._lock, owner, asks
        return view

    def _purge(self) -> None:
        """Forget what expired (under the lock): its value, if any, is dropped
        and a waiter still there is woken with nothing."""
        now = self._clock()
        for sid in [sid for sid, item in self._items.items() if item.expired(now)]:
            item = self._items.pop(sid)
            item.value = None
            item.done.set()

    def _mine(self, item: Asked | None) -> Asked | None:
        return item if item is not None and self._owner in (None, item.owner) else None

    def ask(self, name: str, run_id: str, skills: list[str]) -> Asked:
        check_question(name, run_id, skills)
        now = self._clock()
        item = Asked(secrets.token_urlsafe(16), name, run_id, list(skills), now, self._owner or "",
                     touched=now)
        elsewhere = len(self._asks.pending()) if self._asks is not None else 0  # workers' questions too
        with self._lock:
            self._purge()
            open_ = elsewhere + sum(1 for i in self._items.values()
                                    if i.owner == item.owner and not i.done.is_set())
            if open_ >= MAX_OPEN:
                raise TooMany(f"{open_} secrets are already asked and not typed: at most {MAX_OPEN} "
                              "at once; type or drop some first")
            self._items[item.id] = item
        return item

    def give(self, sid: str, value: str) -> None:
        if not value:
            raise BadInput("type the secret (it is not stored)")
        if len(value) > MAX_VALUE:
            raise LimitExceeded(f"a secret is at most {MAX_VALUE} characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput("a secret is text (this one has a character no text can hold)") from None
        with self._lock:
            self._purge()
            item = self._mine(self._items.get(sid))
            if item is not None:  # this desk's own question: answered once, decided under the lock
                if item.done.is_set():
                    raise NotFound(GONE)
                item.value, item.given_at = value, self._clock()
        if item is not None:
            item.done.set()
        elif self._asks is None or not self._asks.give(sid, value):  # sealed to the worker that asked
            raise NotFound(GONE)

    def take(self, sid: str, timeout: float) -> str | None:
        """The typed value, once; None when nothing was typed in time."""
        with self._lock:
            self._purge()
            item = self._mine(self._items.get(sid))
            if item is None:
                raise NotFound("no such secret request (taken, dropped, or expired)")
            item.waiters += 1
        try:
            item.done.wait(timeout)
        finally:
            with self._lock:
                item.waiters -= 1
                item.touched = self._clock()
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

    def withdraw(self, run_id: str) -> int:
        """A cancelled run's secret requests leave the page; the run waiting on
        one gets nothing at once (it stops: nothing is typed)."""
        with self._lock:
            items = [i for i in self._items.values()
                     if self._mine(i) is not None and i.run_id == run_id and not i.done.is_set()]
            for item in items:
                self._items.pop(item.id, None)
        for item in items:
            item.done.set()  # no value: the waiting take() returns None now
        return len(items) + (self._asks.withdraw(run_id) if self._asks is not None else 0)

    def get(self, sid: str) -> dict[str, Any]:
        with self._lock:
            self._purge()
            item = self._mine(self._items.get(sid))
        if item is not None and not item.done.is_set():
            return item.as_dict()
        asked = self._asks.get(sid) if self._asks is not None else None
        if asked is None:
            raise NotFound(GONE)
        return asked

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            self._purge()
            here = [i.as_dict() for i in self._items.values()
                    if not i.done.is_set() and self._mine(i) is not None]
        return here + (self._asks.pending() if self._asks is not None else [])

    def close(self) -> None:
        """The daemon stops: every request (every person's) is woken, none given."""
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        for item in items:
            item.done.set()


GONE = "no secret is asked for there (given already, or no longer needed)"


def check_question(name: str, run_id: str, skills: list[str]) -> None:
    """What any secret question may be: a name of letters, digits and _, one run, a few skills."""
    if len(name) > MAX_NAME:
        raise LimitExceeded(f"a secret's name is at most {MAX_NAME} characters")
    if not name or not name.isascii() or not name.replace("_", "").isalnum():
        raise BadInput("a secret's name is letters, digits and _")
    if len(run_id) > MAX_RUN_ID or len(skills) > MAX_SKILLS or any(len(s) > MAX_NAME for s in skills):
        raise LimitExceeded(f"a secret request names one run id (at most {MAX_RUN_ID} characters) "
                            f"and at most {MAX_SKILLS} skills")


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


@dataclass
class StoreSource:
    """On a worker on another machine: the question in the store (its person
    sees it on any daemon's pages), the value sealed to a key pair this
    process made for that question alone and keeps in memory only."""

    asks: SecretAsks
    poll: float = 0.5
    _openers: dict[str, tuple[Opener, bytes]] = field(default_factory=dict)

    def ask(self, name: str, run_id: str, skills: list[str]) -> Ticket:
        from teachd.store.secret_asks import bound

        check_question(name, run_id, skills)
        opener = Opener()
        ask_id = self.asks.ask(name, run_id, skills, opener.public, MAX_OPEN)
        self._openers[ask_id] = (opener, bound(ask_id, self.asks.owner, run_id, name))
        return Ticket(ask_id, f"/secrets/{ask_id}")

    def take(self, ticket: Ticket, timeout: float, stopping: threading.Event) -> str | None:
        opener, about = self._openers[ticket.id]
        deadline = time.monotonic() + timeout
        while not stopping.is_set():
            sealed = self.asks.sealed(ticket.id)  # NotFound once withdrawn: nothing is typed
            if sealed is not None:
                self.forget(ticket)
                return opener.open(sealed, about)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            stopping.wait(min(self.poll, left))
        return None

    def forget(self, ticket: Ticket) -> None:
        self._openers.pop(ticket.id, None)
        self.asks.forget(ticket.id)


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


def page_secret(environ_secret: Callable[[str], tuple[str, str | None]], source: SecretSource,
                run_id: Callable[[], str], skills: list[str], timeout: float) -> Callable[[str], str]:
    """A replay's secrets: ``environ_secret`` (the person's settings: the
    daemon's ``TEACHD_SECRET_<NAME>`` for its owner, nothing for anyone
    else), else typed by the person on their secret page, through
    ``source`` — the daemon's own desk, the store (a worker elsewhere), or
    (from a child process the daemon started, such as a repair's recorder)
    its API; unanswered in time, the run stops before typing anything."""

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
