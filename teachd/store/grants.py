"""Sharing: a skill is its owner's alone until granted to a person or a
``@group``, to *use* (see it in manifests, load it, replay it) or to *edit*
(also make new versions of it, feedback included). Nothing is copied: a
grant is one row, read on every lookup, so a revoked grant is gone from the
next manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from teachd.core.errors import BadInput, NotFound
from teachd.store.db import Database, Row
from teachd.store.groups import GroupStore
from teachd.store.revision import moved
from teachd.store.users import UserStore

USE, EDIT = "use", "edit"
CAN = (USE, EDIT)

# The grants that reach a person (three times their name), directly or through a group.
REACHING = ("SELECT owner, slug, can FROM grants WHERE owner <> ? AND (grantee = ? OR grantee IN "
            "(SELECT '@' || grp FROM group_members WHERE member = ?))")


def strongest(rows: Iterable[Row]) -> dict[tuple[str, str], str]:
    """(owner, slug) → use/edit; the stronger grant wins when there are several."""
    out: dict[tuple[str, str], str] = {}
    for r in rows:
        key = (str(r["owner"]), str(r["slug"]))
        if out.get(key) != EDIT:
            out[key] = str(r["can"])
    return out


def reaching(db: Database, user: str, slug: str) -> dict[tuple[str, str], str]:
    """What shares ``slug`` with ``user``: (owner, slug) → use/edit."""
    return strongest(db.query(REACHING + " AND slug = ?", (user, user, user, slug)))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Owned(Protocol):
    """What sharing needs of a person's skills (``SkillStore``): their
    database, whose they are, and the owner-only check. Named here so the
    skill store, which reads grants, is not imported back."""

    db: Database
    owner: str

    def own(self, slug: str) -> None: ...


class GrantStore:
    """The grants on the owner's own skills (only an owner shares)."""

    def __init__(self, skills: Owned, clock: Callable[[], str] = _now) -> None:
        self.skills, self.db, self.owner, self._clock = skills, skills.db, skills.owner, clock

    def share(self, slug: str, grantee: str, can: str = USE) -> list[dict[str, Any]]:
        if can not in CAN:
            raise BadInput(f"--can is use or edit, not {can!r}")
        self.skills.own(slug)
        if grantee.startswith("@"):
            if not GroupStore(self.db).exists(grantee):
                raise BadInput(f"no group {grantee!r} (teachd groups create {grantee[1:]})")
        elif grantee == self.owner:
            raise BadInput("a skill is its owner's already")
        elif not UserStore(self.db).known(grantee):
            raise BadInput(f"no user {grantee!r} (teachd users add {grantee})")
        with self.db.atomic() as tx:
            tx.execute("DELETE FROM grants WHERE owner = ? AND slug = ? AND grantee = ?",
                       (self.owner, slug, grantee))
            tx.execute("INSERT INTO grants (owner, slug, grantee, can, granted_at) VALUES (?, ?, ?, ?, ?)",
                       (self.owner, slug, grantee, can, self._clock()))
            moved(tx, self.owner, slug)  # who sees this one skill
        return self.of(slug)

    def unshare(self, slug: str, grantee: str) -> list[dict[str, Any]]:
        self.skills.own(slug)
        with self.db.atomic() as tx:
            if not tx.execute("SELECT 1 FROM grants WHERE owner = ? AND slug = ? AND grantee = ?",
                              (self.owner, slug, grantee)):
                raise NotFound(f"{slug} is not shared with {grantee}")
            tx.execute("DELETE FROM grants WHERE owner = ? AND slug = ? AND grantee = ?",
                       (self.owner, slug, grantee))
            moved(tx, self.owner, slug)  # who sees this one skill
        return self.of(slug)

    def of(self, slug: str) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT grantee, can, granted_at FROM grants WHERE owner = ? AND slug = ?"
                             " ORDER BY grantee", (self.owner, slug))
        return [{"with": r["grantee"], "can": r["can"], "granted_at": r["granted_at"]} for r in rows]
