"""``skill://name[/path]`` URLs, resolved among discovered skills, then the store.

No fallback search: the name picks one skill, the path one file inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from teachd.core.errors import BadInput, Conflict, NotFound, UnsafePath
from teachd.core.paths import check_relpath
from teachd.skills.discovery import Found
from teachd.skills.disk import DiskSkill
from teachd.skills.exchange import export_md
from teachd.store import SkillStore


@dataclass
class Resource:
    url: str
    content_type: str
    text: str


def parse_skill_url(url: str) -> tuple[str, str | None]:
    parts = urlsplit(url)
    if parts.scheme != "skill" or not parts.netloc:
        raise BadInput(f"not a skill:// URL: {url!r}")
    if parts.query or parts.fragment:
        raise BadInput("skill:// URLs take no query or fragment")
    raw = parts.path.lstrip("/")
    if not raw:
        return parts.netloc, None
    decoded = unquote(raw)
    return parts.netloc, check_relpath(decoded)


def content_type_for(path: str) -> str:
    """As seed 000 types a skill's files: Markdown, else plain text."""
    return "text/markdown" if path.lower().endswith(".md") else "text/plain"


def read_skill_url(url: str, found: dict[str, Found], store: SkillStore | None) -> Resource:
    name, rel = parse_skill_url(url)
    rel = rel or "SKILL.md"
    if name in found:  # read as an agent reads it: inside the folder, text only, within the limit
        return Resource(url, content_type_for(rel), DiskSkill.of(found[name]).read(rel))
    if store is not None and store.exists(name):
        skill = store.get(name)
        if not skill.enabled:
            raise Conflict(f"skill {name!r} is disabled")
        if rel == "SKILL.md":
            return Resource(url, "text/markdown", export_md(skill))
        if rel not in skill.current.files:
            raise NotFound(f"File not found: {rel} in skill {name}")
        return Resource(url, content_type_for(rel), skill.current.files[rel])
    raise NotFound(f"no skill named {name!r}")


__all__ = ["Resource", "UnsafePath", "content_type_for", "parse_skill_url", "read_skill_url"]
