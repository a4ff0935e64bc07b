"""A skill from a URL becomes the user's own editable skill, its source kept
in metadata (``teachd-source``). A remote source never updates it silently:
importing the same skill again shows what differs and needs a yes (or
``--update``)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from teachd.core.errors import Conflict
from teachd.core.models import Skill, SkillContent
from teachd.remote.egress import Egress
from teachd.remote.sources import Plan, fetch, parse_source, resolve
from teachd.skills.exchange import Imported, export_md, from_skill_md
from teachd.store.origins import IMPORTED
from teachd.store.skills import SkillStore

SOURCE_KEY = "teachd-source"
RESOLVED_KEY = "teachd-source-resolved"


@dataclass
class Outcome:
    plan: Plan
    skill: Skill | None = None  # None: only resolved, or nothing changed
    action: str = "resolved"  # resolved | imported | updated | unchanged
    diff: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "plan": self.plan.as_dict(), "diff": self.diff,
                "warnings": self.warnings, "skill": self.skill.summary() if self.skill else None}


def import_url(store: SkillStore, egress: Egress, text: str, *, resolve_only: bool = False,
               update: bool = False, confirm: Callable[[list[str]], bool] | None = None) -> Outcome:
    plan = resolve(egress, parse_source(text))
    if resolve_only:
        return Outcome(plan)
    skill_md, files = fetch(egress, plan)
    imported = from_skill_md(skill_md, plan.folder, files)
    imported = _with_source(imported, plan)
    outcome = Outcome(plan, warnings=list(imported.warnings))
    if not store.exists(imported.slug):
        outcome.skill = store.save(imported.slug, imported.onto, note=f"imported from {plan.source.given}",
                                   origin=IMPORTED)
        outcome.action = "imported"
        return outcome
    current = store.get(imported.slug)
    outcome.diff = differences(current, imported.onto(current.current))
    if not outcome.diff:
        outcome.action, outcome.skill = "unchanged", current
        return outcome
    if not update and not (confirm and confirm(outcome.diff)):
        was = current.current.metadata.get("metadata", {}).get(SOURCE_KEY)
        origin = f"it came from {was}" if was else "it was not imported from a URL"
        raise Conflict(f"skill {imported.slug!r} exists and differs ({origin}): "
                       f"{len(outcome.diff)} line(s) of difference; take the remote version with --update")
    outcome.skill = store.save(imported.slug, imported.onto, note=f"updated from {plan.source.given}",
                               origin=IMPORTED)
    outcome.action = "updated"
    return outcome


def _with_source(imported: Imported, plan: Plan) -> Imported:
    meta = dict(imported.content.metadata)
    inner = dict(meta.get("metadata") or {})
    inner[SOURCE_KEY] = plan.source.given
    inner[RESOLVED_KEY] = plan.origin
    meta["metadata"] = inner
    return replace(imported, content=replace(imported.content, metadata=meta))


def _sourceless(content: SkillContent) -> SkillContent:
    """Where it came from is not what it says: the same skill by another URL form is unchanged."""
    meta = dict(content.metadata)
    inner = {k: v for k, v in (meta.get("metadata") or {}).items() if k not in (SOURCE_KEY, RESOLVED_KEY)}
    meta["metadata"] = inner
    return replace(content, metadata=meta)


def differences(current: Skill, new: SkillContent) -> list[str]:
    """A unified diff of SKILL.md and each file: what taking the remote would change."""
    lines: list[str] = []
    old = replace(current, current=_sourceless(current.current))
    fake = replace(current, current=_sourceless(new))
    pairs = [("SKILL.md", export_md(old), export_md(fake))]
    for path in sorted(set(current.current.files) | set(new.files)):
        pairs.append((path, current.current.files.get(path, ""), new.files.get(path, "")))
    for path, a, b in pairs:
        if a != b:
            lines += list(difflib.unified_diff(a.splitlines(), b.splitlines(), f"stored/{path}",
                                               f"remote/{path}", lineterm="", n=1))
    return lines
