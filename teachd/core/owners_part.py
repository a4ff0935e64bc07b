"""The part of a skill that stays its owner's: what an *edit* grant may not
change, and what an owner's trust covers. Pure rules over content, asked by
the store on every new version."""

from __future__ import annotations

from typing import Any

from teachd.core.errors import PolicyStop
from teachd.core.models import SkillContent

OWNERS_FILES = ("references/steps.json", "references/anchors.json")  # what the replay does, and where


def owners_part_kept(before: SkillContent, after: SkillContent, slug: str, owner: str) -> None:
    """An *edit* grant edits the words (SKILL.md, notes, feedback lines); the
    approval, the replay's plan and anchors, and the scope stay the owner's —
    else a grantee could switch off a forced approval or point the owner's
    skill somewhere else."""
    changed = []
    if after.approval.to_dict() != before.approval.to_dict():
        changed.append("its approval")
    changed += [path for path in OWNERS_FILES if after.files.get(path) != before.files.get(path)]
    if after.metadata != before.metadata:
        changed.append("its metadata (scope, kind)")
    if changed:
        raise PolicyStop(f"skill {slug!r} is {owner}'s: only its owner can change {', '.join(changed)}; "
                         "no new version was made")


def trusted_part(content: SkillContent) -> tuple[Any, ...]:
    """What an owner's trust covers (DESIGN §3.5, "trust is for one content
    version"): the replay's steps and anchors, the scope they and the
    frontmatter's ``teachd-*`` facts declare, and the approval."""
    inner = content.metadata.get("metadata")
    facts = sorted((str(k), str(v)) for k, v in inner.items() if str(k).startswith("teachd-")) \
        if isinstance(inner, dict) else []
    return (content.approval.to_dict(), *(content.files.get(path) for path in OWNERS_FILES), facts)
