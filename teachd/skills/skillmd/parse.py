"""Tolerant SKILL.md parsing, as a runtime loads skills.

Only two faults exclude a skill: frontmatter YAML that stays unreadable after
repair, and a missing description. Everything else loads with a warning, so
one sloppy file never hides the rest of a user's skills.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from teachd.core import yamlsafe
from teachd.core.errors import InvalidSkill
from teachd.core.skill_fields import (
    COMPATIBILITY_MAX,
    DESCRIPTION_MAX,
    SPEC_FIELDS,
    name_problems,
)

# Keys other runtimes put at the top level; kept, but as metadata.
_FOLDED_INTO_METADATA = ("globs", "alwaysApply")
_UNQUOTED_COLON = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_-]+):[ \t]+(?P<value>.*:.*)$")
_NEEDS_NO_REPAIR = tuple("\"'|>[{&*!#")


@dataclass
class SkillDoc:
    """A parsed SKILL.md: what a runtime needs, plus what was odd about it."""

    name: str
    description: str
    body: str
    frontmatter: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    header: str = ""  # the file's text up to and including the closing fence, byte for byte
    warnings: list[str] = field(default_factory=list)
    repaired: bool = False


def split_frontmatter(text: str) -> tuple[str, str]:
    """Split ``---`` frontmatter from the body; the closing fence is a line of its own."""
    _header, fm, body = split_header(text)
    return fm, body


def split_header(text: str) -> tuple[str, str, str]:
    """(the header as written — fences and all, up to the closing fence's line
    end —, the frontmatter between the fences, the body exactly as written)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom):].splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").strip() != "---":
        raise InvalidSkill("SKILL.md must start with a '---' frontmatter line")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").strip() in ("---", "..."):
            return bom + "".join(lines[: i + 1]), "".join(lines[1:i]), "".join(lines[i + 1 :])
    raise InvalidSkill("SKILL.md frontmatter is not closed by a '---' line")


def repair_yaml(text: str) -> str:
    """Quote plain scalars that contain a colon (``description: Use when: x``)."""
    out = []
    for line in text.splitlines():
        m = _UNQUOTED_COLON.match(line)
        value = m.group("value").strip() if m else ""
        if m and value and not value.startswith(_NEEDS_NO_REPAIR):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            line = f'{m.group("indent")}{m.group("key")}: "{escaped}"'
        out.append(line)
    return "\n".join(out) + "\n"


def load_frontmatter(text: str) -> tuple[dict[str, Any], bool]:
    """Load frontmatter YAML, repairing once; returns (mapping, repaired)."""
    try:
        data, repaired = yamlsafe.load(text), False
    except yaml.YAMLError as first:
        try:
            data, repaired = yamlsafe.load(repair_yaml(text)), True
        except yaml.YAMLError:
            raise InvalidSkill(f"frontmatter YAML is unreadable: {_one_line(first)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidSkill("frontmatter must be a YAML mapping")
    return {str(k): v for k, v in data.items()}, repaired


def parse_skill_md(text: str, folder_name: str | None = None, need_description: bool = True) -> SkillDoc:
    """Parse leniently; raise ``InvalidSkill`` only for the two excluding
    faults (``need_description=False``: another agent's skill may go without
    one, as its own runtime loads it — said as a warning)."""
    header, fm_text, body = split_header(text)
    fm, repaired = load_frontmatter(fm_text)
    warnings: list[str] = []
    if repaired:
        warnings.append("frontmatter needed quoting repairs (a value contains ':')")
        newline = "\r\n" if "\r\n" in header else "\n"
        bom = "\ufeff" if header.startswith("\ufeff") else ""
        header = bom + "---" + newline + repair_yaml(fm_text).replace("\n", newline) + "---" + newline

    description = fm.get("description")
    if (description is None or not str(description).strip()) and need_description:
        raise InvalidSkill("frontmatter has no description")
    description = str(description or "").strip()
    if not description:
        warnings.append("no description: a model cannot tell when to use it")
    if len(description) > DESCRIPTION_MAX:
        warnings.append(f"description is {len(description)} chars, over {DESCRIPTION_MAX}")

    name = fm.get("name")
    if name is None or not str(name).strip():
        if not folder_name:
            raise InvalidSkill("frontmatter has no name and there is no folder to name it")
        name = folder_name
    name = str(name).strip()
    warnings.extend(name_problems(name))
    if folder_name and name != folder_name:
        warnings.append(f"name {name!r} differs from its folder {folder_name!r}")

    compat = fm.get("compatibility")
    if compat is not None and len(str(compat)) > COMPATIBILITY_MAX:
        warnings.append(f"compatibility is over {COMPATIBILITY_MAX} chars")

    metadata: dict[str, Any] = {}
    raw_meta = fm.get("metadata")
    if isinstance(raw_meta, dict):
        metadata.update({str(k): v for k, v in raw_meta.items()})
    elif raw_meta is not None:
        warnings.append("metadata is not a mapping; ignored")
    for key, value in fm.items():
        if key in SPEC_FIELDS:
            continue
        if key not in _FOLDED_INTO_METADATA:
            warnings.append(f"unknown frontmatter key {key!r} kept as metadata")
        metadata.setdefault(key, value)

    doc = SkillDoc(
        name=name,
        description=description,
        body=body,
        frontmatter=fm,
        metadata=metadata,
        warnings=warnings,
        repaired=repaired,
        header=header,
    )
    return doc


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
