"""Sharing over HTTP, as ``skills share`` and ``unshare``: who your skill is
shared with, sharing it with a person or a ``@group`` (to use or to edit),
taking a grant back — and the people and groups there are to share with."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse
from teachd.store.grants import GrantStore
from teachd.store.groups import GroupStore
from teachd.store.users import UserStore


async def grants_list(request: Request) -> JSONResponse:
    """
    summary: Who your skill is shared with (`with`, `can`)
    responses:
      200: {description: the grants}
      403: {description: not your skill}
    """
    d, slug = daemon(request), request.path_params["slug"]

    def grants() -> list[dict[str, Any]]:
        d.store.own(slug)
        return GrantStore(d.store).of(slug)

    return JSONResponse(await run_in_threadpool(grants))


async def grant_add(request: Request) -> JSONResponse:
    """
    summary: Share your skill (`with` a user or `@group`, `can` use or edit), as `skills share`
    responses:
      200: {description: the grants after it}
      400: {description: no such user or group}
      403: {description: not your skill}
    """
    data = await body(request)
    d = daemon(request)
    grants = await run_in_threadpool(GrantStore(d.store).share, request.path_params["slug"],
                                     text_field(data, "with") or "", text_field(data, "can") or "use")
    return JSONResponse(grants)


async def grant_remove(request: Request) -> JSONResponse:
    """
    summary: Take a grant back, as `skills unshare` (the skill leaves their manifests at once)
    responses:
      200: {description: the grants after it}
    """
    d = daemon(request)
    slug, grantee = request.path_params["slug"], request.path_params["grantee"]
    return JSONResponse(await run_in_threadpool(GrantStore(d.store).unshare, slug, grantee))


async def people(request: Request) -> JSONResponse:
    """
    summary: Who you are, and the people and groups a skill can be shared with
    responses:
      200: {description: "`me`, `users` (active names) and `groups`"}
    """
    d = daemon(request)

    def listed() -> dict[str, Any]:
        users = [u["name"] for u in UserStore(d.store.db).all() if not u["revoked_at"]]
        return {"me": d.user, "users": users, "groups": sorted(GroupStore(d.store.db).all())}

    return JSONResponse(await run_in_threadpool(listed))
