"""``teachd serve``: the daemon (web UI, HTTP API) on loopback."""

from __future__ import annotations

import json
import secrets
import signal
import socket
import sys
import webbrowser

import click

from teachd.cli.app import App, json_option, pass_app
from teachd.errors import BadInput, Unavailable

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _port_free(host: str, port: int) -> None:
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
@json_option
@pass_app
def serve(app: App, host: str, port: int, open_browser: bool, allow_remote: bool, as_json: bool) -> None:
    """Serve the web UI and the HTTP API (every call authenticated, Host checked).

    Prints a one-time login link; API clients send `Authorization: Bearer <token>`
    with the token in TEACHD_HOME/token. Stops cleanly on Ctrl+C or SIGTERM:
    waiting approvals are denied, a recording in progress is saved.
    """
    import uvicorn

    from teachd.server.app import create_app

    if host not in LOOPBACK and not allow_remote:
        raise BadInput(f"{host} is not loopback: pass --allow-remote to listen there on purpose")
    if host not in LOOPBACK:
        click.echo(f"teachd: warning: listening on {host}: anyone who can reach it can try to log in",
                   err=True)
    _port_free(host, port)
    code = secrets.token_urlsafe(24)
    application = create_app(app.settings, host, port, login_code=code)
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
                lifespan="on", timeout_graceful_shutdown=20)
