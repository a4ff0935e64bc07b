"""What a run has loaded: the owner's enabled taught skills (or a profile's),
skills loaded mid-run (load_skill, a prompt, a resource), each bringing its gate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from teachd.core.errors import NotFound
from teachd.core.models import Skill
from teachd.core.paths import check_relpath
from teachd.runner.gate import Gate
from teachd.store import SkillStore


def manifest(store: SkillStore, profile: Sequence[str] | None) -> list[dict[str, str]]:
    """What an agent is offered: slug, name, description of each skill
    ``visible_skills`` gives, read without their bodies (``SkillStore.manifest``)."""
    listed = store.manifest(enabled_only=True, shared=True)
    return [m for m in listed if profile is None or m["slug"] in profile]


def visible_skills(store: SkillStore, profile: Sequence[str] | None) -> list[Skill]:
    """The enabled skills a run may load — the owner's and those shared with
    them — or exactly a profile's."""
    return [s for s in store.all(enabled_only=True, shared=True) if profile is None or s.slug in profile]


class RunSession:
    def __init__(self, store: SkillStore, gate: Gate, profile: Sequence[str] | None = None) -> None:
        self.store, self.gate = store, gate
        self.profile = list(profile) if profile is not None else None
        self.loaded: dict[str, Skill] = {}

    def _allowed(self, slug: str) -> bool:
        return self.profile is None or slug in self.profile

    def manifest(self) -> list[dict[str, str]]:
        return manifest(self.store, self.profile)

    def auto_load(self) -> list[str]:
        """A run that uses the computer loads the owner's own enabled taught
        skills — never one merely shared with them — or, with a profile,
        exactly the skills it binds."""
        for s in self.store.all(enabled_only=True, shared=self.profile is not None):
            if self.profile is not None:
                if s.slug in self.profile:
                    self._take(s)
            elif s.is_taught and s.access == "own":
                self._take(s)
        return sorted(self.loaded)

    def load_skill(self, slug: str) -> dict[str, Any]:
        if not self._allowed(slug):
            raise NotFound(f"skill {slug!r} is not bound to this run's profile")
        skill = self.store.load(slug)  # refuses a disabled skill
        self._take(skill)
        return skill.loaded()

    def unload(self, slug: str) -> None:
        self.loaded.pop(slug, None)
        self.gate.unload(slug)

    def read_skill_file(self, slug: str, path: str) -> str:
        if not self._allowed(slug):
            raise NotFound(f"skill {slug!r} is not bound to this run's profile")
        rel = check_relpath(path)  # before any lookup: a path that leaves the skill is refused as such
        skill = self.loaded.get(slug) or self.store.load(slug)
        if rel == "SKILL.md":  # the whole file, frontmatter included, as the skill:// resource gives it
            from teachd.skills.exchange import export_md

            return export_md(skill)
        if rel not in skill.current.files:
            raise NotFound(f"File not found: {rel} in skill {slug}")
        return skill.current.files[rel]

    def versions(self) -> dict[str, int]:
        return {slug: s.current_version for slug, s in sorted(self.loaded.items())}

    def _take(self, skill: Skill) -> None:
        self.loaded[skill.slug] = skill
        self.gate.load(skill.slug, skill.current.approval)
