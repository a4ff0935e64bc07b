"""What the store holds, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from teachd.core.approval import Approval


@dataclass
class SkillContent:
    """One revision's content: everything that is encrypted at rest."""

    name: str
    description: str
    instructions: str
    files: dict[str, str] = field(default_factory=dict)
    approval: Approval = field(default_factory=Approval)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class SkillVersion:
    slug: str
    version: int
    created_at: str
    note: str
    content: SkillContent


@dataclass
class Skill:
    slug: str
    owner: str
    enabled: bool
    current_version: int
    created_at: str
    updated_at: str
    current: SkillContent
    access: str = "own"  # what the person who opened the store may do: own, edit (shared) or use (shared)
    origin: str = "created"  # provenance, kept by the store (store/origins.py): taught, imported, created
    repeatable: bool = False  # its owner marked it safe to repeat (store/skills.py set_repeatable)
    at_once: int | None = None  # its owner's limit on its runs at a time (store/skills.py set_at_once)

    @property
    def is_taught(self) -> bool:
        """Compiled here from a recording (or accepted as taught by its owner):
        the store's record, never the slug — anyone can name an import ``taught-…``."""
        return self.origin == "taught"

    def loaded(self) -> dict[str, Any]:
        """What loading the skill gives a run: its instructions (kept verbatim,
        shown from their first line), then its files."""
        return {"slug": self.slug, "version": self.current_version,
                "instructions": self.current.instructions.lstrip("\r\n"),
                "files": sorted(self.current.files)}

    def summary(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "name": self.current.name,
            "description": self.current.description,
            "version": self.current_version,
            "enabled": self.enabled,
            "owner": self.owner,
            "access": self.access,
            "origin": self.origin,
        }
