"""Edits that save a new version of a skill, as the skill page makes them:
its name, description and instructions; one bundled file put or removed; its
approval; an older revision made current again. Each answers with the skill
after it (``skill_view``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from teachd.core.approval import GATED_TOOLS
from teachd.core.errors import BadInput
from teachd.server.api.common import body, daemon, text_field
from teachd.server.api.skills import skill_view
from teachd.server.responses import JSONResponse
from teachd.skills.edits import put_file, remove_file, set_approval


async def skill_content(request: Request) -> JSONResponse:
    """
    summary: Save a new version with another display name (`name`), description and/or instructions
    responses:
      200: {description: the skill}
      422: {description: not a valid skill}
    """
    data = await body(request)
    description, instructions = text_field(data, "description"), text_field(data, "instructions")
    name = text_field(data, "name")
    if name is not None:
        from teachd.skills.templates import checked_display_name

        name = checked_display_name(name)
    d = daemon(request)

    def edit(current: Any) -> Any:
        return replace(current, description=description if description is not None else current.description,
                       instructions=instructions if instructions is not None else current.instructions,
                       name=name if name is not None else current.name)

    slug = request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note="edited in the web UI"))))


async def skill_file(request: Request) -> JSONResponse:
    """
    summary: Put (PUT, with `text`) or remove (DELETE) one bundled file, as a new version
    responses:
      200: {description: the skill}
      400: {description: a path that leaves the skill}
      413: {description: over a limit}
    """
    path = request.path_params["path"]
    d = daemon(request)
    text = text_field(await body(request), "text") if request.method == "PUT" else None
    if request.method == "PUT" and text is None:
        raise BadInput("a file needs its text")

    edit = remove_file(path) if text is None else put_file(path, text)
    verb = "removed" if text is None else "edited"
    slug = request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note=f"{verb} {path} in the web UI"))))


async def skill_approval(request: Request) -> JSONResponse:
    """
    summary: Set the approval (`always_ask`, `tools` — none meaning all six), as a new version
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    tools = data.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise BadInput(f"tools are among: {', '.join(GATED_TOOLS)}")
    d, slug = daemon(request), request.path_params["slug"]
    edit = set_approval(bool(data.get("always_ask")), tools)
    return JSONResponse(await run_in_threadpool(
        lambda: skill_view(d, d.store.update(slug, edit, note="approval edited in the web UI"))))


async def skill_restore(request: Request) -> JSONResponse:
    """
    summary: Make revision `version` current again, as a new version
    responses:
      200: {description: the skill}
    """
    data = await body(request)
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise BadInput("version must be a whole number from 1")
    d, slug = daemon(request), request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(lambda: skill_view(d, d.store.restore(slug, version))))
