"""Teaching over HTTP, as the Teach page drives it: start recording a
demonstration, follow it, steer it (pause, resume, undo, mark a field
secret), stop and compile it — and "Show me", the repair of a run that
halted at a step. The demonstration uses the daemon owner's display, so
``Teaching`` (``teachd.server.jobs``) lets only the owner start or steer one."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from teachd.core.errors import BadInput
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse
from teachd.teach.edits import edits_from


async def teach_status(request: Request) -> JSONResponse:
    """
    summary: The demonstration being recorded (live steps), or the last one's result
    responses:
      200: {description: status}
    """
    d = daemon(request)
    return JSONResponse(d.teaching.status(d.user))


async def teach_start(request: Request) -> JSONResponse:
    """
    summary: Start recording a demonstration (`name`, `url`; `headless` for machines with no display)
    responses:
      200: {description: status}
      409: {description: one is being recorded}
    """
    data = await body(request)
    name, url = text_field(data, "name"), text_field(data, "url")
    if not name or not name.strip():
        raise BadInput("the task needs a name")
    if not url or not url.startswith(("http://", "https://")):
        raise BadInput("the start URL must be http(s)")
    d = daemon(request)
    headless = bool(data.get("headless")) or not d.settings.display
    return JSONResponse(d.teaching.start(name.strip(), url, headless, d.user))


async def run_repair(request: Request) -> JSONResponse:
    """
    summary: Show me — repair the skill of a run that halted at a step (`headless` for no display)
    description: The Teach page follows it. Steps before the halted one are replayed first, asking on
      the Approvals page; then the browser waits for the person to show the step, until Done.
    responses:
      200: {description: status}
      400: {description: the run did not halt at a step}
      403: {description: the skill is shared with you to use only}
      409: {description: a demonstration is being recorded, or the skill changed since the run}
    """
    from teachd.teach.repair import banner, repair_target

    data = await body(request)
    d = daemon(request)
    target = await run_in_threadpool(repair_target, d.runs, request.path_params["run_id"])
    headless = bool(data.get("headless")) or not d.settings.display
    return JSONResponse(d.teaching.repair(target.run_id, target.name, target.step.n, banner(target.step),
                                          headless, d.user))


async def teach_apply(request: Request) -> JSONResponse:
    """
    summary: Save the last repair, refused for leaving the skill's scope, with that site allowed
    responses:
      200: {description: status with the result}
      404: {description: no repair waits for that}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.apply_repair, d.store, d.user))


async def teach_command(request: Request) -> JSONResponse:
    """
    summary: Pause, resume, undo the last step, or mark the next field secret (`kind`), as the page's bar does
    description: Answers once the recorder applied it (`applied`), or after 10 s without (`applied` false).
    responses:
      200: {description: status}
      404: {description: nothing is being recorded}
    """
    kind = text_field(await body(request), "kind") or ""
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.command, kind, d.user))


async def teach_stop(request: Request) -> JSONResponse:
    """
    summary: Stop recording; the demonstration waits for its review (save or discard)
    description: >-
      A demonstration the Teach page started is kept for the person's review: the result says
      `review`, its steps are listed (each with the `seq` that names it); a repair is saved at once.
    responses:
      200: {description: status with the result}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.stop, d.user))


async def teach_save(request: Request) -> JSONResponse:
    """
    summary: Save the reviewed demonstration as a skill, as the person changed it
    description: >-
      Each field names steps by the `seq` the review lists: `drop` leaves them out, `names`
      ({seq: text}) gives a step the person's own name, `fixed` keeps a typed or chosen value the
      same on every run (no parameter asked for), `secret` masks a value after the fact (the
      recording is rewritten without it, its pictures from that step on deleted), and `checks`
      ([text]) are words the final page must show for a run to succeed.
    responses:
      200: {description: status with the result, naming the skill}
      400: {description: an edit names no step of this demonstration, or does not fit the step}
      404: {description: no demonstration waits for its review}
    """
    edits = edits_from(await body(request))
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.save, d.store, d.user, edits))


async def teach_discard(request: Request) -> JSONResponse:
    """
    summary: Throw the reviewed demonstration away, its recording with it
    responses:
      200: {description: status}
      404: {description: no demonstration waits for its review}
    """
    d = daemon(request)
    return JSONResponse(await run_in_threadpool(d.teaching.discard, d.user))
