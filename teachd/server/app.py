"""``teachd serve``: the Starlette app — pages, the HTTP API and its OpenAPI
schema — behind the one security guard, with the store and the background
work opened and closed by its lifespan; and the uvicorn server around it.

Errors map in one place: a ``TeachdError`` (or a component's error, through
``component_errors``) becomes ``{"error": …}`` with its ``http_status``.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.schemas import SchemaGenerator

from teachd import __version__
from teachd.config import Settings
from teachd.errors import TeachdError, as_teachd_error
from teachd.server import api, pages
from teachd.server.security import Guard, Sessions, load_token
from teachd.server.state import Daemon

SCHEMA = SchemaGenerator({"openapi": "3.0.0", "info": {"title": "teachd", "version": __version__}})


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
    if host == "::1":
        names = {"[::1]", "localhost"}
    return frozenset(f"{n}:{port}" for n in names)


async def _error(request: Request, exc: Exception) -> Response:
    mapped = exc if isinstance(exc, TeachdError) else as_teachd_error(exc)
    if mapped is None:
        return JSONResponse({"error": "internal error"}, status_code=500)
    return JSONResponse({"error": str(mapped)}, status_code=mapped.http_status)


def create_app(settings: Settings, host: str, port: int, login_code: str | None = None) -> Starlette:
    token = load_token(settings.home)
    code = login_code or secrets.token_urlsafe(24)
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        d = Daemon.open(settings, sessions, code)
        app.state.daemon = d
        try:
            yield
        finally:
            d.close()

    async def openapi(request: Request) -> Response:
        return JSONResponse(SCHEMA.get_schema(routes=request.app.routes))

    sessions = Sessions(token)  # shared by the guard and the login page
    app = Starlette(
        routes=[*pages.ROUTES, *api.ROUTES, Route("/openapi.json", openapi, include_in_schema=False)],
        middleware=[Middleware(Guard, sessions=sessions, allowed_hosts=allowed_hosts(host, port))],
        exception_handlers={TeachdError: _error, Exception: _error},
        lifespan=lifespan,
    )
    app.state.sessions = sessions
    app.state.login_code = code
    return app
