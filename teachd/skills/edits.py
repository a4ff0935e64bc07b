"""Edits to a skill's content, as pure functions: the web UI's editor and
``teachd skills file`` / ``teachd skills approval`` make the same change
(each saved as a new version by the store)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from teachd.core.approval import GATED_TOOLS, Approval
from teachd.core.errors import BadInput, NotFound
from teachd.core.models import SkillContent
from teachd.core.paths import check_relpath

Edit = Callable[[SkillContent], SkillContent]


def put_file(path: str, text: str) -> Edit:
    rel = check_relpath(path)
    if rel == "SKILL.md":
        raise BadInput("SKILL.md is the skill itself: edit its description and instructions instead")

    def edit(current: SkillContent) -> SkillContent:
        return replace(current, files={**current.files, rel: text})

    return edit


def remove_file(path: str) -> Edit:
    rel = check_relpath(path)

    def edit(current: SkillContent) -> SkillContent:
        if rel not in current.files:
            raise NotFound(f"no file {rel!r} in this skill")
        return replace(current, files={k: v for k, v in current.files.items() if k != rel})

    return edit


def set_approval(always_ask: bool, tools: Iterable[str]) -> Edit:
    """``tools`` empty means all six gated tools (DESIGN §3.5)."""
    wanted = list(tools)
    unknown = [t for t in wanted if t not in GATED_TOOLS]
    if unknown:
        raise BadInput(f"unknown tool(s) {', '.join(unknown)}; tools are among: {', '.join(GATED_TOOLS)}")
    approval = Approval(always_ask, tuple(t for t in GATED_TOOLS if t in wanted))

    def edit(current: SkillContent) -> SkillContent:
        return replace(current, approval=approval)

    return edit
