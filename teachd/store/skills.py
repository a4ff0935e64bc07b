"""Skills and their revisions: create, update, restore, enable, delete.

Revisions are append-only: an update or restore inserts version N+1 inside one
write transaction, so concurrent writers serialize and none loses a version.

A store is opened as one person (``owner``). A slug names their own skill,
else one shared with them (``grants.py``): reading takes either, a new
version needs their own or an *edit* grant, and enabling, deleting and
sharing are the owner's alone. Each ciphertext stays bound to the skill's
owner, whoever reads or writes it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from teachd.core.approval import Approval
from teachd.core.errors import BadInput, Conflict, InvalidSkill, KeyProblem, NotFound, PolicyStop
from teachd.core.limits import check_files
from teachd.core.models import Skill, SkillContent, SkillVersion
from teachd.core.owners_part import owners_part_kept, trusted_part
from teachd.core.skill_fields import name_problems
from teachd.store import revision
from teachd.store.crypto import Cipher
from teachd.store.db import Database, Row, Transaction
from teachd.store.grants import REACHING, reaching, strongest
from teachd.store.origins import _IMPORTED_NOTES, _TAUGHT_NOTES, CREATED, IMPORTED, ORIGINS, TAUGHT

_Listing = tuple[int, dict[str, dict[str, str]], list[dict[str, str]]]  # revision, by slug, in order
MAX_AT_ONCE = 50  # the most a skill's own limit on its runs at a time may say
_LISTED = "s.slug, s.owner, s.current_version, v.name, v.description"  # what a manifest reads
_ENCRYPTED = ("name", "description", "instructions", "files", "approval", "metadata", "note")
_KEYCHECK = "teachd-keycheck-v1"


def _known(origin: str) -> str:
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r}")  # a programming error, never a user's input
    return origin


def _content(plain: dict[str, str]) -> SkillContent:
    """A version's content from its fields as stored (the clear text of each sealed one)."""
    return SkillContent(
        name=plain["name"],
        description=plain["description"],
        instructions=plain["instructions"],
        files=json.loads(plain["files"]),
        approval=Approval.from_dict(json.loads(plain["approval"])),
        metadata=json.loads(plain["metadata"]),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SkillStore:
    def __init__(
        self, db: Database, cipher: Cipher, owner: str, clock: Callable[[], str] = _now,
        check_key: bool = True,
    ) -> None:
        self.db = db
        self.owner = owner
        self.cipher = cipher  # one key for every encrypted row of this store (runs too)
        self._clock = clock
        # the last manifest of each kind: (revision, slug → entry, in order)
        self._listed: dict[tuple[bool, bool], _Listing] = {}
        self._known: dict[str, tuple[str, str]] = {}  # slug → (owner, access), as ``knowing`` was told
        if check_key:
            self._check_key()

    def as_person(self, name: str) -> SkillStore:
        """The same store (connection, key) opened as another person: the
        daemon answers each request as its token's owner."""
        return SkillStore(self.db, self.cipher, name, self._clock, check_key=False)

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
    def all(self, enabled_only: bool = False, shared: bool = False) -> list[Skill]:
        """The person's skills with their current revisions, in one query (a
        manifest of thousands is one round trip, on PostgreSQL too);
        ``shared`` adds those granted to them, their own slugs first."""
        cols = ("s.slug, s.owner, s.enabled, s.current_version, s.created_at, s.updated_at, s.origin, "
                "s.repeatable, s.at_once, v.version, v.created_at AS version_created_at, "
                + ", ".join(f"v.{f}" for f in _ENCRYPTED))
        rows, access = self._current(cols, enabled_only, shared)
        return [self._skill(r, self._version({**r, "created_at": r["version_created_at"]}).content,
                            access[(str(r["owner"]), str(r["slug"]))]) for r in rows]

    def summaries(self, shared: bool = True) -> list[dict[str, Any]]:
        """``Skill.summary`` of each skill ``all`` lists, in its order, opening
        only the name and description (remembered, as a manifest's are): a
        skill's instructions grow a History line at every feedback click, and
        a list that shows none of them need not decrypt them at every call."""
        cols = "s.slug, s.owner, s.enabled, s.current_version, s.origin, v.name, v.description"
        rows, access = self._current(cols, False, shared)
        return [{**self._listed_entry(r), "version": int(r["current_version"]), "enabled": bool(r["enabled"]),
                 "owner": str(r["owner"]), "access": access[(str(r["owner"]), str(r["slug"]))],
                 "origin": str(r["origin"])} for r in rows]

    def manifest(self, enabled_only: bool = True, shared: bool = True) -> list[dict[str, str]]:
        """What an agent's list shows of each skill (slug, name, description),
        as ``all`` orders them, reading only those two fields: a session of an
        organisation's 10,000 skills starts without decrypting their bodies,
        names already read are remembered (``Cipher.open_remembered``), the
        whole list is kept while the store's revision stays, and when it moves
        only the skills changed since are read again (store/revision.py)."""
        now = revision.current(self.db)  # read first: a write after it moves it on
        kept = self._listed.get((enabled_only, shared))
        if kept is not None and kept[0] == now:
            return [dict(m) for m in kept[2]]
        slugs = revision.changed_slugs(self.db, kept[0], now) if kept is not None else None
        if kept is not None and slugs is not None:
            entries = dict(kept[1])
            for slug in slugs:
                entries.pop(slug, None)
                rows, _access = self._current(_LISTED, enabled_only, shared, slug)
                entries.update((str(r["slug"]), self._listed_entry(r)) for r in rows)
        else:
            rows, _access = self._current(_LISTED, enabled_only, shared)
            entries = {str(r["slug"]): self._listed_entry(r) for r in rows}
        listing = [entries[slug] for slug in sorted(entries)]
        self._listed[(enabled_only, shared)] = (now, entries, listing)
        return [dict(m) for m in listing]

    def _listed_entry(self, r: Row) -> dict[str, str]:
        owner, slug, version = str(r["owner"]), str(r["slug"]), int(r["current_version"])
        return {"slug": slug,
                "name": self.cipher.open_remembered(owner, slug, version, "name", r["name"]),
                "description": self.cipher.open_remembered(owner, slug, version, "description",
                                                           r["description"])}

    def _current(self, cols: str, enabled_only: bool, shared: bool,
                 slug: str | None = None) -> tuple[list[Row], dict[tuple[str, str], str]]:
        """The rows (``cols`` of a skill joined to its current version) the
        person reaches — their own, then with ``shared`` those granted to
        them under a slug of their own — and the access each gives; with
        ``slug``, only what that slug names for them."""
        current = ("JOIN skill_versions v ON v.owner = s.owner AND v.slug = s.slug"
                   " AND v.version = s.current_version")
        on = (" AND s.enabled = 1" if enabled_only else "") + (" AND s.slug = ?" if slug is not None else "")
        just = (slug,) if slug is not None else ()
        own = f"SELECT {cols}, 'own' AS can FROM skills s {current} WHERE s.owner = ?{on}"
        if shared:  # in the same read: every skill shared with them, with what they may do
            both = self.db.query(
                f"{own} UNION ALL SELECT {cols}, g.can FROM skills s JOIN ({REACHING}) g ON g.owner = s.owner"
                f" AND g.slug = s.slug {current} WHERE 1 = 1{on}",
                (self.owner, *just, *(self.owner,) * 3, *just))
        else:
            both = self.db.query(own, (self.owner, *just))
        ordered = sorted(both, key=lambda r: (str(r["slug"]), str(r["owner"])))
        rows = [r for r in ordered if r["can"] == "own"]
        access = {(self.owner, str(r["slug"])): "own" for r in rows}
        if shared:
            theirs = [r for r in ordered if r["can"] != "own"]
            granted = strongest(theirs)
            mine = {str(r["slug"]) for r in rows}
            for r in theirs:
                key = (str(r["owner"]), str(r["slug"]))
                if key[1] not in mine:  # their own slug first, then the first owner's by name
                    mine.add(key[1])
                    rows.append(r)
                    access[key] = granted[key]
            rows.sort(key=lambda r: str(r["slug"]))
        return rows, access

    def slugs(self) -> set[str]:
        """Every slug that names a skill for this person — their own, enabled
        or not, and those shared with them — read in clear, nothing decrypted:
        the names a disk skill may never take (skills/disk.py)."""
        own = self.db.query("SELECT slug FROM skills WHERE owner = ?", (self.owner,))
        shared = self.db.query(f"SELECT slug FROM ({REACHING}) g", (self.owner,) * 3)
        return {str(r["slug"]) for r in [*own, *shared]}

    def exists(self, slug: str) -> bool:
        """The person's own skill (a shared one of the same slug does not count)."""
        return bool(
            self.db.query("SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug))
        )

    def knowing(self, slug: str, owner: str, access: str) -> SkillStore:
        """This store, told whose skill ``slug`` names for this person and what
        they may do with it, as ``access`` or ``get`` just found: a view or a
        click that reads and writes several parts of one skill (its versions,
        ✓/✗, a new version) asks that once, not once per part. Every other
        slug is asked as ever."""
        told = copy.copy(self)
        told._known = {**self._known, slug: (owner, access)}
        return told

    def access(self, slug: str) -> tuple[str, str]:
        """Whose skill the slug names for this person, and what they may do:
        ``own``, ``edit`` or ``use``."""
        if slug in self._known:
            return self._known[slug]
        if self.exists(slug):
            return self.owner, "own"
        return self._shared(slug)

    def _shared(self, slug: str) -> tuple[str, str]:
        """The owner and access of a skill shared with this person under ``slug``."""
        granted = sorted(reaching(self.db, self.owner, slug).items())
        if not granted:
            raise NotFound(f"no skill {slug!r}")
        (owner, _slug), can = granted[0]
        return owner, can

    def own(self, slug: str) -> None:
        """Refuse what only a skill's owner may do (enable, delete, share)."""
        owner, can = self.access(slug)
        if can != "own":
            raise PolicyStop(f"skill {slug!r} is {owner}'s: only its owner can do that")

    def get(self, slug: str) -> Skill:
        owner, can = self._known.get(slug, (self.owner, "own"))
        rows = self.db.query("SELECT * FROM skills WHERE owner = ? AND slug = ?", (owner, slug))
        if not rows and slug not in self._known:  # not their own (one read less when it is): a shared one
            owner, can = self._shared(slug)
            rows = self.db.query("SELECT * FROM skills WHERE owner = ? AND slug = ?", (owner, slug))
        if not rows:
            raise NotFound(f"no skill {slug!r}")
        return self._skill(rows[0], None, can)

    def version(self, slug: str, version: int | None = None) -> SkillVersion:
        owner, _can = self.access(slug)
        if version is None:  # the current one: its number, not a second lookup and decryption via get()
            current = self.db.query("SELECT current_version FROM skills WHERE owner = ? AND slug = ?",
                                    (owner, slug))
            if not current:
                raise NotFound(f"no skill {slug!r}")
            version = int(current[0]["current_version"])
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? AND version = ?",
            (owner, slug, version),
        )
        if not rows:
            raise NotFound(f"skill {slug!r} has no version {version}")
        return self._version(rows[0])

    def versions(self, slug: str) -> list[SkillVersion]:
        owner, _can = self.access(slug)
        rows = self.db.query(
            "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? ORDER BY version",
            (owner, slug),
        )
        return [self._version(r) for r in rows]

    def notes(self, slug: str, since: int = 1) -> list[dict[str, Any]]:
        """Each version's number, time and note from version ``since`` on,
        oldest first — what the version list shows — without opening the
        versions' contents (a skill with hundreds of feedback lines would
        decrypt them all, each time)."""
        owner, _can = self.access(slug)
        rows = self.db.query("SELECT owner, slug, version, created_at, note FROM skill_versions"
                             " WHERE owner = ? AND slug = ? AND version >= ? ORDER BY version",
                             (owner, slug, since))
        return [{"version": int(r["version"]), "created_at": r["created_at"],
                 "note": self.cipher.open(owner, slug, int(r["version"]), "note", r["note"])} for r in rows]

    def load(self, slug: str) -> Skill:
        """A skill for use in a run: disabled skills refuse to load."""
        skill = self.get(slug)
        if not skill.enabled:
            raise Conflict(f"skill {slug!r} is disabled; enable it to load it")
        return skill

    # -- writes ----------------------------------------------------------
    def create(self, slug: str, content: SkillContent, note: str = "created", origin: str = CREATED) -> Skill:
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
            self._insert_skill(tx, slug, now, origin)
            written = self._insert_version(tx, self.owner, slug, 1, content, note, now)
            return self._written(tx, self.owner, slug, written, "own")

    def update(
        self,
        slug: str,
        content: SkillContent | Callable[[SkillContent], SkillContent],
        note: str = "updated",
        also: Callable[[Transaction, int], None] | None = None,
        feedback: bool = False,
    ) -> Skill:
        """Append a new revision. ``content`` may be a function of the current
        revision, evaluated inside the write lock (read-modify-write safe);
        ``also`` writes more rows in the same transaction, given the new version.
        ``feedback``: the revision is a History line (or its undo) made by
        teachd.runner.feedback, the one edit a person the skill is shared with
        to *use* may make — saying whether it worked is part of using it."""
        owner, can = self._editable(slug, feedback)
        now = self._clock()
        with self.db.atomic() as tx:
            new_version, written = self._append(tx, owner, slug, content, note, now)
            if also is not None:
                also(tx, new_version)
            return self._written(tx, owner, slug, written, can)

    def _written(self, tx: Transaction, owner: str, slug: str, content: SkillContent, can: str) -> Skill:
        """The skill as this write left it, from its row read in the write's
        own transaction and the content just sealed: not read back and
        opened again (a skill with a long History is most of a click's work)."""
        return self._skill(tx.execute("SELECT * FROM skills WHERE owner = ? AND slug = ?", (owner, slug))[0],
                           content, can)

    def _editable(self, slug: str, feedback: bool = False) -> tuple[str, str]:
        """Whose skill a new version of ``slug`` goes to: the person's own, or
        one shared with them to edit (to use, for ``feedback``); and that access."""
        owner, can = self.access(slug)
        if can == "use" and not feedback:
            raise PolicyStop(f"skill {slug!r} is shared with you by {owner} to use, not to edit: "
                             "no new version was made")
        return owner, can

    def _append(self, tx: Transaction, owner: str, slug: str,
                content: SkillContent | Callable[[SkillContent], SkillContent], note: str,
                now: str) -> tuple[int, SkillContent]:
        # Take the skill's row first, and read it: on PostgreSQL this row lock queues concurrent
        # writers (SQLite's BEGIN IMMEDIATE already has), so versions stay linear.
        rows = tx.execute("UPDATE skills SET updated_at = updated_at WHERE owner = ? AND slug = ?"
                          " RETURNING current_version, trusted_from", (owner, slug))
        if not rows:
            raise NotFound(f"no skill {slug!r}")
        current = int(rows[0]["current_version"])
        trusted_from = self._trusted_from(tx, owner, slug, rows[0]["trusted_from"])
        previous: SkillContent | None = None
        if callable(content) or owner != self.owner or trusted_from is not None:
            vrows = tx.execute(
                "SELECT * FROM skill_versions WHERE owner = ? AND slug = ? AND version = ?",
                (owner, slug, current),
            )
            previous = self._version(vrows[0]).content
        if callable(content):
            assert previous is not None
            content = content(previous)
        if owner != self.owner:
            assert previous is not None
            owners_part_kept(previous, content, slug, owner)
            note = f"{note} — by {self.owner}"
        content = self._checked(content)
        written = self._insert_version(tx, owner, slug, current + 1, content, note, now)
        tx.execute("UPDATE skills SET current_version = ?, updated_at = ? WHERE owner = ? AND slug = ?",
                   (current + 1, now, owner, slug))
        if trusted_from is not None:
            assert previous is not None
            if trusted_part(self._checked(previous)) != trusted_part(content):
                # trusted was this content's steps, scope and approval, not whatever comes next
                tx.execute("UPDATE skills SET origin = ?, trusted_from = NULL WHERE owner = ? AND slug = ?",
                           (trusted_from, owner, slug))
        return current + 1, written

    def _trusted_from(self, tx: Transaction, owner: str, slug: str, recorded: Any) -> str | None:
        """What the skill was before its owner trusted it, None when it is not
        trusted. A taught skill stored before this was recorded ('unknown')
        is read from its own (encrypted) version notes, as store/origins.py
        does: compiled here, and nothing taken from elsewhere since, is no trust."""
        if recorded is None:
            return None
        if recorded != "unknown":
            return _known(str(recorded))
        notes = [self.cipher.open(owner, slug, int(v["version"]), "note", v["note"]) for v in tx.execute(
            "SELECT version, note FROM skill_versions WHERE owner = ? AND slug = ? ORDER BY version",
            (owner, slug))]
        if notes and notes[0].startswith(_TAUGHT_NOTES) and not any(n.startswith(_IMPORTED_NOTES)
                                                                    for n in notes[1:]):
            found = None
        else:
            found = IMPORTED if any(n.startswith(_IMPORTED_NOTES) for n in notes) else CREATED
        tx.execute("UPDATE skills SET trusted_from = ? WHERE owner = ? AND slug = ?", (found, owner, slug))
        return found

    def save(self, slug: str, make: Callable[[SkillContent | None], SkillContent], note: str,
             origin: str) -> Skill:
        """Create the skill, or append a version to it, in one transaction:
        ``make`` gets the current content (None for a new skill), so two saves
        of one slug can never both create it, nor lose each other's version.
        ``origin`` is where this content came from, and becomes the skill's: a
        taught skill that takes an imported version is imported from then on;
        one compiled here (``taught``) is taught, no longer merely trusted."""
        problems = name_problems(slug)
        if problems:
            raise InvalidSkill(f"bad slug: {problems[0]}")
        now = self._clock()
        with self.db.atomic() as tx:
            if tx.execute("SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)):
                _version, written = self._append(tx, self.owner, slug, make, note, now)
                tx.execute("UPDATE skills SET origin = ?, trusted_from = NULL WHERE owner = ? AND slug = ?",
                           (_known(origin), self.owner, slug))
            else:
                self._insert_skill(tx, slug, now, origin)
                written = self._insert_version(tx, self.owner, slug, 1, self._checked(make(None)), note, now)
            return self._written(tx, self.owner, slug, written, "own")

    def restore(self, slug: str, version: int) -> Skill:
        old = self.version(slug, version)
        return self.update(slug, old.content, note=f"restored v{version}")

    def set_enabled(self, slug: str, enabled: bool) -> Skill:
        self.own(slug)
        with self.db.atomic() as tx:
            if not tx.execute(
                "SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
            ):
                raise NotFound(f"no skill {slug!r}")
            tx.execute(
                "UPDATE skills SET enabled = ?, updated_at = ? WHERE owner = ? AND slug = ?",
                (1 if enabled else 0, self._clock(), self.owner, slug),
            )
            revision.moved(tx, self.owner, slug)
        return self.get(slug)

    def repeatable(self, slug: str) -> bool:
        """Whether the skill's owner marked it safe to repeat: a run of it that
        was interrupted (its worker died) is run again once by itself."""
        return bool(self._marked(slug, "repeatable"))

    def at_once(self, slug: str) -> int | None:
        """How many of the skill's runs its owner lets go at once (None: no limit of its own)."""
        n = self._marked(slug, "at_once")
        return None if n is None else int(n)

    def _marked(self, slug: str, column: Literal["at_once", "repeatable"]) -> Any:
        """One of the owner's marks, read alone (not the skill's content)."""
        owner, _can = self.access(slug)
        rows = self.db.query(f"SELECT {column} FROM skills WHERE owner = ? AND slug = ?", (owner, slug))
        return rows[0][column] if rows else None

    def set_at_once(self, slug: str, n: int | None) -> Skill:
        """Only its owner limits how many runs of a skill go at once (None: no
        limit of its own): what its runs write may not bear two at a time."""
        if n is not None and not 1 <= n <= MAX_AT_ONCE:
            raise BadInput(f"runs at once: a number from 1 to {MAX_AT_ONCE}, or none")
        return self._mark(slug, "at_once", n)

    def set_repeatable(self, slug: str, on: bool) -> Skill:
        """Only its owner says a skill's writes are safe to make twice."""
        return self._mark(slug, "repeatable", 1 if on else 0)

    def _mark(self, slug: str, column: Literal["at_once", "repeatable"], value: int | None) -> Skill:
        """One of the owner's own marks on how the skill's runs go."""
        self.own(slug)
        with self.db.atomic() as tx:
            tx.execute(f"UPDATE skills SET {column} = ?, updated_at = ? WHERE owner = ? AND slug = ?",
                       (value, self._clock(), self.owner, slug))
        return self.get(slug)

    def trust(self, slug: str) -> Skill:
        """The owner accepts an imported (or created) skill as taught: from now
        on it is auto-loaded into computer runs and its scope counts — this
        content version's: a new version whose steps, scope or approval
        differ is what it was before (``_append``)."""
        self.own(slug)
        with self.db.atomic() as tx:  # SET reads the row as it was: trusted_from gets the old origin
            tx.execute("UPDATE skills SET trusted_from = origin, origin = ?, updated_at = ?"
                       " WHERE owner = ? AND slug = ? AND origin <> ?",
                       (TAUGHT, self._clock(), self.owner, slug, TAUGHT))
        return self.get(slug)

    def delete(self, slug: str) -> None:
        self.own(slug)
        with self.db.atomic() as tx:
            if not tx.execute(
                "SELECT 1 FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug)
            ):
                raise NotFound(f"no skill {slug!r}")
            tx.execute("DELETE FROM grants WHERE owner = ? AND slug = ?", (self.owner, slug))
            tx.execute(
                "DELETE FROM skill_versions WHERE owner = ? AND slug = ?", (self.owner, slug)
            )
            tx.execute("DELETE FROM skills WHERE owner = ? AND slug = ?", (self.owner, slug))
            revision.moved(tx, self.owner, slug)

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

    def _insert_skill(self, tx: Transaction, slug: str, now: str, origin: str) -> None:
        tx.execute("INSERT INTO skills (owner, slug, enabled, current_version, created_at, updated_at,"
                   " origin) VALUES (?, ?, 1, 1, ?, ?, ?)", (self.owner, slug, now, now, _known(origin)))

    def _insert_version(
        self, tx: Transaction, owner: str, slug: str, version: int, content: SkillContent, note: str, now: str
    ) -> SkillContent:
        """Seal and write one version; the content as any later read of it will open it."""
        plain = {
            "name": content.name,
            "description": content.description,
            "instructions": content.instructions,
            "files": json.dumps(content.files, sort_keys=True),
            "approval": json.dumps(content.approval.to_dict(), sort_keys=True),
            "metadata": json.dumps(content.metadata, sort_keys=True, default=str),
            "note": note,
        }
        sealed = [self.cipher.seal(owner, slug, version, f, plain[f]) for f in _ENCRYPTED]
        tx.execute(
            "INSERT INTO skill_versions (owner, slug, version, created_at, "
            + ", ".join(_ENCRYPTED)
            + ") VALUES (?, ?, ?, ?, "
            + ", ".join("?" for _ in _ENCRYPTED)
            + ")",
            (owner, slug, version, now, *sealed),
        )
        revision.moved(tx, owner, slug)  # what a manifest lists may have changed
        return _content(plain)

    def _open(self, row: Row) -> dict[str, str]:
        return {
            f: self.cipher.open(row["owner"], row["slug"], int(row["version"]), f, row[f])
            for f in _ENCRYPTED
        }

    def _version(self, row: Row) -> SkillVersion:
        plain = self._open(row)
        return SkillVersion(
            slug=row["slug"],
            version=int(row["version"]),
            created_at=row["created_at"],
            note=plain["note"],
            content=_content(plain),
        )

    def _skill(self, row: Row, current: SkillContent | None = None, access: str = "own") -> Skill:
        if current is None:
            vrows = self.db.query("SELECT * FROM skill_versions WHERE owner = ? AND slug = ? AND version = ?",
                                  (row["owner"], row["slug"], int(row["current_version"])))
            current = self._version(vrows[0]).content
        return Skill(
            slug=row["slug"],
            owner=row["owner"],
            enabled=bool(row["enabled"]),
            current_version=int(row["current_version"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            current=current,
            access=access,
            origin=str(row["origin"]),
            repeatable=bool(row["repeatable"]),
            at_once=int(row["at_once"]) if row["at_once"] is not None else None,
        )
