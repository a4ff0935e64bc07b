"""Skills and their revisions: create, update, restore, enable, delete.

Revisions are append-only: an update or restore inserts version N+1 inside one
write transaction, so concurrent writers serialize and none loses a version.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from teachd.errors import Conflict, InvalidSkill, KeyProblem, NotFound
from teachd.skills.approval import Approval
from teachd.skills.skillmd.fields import name_problems
from teachd.store.crypto import Cipher
from teachd.store.db import Database, Row, Transaction
from teachd.store.limits import check_files
from teachd.store.models import Skill, SkillContent, SkillVersion

_ENCRYPTED = ("name", "description", "instructions", "files", "approval", "metadata", "note")
_KEYCHECK = "teachd-keycheck-v1"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SkillStore:
    def __init__(
        self, db: Database, cipher: Cipher, owner: str, clock: Callable[[], str] = _now
    ) -> None:
        self.db = db
        self.owner = owner
        self.cipher = cipher  # one key for every encrypted row of this store (runs too)
        self._clock = clock
        self._check_key()

    # -- key -------------------------------------------------------------
    def _check_key(self) -> None:
        rows = self.db.query("SELECT blob FROM keycheck WHERE id = 1")
        if rows:
            try:
                self.cipher.open("", "", 0, "keycheck", rows[0]["blob"])
            except KeyProblem:
                raise KeyProblem(
                    "the key in TEACHD_HOME does not open this store (wrong key)"
                ) from None
            return
        with self.db.atomic() as tx:
            if not tx.execute("SELECT id FROM keycheck WHERE id = 1"):
                blob = self.cipher.seal("", "", 0, "keycheck", _KEYCHECK)
                tx.execute("INSERT INTO keycheck (id, blob) VALUES (1, ?)", (blob,))

    # -- reads -----------------------------------------------------------
    def all(self, enabled_only: bool = False) -> list[Skill]:
        """Every skill with its current revision, in one query (a manifest of
        thousands is one round trip, on PostgreSQL too)."""
        sql = ("SELECT s.slug, s.owner, s.enabled, s.current_version, s.created_at, s.updated_at, "
               "v.version, v.created_at AS version_created_at, "
               + ", ".join(f"v.{f}" for f in _ENCRYPTED)
               + " FROM skills s JOIN skill_versions v ON v.owner = s.owner AND v.slug = s.slug"
               " AND v.version = s.current_version WHERE s.owner = ?")
        if enabled_only:
            sql += " AND s.enabled = 1"
        rows = self.db.query(sql + " ORDER BY s.slug", (self.owner,))
        return [self._skill(r, self._version({**r, "created_at": r["version_created_at"]}).content)
                for r in rows]

    def exists(self, slug: str) -> bool:
        return bool(
            self.db.query("SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug))
        )

    def get(self, slug: str) -> Skill:
        rows = self.db.query(
            "SELECT * FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
        )
        if not rows:
            raise NotFound(f"no skill {slug!r}")
        return self._skill(rows[0])

    def version(self, slug: str, version: int | None = None) -> SkillVersion:
        if version is None:
            version = self.get(slug).current_version
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? AND version = ?",
            (self.owner, slug, version),
        )
        if not rows:
            if not self.exists(slug):
                raise NotFound(f"no skill {slug!r}")
            raise NotFound(f"skill {slug!r} has no version {version}")
        return self._version(rows[0])

    def versions(self, slug: str) -> list[SkillVersion]:
        self.get(slug)
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? ORDER BY version",
            (self.owner, slug),
        )
        return [self._version(r) for r in rows]

    def load(self, slug: str) -> Skill:
        """A skill for use in a run: disabled skills refuse to load."""
        skill = self.get(slug)
        if not skill.enabled:
            raise Conflict(f"skill {slug!r} is disabled; enable it to load it")
        return skill

    # -- writes ----------------------------------------------------------
    def create(self, slug: str, content: SkillContent, note: str = "created") -> Skill:
        problems = name_problems(slug)
        if problems:
            raise InvalidSkill(f"bad slug: {problems[0]}")
        content = self._checked(content)
        now = self._clock()
        with self.db.atomic() as tx:
            if tx.execute(
                "SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
            ):
                raise Conflict(f"skill {slug!r} already exists; use `teachd skills update`")
            tx.execute(
                "INSERT INTO skills (owner, slug, enabled, current_version, created_at, updated_at)"
                " VALUES (?, ?, 1, 1, ?, ?)",
                (self.owner, slug, now, now),
            )
            self._insert_version(tx, slug, 1, content, note, now)
        return self.get(slug)

    def update(
        self,
        slug: str,
        content: SkillContent | Callable[[SkillContent], SkillContent],
        note: str = "updated",
        also: Callable[[Transaction, int], None] | None = None,
    ) -> Skill:
        """Append a new revision. ``content`` may be a function of the current
        revision, evaluated inside the write lock (read-modify-write safe);
        ``also`` writes more rows in the same transaction, given the new version."""
        now = self._clock()
        with self.db.atomic() as tx:
            new_version = self._append(tx, slug, content, note, now)
            if also is not None:
                also(tx, new_version)
        return self.get(slug)

    def _append(self, tx: Transaction, slug: str,
                content: SkillContent | Callable[[SkillContent], SkillContent], note: str, now: str) -> int:
        # Take the skill's row first: on PostgreSQL this row lock queues concurrent
        # writers (SQLite's BEGIN IMMEDIATE already has), so versions stay linear.
        tx.execute("UPDATE skills SET updated_at = updated_at WHERE owner = ? AND slug = ?",
                   (self.owner, slug))
        rows = tx.execute("SELECT current_version FROM skills WHERE owner = ? AND slug = ?",
                          (self.owner, slug))
        if not rows:
            raise NotFound(f"no skill {slug!r}")
        current = int(rows[0]["current_version"])
        if callable(content):
            vrows = tx.execute(
                "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? AND version = ?",
                (self.owner, slug, current),
            )
            content = content(self._version(vrows[0]).content)
        self._insert_version(tx, slug, current + 1, self._checked(content), note, now)
        tx.execute("UPDATE skills SET current_version = ?, updated_at = ? WHERE owner = ? AND slug = ?",
                   (current + 1, now, self.owner, slug))
        return current + 1

    def save(self, slug: str, make: Callable[[SkillContent | None], SkillContent], note: str) -> Skill:
        """Create the skill, or append a version to it, in one transaction:
        ``make`` gets the current content (None for a new skill), so two saves
        of one slug can never both create it, nor lose each other's version."""
        problems = name_problems(slug)
        if problems:
            raise InvalidSkill(f"bad slug: {problems[0]}")
        now = self._clock()
        with self.db.atomic() as tx:
            if tx.execute("SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)):
                self._append(tx, slug, make, note, now)
            else:
                tx.execute(
                    "INSERT INTO skills (owner, slug, enabled, current_version, created_at, updated_at)"
                    " VALUES (?, ?, 1, 1, ?, ?)", (self.owner, slug, now, now))
                self._insert_version(tx, slug, 1, self._checked(make(None)), note, now)
        return self.get(slug)

    def restore(self, slug: str, version: int) -> Skill:
        old = self.version(slug, version)
        return self.update(slug, old.content, note=f"restored v{version}")

    def set_enabled(self, slug: str, enabled: bool) -> Skill:
        with self.db.atomic() as tx:
            if not tx.execute(
                "SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
            ):
                raise NotFound(f"no skill {slug!r}")
            tx.execute(
                "UPDATE skills SET enabled = ?, updated_at = ? WHERE owner = ? AND slug = ?",
                (1 if enabled else 0, self._clock(), self.owner, slug),
            )
        return self.get(slug)

    def delete(self, slug: str) -> None:
        with self.db.atomic() as tx:
            if not tx.execute(
                "SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
            ):
                raise NotFound(f"no skill {slug!r}")
            tx.execute(
                "DELETE FROM skill_versions WHERE owner = ? AND slug = ?", (self.owner, slug)
            )
            tx.execute("DELETE FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug))

    # -- rows <-> data ---------------------------------------------------
    @staticmethod
    def _checked(content: SkillContent) -> SkillContent:
        if not content.description.strip():
            raise InvalidSkill("a skill needs a description")
        files = check_files(content.instructions, content.files)
        return SkillContent(
            name=content.name,
            description=content.description,
            instructions=content.instructions,
            files=files,
            approval=content.approval,
            metadata=dict(content.metadata),
        )

    def _insert_version(
        self, tx: Transaction, slug: str, version: int, content: SkillContent, note: str, now: str
    ) -> None:
        plain = {
            "name": content.name,
            "description": content.description,
            "instructions": content.instructions,
            "files": json.dumps(content.files, sort_keys=True),
            "approval": json.dumps(content.approval.to_dict(), sort_keys=True),
            "metadata": json.dumps(content.metadata, sort_keys=True, default=str),
            "note": note,
        }
        sealed = [self.cipher.seal(self.owner, slug, version, f, plain[f]) for f in _ENCRYPTED]
        tx.execute(
            "INSERT INTO skill_versions (owner, slug, version, created_at, "
            + ", ".join(_ENCRYPTED)
            + ") VALUES (?, ?, ?, ?, "
            + ", ".join("?" for _ in _ENCRYPTED)
            + ")",
            (self.owner, slug, version, now, *sealed),
        )

    def _open(self, row: Row) -> dict[str, str]:
        return {
            f: self.cipher.open(self.owner, row["slug"], int(row["version"]), f, row[f])
            for f in _ENCRYPTED
        }

    def _version(self, row: Row) -> SkillVersion:
        plain = self._open(row)
        content = SkillContent(
            name=plain["name"],
            description=plain["description"],
            instructions=plain["instructions"],
            files=json.loads(plain["files"]),
            approval=Approval.from_dict(json.loads(plain["approval"])),
            metadata=json.loads(plain["metadata"]),
        )
        return SkillVersion(
            slug=row["slug"],
            version=int(row["version"]),
            created_at=row["created_at"],
            note=plain["note"],
            content=content,
        )

    def _skill(self, row: Row, current: SkillContent | None = None) -> Skill:
        if current is None:
            current = self.version(row["slug"], int(row["current_version"])).content
        return Skill(
            slug=row["slug"],
            owner=row["owner"],
            enabled=bool(row["enabled"]),
            current_version=int(row["current_version"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            current=current,
        )
