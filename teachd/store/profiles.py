"""Assistant profiles, stored: a name that binds a subset of the owner's
skills. ``config.yaml``'s ``profiles:`` still work; a stored profile of the
same name wins. Everything that takes ``--profile`` resolves it here."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from teachd.config import Settings
from teachd.core.errors import BadInput, NotFound
from teachd.core.skill_fields import name_problems
from teachd.store.skills import SkillStore


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class ProfileStore:
    def __init__(self, skills: SkillStore, clock: Callable[[], str] = _now) -> None:
        self.skills, self.db, self.owner, self._clock = skills, skills.db, skills.owner, clock

    def all(self) -> dict[str, list[str]]:
        rows = self.db.query("SELECT name, slug FROM profiles WHERE owner = ? ORDER BY name, slug",
                             (self.owner,))
        out: dict[str, list[str]] = {}
        for r in rows:
            out.setdefault(str(r["name"]), []).append(str(r["slug"]))
        return out

    def get(self, name: str) -> list[str]:
        found = self.all().get(name)
        if found is None:
            raise NotFound(f"no profile {name!r}")
        return found

    def create(self, name: str, slugs: Iterable[str]) -> list[str]:
        problems = name_problems(name)
        if problems:
            raise BadInput(f"bad profile name {name!r}: {problems[0]}")
        if name in self.all():
            raise BadInput(f"profile {name!r} exists: add or remove skills instead")
        wanted = list(slugs)
        if not wanted:
            raise BadInput("a profile binds at least one skill (--skill SLUG)")
        return self.add(name, wanted, new=True)

    def add(self, name: str, slugs: Iterable[str], new: bool = False) -> list[str]:
        if not new:
            self.get(name)
        for slug in slugs:
            self.skills.get(slug)  # only skills that exist
        with self.db.atomic() as tx:
            for slug in slugs:
                if not tx.execute("SELECT 1 FROM profiles WHERE owner = ? AND name = ? AND slug = ?",
                                  (self.owner, name, slug)):
                    tx.execute("INSERT INTO profiles (owner, name, slug, added_at) VALUES (?, ?, ?, ?)",
                               (self.owner, name, slug, self._clock()))
        return self.get(name)

    def remove(self, name: str, slugs: Iterable[str] = ()) -> list[str]:
        """Remove skills from the profile; with none named, the profile itself."""
        self.get(name)
        wanted = list(slugs)
        with self.db.atomic() as tx:
            if wanted:
                for slug in wanted:
                    tx.execute("DELETE FROM profiles WHERE owner = ? AND name = ? AND slug = ?",
                               (self.owner, name, slug))
            else:
                tx.execute("DELETE FROM profiles WHERE owner = ? AND name = ?", (self.owner, name))
        return self.all().get(name, [])


def resolve_profile(settings: Settings, store: SkillStore, name: str | None) -> list[str] | None:
    """The skills a profile binds (None: no profile, every enabled skill)."""
    if name is None:
        return None
    stored = ProfileStore(store).all()
    if name in stored:
        return stored[name]
    if name in settings.profiles:
        return list(settings.profiles[name])
    raise NotFound(f"no profile {name!r} (teachd profiles list; or config.yaml profiles:)")


def profile_names(settings: Settings, store: SkillStore) -> set[str]:
    return set(settings.profiles) | set(ProfileStore(store).all())
