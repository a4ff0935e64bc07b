"""Starter templates: spec-valid skills shipped with the package, to create a
skill from and edit (``teachd skills create SLUG --from-template T``, the
Skills page's *New skill* form). A template is a folder under
``templates/`` holding one SKILL.md, read through importlib.resources so the
installed wheel finds it as the checkout does."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from teachd.core.approval import Approval
from teachd.core.errors import BadInput, NotFound
from teachd.core.models import SkillContent
from teachd.core.skill_fields import DESCRIPTION_MAX, DISPLAY_NAME_MAX, name_problems
from teachd.skills.skillmd import parse_skill_md


@dataclass(frozen=True)
class Template:
    name: str
    title: str
    description: str
    instructions: str


@cache
def _shipped() -> tuple[Template, ...]:
    """Read once: the package's files do not change while it runs."""
    found = []
    folder = resources.files("teachd.skills").joinpath("templates")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        skill_md = entry.joinpath("SKILL.md")
        if entry.is_dir() and skill_md.is_file():
            doc = parse_skill_md(skill_md.read_text(encoding="utf-8"), entry.name)
            title = str(doc.metadata.get("display-name") or doc.name)
            found.append(Template(doc.name, title, doc.description, doc.body.lstrip("\n")))
    return tuple(found)


def templates() -> list[Template]:
    """Every shipped template, by name."""
    return list(_shipped())


def template(name: str) -> Template:
    for t in templates():
        if t.name == name:
            return t
    raise NotFound(f"no template {name!r}; there are: {', '.join(t.name for t in templates())}")


def new_skill(slug: str, name: str | None = None, description: str | None = None,
              instructions: str | None = None, from_template: str | None = None,
              always_ask: bool = False) -> SkillContent:
    """A new skill's first content: what was given, else the template's.
    The description is what a model reads to choose the skill, so it is
    required, from the person or the template."""
    problems = name_problems(slug)
    if problems:
        raise BadInput(f"bad slug: {problems[0]}")
    start = template(from_template) if from_template else None
    description = (description or (start.description if start else "")).strip()
    if not description:
        raise BadInput("a new skill needs a description: the one line a model reads to know when to use it")
    if len(description) > DESCRIPTION_MAX:
        raise BadInput(f"the description is {len(description)} characters, over the spec's {DESCRIPTION_MAX}")
    body = instructions if instructions is not None else (start.instructions if start else "")
    if not body.strip():
        body = f"# {name or slug}\n\nWhat to do, step by step:\n\n1. \n"
    title = checked_display_name(name or (start.title if start else "") or slug)
    return SkillContent(name=title, description=description,
                        instructions=body if body.endswith("\n") else body + "\n",
                        approval=Approval(True) if always_ask else Approval())


def checked_display_name(name: str) -> str:
    """A display name as the store keeps it: trimmed, not empty, not a page long."""
    name = name.strip()
    if not name or len(name) > DISPLAY_NAME_MAX:
        raise BadInput(f"a display name is 1 to {DISPLAY_NAME_MAX} characters")
    return name
