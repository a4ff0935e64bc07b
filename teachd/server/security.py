"""Who may talk to the daemon, as one ASGI middleware in front of everything.

- The Host header must be the bound ``host:port`` (DNS rebinding: 421).
- Every request is authenticated: ``Authorization: Bearer <token>``, or the
  session cookie the one-time login link set (HttpOnly, SameSite=Strict).
  The token says who: the daemon's token file is its owner, a person's own
  token (``teachd users add``) is that person; the request carries the name
  (``scope["state"]["user"]``) and everything after answers as them.
  Pages without it redirect to a page that says to open the login link;
  ``/api/`` answers 401.
- A state-changing request made with the cookie carries the page's CSRF
  token in ``X-CSRF-Token`` (a bearer token is no ambient credential: it
  needs none). No CORS headers are ever sent.
- ``/mcp`` (agents) takes the bearer token only: 401 with ``WWW-Authenticate``.
- Request bodies are capped.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from teachd.errors import KeyProblem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "teachd_session"
MAX_BODY = 8 * 1024 * 1024  # a skill's envelope: 1 MB of text, up to 6 bytes a character as JSON
OPEN_PATHS = frozenset({"/login", "/logged-out", "/favicon.ico"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def load_token(home: Path) -> str:
    """The daemon's token, created 0600 on first use; refused if others can read it."""
    path = home / "token"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32))
    if path.stat().st_mode & 0o077:
        raise KeyProblem(f"{path} is readable by others: chmod 600 it")
    token = path.read_text().strip()
    if len(token) < 32:
        raise KeyProblem(f"{path} holds no usable token")
    return token


class Sessions:
    """Who a request is. The daemon's token (the file) is its owner's; a
    person's own token (``teachd users add``) is theirs, looked up on every
    request so a revoked one stops at once. Cookie sessions made by the login
    link remember the token they were opened with, and die with it. The CSRF
    token is derived from the session, so a page can carry it and another
    site cannot guess it."""

    def __init__(self, token: str, owner: str = "",
                 who: Callable[[str], str | None] = lambda _t: None) -> None:
        self._token, self.owner, self.who = token, owner, who
        self._ids: dict[str, str] = {}  # session id -> the token that opened it
        self._key = secrets.token_bytes(32)

    def user_of(self, token: str) -> str | None:
        """The person a token is, or None."""
        if not token:
            return None
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return self.owner
        return self.who(token)

    def open(self, token: str | None = None) -> str:
        """A new session, for someone who proved they hold ``token`` (None: the
        printed login link, which is the daemon's owner)."""
        sid = secrets.token_urlsafe(32)
        self._ids[sid] = self._token if token is None else token
        return sid

    def session_user(self, sid: str | None) -> str | None:
        return self.user_of(self._ids.get(sid or "", ""))

    def valid(self, sid: str | None) -> bool:
        return self.session_user(sid) is not None

    def csrf(self, sid: str) -> str:
        return hmac.new(self._key, sid.encode(), hashlib.sha256).hexdigest()

    def bearer_user(self, header: str | None) -> str | None:
        if not header or not header.startswith("Bearer "):
            return None
        return self.user_of(header[7:].strip())

    def bearer_ok(self, header: str | None) -> bool:
        return self.bearer_user(header) is not None


def cookie_of(scope: Scope, name: str = COOKIE) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    return v
    return None


def header_of(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            return value.decode("latin-1")
    return None


class Guard:
    """The middleware. ``allowed_hosts`` are the Host values that name this
    daemon (e.g. ``127.0.0.1:8765`` and ``localhost:8765``)."""

    def __init__(self, app: ASGIApp, sessions: Sessions, allowed_hosts: frozenset[str]) -> None:
        self.app, self.sessions, self.allowed_hosts = app, sessions, allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if (header_of(scope, b"host") or "") not in self.allowed_hosts:
            await _plain(send, 421, "this daemon does not answer to that Host")
            return
        length = header_of(scope, b"content-length")
        if length and (not length.isdigit() or int(length) > MAX_BODY):
            await _plain(send, 413, "request body too large")
            return
        if not length and header_of(scope, b"transfer-encoding"):
            await _plain(send, 411, "send a Content-Length")  # so the cap is known before reading
            return
        bearer_user = self.sessions.bearer_user(header_of(scope, b"authorization"))
        bearer = bearer_user is not None
        if path == "/mcp" and not bearer:  # an agent's endpoint: the token only, never a cookie
            await _plain(send, 401, "authenticate: Authorization: Bearer <token>",
                         [(b"www-authenticate", b"Bearer")])
            return
        sid = cookie_of(scope)
        cookie_user = None if bearer else self.sessions.session_user(sid)
        by_cookie = cookie_user is not None
        if path not in OPEN_PATHS and not (bearer or by_cookie):
            if path.startswith("/api/") or path == "/openapi.json":
                await _plain(send, 401, "authenticate: Authorization: Bearer <token>, or open the login link")
            else:
                await _redirect(send, "/logged-out")
            return
        if scope["method"] not in SAFE_METHODS and not bearer:
            presented = header_of(scope, b"x-csrf-token") or ""
            if not (by_cookie and sid and hmac.compare_digest(presented, self.sessions.csrf(sid))):
                await _plain(send, 403, "missing or wrong CSRF token")
                return
        scope.setdefault("state", {})
        scope["state"]["csrf"] = self.sessions.csrf(sid) if by_cookie and sid else ""
        scope["state"]["user"] = bearer_user or cookie_user  # the daemon answers as this person
        await self.app(scope, receive, send)  # the body is at most Content-Length, checked above


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, to: str) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", to.encode()), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
