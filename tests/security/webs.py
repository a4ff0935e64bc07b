"""Two tiny web servers on loopback for the scope and destination tests: the
site a skill was taught on (``inside``) and another one (``other``), each
logging every request it receives — the place an attack would land, so
tests assert on what reached it, never on what teachd says."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from compiler.skill import compile_recording
from teachd.store import SkillStore
from teachd.teach.compile import save_compiled
from tests.compiler_helpers import recording


@dataclass
class Site:
    server: ThreadingHTTPServer
    log: list[tuple[str, str, str]] = field(default_factory=list)  # (method, path, body)
    peer: int = 0  # the other site's port

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def paths(self) -> list[str]:
        return [p for _m, p, _b in self.log if p != "/favicon.ico"]


def _page(title: str, body: str) -> bytes:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def _pages(site: Site) -> dict[str, bytes]:
    peer = f"http://127.0.0.1:{site.peer}"
    return {
        "/": _page("Inside", "<h1>Inside</h1><a href='/next'>Next</a>"),
        "/next": _page("Next", "<h1>Next</h1>"),
        "/framed": _page("Framed", f"<h1>Framed</h1><iframe title='Other' src='{peer}/frame' "
                                   "width=600 height=300></iframe>"),
        "/frame": _page("Frame", "<form method=post action='/post'><label>Note <input name=note></label>"
                                 "<button>Send</button></form>"),
        "/links": _page("Links", f"<a href='{peer}/landed'>Away</a> <a href='/redirect-away'>Bounce</a> "
                                 f"<a href='{peer}/landed' target=_blank>Away in a tab</a>"),
        "/landed": _page("Landed", "<h1>Landed</h1>"),
        "/subresources": _page("Subresources", f"<img src='{peer}/pixel.png' alt=pixel>"
                                               f"<iframe src='{peer}/frame'></iframe>"
                                               f"<script>fetch('{peer}/api').catch(() => 0)</script>"),
        "/pixel.png": b"GIF89a",
        "/api": json.dumps({"secret": "internal"}).encode(),
        "/post": _page("Posted", "<h1>Posted</h1>"),
    }


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, body_in: str) -> None:
            path = self.path.split("?", 1)[0]
            site.log.append((self.command, self.path, body_in))
            if path == "/redirect-away":
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.1:{site.peer}/landed")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = _pages(site).get(path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            body = body if body is not None else b"not found"
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer("")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._answer(self.rfile.read(length).decode("utf-8", "replace"))

    return Handler


@contextlib.contextmanager
def two_sites() -> Iterator[tuple[Site, Site]]:
    """``inside`` and ``other``, each knowing the other's port."""
    sites: list[Site] = []
    for _ in range(2):
        site = Site(ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler))
        site.server.RequestHandlerClass = _handler(site)
        threading.Thread(target=site.server.serve_forever, daemon=True).start()
        sites.append(site)
    inside, other = sites
    inside.peer, other.peer = other.port, inside.port
    try:
        yield inside, other
    finally:
        for site in sites:
            site.server.shutdown()
            site.server.server_close()


def teach(store: SkillStore, start: str, name: str = "Visit inside") -> str:
    """A skill taught on ``start`` (compiled here from a recording: taught, its
    scope the start page's origin); its slug."""
    rec = recording([{"type": "page", "url": start, "title": "Inside", "tab": 0}], name=name, url=start)
    compiled = compile_recording(rec)
    save_compiled(store, compiled, note="taught from a test recording")
    return compiled.slug
