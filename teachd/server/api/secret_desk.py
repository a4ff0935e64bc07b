"""The secret desk over HTTP: a run asks for a secret it must type (bearer
token only), the person types it on ``/secrets/{id}``, and the asker takes it
back once (bearer token only) or stops waiting. Values are kept in memory
until taken and never listed; a page's cookie can never read one back."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from teachd.core.errors import BadInput, PolicyStop
from teachd.server.api.common import body, daemon, text_field
from teachd.server.responses import JSONResponse


def _bearer_only(request: Request) -> None:
    """What only an asking process may do (never a page's cookie): read a secret back."""
    if not request.scope.get("state", {}).get("by_token"):  # the guard's finding
        raise PolicyStop("this call takes the bearer token, not a login cookie")


async def secrets_list(request: Request) -> JSONResponse:
    """
    summary: Secrets runs are waiting for (names and pages, never values)
    responses:
      200: {description: pending}
    """
    return JSONResponse({"pending": daemon(request).secrets.pending()})


async def secret_ask(request: Request) -> JSONResponse:
    """
    summary: Ask the person for a secret (`name`, `run_id`, `skills`); bearer token only
    responses:
      200: {description: the request's id and the page where it is typed}
    """
    _bearer_only(request)
    data = await body(request)
    skills = data.get("skills") or []
    if not isinstance(skills, list) or not all(isinstance(x, str) for x in skills):
        raise BadInput("skills is a list of slugs")
    asked = daemon(request).secrets.ask(text_field(data, "name") or "", text_field(data, "run_id") or "",
                                        skills)
    return JSONResponse({"id": asked.id, "url": f"/secrets/{asked.id}"})


async def secret_give(request: Request) -> JSONResponse:
    """
    summary: Type the secret (`value`) for a waiting request; kept in memory until its run takes it
    responses:
      200: {description: given}
      404: {description: no such request, or given already}
    """
    data = await body(request)
    daemon(request).secrets.give(request.path_params["sid"], text_field(data, "value") or "")
    return JSONResponse({"given": True})


async def secret_value(request: Request) -> Response:
    """
    summary: The typed secret, once (waits up to `wait` seconds); bearer token only
    responses:
      200: {description: the value, handed over once}
      204: {description: not typed yet}
      404: {description: no such request}
    """
    _bearer_only(request)
    try:
        wait = min(max(float(request.query_params.get("wait", "0")), 0.0), 30.0)
    except ValueError:
        raise BadInput("wait is a number of seconds") from None
    value = await run_in_threadpool(daemon(request).secrets.take, request.path_params["sid"], wait)
    if value is None:
        return Response(status_code=204)
    return JSONResponse({"value": value}, headers={"Cache-Control": "no-store"})


async def secret_forget(request: Request) -> JSONResponse:
    """
    summary: The asker no longer waits for this secret; bearer token only
    responses:
      200: {description: forgotten}
    """
    _bearer_only(request)
    daemon(request).secrets.forget(request.path_params["sid"])
    return JSONResponse({"forgotten": True})
