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
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.schemas import SchemaGenerator

from teachd import __version__
from teachd.config import Settings
from teachd.errors import TeachdError, as_teachd_error
from teachd.mcp.secrets import remove_daemon_file, write_daemon_file
from teachd.server import api, pages
from teachd.server.security import Guard, Sessions, load_token
from teachd.server.state import Daemon

SCHEMA = SchemaGenerator({"openapi": "3.0.0", "info": {"title": "teachd", "version": __version__}})


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
    if host == "::1":
        names = {"[::1]", "localhost"}
    return frozenset(f"{n}:{port}" for n in names)


class McpEndpoint:
    """``/mcp``: the MCP server as streamable HTTP (bearer token only, see the
    guard); an ASGI app of its own, made by the lifespan."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await scope["app"].state.mcp(scope, receive, send)


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
        base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        mcp = d.mcp_server(allowed_hosts(host, port), base)
        app.state.mcp = mcp.streamable_http_asgi
        write_daemon_file(settings.home, base)  # where teachd mcp finds the secret page
        d.schedules.start()  # runs the jobs if no other daemon on this store does
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            remove_daemon_file(settings.home)
            d.approvals.close()  # questions still waiting are denied: nothing more happens on a page
            d.secrets.close()
            mcp.close()
            d.close()


    async def openapi(request: Request) -> Response:
        return JSONResponse(SCHEMA.get_schema(routes=request.app.routes))

    sessions = Sessions(token, settings.owner)  # shared by the guard and the login page
    app = Starlette(
        routes=[*pages.ROUTES, *api.ROUTES, Route("/openapi.json", openapi, include_in_schema=False),
                Route("/mcp", McpEndpoint(), methods=["GET", "POST", "DELETE"], include_in_schema=False)],
        middleware=[Middleware(Guard, sessions=sessions, allowed_hosts=allowed_hosts(host, port))],
        exception_handlers={TeachdError: _error, Exception: _error},
        lifespan=lifespan,
    )
    app.state.sessions = sessions
    app.state.login_code = code
    return app
