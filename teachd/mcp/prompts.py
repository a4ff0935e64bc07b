"""The MCP prompts: ``skill:<slug>``, the ``/skill:<slug> [args]`` command
of seed 000, for the store skills a person may see and then the disk skills
they are served — while config.yaml's ``skills.enableSkillCommands`` is on.

Getting one loads the skill into the session exactly as ``load_skill`` does.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from mcp_types import GetPromptResult, PromptMessage, TextContent
from mcp_types import Prompt as MCPPrompt
from mcp_types import PromptArgument as MCPPromptArgument

from compiler.names import PROMPT_ARGS
from compiler.plan import PlanError, Procedure
from teachd.core.errors import TeachdError
from teachd.core.models import Skill
from teachd.mcp.resources import SKILL_URI
from teachd.mcp.session import Services, Sessions
from teachd.runner.session import visible_skills
from teachd.skills.disk import DiskSkill

ARGS = PROMPT_ARGS  # /skill:<slug> [args]: what the person typed after the command (no parameter's name)
ARGS_SAY = "what you typed after /skill:<name>, passed to the skill as User: <args>"


def _invalid(message: str) -> MCPError:
    """A request naming what does not exist (a prompt, an argument): JSON-RPC's -32602."""
    return MCPError(INVALID_PARAMS, message)


def listed(services: Services) -> list[MCPPrompt]:
    """Every prompt of the person whose services these are (none while skill commands are off)."""
    if not services.settings.skill_commands:
        return []
    return [MCPPrompt(name=f"skill:{s.slug}", description=s.current.description,
                      arguments=[MCPPromptArgument(name=ARGS, description=ARGS_SAY, required=False),
                                 *(MCPPromptArgument(name=p, description=_described(d), required=False)
                                   for p, d in sorted(_parameters(s).items()))])
            for s in visible_skills(services.runs.skills, services.opts.profile)] + [
            MCPPrompt(name=f"skill:{d.name}", description=d.description or None,
                      arguments=[MCPPromptArgument(name=ARGS, description=ARGS_SAY, required=False)])
            for d in services.disk_skills()]


async def prompt(sessions: Sessions, services: Services, name: str, arguments: dict[str, Any] | None,
                 context: Any) -> GetPromptResult:
    """``/skill:<slug> [args]`` as seed 000 says: the skill's body (its
    frontmatter stripped), then ``Skill: <path>`` and, when given,
    ``User: <args>`` — a taught skill's declared parameters after them.

    Getting the prompt loads the skill into the session exactly as
    ``load_skill`` does (``McpRun.load_skill``): the body is in the
    agent's hands from now on, so the skill's approval holds for every
    later call of the session, and its run lists it."""
    if not services.settings.skill_commands:
        raise _invalid("skill commands are off (config.yaml skills.enableSkillCommands: false)")
    slug = name.removeprefix("skill:")
    skill, disk = await anyio.to_thread.run_sync(_prompt_of, services, name, slug)
    if skill is None and disk is None:
        raise _invalid(f"no prompt {name!r}: prompts are skill:<slug> for the enabled skills")
    params = _parameters(skill) if skill is not None else {}
    unknown = sorted(set(arguments or {}) - set(params) - {ARGS})
    if unknown:
        raise _invalid(f"unknown argument(s) {', '.join(unknown)}; this skill takes: "
                       f"{', '.join([ARGS, *sorted(params)])}")
    given = {k: str(v) for k, v in (arguments or {}).items() if k in params and str(v)}
    said = str((arguments or {}).get(ARGS) or "").strip()
    try:  # armed before a word of the body is handed out; a skill that cannot load gives none
        run = await anyio.to_thread.run_sync(sessions.run_for, context)
        await anyio.to_thread.run_sync(run.load_skill, slug)
    except TeachdError as exc:
        raise _invalid(f"{name}: {exc}") from None
    if skill is not None:
        skill = run.session.loaded.get(slug, skill)  # the version just loaded (and recorded)
    if disk is not None:  # read from its file now, as seed 000 does: the path is the file's
        try:
            body = await anyio.to_thread.run_sync(disk.body)
            where, description = str(disk.skill_md), disk.description
        except TeachdError as exc:
            raise _invalid(f"{name}: {exc}") from None
    else:
        assert skill is not None
        body, where = skill.current.instructions, f"{SKILL_URI}{slug}/SKILL.md"
        description = skill.current.description
    text = (body.rstrip("\n") + f"\n\nSkill: {where}" + (f"\nUser: {said}" if said else "")
            + "".join(f"\nParameter {k}: {v}" for k, v in sorted(given.items())))
    message = PromptMessage(role="user", content=TextContent(type="text", text=text))
    return GetPromptResult(description=description or None, messages=[message])


def _prompt_of(services: Services, name: str, slug: str) -> tuple[Skill | None, DiskSkill | None]:
    """The store skill, else the disk skill, a prompt's name gives (None, None: neither)."""
    if not name.startswith("skill:"):
        return None, None
    skill = next((s for s in visible_skills(services.runs.skills, services.opts.profile) if s.slug == slug),
                 None)
    return skill, None if skill is not None else services.disk_skill(slug)


def _parameters(skill: Skill) -> dict[str, dict[str, Any]]:
    try:
        return Procedure.from_files(skill.current.files).parameters if skill.is_taught else {}
    except PlanError:
        return {}


def _described(spec: dict[str, Any]) -> str:
    """A parameter as a person reads it: what it fills, and its demonstrated value."""
    what = str(spec.get("description") or spec.get("describe") or "").replace("**", "")
    default = spec.get("default")
    shown = f"{what} (demonstrated: {default})" if what and default not in (None, "") else what
    return shown or "a value to type"
