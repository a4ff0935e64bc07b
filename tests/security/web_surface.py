"""The daemon's web surface, from outside: a real ``teachd serve`` with a
skill or two, a real Chromium, and *another* local web server — the kind
any program on the machine can run on another loopback port — that records
every request it receives (the place a leaked cookie or token would land)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.test_server import Server, serve

SKILL = "expenses"
VICTIM = "victim-skill"


def skill_md(name: str, body: str = "# Body\n") -> str:
    return f"---\nname: {name}\ndescription: The {name} skill. Use it to test.\n---\n\n{body}"


@contextlib.contextmanager
def daemon(tmp_path: Path, *args: str, files: dict[str, str] | None = None,
           owner: str = "alice") -> Iterator[Server]:
    """A fresh ``teachd serve`` (``args`` go to it) holding SKILL (with
    ``files``) and VICTIM, both the owner's."""
    home = tmp_path / "web-home"
    home.mkdir(mode=0o700)
    user = tmp_path / "web-user"
    user.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(home), HOME=str(user), TEACHD_OWNER=owner, PYTHONUTF8="1")
    server = serve(env, *args)
    try:
        with server.api() as api:
            for name, extra in ((SKILL, files or {}), (VICTIM, {"references/keep.md": "victim's file\n"})):
                r = api.post("/api/skills/import", json={"skill_md": skill_md(name), "folder": name, "files": extra})
                assert r.status_code == 200, r.text
        yield server
    finally:
        server.stop()


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Other:
    """Another local server: what it received, and the page it serves."""

    server: ThreadingHTTPServer
    seen: list[Seen] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)  # path -> HTML it serves
    reports: list[Any] = field(default_factory=list)  # what its pages' scripts POSTed to /report

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cookies(self) -> list[str]:
        return [s.headers["cookie"] for s in self.seen if "cookie" in s.headers]


@contextlib.contextmanager
def other_server(host: str = "127.0.0.1",
                 answer: Callable[[Seen], tuple[int, dict[str, str], bytes] | None] | None = None
                 ) -> Iterator[Other]:
    """The other server on a free port of ``host``; ``answer`` may reply to
    a request itself (else: its pages, or 404)."""
    box: list[Other] = []

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            other = box[0]
            length = int(self.headers.get("content-length") or 0)
            seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                        self.rfile.read(length) if length else b"")
            other.seen.append(seen)
            if seen.path == "/report":
                other.reports.append(json.loads(seen.body or b"null"))
                self._send(204, {}, b"")
                return
            mine = answer(seen) if answer else None
            if mine is not None:
                self._send(*mine)
            elif seen.path.split("?")[0] in other.pages:
                self._send(200, {"Content-Type": "text/html"}, other.pages[seen.path.split("?")[0]].encode())
            else:
                self._send(404, {}, b"")

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _any

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    box.append(Other(server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), args=launch_args(None))
        try:
            yield browser
        finally:
            browser.close()


def me(page: Any) -> str:
    """Who the daemon takes this browser tab for, asked by the page itself."""
    return str(page.evaluate("() => api('GET', '/api/people').then((p) => p.me)"))


def cookie_only(server: Server, cookie_header: str, **headers: str) -> httpx.Client:
    """A client that replays a Cookie header (and any headers it likes)."""
    return httpx.Client(base_url=server.url, timeout=30, headers={"Cookie": cookie_header, **headers})
