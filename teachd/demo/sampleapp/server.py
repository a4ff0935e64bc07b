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
from typing import Any
from urllib.parse import parse_qs, urlsplit

from teachd.demo.sampleapp import pages
from teachd.demo.sampleapp.pages import Variant

USER = "alice@example.com"


@dataclass
class State:
    password: str
    reports: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    clicks: list[str] = field(default_factory=list)  # "data-k path", as the pages report them
    drafts: int = 0  # forms saved through a look-alike button
    sessions: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clicked(self) -> list[str]:
        with self.lock:
            return [c.split(" ", 1)[0] for c in self.clicks]


class SampleApp:
    """Run with ``start()`` (or as a context manager); ``url`` is its base,
    ``state`` what it was made to do."""

    def __init__(self, password: str | None = None, variant: Variant | None = None,
                 port: int = 0) -> None:
        self.state = State(password=password or secrets.token_urlsafe(12))
        self.variant = variant or Variant()
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
        v, st = self.variant, self.state
        if path == "/api/state":
            with st.lock:
                data = json.dumps({"reports": st.reports, "groups": st.groups, "notes": st.notes,
                                   "clicks": st.clicks, "drafts": st.drafts}).encode()
            return self._send(h, data, ctype="application/json")
        if path in ("/", "/login"):
            return self._send(h, pages.login_page(v))
        if path == "/help":
            return self._send(h, pages.simple_page(v, "Help", "Ask finance."))
        if path == "/frame/note":
            saved = st.notes[-1] if "saved" in (urlsplit(h.path).query or "") and st.notes else None
            return self._send(h, pages.note_frame(v, saved))
        if not self._signed_in(h):
            return self._redirect(h, "/login")
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
                return self._redirect(h, "/dashboard", cookie=sid)
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
        self._send(h, b"forbidden", HTTPStatus.FORBIDDEN, ctype="text/plain")
