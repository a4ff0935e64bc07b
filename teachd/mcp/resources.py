"""The MCP resources: ``skill://<slug>`` (its SKILL.md) and
``skill://<slug>/<path>`` (a bundled file), for the store skills a person
may see and then the disk skills they are served.

Reading one is the tool ``read_skill_file``: the same call, which loads the
skill into the session (its gate armed) before a word of it is handed out.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp_types import Resource as MCPResource

from teachd.core.errors import TeachdError
from teachd.core.paths import check_relpath
from teachd.mcp.session import Services, Sessions
from teachd.runner.session import visible_skills
from teachd.skills.urls import content_type_for

SKILL_URI = "skill://"


def listed(services: Services) -> list[MCPResource]:
    """Every resource of the person whose services these are."""
    out = []
    for s in visible_skills(services.runs.skills, services.opts.profile):
        out.append(MCPResource(uri=f"{SKILL_URI}{s.slug}", name=f"{s.slug}/SKILL.md",
                               description=s.current.description, mime_type="text/markdown"))
        out += [MCPResource(uri=f"{SKILL_URI}{s.slug}/{path}", name=f"{s.slug}/{path}",
                            mime_type=content_type_for(path)) for path in sorted(s.current.files)]
    for d in services.disk_skills():
        out.append(MCPResource(uri=f"{SKILL_URI}{d.name}", name=f"{d.name}/SKILL.md",
                               description=d.description or None, mime_type="text/markdown"))
        out += [MCPResource(uri=f"{SKILL_URI}{d.name}/{path}", name=f"{d.name}/{path}",
                            mime_type=content_type_for(path)) for path in d.files()]
    return out


def named(uri: Any) -> tuple[str, str]:
    """The skill's slug and the raw path (empty: its SKILL.md) a resource's URI names."""
    text = str(uri)
    if not text.startswith(SKILL_URI):
        raise ResourceNotFoundError(f"unknown resource {text}: teachd serves skill://slug[/path]")
    slug, _, raw = unquote(text[len(SKILL_URI):]).partition("/")
    return slug, raw


def read(sessions: Sessions, context: Any, slug: str, raw: str) -> list[ReadResourceContents]:
    """The resource is the tool ``read_skill_file``: the same call, which
    loads the skill into the session (its gate armed) before a word of it
    is handed out."""
    try:
        path = check_relpath(raw) if raw else "SKILL.md"
        text = sessions.run_for(context).read_skill_file(slug, path)
        kind = "text/markdown" if path == "SKILL.md" else content_type_for(path)
        return [ReadResourceContents(text, kind)]
    except TeachdError as exc:
        raise ResourceNotFoundError(str(exc)) from None
