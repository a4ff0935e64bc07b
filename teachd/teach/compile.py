"""Taught skills between the compiler and the store: compile a recording,
save it as a new skill or as a new version of the same slug."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.skill import CompiledSkill, compile_recording
from teachd.core.approval import Approval
from teachd.core.models import Skill
from teachd.skills.skillmd import render_skill_md
from teachd.store import SkillContent, SkillStore
from teachd.store.origins import TAUGHT
from teachd.teach.recordings import read_recording


def compile_dir(folder: Path) -> CompiledSkill:
    """The recording compiled, as the person reviewed it (the review is in
    the recording: teach.edits)."""
    return compile_recording(read_recording(folder))


def skill_files(compiled: CompiledSkill) -> dict[str, bytes]:
    return compiled.files(render_skill_md)


def content_of(compiled: CompiledSkill) -> SkillContent:
    fm = compiled.frontmatter
    meta: dict[str, Any] = {k: fm[k] for k in ("license", "compatibility", "allowed-tools") if k in fm}
    meta["metadata"] = {k: v for k, v in fm.get("metadata", {}).items() if k != "display-name"}
    return SkillContent(
        name=compiled.display_name,
        description=compiled.description,
        instructions=compiled.body,
        files=dict(compiled.references),
        approval=Approval(bool(compiled.approval_tools), compiled.approval_tools),
        metadata=meta,
    )


def save_compiled(store: SkillStore, compiled: CompiledSkill, note: str) -> Skill:
    """A new skill, or a new version of the same slug (taught again): the
    compiled approval holds either way, in one transaction."""
    content = content_of(compiled)
    return store.save(compiled.slug, lambda _previous: content, note=note, origin=TAUGHT)
