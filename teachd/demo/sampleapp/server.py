"""The sample app's server (stdlib HTTP, in a thread) and its state.

The state is the judge of a replay: what was saved (reports, notes, groups)
and what was clicked (every click in every page and frame is sent to
``/log/click`` by the page itself), so a test never has to trust teachd's
own account of what it did.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from teachd.demo.sampleapp import pages, posts
from teachd.demo.sampleapp.pages import Variant
from teachd.demo.sampleapp.posts import PostsVariant

USER = "alice@example.com"
VENDOR = Path(__file__).resolve().parent / "vendor"
# The vendored files the pages load, by URL path: nothing else under vendor/ is served.
STATIC = {"/vendor/quill/quill.js": ("quill/quill.js", "text/javascript; charset=utf-8"),
          "/vendor/quill/quill.snow.css": ("quill/quill.snow.css", "text/css; charset=utf-8")}
CMS_PATHS = ("/posts", "/collections")  # the second task's pages: sign-in comes back to them


@dataclass
class State:
    password: str
    reports: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    clicks: list[str] = field(default_factory=list)  # "data-k path", as the pages report them
    drafts: int = 0  # forms saved through a look-alike button
    posts: list[dict[str, Any]] = field(default_factory=list)  # id, title, body (HTML), body_text, draft
    collections: list[dict[str, Any]] = field(default_factory=list)  # id, name
    sessions: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clicked(self) -> list[str]:
        with self.lock:
            return [c.split(" ", 1)[0] for c in self.clicks]


class SampleApp:
    """Run with ``start()`` (or as a context manager); ``url`` is its base,
    ``state`` what it was made to do."""

    def __init__(self, password: str | None = None, variant: Variant | None = None,
                 port: int = 0, posts_variant: PostsVariant | None = None) -> None:
        self.state = State(password=password or secrets.token_urlsafe(12))
        self.variant = variant or Variant()
        self.posts_variant = posts_variant or PostsVariant()
        app = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: tests read stdout
                pass

            def do_GET(self) -> None:  # noqa: N802
                app._get(self)

            def do_POST(self) -> None:  # noqa: N802
                app._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SampleApp:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SampleApp:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- plumbing ----------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, body: bytes, status: int = 200,
              ctype: str = "text/html; charset=utf-8", headers: dict[str, str] | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Cache-Control", "no-store")
        for k, val in (headers or {}).items():
            h.send_header(k, val)
        h.end_headers()
        h.wfile.write(body)

    def _redirect(self, h: BaseHTTPRequestHandler, to: str, cookie: str | None = None) -> None:
        headers = {"Location": to}
        if cookie:
            headers["Set-Cookie"] = f"sid={cookie}; HttpOnly; Path=/; SameSite=Lax"
        self._send(h, b"", HTTPStatus.SEE_OTHER, headers=headers)

    def _signed_in(self, h: BaseHTTPRequestHandler) -> bool:
        for part in (h.headers.get("Cookie") or "").split(";"):
            k, _, val = part.strip().partition("=")
            if k == "sid" and val in self.state.sessions:
                return True
        return False

    def _body(self, h: BaseHTTPRequestHandler) -> str:
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(min(n, 65536)).decode("utf-8", "replace")

    # -- pages ---------------------------------------------------------------
    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        if self._open_get(h, path):
            return
        if not self._signed_in(h):
            if path.startswith(CMS_PATHS):
                return self._redirect(h, "/login?next=" + quote(path, safe="/"))
            return self._redirect(h, "/login")
        if path.startswith(CMS_PATHS):
            return self._cms_get(h, path)
        self._app_get(h, path)

    def _open_get(self, h: BaseHTTPRequestHandler, path: str) -> bool:
        """The pages anyone may see (the state for the tests, assets, login, help, the note's
        frame); False when ``path`` is none of them."""
        v, st = self.variant, self.state
        if path == "/api/state":
            with st.lock:
                data = json.dumps({"reports": st.reports, "groups": st.groups, "notes": st.notes,
                                   "clicks": st.clicks, "drafts": st.drafts, "posts": st.posts,
                                   "collections": st.collections}).encode()
            self._send(h, data, ctype="application/json")
        elif path in STATIC:
            name, ctype = STATIC[path]
            self._send(h, (VENDOR / name).read_bytes(), ctype=ctype)
        elif path in ("/", "/login"):
            nxt = parse_qs(urlsplit(h.path).query).get("next", [""])[-1]
            self._send(h, pages.login_page(v, next_=nxt if _local(nxt) else ""))
        elif path == "/help":
            self._send(h, pages.simple_page(v, "Help", "Ask finance."))
        elif path == "/frame/note":
            saved = st.notes[-1] if "saved" in (urlsplit(h.path).query or "") and st.notes else None
            self._send(h, pages.note_frame(v, saved))
        else:
            return False
        return True

    def _app_get(self, h: BaseHTTPRequestHandler, path: str) -> None:
        """The first task's pages (a signed-in person only)."""
        v, st = self.variant, self.state
        with st.lock:
            reports, groups = list(st.reports), list(st.groups)
        if path in ("/dashboard", "/dashboard/reports"):
            return self._send(h, pages.dashboard_page(v, reports))
        if path == "/reports/new":
            return self._send(h, pages.form_page(v))
        if path == "/groups":
            return self._send(h, pages.groups_page(v, groups))
        if path == "/groups/add":
            return self._send(h, pages.group_form_page(v))
        if path == "/audit":
            entries = [f"report {r['id']} submitted" for r in reports] + [
                f"group {g['name']} created" for g in groups]
            return self._send(h, pages.audit_page(v, entries))
        for kind, items, render in (("reports", reports, pages.report_page),
                                    ("groups", groups, pages.group_page)):
            if path.startswith(f"/{kind}/"):
                found = [x for x in items if str(x["id"]) == path.rsplit("/", 1)[1]]
                if found:
                    return self._send(h, render(v, found[0]))
        self._send(h, pages.simple_page(v, "Not found", "Nothing here."), HTTPStatus.NOT_FOUND)

    def _cms_get(self, h: BaseHTTPRequestHandler, path: str) -> None:
        """The second task's pages (a signed-in person only)."""
        v, st = self.posts_variant, self.state
        with st.lock:
            saved, collections = list(st.posts), list(st.collections)
        if path == "/posts":
            return self._send(h, posts.posts_page(saved))
        if path == "/posts/new":
            return self._send(h, posts.post_form_page(v))
        if path == "/collections":
            return self._send(h, posts.collections_page(collections))
        if path == "/collections/new":
            return self._send(h, posts.collection_form_page(v))
        for kind, items in (("posts", saved), ("collections", collections)):
            if path.startswith(f"/{kind}/"):
                found = [x for x in items if str(x["id"]) == path.rsplit("/", 1)[1]]
                if found:
                    item = found[0]
                    return self._send(h, posts.post_page(v, item) if kind == "posts"
                                      else posts.collection_page(item))
        self._send(h, posts.cms_page("Not found", "<main><h1>Not found</h1></main>"), HTTPStatus.NOT_FOUND)

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        raw = self._body(h)
        st = self.state
        if path == "/log/click":
            with st.lock:
                st.clicks.append(raw[:200])
            return self._send(h, b"", HTTPStatus.NO_CONTENT)
        form = {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}
        lists = parse_qs(raw, keep_blank_values=True)
        if path == "/login":
            if form.get("email") == USER and (form.get("password") or form.get("passphrase")) == st.password:
                sid = secrets.token_hex(16)
                with st.lock:
                    st.sessions.add(sid)
                nxt = form.get("next", "")
                return self._redirect(h, nxt if _local(nxt) else "/dashboard", cookie=sid)
            return self._send(h, pages.login_page(self.variant, "Wrong email or password."), 401)
        if path == "/frame/note":
            with st.lock:
                st.notes.append(form.get("note", ""))
            return self._redirect(h, "/frame/note?saved=1")
        if not self._signed_in(h):
            return self._send(h, b"forbidden", HTTPStatus.FORBIDDEN, ctype="text/plain")
        if path == "/reports":
            with st.lock:
                rid = len(st.reports) + 17
                st.reports.append({
                    "id": rid, "amount": form.get("amount", ""), "description": form.get("description", ""),
                    "merchant_id": form.get("merchant_id", ""),
                    "category": form.get("category", "").removeprefix(pages.VALUE_PREFIX),
                    "has_receipt": form.get("has_receipt") == "on",
                })
            return self._redirect(h, f"/reports/{rid}")
        if path == "/groups":
            with st.lock:
                if form.get("draft"):
                    st.drafts += 1
                gid = len(st.groups) + 3
                st.groups.append({"id": gid, "name": form.get("name", ""),
                                  "permissions": sorted(lists.get("permissions", [])),
                                  "draft": bool(form.get("draft"))})
            return self._redirect(h, f"/groups/{gid}")
        if path == "/posts":
            with st.lock:
                pid = len(st.posts) + 101
                st.posts.append({"id": pid, "title": form.get("title", ""), "body": form.get("body", ""),
                                 "body_text": posts.body_text(form.get("body", "")),
                                 "draft": bool(form.get("draft"))})
            return self._redirect(h, f"/posts/{pid}")
        if path == "/collections":
            with st.lock:
                cid = len(st.collections) + 7
                st.collections.append({"id": cid, "name": form.get("name", "")})
            return self._redirect(h, f"/collections/{cid}")
        self._send(h, b"forbidden", HTTPStatus.FORBIDDEN, ctype="text/plain")


def _local(target: str) -> bool:
    """Sign-in returns only to one of the CMS pages (never an open redirect)."""
    return target.startswith(CMS_PATHS) and "//" not in target and "\\" not in target
