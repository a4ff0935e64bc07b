"""Runs over HTTP: start one (with its parameters), follow it live (its plan,
its steps and their pictures, what it waits for), cancel it, run it again,
and the one click after it (undoable for a minute). The run page
(``/runs/{id}``) is built on these routes, and renders ``run_view``: what
``GET /api/runs/{id}`` answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from teachd.core.errors import BadInput, NotFound
from teachd.core.outcomes import feedback_refused, numbered
from teachd.runner.feedback import OUTCOMES, UNDO_SECONDS, give_feedback, undo_feedback
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse, json_bytes
from teachd.server.state import Daemon

STREAM_EVERY = 0.3  # seconds between looks at a followed run
STREAM_MAX = 3600.0  # a stream ends after this long; the page reconnects
_KINDS = ("before", "after")  # a step's pictures on its row
_SERVED = (*_KINDS, "now", "demonstrated")  # ... the page as it was when a person was asked to show the
# step; and a changed step's target as the demonstration showed it (its recording's crop)


def with_evidence(d: Daemon, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Waiting questions, each with the demonstration's picture of its
    step's target where the run kept one (``demonstrated``: its address)."""
    shots: dict[str, set[tuple[int, str]]] = {}
    out = []
    for p in pending:
        run_id, n = str(p.get("run_id") or ""), p.get("step")
        if run_id and run_id not in shots:
            shots[run_id] = d.runs.pictures_of(run_id)
        has = isinstance(n, int) and (n, "demonstrated") in shots.get(run_id, set())
        url = f"/api/runs/{run_id}/pictures/{n}/demonstrated"
        out.append({**p, **({"demonstrated": url} if has else {})})
    return out


def run_view(d: Daemon, run: dict[str, Any]) -> dict[str, Any]:
    """A run as the run page shows it: its record, what waits on it, the
    pictures it has, whether feedback is open."""
    run_id = run["run_id"]
    shots = d.runs.pictures_of(run_id)
    pictures = {n: {k: f"/api/runs/{run_id}/pictures/{n}/{k}" for k in _KINDS if (n, k) in shots}
                for n in sorted({n for n, _k in shots})}
    steps = [{**st, "pictures": pictures.get(int(st["n"]), {})} for st in numbered(run.get("steps"))]
    waiting = with_evidence(d, d.approvals.pending(run_id))
    secrets = [s for s in d.secrets.pending() if s.get("run_id") == run_id]
    given, undo_left = d.runs.feedback_of(run_id, UNDO_SECONDS)
    return {**run, "steps": steps, "waiting": waiting, "secrets_waiting": secrets,
            "feedback": given, "undo_left": undo_left, "place": d.queue_place(run),
            "feedback_open": feedback_refused(run) is None, "undo_seconds": UNDO_SECONDS}


async def runs_list(request: Request) -> JSONResponse:
    """
    summary: Recent runs (CLI, daemon, agents), the skills each loaded and used, and feedback given
    responses:
      200: {description: runs}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(lambda: [
        {**r, "feedback": d.runs.feedback_given(r["run_id"]), "feedback_open": feedback_refused(r) is None}
        for r in d.runs.recent()]))


async def workers_list(request: Request) -> JSONResponse:
    """
    summary: The run queue on the team store, how many runs wait and run, and each worker taking them
    description: On the embedded store (SQLite) runs run in the daemon and there is no queue (`queue` null).
    responses:
      200: {description: "the queue's depth, and each worker's name, host, slots, what it can run, heartbeat"}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.run_queue) or {"queue": None, "workers": []})


async def run_show(request: Request) -> JSONResponse:
    """
    summary: One run, as its page shows it (plan, live steps with their pictures, what it waits for)
    responses:
      200: {description: the run}
      404: {description: no such run}
    """
    d = daemon(request)
    run_id = request.path_params["run_id"]
    return JSONResponse(await run_in_threadpool(lambda: run_view(d, d.runs.one(run_id))))


def _params(data: dict[str, Any]) -> dict[str, str]:
    params = data.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                               for k, v in params.items()):
        raise BadInput("parameters are names with text values")
    return params


async def runs_start(request: Request) -> JSONResponse:
    """
    summary: Replay a skill (`slug`, `params`, `start_url`); answers with its run id at once
    description: >-
      A second start of the same skill while the first is still starting is refused (409). On the team
      store the run waits in the run queue, and the answer says where (`place`: `ahead`, `slots`,
      `starts_in_s`).
    responses:
      200: {description: "the run id: follow it at /runs/{run_id}"}
      409: {description: a run of that skill is starting already}
    """
    data = await body(request)
    slug = text_field(data, "slug")
    if not slug:
        raise BadInput("choose a skill to run")
    params, start_url = _params(data), text_field(data, "start_url") or None
    if start_url is not None and not start_url.lower().startswith(("http://", "https://")):
        raise BadInput("the start address must be a web address (http:// or https://)")
    d = daemon(request)
    run_id = await run_in_threadpool(d.jobs.start, slug, params, start_url)
    return JSONResponse({"run_id": run_id, "job": run_id, "page": f"/runs/{run_id}",
                         **await run_in_threadpool(_placed, d, run_id)})


def _placed(d: Daemon, run_id: str) -> dict[str, Any]:
    """On the team store: where the run stands in the run queue (how many
    before it, about when it starts), so a client sees the queue's length."""
    place = d.queue_place(d.runs.one(run_id)) if d.queue is not None else None
    return {"place": place} if place else {}


async def run_again(request: Request) -> JSONResponse:
    """
    summary: Run the same skill again with the same parameters and start address
    responses:
      200: {description: the new run's id}
      409: {description: the run has not ended}
    """
    d = daemon(request)
    run_id = await run_in_threadpool(d.jobs.again, request.path_params["run_id"])
    placed = await run_in_threadpool(_placed, d, run_id)
    return JSONResponse({"run_id": run_id, "page": f"/runs/{run_id}", **placed})


async def run_cancel(request: Request) -> JSONResponse:
    """
    summary: Cancel a running run; it stops between steps and what it waits for is withdrawn
    responses:
      200: {description: cancelled}
      409: {description: the run has ended already}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.jobs.cancel, request.path_params["run_id"], d.user))


async def run_picture(request: Request) -> Response:
    """
    summary: A step's picture, JPEG
    description: >-
      `before`, the target as it was acted on; `after`, the page; `now`, the page where its
      target was not found, as a person was asked to show it
    responses:
      200: {description: the picture}
      404: {description: no such picture}
    """
    d = daemon(request)
    kind = request.path_params["kind"]
    if kind not in _SERVED:
        raise NotFound("a picture is before, after or now")
    run_id, n = request.path_params["run_id"], request.path_params["n"]
    jpeg = await run_in_threadpool(d.runs.picture, run_id, n, kind)
    return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


async def run_events(request: Request) -> Response:
    """
    summary: The run live, as server-sent events (`run` with the run whenever it changes, `end` once it ended)
    description: The page key may come as `?key=` here (EventSource sends no headers).
    responses:
      200: {description: "text/event-stream"}
      404: {description: no such run}
    """
    d = daemon(request)
    run_id = request.path_params["run_id"]
    await run_in_threadpool(d.runs.one, run_id)  # 404 now, not inside the stream

    async def stream() -> AsyncIterator[bytes]:
        last, waited = "", 0.0
        yield b"retry: 2000\n\n"
        while waited < STREAM_MAX:
            if await request.is_disconnected():
                return
            view = await run_in_threadpool(lambda: run_view(d, d.runs.one(run_id)))
            text = json_bytes(view, sort_keys=True).decode("utf-8")
            if text != last:
                last = text
                yield f"event: run\ndata: {text}\n\n".encode()
            if view["status"] != "running":
                yield b"event: end\ndata: {}\n\n"
                return
            await asyncio.sleep(STREAM_EVERY)
            waited += STREAM_EVERY

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def run_feedback(request: Request) -> JSONResponse:
    """
    summary: One click on a run's skill chip (`slug`, `outcome`); a second click records nothing more
    description: Only on a run that ended having tried (not running, not stopped by a deny or a cancel,
      not ended before its first step).
    responses:
      200: {description: the skill's version after it}
      409: {description: "the run is still running, or it stopped before it could show anything"}
    """
    data = await body(request)
    slug, outcome = text_field(data, "slug"), text_field(data, "outcome")
    if not slug or outcome not in OUTCOMES:
        raise BadInput("say which skill and whether it worked (success or failure)")
    d = daemon(request)
    run_id = request.path_params["run_id"]
    note = text_field(data, "note")

    def give() -> dict[str, Any]:  # the store's reads and writes: off the event loop
        given = give_feedback(d.runs, run_id, slug, str(outcome), note)
        return {**given.skill.summary(), "feedback": given.run_holds,
                "recorded": given.recorded, "undo_seconds": UNDO_SECONDS}

    return JSONResponse(await run_in_threadpool(give))


async def run_feedback_undo(request: Request) -> JSONResponse:
    """
    summary: Take a chip's click back within a minute (a new version without its History line)
    responses:
      200: {description: the skill's version after it}
      409: {description: too late, or the skill changed since}
    """
    d = daemon(request)
    run_id, slug = request.path_params["run_id"], request.path_params["slug"]

    def undo() -> dict[str, Any]:
        skill = undo_feedback(d.runs, run_id, slug)
        return {**skill.summary(), "feedback": d.runs.feedback_given(run_id)}

    return JSONResponse(await run_in_threadpool(undo))


async def waiting(request: Request) -> JSONResponse:
    """
    summary: How many approvals and secrets wait for you (the count in the navigation)
    responses:
      200: {description: "approvals and secrets waiting"}
    """
    d = daemon(request)
    approvals = await run_in_threadpool(d.approvals.waiting)
    return JSONResponse({"approvals": approvals, "secrets": len(d.secrets.pending())})


async def skill_runs(request: Request) -> JSONResponse:
    """
    summary: The runs of your skill by anyone (you, and people you shared it with), newest first
    responses:
      200: {description: "run id, who, status, when, version"}
    """
    d = daemon(request)
    slug = request.path_params["slug"]
    return JSONResponse(await run_in_threadpool(d.runs.of_skill, slug))

