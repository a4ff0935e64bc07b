"""Who may talk to the daemon, as one ASGI middleware in front of everything.

- The Host header must be the bound ``host:port`` (DNS rebinding: 421).
- Every request is authenticated: ``Authorization: Bearer <token>``, or a
  browser session. The token says who: the daemon's token file is its owner,
  a person's own token (``teachd users add``) is that person; the request
  carries the name (``scope["state"]["user"]``) and everything after answers
  as them. Pages without it redirect to a page that says to open the login
  link; ``/api/`` answers 401.
- A browser session is two halves, because a cookie is not port-scoped: the
  browser sends ``127.0.0.1`` cookies to *every* port of that host, so any
  other local server a person visits receives the session cookie (and can
  replay it with any header it likes). The cookie (HttpOnly, SameSite=Strict)
  is therefore never enough alone: every request made with it also carries
  the session's *page key* in ``X-CSRF-Token``. The key is handed out once, by
  the login POST, into the daemon origin's own ``localStorage`` — storage is
  per origin, port included, so no other port's page can read it — and the
  pages' scripts send it with every fetch. A page navigation (which cannot
  carry a header) with the cookie but no key gets a data-free *shell* whose
  nonce'd script fetches the real page with the key and writes it in. The
  key also serves as the CSRF token: a cross-site form cannot send it.
- Sessions end: after ``idle`` seconds unused, ``lifetime`` seconds after
  login, at ``POST /logout``, and with the token that opened them.
- ``/mcp`` (agents) takes the bearer token only: 401 with ``WWW-Authenticate``.
- Request bodies are capped, and must arrive in time (``body_timeout``);
  headers are bounded by the protocol (``teachd.cli.serve``).
- Every response carries ``nosniff``, ``Referrer-Policy: same-origin``,
  ``X-Frame-Options: DENY`` and a CSP whose only script source is a
  per-response nonce (``scope["state"]["nonce"]``). No CORS headers are sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from teachd.core.errors import KeyProblem, Unavailable, http_headers
from teachd.core.proof import PROOF_PATH

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "teachd_session"  # the name's prefix: ``teachd_session_<port>`` (two daemons on one host coexist)
KEY_HEADER = b"x-csrf-token"  # the page key (also the CSRF token)
NONCE_HEADER = b"x-teachd-nonce"  # the shell's nonce, for the page it writes in
MAX_BODY = 8 * 1024 * 1024  # a skill's envelope: 1 MB of text, up to 6 bytes a character as JSON
IDLE = 12 * 3600  # a browser session unused this long ends
LIFETIME = 7 * 24 * 3600  # and any ends this long after its login
BODY_TIMEOUT = 20.0  # a request body must arrive within this many seconds after its headers
OPEN_PATHS = frozenset({"/login", "/logged-out", "/favicon.ico", PROOF_PATH})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
_STATIC = re.compile(r"/static/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the pages' CSS and JS (ui/assets.py)


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


@dataclass
class _Session:
    token: str  # the token that opened it: the session dies with it
    born: float
    seen: float


class Sessions:
    """Who a request is. The daemon's token (the file) is its owner's; a
    person's own token (``teachd users add``) is theirs, looked up on every
    request so a revoked one stops at once. Browser sessions made by the
    login page remember the token they were opened with, and die with it,
    when unused for ``idle`` seconds, ``lifetime`` seconds after login, or at
    logout. The page key (= CSRF token) is derived from the session id, so
    only the login response can hand it out and no other origin can guess it."""

    def __init__(self, token: str, owner: str = "",
                 who: Callable[[str], str | None] = lambda _t: None, cookie: str = COOKIE,
                 idle: float = IDLE, lifetime: float = LIFETIME,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._token, self.owner, self.who = token, owner, who
        self.cookie, self.idle, self.lifetime, self._clock = cookie, idle, lifetime, clock
        self._ids: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(32)

    @property
    def token(self) -> str:
        return self._token

    def user_of(self, token: str) -> str | None:
        """The person a token is, or None."""
        if not token:
            return None
        if self._owners(token):
            return self.owner
        return self.who(token)

    def _owners(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self._token.encode())

    def asks_the_store(self, header: str | None, sid: str | None) -> bool:
        """Whether finding who this is means asking the store (``who``): a
        token, or a session's, that is not the daemon owner's own — which is
        known here without a read (and needs no worker thread)."""
        if (token := bearer_token(header)) is not None:
            return not self._owners(token)
        with self._lock:
            s = self._ids.get(sid or "")
        return s is not None and not self._owners(s.token)

    def open(self, token: str | None = None) -> str:
        """A new session, for someone who proved they hold ``token`` (None: the
        printed login code, which is the daemon's owner)."""
        now = self._clock()
        sid = secrets.token_urlsafe(32)
        with self._lock:  # the guard's worker threads read and end sessions meanwhile
            for old in [s for s, v in self._ids.items() if not self._alive(v, now)]:
                del self._ids[old]  # ended sessions do not pile up
            self._ids[sid] = _Session(self._token if token is None else token, now, now)
        return sid

    def _alive(self, s: _Session, now: float) -> bool:
        return now - s.seen < self.idle and now - s.born < self.lifetime

    def session_user(self, sid: str | None) -> str | None:
        """The person of a live session."""
        with self._lock:
            s = self._ids.get(sid or "")
            if s is not None and not self._alive(s, self._clock()):
                self._ids.pop(sid or "", None)
                s = None
        return self.user_of(s.token) if s is not None else None

    def touch(self, sid: str | None) -> None:
        """The session was just used (by a person ``session_user`` found)."""
        with self._lock:
            s = self._ids.get(sid or "")
            if s is not None:
                s.seen = self._clock()

    def valid(self, sid: str | None) -> bool:
        return self.session_user(sid) is not None

    def close(self, sid: str | None) -> None:
        """Logout: the session ends now."""
        with self._lock:
            self._ids.pop(sid or "", None)

    def csrf(self, sid: str) -> str:
        """The session's page key (and CSRF token)."""
        return hmac.new(self._key, sid.encode(), hashlib.sha256).hexdigest()

    def key_ok(self, sid: str | None, presented: str | None) -> bool:
        return bool(sid) and bool(presented) and hmac.compare_digest((presented or "").encode(),
                                                                     self.csrf(sid or "").encode())

    def bearer_user(self, header: str | None) -> str | None:
        token = bearer_token(header)
        return None if token is None else self.user_of(token)


def bearer_token(header: str | None) -> str | None:
    """The token an ``Authorization: Bearer …`` header carries; None for any other header."""
    if not header or not header.startswith("Bearer "):
        return None
    return header[7:].strip()


def cookie_of(scope: Scope, name: str = COOKIE) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    return v
    return None


# The one route whose page key may come as ``?key=`` (EventSource cannot send
# a header): a read of the person's own run, never a change.
_STREAM = re.compile(r"/api/runs/[^/]+/events")


def _query_key(scope: Scope) -> str | None:
    from urllib.parse import parse_qs

    values = parse_qs((scope.get("query_string") or b"").decode("latin-1")).get("key")
    return values[0] if values else None


def header_of(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            return value.decode("latin-1")
    return None


def csp(nonce: str) -> str:
    """The one Content-Security-Policy: scripts only with this response's nonce
    (the pages' own files from ``/static/`` carry it too, with an integrity
    hash), styles only from this origin's files (no inline style at all),
    images from here, ``data:`` and ``blob:`` (a run's pictures, fetched with
    the page key and shown from memory)."""
    return (f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self'; "
            "img-src 'self' data: blob:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'")


SHELL = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>teachd</title>
<script nonce="{nonce}">(function () {{
  // This origin's page key (localStorage is per origin, port included): the
  // cookie alone opens nothing, so a page is fetched with the key, then written in.
  var key = localStorage.getItem('teachd-key');
  if (!key) {{ location.replace('/logged-out'); return; }}
  var x = new XMLHttpRequest();
  x.open('GET', location.pathname + location.search, false);
  x.setRequestHeader('X-CSRF-Token', key);
  x.setRequestHeader('X-Teachd-Nonce', document.currentScript.nonce);
  try {{ x.send(); }} catch (err) {{ document.write('<p>teachd is not answering.</p>'); return; }}
  if (x.status === 401 || x.status === 403) {{
    localStorage.removeItem('teachd-key'); location.replace('/logged-out'); return;
  }}
  if (x.responseURL && new URL(x.responseURL).pathname !== location.pathname) {{
    location.replace(x.responseURL); return;  // the page moved (a redirect): go there
  }}
  if ((x.getResponseHeader('Content-Type') || '').indexOf('text/html') === 0) document.write(x.responseText);
  else document.write('<pre>' + x.responseText.replace(/[&<>]/g, function (c) {{
    return '&#' + c.charCodeAt(0) + ';'; }}) + '</pre>');
}})();</script></head></html>"""


@dataclass
class _Nonce:
    """This response's CSP nonce: a fresh one, or — once the page key is
    checked — the shell's own, for the page it writes into itself. The headers
    are added when the response starts, so they carry the nonce of that moment."""

    value: str


@dataclass(frozen=True)
class _Caller:
    """Who the request says it is, before the guard decides if that is enough."""

    bearer_user: str | None  # the person its bearer token is
    sid: str | None  # its session cookie (not looked at when the bearer token is good)
    cookie_user: str | None  # the person of that session, if it is alive


@dataclass(frozen=True)
class _PageKey:
    presented: str | None  # the page key the request carries (the header, or ``?key=`` on a run's stream)
    keyed: bool  # a live session's cookie with that session's own key


class Guard:
    """The middleware. ``allowed_hosts`` are the Host values that name this
    daemon (e.g. ``127.0.0.1:8765`` and ``localhost:8765``).

    A request meets its checks in this order, and the first that answers ends
    it: the Host (421); the declared body (413, 411); discovery documents
    (404); who is asking (503 when the store is away); ``/mcp`` without the
    token (401); no one at all (401, or to ``/logged-out``); the cookie without
    its page key (403, or the shell); then it is let in as its person, its body
    read in time (408), and the app answers. Every response, a refusal too,
    carries the headers of ``_with_headers``."""

    def __init__(self, app: ASGIApp, sessions: Sessions, allowed_hosts: frozenset[str],
                 body_timeout: float = BODY_TIMEOUT) -> None:
        self.app, self.sessions, self.allowed_hosts = app, sessions, allowed_hosts
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = _Nonce(secrets.token_urlsafe(18))
        send = _with_headers(send, lambda: nonce.value)
        if await self._refuse_host(scope, send):
            return
        if await self._refuse_body_size(scope, send):
            return
        if await self._refuse_discovery(scope, send):
            return
        caller = await self._identify(scope, send)
        if caller is None:
            return
        if await self._refuse_mcp_without_token(scope, send, caller):
            return
        key = self._page_key(scope, caller)
        scope.setdefault("state", {})
        scope["state"]["cookie_user"] = caller.cookie_user  # for the login page: who this browser is now
        if not self._open_to_all(scope):
            if await self._refuse_stranger(scope, send, caller):
                return
            if await self._refuse_cookie_alone(scope, send, caller, key, nonce.value):
                return
        self._admit(scope, caller, key, nonce)
        receive_body = await self._body_in_time(scope, receive, send)
        if receive_body is None:
            return
        await self.app(scope, receive_body, send)  # the body is at most Content-Length, checked above

    async def _refuse_host(self, scope: Scope, send: Send) -> bool:
        """DNS rebinding: a Host that does not name this daemon is answered 421."""
        if (header_of(scope, b"host") or "") in self.allowed_hosts:
            return False
        await _plain(send, 421, "this daemon does not answer to that Host")
        return True

    async def _refuse_body_size(self, scope: Scope, send: Send) -> bool:
        """A body over the cap (413), or one whose size is not said (411)."""
        length = header_of(scope, b"content-length")
        if length and (not length.isdigit() or int(length) > MAX_BODY):
            await _plain(send, 413, "request body too large")
            return True
        if not length and header_of(scope, b"transfer-encoding"):
            await _plain(send, 411, "send a Content-Length")  # so the cap is known before reading
            return True
        return False

    async def _refuse_discovery(self, scope: Scope, send: Send) -> bool:
        """OAuth discovery and the like: none here, said plainly (404)."""
        if not scope.get("path", "").startswith("/.well-known/"):
            return False
        await _plain(send, 404, "this daemon has no OAuth or other discovery documents: "
                                "authenticate with Authorization: Bearer <token>")
        return True

    async def _identify(self, scope: Scope, send: Send) -> _Caller | None:
        """Who is asking: the store says (another person's token is looked up
        there: in a thread, never holding up the event loop's other requests)
        — None when it is away, answered 503 (never a traceback)."""
        if not self.sessions.asks_the_store(header_of(scope, b"authorization"),
                                            cookie_of(scope, self.sessions.cookie)):
            return self._caller(scope)
        try:
            return await run_in_threadpool(self._caller, scope)
        except Unavailable as exc:
            said = [(k.lower().encode(), v.encode()) for k, v in http_headers(exc).items()]
            await _plain(send, 503, str(exc), said)
            return None

    def _caller(self, scope: Scope) -> _Caller:
        bearer_user = self.sessions.bearer_user(header_of(scope, b"authorization"))
        sid = None if bearer_user is not None else cookie_of(scope, self.sessions.cookie)
        cookie_user = self.sessions.session_user(sid) if sid else None
        return _Caller(bearer_user, sid, cookie_user)

    async def _refuse_mcp_without_token(self, scope: Scope, send: Send, caller: _Caller) -> bool:
        """An agent's endpoint: the token only, never a cookie (401)."""
        if scope.get("path", "") != "/mcp" or caller.bearer_user is not None:
            return False
        await _plain(send, 401, "authenticate: Authorization: Bearer <token>",
                     [(b"www-authenticate", b"Bearer")])
        return True

    def _page_key(self, scope: Scope, caller: _Caller) -> _PageKey:
        """The page key the request carries, and whether it is its session's."""
        presented = header_of(scope, KEY_HEADER)
        if presented is None and scope["method"] == "GET" and _STREAM.fullmatch(scope.get("path", "")):
            presented = _query_key(scope)  # an EventSource sends no headers: its key rides in the URL
        keyed = caller.cookie_user is not None and self.sessions.key_ok(caller.sid, presented)
        return _PageKey(presented, keyed)

    def _open_to_all(self, scope: Scope) -> bool:
        """The login page and the proof are their own checks; the UI's CSS and JS hold no data."""
        path: str = scope.get("path", "")
        return path in OPEN_PATHS or bool(_STATIC.fullmatch(path) and scope["method"] in SAFE_METHODS)

    async def _refuse_stranger(self, scope: Scope, send: Send, caller: _Caller) -> bool:
        """Neither a token nor a live session: ``/api/`` answers 401, a page goes to ``/logged-out``."""
        if caller.bearer_user is not None or caller.cookie_user is not None:
            return False
        if _is_api(scope):
            await _plain(send, 401, "authenticate: Authorization: Bearer <token>, or open the login link")
        else:
            await _redirect(send, "/logged-out")
        return True

    async def _refuse_cookie_alone(self, scope: Scope, send: Send, caller: _Caller, key: _PageKey,
                                   nonce: str) -> bool:
        """A session's cookie without its page key: a navigation gets the shell,
        which fetches the page with the key; anything else is 403."""
        if caller.bearer_user is not None or key.keyed:
            return False
        if key.presented is None and not _is_api(scope) and scope["method"] in ("GET", "HEAD"):
            await _shell(send, nonce)  # a navigation: the page comes with the key, by script
        else:  # the cookie alone: another local server replaying it, or a cross-site form
            await _plain(send, 403, "missing or wrong CSRF token (the page key)")
        return True

    def _admit(self, scope: Scope, caller: _Caller, key: _PageKey, nonce: _Nonce) -> None:
        """Let the request in: its session used now, its nonce, session, CSRF
        token and the person the daemon answers as, in ``scope["state"]``."""
        if key.keyed:
            self.sessions.touch(caller.sid)
            given = header_of(scope, NONCE_HEADER) or ""
            if _NONCE.fullmatch(given):  # the shell writes the page into itself: its nonce must fit
                nonce.value = given
        scope["state"]["nonce"] = nonce.value
        scope["state"]["sid"] = caller.sid if key.keyed else ""
        scope["state"]["csrf"] = self.sessions.csrf(caller.sid) if key.keyed and caller.sid else ""
        # the daemon answers as them
        scope["state"]["user"] = caller.bearer_user or (caller.cookie_user if key.keyed else None)
        scope["state"]["by_token"] = caller.bearer_user is not None  # an asking process, not a page

    async def _body_in_time(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """The body, read whole within ``body_timeout``; None when it came too slowly, answered 408."""
        length = header_of(scope, b"content-length")
        if not (length and int(length) > 0):
            return receive
        try:
            return await _read_body(receive, int(length), self.body_timeout)
        except TimeoutError:
            await _plain(send, 408, "the request body came too slowly", [(b"connection", b"close")])
            return None


def _is_api(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    return path.startswith("/api/") or path == "/openapi.json"


async def _read_body(receive: Receive, length: int, timeout: float) -> Receive:
    """Read the whole body (capped already) within ``timeout`` seconds, then
    hand it to the app: a client that trickles it is cut off, not waited for."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    chunks: list[bytes] = []
    more, got = True, 0
    while more:
        left = deadline - loop.time()
        if left <= 0:
            raise TimeoutError
        message = await asyncio.wait_for(receive(), left)
        if message["type"] != "http.request":
            return _replay(receive, [], message)
        chunks.append(message.get("body", b""))
        got += len(chunks[-1])
        more = bool(message.get("more_body")) and got < length
    return _replay(receive, chunks, None)


def _replay(receive: Receive, chunks: list[bytes], end: Message | None) -> Receive:
    """The body read already, then the connection's own messages (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return end or {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        return await receive()

    return replayed


def _with_headers(send: Send, nonce: Callable[[], str]) -> Send:
    """Every response: nosniff, a referrer policy, no framing, the CSP."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers") or [])
            have = {k.lower() for k, _v in headers}
            for name, value in ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
                                (b"x-frame-options", b"DENY"),
                                (b"content-security-policy", csp(nonce()).encode())):
                if name not in have:
                    headers.append((name, value))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _shell(send: Send, nonce: str) -> None:
    body = SHELL.format(nonce=nonce).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


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
