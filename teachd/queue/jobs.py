"""A queued run as plain data, and the pure rules of the queue: which
queue a job waits in (what a worker must be able to do to take it), its
lane (a person's runs at a time) and its priority (fairness between people).

Why queues by capability: procrastinate gives a job to any worker that
listens on its queue, so a desktop skill's job waits in a queue only
workers with a desktop listen on — a worker without one never fetches it.

Why lanes: a job with a procrastinate ``lock`` is not fetched while another
job of that lock runs (or an older one of that lock waits, in any queue), so
a person's jobs spread over ``PER_PERSON`` locks of their queue run at most
``PER_PERSON`` at a time there, whatever the number of slots; a lock names
its queue, so a job no worker can take yet (a desktop one) holds up none of
that person's other queues.

Why the job's arguments hold no more than ids: procrastinate keeps them as
plain JSON (and logs them when a job fails); what a run was asked to do —
its parameters, its start address — is in the run's record, sealed with the
store's key like every run's detail, and the worker reads it there.

Why a skill's own lanes: its owner may limit how many of its runs go at
once (``teachd skills at-once``): a replay of it then takes one of the
skill's ``at_once`` locks instead of one of the person's, so at most that
many run at a time, whoever started them. Such a run is not counted in its
person's lanes; a health check (it acts on nothing) is not limited.

Why priority: the queue takes the highest priority first, oldest first
among equals. A person's n-th job waiting gets priority -n, so another
person's first job goes before the 2nd…500th of someone who queued 500.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

PER_PERSON = 3  # a person's runs at a time across all workers (lanes)
DESKTOP = "desktop"  # a worker with a display and the desktop's accessibility bus
# a run that types a secret goes — while one is up — to a worker started as that person with their
# TEACHD_SECRET_* (``--can secrets``: it takes ``secrets@PERSON``, that person's runs only); else to
# any worker, which asks its person (a daemon's secret page; the value sealed to that worker). ``DESK``
# (a daemon's own slots) is where such runs went before 0018: daemons still listen there, and the
# sweep moves what waits there to where any worker takes it.
DESK = "desk"
SECRETS = "secrets"
MAX_CAPABILITIES = 6  # what one worker says it can do (the queues it listens on: every combination)
QUEUE_PREFIX = "teachd-runs"


@dataclass(frozen=True)
class RunJob:
    """One replay (or health check) to run: what the queue holds is
    ``QUEUED_FIELDS`` (ids, what it needs); the rest travels sealed in the
    run's record (``details``). No secret is ever part of it: one is typed on
    the person's page when the run asks for it."""

    run_id: str
    owner: str
    slug: str
    params: dict[str, str] = field(default_factory=dict)
    start_url: str | None = None
    origin: str = "web UI"
    timeout: float = 300.0  # seconds a question waits on the Approvals page
    followed: bool = False  # a person follows it on its page (a step not found may be shown)
    profile: list[str] | None = None
    schedule: int | None = None  # the schedule whose firing it is (its outcome is recorded there)
    fired_at: str | None = None
    needs: tuple[str, ...] = ()  # what the worker must be able to do (DESKTOP, "tag:…")
    kind: str = "replay"  # or "check": the skill's targets looked for, nothing acted on (schedule.health)
    retry_of: str | None = None  # the interrupted run this one runs again by itself (queue.sweep)

    def as_args(self) -> dict[str, Any]:
        """What goes on the queue, in plain JSON: ids and what it needs only."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if k in QUEUED_FIELDS}

    def details(self) -> dict[str, Any]:
        """What stays in the run's sealed record until a worker takes it."""
        return {k: v for k, v in asdict(self).items() if k not in QUEUED_FIELDS}

    def record(self) -> dict[str, Any]:
        """What its run's record keeps while it runs: the details (should its
        worker die, the sweep reads them to run it again), the run it repeats."""
        return {"job": self.details(), **({"retry_of": self.retry_of} if self.retry_of else {})}

    @classmethod
    def from_args(cls, args: Mapping[str, Any], details: Mapping[str, Any] | None = None) -> RunJob:
        both = {**(details or {}), **args}
        known = {k: both[k] for k in cls.__dataclass_fields__ if k in both}
        known["needs"] = tuple(known.get("needs") or ())
        return cls(**known)

    @property
    def queue(self) -> str:
        return queue_for(self.needs)


def queue_for(needs: Iterable[str]) -> str:
    """The queue a job that needs ``needs`` waits in."""
    wanted = sorted(set(needs))
    return QUEUE_PREFIX if not wanted else QUEUE_PREFIX + ":" + "+".join(wanted)


def queues_for(can: Iterable[str]) -> list[str]:
    """Every queue a worker that can do ``can`` takes jobs from: those of
    every combination of what it can do (none included)."""
    have = sorted(set(can))
    if len(have) > MAX_CAPABILITIES:
        raise ValueError(f"a worker says at most {MAX_CAPABILITIES} things it can do")
    return [queue_for(combo) for n in range(len(have) + 1) for combo in itertools.combinations(have, n)]


QUEUED_FIELDS = frozenset({"run_id", "owner", "slug", "kind", "needs"})


def lanes(owner: str, queue: str) -> list[str]:
    """The locks of a person's jobs in one queue."""
    return [f"person:{owner}:{queue}#{n}" for n in range(PER_PERSON)]


def skill_lanes(skill_owner: str, slug: str, at_once: int) -> list[str]:
    """The locks of a skill's runs whose owner limited them to ``at_once`` at a time."""
    return [f"skill:{skill_owner}/{slug}#{n}" for n in range(at_once)]


def lane(owner: str, queue: str, busy: Mapping[str, int], limited: list[str] | None = None) -> str:
    """The lane a person's next job in ``queue`` takes: the one with the
    fewest jobs waiting or running (``busy``: lock → count) among the
    person's — or, for a skill its owner limited (``limited``: its lanes),
    among the skill's, whoever runs it: then the skill's limit is the
    one that holds, across people."""
    return min(limited or lanes(owner, queue), key=lambda lock: (busy.get(lock, 0), lock))


def priority(waiting: int) -> int:
    """A person's job ``waiting`` behind others of theirs goes after other people's first."""
    return -waiting


def secrets_of(owner: str) -> str:
    """What a worker started as ``owner`` with their secrets can do."""
    return f"{SECRETS}@{owner}"


def needs_of(files: Mapping[str, str], owner: str, can: Iterable[str] = ()) -> tuple[str, ...]:
    """What a skill's replay needs of its worker: a desktop when it was
    taught on desktop apps; when it types a secret, a worker of its person's
    with their secrets if one is up (``can``: what the live workers can do),
    else nothing more — any worker asks its person, the value sealed to it."""
    from compiler.plan import Procedure

    proc = Procedure.from_files(files)
    needs = {DESKTOP} if proc.desktop or proc.apps else set()
    if proc.secrets and secrets_of(owner) in set(can):
        needs.add(secrets_of(owner))
    return tuple(sorted(needs))


def starts_in(ahead: int, slots: int, running: int, typical_s: float | None) -> float | None:
    """About how many seconds until a run with ``ahead`` runs before it
    starts, on ``slots`` slots of which ``running`` are busy, each run taking
    about ``typical_s``; None when nothing tells (no worker, no run ended yet)."""
    if slots < 1 or typical_s is None:
        return None
    free = max(0, slots - running)
    if ahead < free:
        return 0.0
    return ((ahead - free) // slots + 1) * typical_s
