"""``teachd serve``: the Starlette app — pages, the HTTP API and its OpenAPI
schema — behind the one security guard, with the store and the background
work opened and closed by its lifespan; and the uvicorn server around it.

Errors map in one place: a ``TeachdError`` (or a component's error, through
``component_errors``) becomes ``{"error": …}`` with its ``http_status``.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.schemas import SchemaGenerator

from teachd import __version__
from teachd.config import Settings
from teachd.core.errors import TeachdError, as_teachd_error, http_headers
from teachd.core.proof import PROOF_PATH, daemon_proof
from teachd.mcp.secrets import remove_daemon_file, write_daemon_file
from teachd.server import api, pages
from teachd.server.responses import JSONResponse
from teachd.server.security import (
    BODY_TIMEOUT,
    COOKIE,
    IDLE,
    LIFETIME,
    Guard,
    Sessions,
    load_token,
)
from teachd.server.state import Daemon

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

    from teachd.mcp.server import TeachdMCP

SCHEMA = SchemaGenerator({"openapi": "3.0.0", "info": {"title": "teachd", "version": __version__}})


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    names = {host, "localhost", "127.0.0.1"} if host in ("127.0.0.1", "localhost") else {host}
    if host == "::1":
        names = {"[::1]", "localhost"}
    return frozenset(f"{n}:{port}" for n in names)


def settled() -> None:
    """Keep every object alive now out of the garbage collector's way
    (``gc.freeze``): once the daemon is up (and again once its MCP server is
    made), what is alive — modules, classes, functions, the SDK's pydantic
    models, the daemon itself — lives as long as the process. A full
    collection walked all ~160,000 of them holding the GIL: about 120 ms on
    the soak's two busy cores (up to 300), every ~8 s, each one stalling
    every request under way — most of GET /api/skills' p99 (docs/benchmarks.md).
    After this a full collection walks only what requests made since."""
    import gc

    gc.collect()
    gc.freeze()


class LazyMcp:
    """The MCP server behind ``/mcp``, made when the first MCP request comes.
    Importing the MCP SDK is a second of CPU at every daemon start (its
    protocol types are pydantic models built on import), which a daemon that
    only serves its pages and runs never needed. Made once, under a lock, in a
    worker thread (the event loop keeps answering), and its session manager
    then runs in the lifespan's task group until the daemon stops."""

    def __init__(self, build: Callable[[], TeachdMCP], tasks: TaskGroup, settle: bool = False) -> None:
        import anyio

        self._build, self._tasks, self._lock, self._settle = build, tasks, anyio.Lock(), settle
        self.server: TeachdMCP | None = None  # once made

    async def made(self) -> TeachdMCP:
        import anyio

        if self.server is not None:  # every request after the first: no lock to queue on
            return self.server
        async with self._lock:
            if self.server is None:
                server = await anyio.to_thread.run_sync(self._build)
                await self._tasks.start(self._serve, server)
                self.server = server
                if self._settle:
                    settled()  # the SDK's models, made just now, live as long as the daemon
        return self.server

    @staticmethod
    async def _serve(server: TeachdMCP, *, task_status: TaskStatus[None]) -> None:
        import anyio

        async with server.session_manager.run():
            task_status.started()
            await anyio.sleep_forever()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


class McpEndpoint:
    """``/mcp``: the MCP server as streamable HTTP (bearer token only, see the
    guard); an ASGI app of its own, made on the first request (``LazyMcp``).

    The SDK binds a session to the principal that opened it: the person the
    guard found is handed to it as that principal, so another person's request
    naming the session's id — a DELETE included — is answered as if it did not
    exist (404). A session its person ends (DELETE) closes its run and browser
    at once; so does one whose client left without saying so (mcp/presence)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        server = await scope["app"].state.mcp.made()  # first: the SDK is imported off the event loop
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        person = str((scope.get("state") or {}).get("user") or "")
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=person, scopes=[], subject=person))
        statuses: list[int] = []

        async def watched(message: Any) -> None:
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))
            await send(message)

        session = next((v.decode("latin-1") for k, v in scope.get("headers") or []
                        if k == b"mcp-session-id"), "")
        presence = server.presence
        if session:
            presence.opened((person, session), stream=scope["method"] == "GET")
        try:
            await server.streamable_http_asgi(scope, receive, watched)
        finally:
            if session:
                presence.closed((person, session))
        if scope["method"] == "DELETE" and statuses and statuses[0] < 300:
            await run_in_threadpool(server.end, person, session)


def _a_page(request: Request) -> bool:
    """A page asked for (not the API, MCP or a file — a person's browser
    asks through the page shell's own request, which says nothing of HTML):
    what goes wrong is told on a page of the app, with its navigation."""
    return request.method in ("GET", "HEAD") \
        and not request.url.path.startswith(("/api/", "/mcp", "/static/", "/openapi.json"))


def _error_page(request: Request, status: int, why: str,
                headers: Mapping[str, str] | None = None) -> Response:
    try:
        page = pages.error_page(request, status, why)
    except Exception:  # noqa: BLE001 — a page that cannot be drawn is said in one line
        return PlainTextResponse(why, status_code=status, headers=dict(headers or {}))
    page.headers.update(headers or {})  # a 503's Retry-After, a 405's Allow
    return page


async def _error(request: Request, exc: Exception) -> Response:
    mapped = exc if isinstance(exc, TeachdError) else as_teachd_error(exc)
    status, why = (500, "internal error") if mapped is None else (mapped.http_status, str(mapped))
    headers = http_headers(mapped) if mapped is not None else {}
    if _a_page(request):
        return _error_page(request, status, why, headers)
    return JSONResponse({"error": why}, status_code=status, headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """The router's 404 and 405: a page for a person's browser, the plain
    status line for any other client (as before)."""
    assert isinstance(exc, HTTPException)
    if _a_page(request):
        return _error_page(request, exc.status_code, exc.detail, exc.headers)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)


def create_app(settings: Settings, host: str, port: int, login_code: str | None = None, *,
               session_idle: float = IDLE, session_lifetime: float = LIFETIME,
               body_timeout: float = BODY_TIMEOUT, settle: bool = False) -> Starlette:
    """``settle``: the process is the daemon's own (``teachd serve``), whose
    heap may be frozen once it is up (``settled``); not an app a test or
    another program hosts in-process, whose objects are not the daemon's."""
    token = load_token(settings.home)
    code = login_code or secrets.token_urlsafe(24)
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import anyio

        d = Daemon.open(settings, sessions, code)
        app.state.daemon = d
        mcp: LazyMcp | None = None
        try:
            async with anyio.create_task_group() as tasks:  # the MCP session manager's, once made
                mcp = app.state.mcp = LazyMcp(lambda: d.mcp_server(allowed_hosts(host, port), base), tasks,
                                              settle)
                write_daemon_file(settings.home, base)  # where teachd mcp finds the secret page
                d.schedules.start()  # runs the jobs if no other daemon on this store does
                if settle:
                    settled()
                try:
                    yield
                finally:
                    tasks.cancel_scope.cancel()  # MCP sessions end before what they used is closed
        finally:
            remove_daemon_file(settings.home)
            d.stop_taking()  # no run is taken from the queue now, to be denied at once below
            d.approvals.close()  # questions still waiting are denied: nothing more happens on a page
            d.secrets.close()
            if mcp is not None:
                mcp.close()
            d.close()


    async def openapi(request: Request) -> Response:
        return JSONResponse(SCHEMA.get_schema(routes=request.app.routes))

    async def proof(request: Request) -> Response:
        """Open to all: HMAC(token, this address, challenge), so ``teachd mcp``
        knows it talks to this daemon before it sends the token (a stale
        ``daemon.json`` may point at another server now)."""
        challenge = request.query_params.get("challenge", "")
        if not 32 <= len(challenge) <= 128 or not (challenge.isascii() and challenge.isalnum()):
            return JSONResponse({"error": "send ?challenge= (32 to 128 letters and digits)"}, status_code=400)
        return JSONResponse({"proof": daemon_proof(token, base, challenge)})

    sessions = Sessions(token, settings.owner, cookie=f"{COOKIE}_{port}", idle=session_idle,
                        lifetime=session_lifetime)  # shared by the guard and the login page
    app = Starlette(
        routes=[*pages.ROUTES, *api.ROUTES,
                Route("/openapi.json", openapi, include_in_schema=False),
                Route(PROOF_PATH, proof, include_in_schema=False),
                Route("/mcp", McpEndpoint(), methods=["GET", "POST", "DELETE"], include_in_schema=False)],
        middleware=[Middleware(Guard, sessions=sessions, allowed_hosts=allowed_hosts(host, port),
                               body_timeout=body_timeout)],
        exception_handlers={TeachdError: _error, HTTPException: _http_error, Exception: _error},
        lifespan=lifespan,
    )
    app.state.sessions = sessions
    app.state.login_code = code
    return app
