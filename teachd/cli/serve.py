"""``teachd serve``: the daemon (web UI, HTTP API) on loopback."""

from __future__ import annotations

import dataclasses
import json
import secrets
import signal
import socket
import sys
import webbrowser
from typing import TYPE_CHECKING, Any

import click

from teachd.cli.app import App, json_option, pass_app
from teachd.core.errors import BadInput, Unavailable

if TYPE_CHECKING:
    from teachd.config import Settings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def bounded_http(seconds: float) -> type:
    """uvicorn's httptools protocol (llhttp, in C: a request's parsing costs
    the daemon a fraction of what pure-Python h11 did) with a deadline on
    each request's headers: a connection that has not sent a whole request
    head ``seconds`` after it opened (or after its previous response) is
    closed — a client trickling its headers holds no connection for long.
    (The body has its own deadline in the guard; uvicorn itself bounds only
    the idle keep-alive.)"""
    import asyncio

    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttp(HttpToolsProtocol):
        head_timeout = seconds
        _head_task: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._head_task = self.loop.call_later(self.head_timeout, self._too_slow)

        def _disarm(self) -> None:
            task = getattr(self, "_head_task", None)
            if task is not None:
                task.cancel()
            self._head_task = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:
            self._disarm()  # a whole request head came: its app answers now
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's head, on this kept-alive connection

        def _too_slow(self) -> None:
            self._head_task = None
            answering = self.cycle is not None and not self.cycle.response_complete  # a pipelined one
            if not answering and not self.transport.is_closing():
                self.transport.close()

    return BoundedHttp


def port_free(host: str, port: int) -> None:
    """A port in use is one clear line, not a server's log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise Unavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback unless --allow-remote).")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True,
              help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, help="Open the login link in the default browser.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host (everyone who can reach it sees the login page).")
@click.option("--request-timeout", type=click.FloatRange(0.5, 600), default=20, show_default=True,
              help="Seconds a client has to send a request's headers, and then its body.")
@click.option("--session-idle", type=click.FloatRange(1), default=12 * 3600, show_default=True,
              help="Seconds a browser session may go unused before it ends.")
@click.option("--session-lifetime", type=click.FloatRange(1), default=7 * 24 * 3600, show_default=True,
              help="Seconds after its login a browser session ends, used or not.")
@click.option("--slots", type=click.IntRange(0), default=None,
              help="On the team store (TEACHD_DB_URL): runs this daemon takes from the run queue itself, "
                   "0 to leave them all to teachd worker (default: one per core, as the memory allows).")
@json_option
@pass_app
def serve(app: App, host: str, port: int, open_browser: bool, allow_remote: bool, request_timeout: float,
          session_idle: float, session_lifetime: float, slots: int | None, as_json: bool) -> None:
    """Serve the web UI and the HTTP API (every call authenticated, Host checked).

    Prints a one-time login link (it opens a page with a Log in button; the
    browser session ends after --session-idle unused, --session-lifetime in
    all, or at Log out); API clients send `Authorization: Bearer <token>`
    with the token in TEACHD_HOME/token. Stops cleanly on Ctrl+C or SIGTERM:
    waiting approvals are denied, a recording in progress is saved.
    """
    if host not in LOOPBACK and not allow_remote:
        raise BadInput(f"{host} is not loopback: pass --allow-remote to listen there on purpose")
    if host not in LOOPBACK:
        click.echo(f"teachd: warning: listening on {host}: anyone who can reach it can try to log in",
                   err=True)
    settings = app.settings if slots is None else dataclasses.replace(app.settings, slots=slots)
    run_daemon(settings, host, port, open_browser, request_timeout, session_idle, session_lifetime, as_json)


def run_daemon(settings: Settings, host: str = "127.0.0.1", port: int = 8765, open_browser: bool = False,
               request_timeout: float = 20, session_idle: float = 12 * 3600,
               session_lifetime: float = 7 * 24 * 3600, as_json: bool = False) -> None:
    """The daemon on ``settings`` until Ctrl+C or SIGTERM (``teachd serve``,
    and ``teachd demo --serve`` on the demo's home)."""
    import uvicorn

    from teachd.cli.process import few_malloc_arenas
    from teachd.server.app import create_app

    few_malloc_arenas()  # before the store's, the scheduler's and the request pool's threads
    port_free(host, port)
    code = secrets.token_urlsafe(24)
    application = create_app(settings, host, port, login_code=code, session_idle=session_idle,
                             session_lifetime=session_lifetime, body_timeout=request_timeout, settle=True)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    login = f"{url}login?token={code}"
    if as_json:
        click.echo(json.dumps({"url": url, "login_url": login}))
    else:
        click.echo(f"teachd: serving on {url} — log in: {login}")
    sys.stdout.flush()
    if open_browser:
        webbrowser.open(login)
    # uvicorn shuts down gracefully on SIGTERM, then raises it again for the
    # previous handler: with this one, a clean stop exits 0 instead of dying.
    signal.signal(signal.SIGTERM, lambda *_: None)
    uvicorn.run(application, host=host, port=port, log_level="warning", access_log=False,
                lifespan="on", timeout_graceful_shutdown=20, http=bounded_http(request_timeout),
                timeout_keep_alive=5)
