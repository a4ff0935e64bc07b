"""A tiny multi-page expenses app (stdlib HTTP server, in a thread).

Pages: sign-in (password), dashboard, new report form (text, textarea, select,
checkbox, an iframe with a note field, a help link opening a new tab), and the
submitted report. ``Variant`` renders the same task with drift (renamed ids,
moved layout, …) so a replay can be tested against a changed page.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
import zlib
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

USER = "alice@example.com"


@dataclass(frozen=True)
class Variant:
    """Kinds of drift the page can show; all off is the demonstrated page."""

    renamed_ids: bool = False
    new_theme: bool = False
    moved_layout: bool = False
    inserted_elements: bool = False
    wrappers: bool = False
    changed_labels: bool = False
    below_fold: bool = False
    decoys: bool = False
    submit_removed: bool = False

    @classmethod
    def named(cls, name: str) -> Variant:
        if name in ("", "base"):
            return cls()
        return cls(**{name: True})


@dataclass
class State:
    password: str
    reports: list[dict[str, Any]] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _page(title: str, body: str, variant: Variant) -> bytes:
    theme = (
        "body{font-family:serif;background:#202830;color:#eee} button{border-radius:12px;"
        "padding:14px 28px;background:#e0a030}" if variant.new_theme
        else "body{font-family:sans-serif;margin:24px} button{padding:6px 14px}"
    )
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
           f"<style>{theme} label{{display:block;margin-top:10px}}</style></head>"
           f"<body>{body}</body></html>")
    return doc.encode("utf-8")


def _id(base: str, v: Variant) -> str:
    return f"{base}-x{zlib.crc32(base.encode()) % 997}v2" if v.renamed_ids else base


def login_page(v: Variant, error: str = "") -> bytes:
    err = f"<p role='alert'>{html.escape(error)}</p>" if error else ""
    body = (f"<h1>Sign in</h1>{err}<form method='post' action='/login'>"
            f"<label for='{_id('email', v)}'>Email</label>"
            f"<input id='{_id('email', v)}' name='email' type='email' autocomplete='username'>"
            f"<label for='{_id('password', v)}'>Password</label>"
            f"<input id='{_id('password', v)}' name='password' type='password' "
            f"autocomplete='current-password'>"
            f"<p><button id='{_id('login-btn', v)}' data-testid='login-submit' type='submit'>"
            f"Sign in</button></p></form>")
    return _page("Sign in — Expenses", body, v)


def dashboard_page(v: Variant, reports: list[dict[str, Any]]) -> bytes:
    rows = "".join(f"<li>{html.escape(r['description'])}: {html.escape(r['amount'])}</li>"
                   for r in reports)
    body = (f"<nav><a href='/dashboard'>Home</a> <a href='/reports/new'>New report</a></nav>"
            f"<h1>Dashboard</h1><ul id='reports'>{rows}</ul>")
    return _page("Dashboard — Expenses", body, v)


def form_page(v: Variant) -> bytes:
    amount_label = "Total amount" if v.changed_labels else "Amount"
    fields = [
        f"<label for='{_id('amount', v)}'>{amount_label}</label>"
        f"<input id='amount' name='amount' placeholder='0.00'>"
        if not v.renamed_ids else
        f"<label for='{_id('amount', v)}'>{amount_label}</label>"
        f"<input id='{_id('amount', v)}' name='amount' placeholder='0.00'>",
        f"<label for='{_id('description', v)}'>Description</label>"
        f"<textarea id='{_id('description', v)}' name='description'></textarea>",
        f"<label for='{_id('category', v)}'>Category</label>"
        f"<select id='{_id('category', v)}' name='category'><option value=''>Choose…</option>"
        f"<option value='travel'>Travel</option><option value='meals'>Meals</option>"
        f"<option value='office'>Office</option></select>",
        f"<label><input type='checkbox' id='{_id('has-receipt', v)}' name='has_receipt'> "
        f"I have a receipt</label>",
    ]
    if v.moved_layout:
        fields = [fields[2], fields[3], fields[1], fields[0]]
        fields.insert(0, "<div style='display:flex;flex-direction:row-reverse;gap:40px'>")
        fields.append("</div>")
    if v.inserted_elements:
        fields.insert(1, "<p class='notice'>New: reports are reviewed within two days.</p>"
                         "<label for='project'>Project</label><input id='project' name='project'>")
    submit = "" if v.submit_removed else (
        f"<button id='{_id('submit', v)}' type='submit'>Submit report</button>")
    if v.decoys:
        submit = ("<button type='button' onclick=\"this.textContent='Saved as draft'\">"
                  "Submit draft</button> " + submit +
                  " <a href='/reports/new' role='button'>Submit reports later</a>")
    filler = "<div style='height:1600px'>Scroll down for the rest of the form.</div>" if v.below_fold else ""
    inner = "".join(fields) + filler + f"<p>{submit}</p>"
    if v.wrappers:
        inner = f"<div class='card'><div class='card-body'><section>{inner}</section></div></div>"
    body = (f"<nav><a href='/dashboard'>Home</a> <a href='/help' target='_blank'>Help</a></nav>"
            f"<h1>New report</h1><form method='post' action='/reports' aria-label='Expense'>"
            f"<fieldset><legend>Expense</legend>{inner}</fieldset></form>"
            f"<iframe src='/frame/note' title='Note' style='height:60px;border:0'></iframe>")
    return _page("New report — Expenses", body, v)


class SampleApp:
    """Run with ``start()``; ``url`` is its base; ``state.reports`` its effects."""

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
        return f"http://{host}:{port}"

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

    # -- handlers --------------------------------------------------------
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

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        v = self.variant
        if path == "/api/reports":
            with self.state.lock:
                data = json.dumps(self.state.reports).encode()
            return self._send(h, data, ctype="application/json")
        if path in ("/", "/login"):
            return self._send(h, login_page(v))
        if path == "/help":
            return self._send(h, _page("Help — Expenses", "<h1>Help</h1><p>Ask finance.</p>", v))
        if path == "/frame/note":
            return self._send(h, b"<!doctype html><label for='note'>Note</label>"
                                 b"<input id='note' name='note'>")
        if not self._signed_in(h):
            return self._redirect(h, "/login")
        if path == "/dashboard":
            with self.state.lock:
                reports = list(self.state.reports)
            return self._send(h, dashboard_page(v, reports))
        if path == "/reports/new":
            return self._send(h, form_page(v))
        if path.startswith("/reports/"):
            rid = path.rsplit("/", 1)[1]
            with self.state.lock:
                found = [r for r in self.state.reports if str(r["id"]) == rid]
            if found:
                r = found[0]
                body = (f"<h1>Report submitted</h1><p id='summary'>{html.escape(r['description'])}"
                        f" — {html.escape(r['amount'])} ({html.escape(r['category'])})</p>"
                        "<a href='/dashboard'>Back to the dashboard</a>")
                return self._send(h, _page("Report submitted — Expenses", body, v))
        self._send(h, _page("Not found", "<h1>Not found</h1>", v), HTTPStatus.NOT_FOUND)

    def _form(self, h: BaseHTTPRequestHandler) -> dict[str, str]:
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(min(n, 65536)).decode("utf-8", "replace")
        return {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        path = urlsplit(h.path).path
        form = self._form(h)
        if path == "/login":
            if form.get("email") == USER and form.get("password") == self.state.password:
                sid = secrets.token_hex(16)
                with self.state.lock:
                    self.state.sessions.add(sid)
                return self._redirect(h, "/dashboard", cookie=sid)
            return self._send(h, login_page(self.variant, "Wrong email or password."), 401)
        if path == "/reports" and self._signed_in(h):
            with self.state.lock:
                rid = len(self.state.reports) + 17
                self.state.reports.append({
                    "id": rid, "amount": form.get("amount", ""),
                    "description": form.get("description", ""),
                    "category": form.get("category", ""),
                    "has_receipt": form.get("has_receipt") == "on",
                })
            return self._redirect(h, f"/reports/{rid}")
        self._send(h, b"forbidden", HTTPStatus.FORBIDDEN, ctype="text/plain")
