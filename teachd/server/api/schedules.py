"""Schedules over HTTP, as ``teachd schedule`` and the Schedules page: list
them (next run, last outcome), add one (cron or interval, parameters,
profile, health check), pause, resume, run now or remove one — and whether
this daemon is the one on its store that runs them."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from teachd.core.errors import BadInput, NotFound
from teachd.core.schedules import DEFAULT_TIMEOUT, spec_from
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse
from teachd.server.state import Daemon
from teachd.store.profiles import profile_names
from teachd.store.schedules import ScheduleStore


def schedule_views(d: Daemon) -> list[dict[str, Any]]:
    return ScheduleStore(d.store).listed()


async def schedules_list(request: Request) -> JSONResponse:
    """
    summary: The schedules, each with its next run time and last outcome
    responses:
      200: {description: schedules}
    """
    return JSONResponse(await run_in_threadpool(schedule_views, daemon(request)))


async def scheduler_state(request: Request) -> JSONResponse:
    """
    summary: Whether this daemon runs the scheduled jobs (one daemon per store does)
    responses:
      200: {description: "leading: true here; false when another daemon on the store runs them"}
    """
    return JSONResponse({"leading": daemon(request).schedules.leading})


async def schedule_add(request: Request) -> JSONResponse:
    """
    summary: Add a schedule (`slug`, `cron` or `every`, `params`, `start_url`, `profile`, `check`, `timeout`)
    responses:
      200: {description: the schedule's id}
      400: {description: a bad cron expression, interval or parameter}
    """
    data = await body(request)
    params = data.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise BadInput("params is an object of NAME: text")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise BadInput("timeout is a number of seconds")
    d = daemon(request)

    def add() -> int:
        spec = spec_from(text_field(data, "slug") or "", cron=text_field(data, "cron"),
                         every=text_field(data, "every"), params=params, profile=text_field(data, "profile"),
                         check=bool(data.get("check")), timeout=timeout,
                         profiles=profile_names(d.settings, d.store),
                         start_url=text_field(data, "start_url") or None)
        return ScheduleStore(d.store).add(spec)

    sid = await run_in_threadpool(add)
    d.schedules.sync_soon()
    return JSONResponse({"id": sid})


async def schedule_change(request: Request) -> JSONResponse:
    """
    summary: pause, resume or run now (`action` in the path) one schedule
    responses:
      200: {description: done}
      404: {description: no such schedule}
    """
    d = daemon(request)
    sid, action = request.path_params["sid"], request.path_params["action"]
    store = ScheduleStore(d.store)
    if action in ("pause", "resume"):
        await run_in_threadpool(store.set_paused, sid, action == "pause")
        d.schedules.sync_soon()
    elif action == "run":
        def run_now() -> None:
            store.get(sid)  # 404 for a schedule of someone else's
            d.schedules.run_now(sid)

        await run_in_threadpool(run_now)
    else:
        raise NotFound(f"no action {action!r}: pause, resume or run")
    return JSONResponse({"id": sid, "done": action})


async def schedule_remove(request: Request) -> JSONResponse:
    """
    summary: Remove a schedule (its past runs stay)
    responses:
      200: {description: removed}
    """
    d = daemon(request)
    await run_in_threadpool(ScheduleStore(d.store).remove, request.path_params["sid"])
    d.schedules.sync_soon()
    return JSONResponse({"removed": True})
