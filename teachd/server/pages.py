"""The web UI: Jinja2 templates (``templates/``, autoescape on: every value
is escaped) and static CSS/JS (``static/``, served at ``/static/<name>`` with
a content hash in the URL and an ``integrity=`` hash). No markup is built in
Python: a handler gathers what its page shows and names its template.

The pages' scripts call ``/api/`` with the session's page key (this origin's
localStorage); every path segment they put in a URL is encoded (``seg`` /
``segs`` in ``app.js``). Every ``<script>`` carries the response's CSP nonce;
no page ever shows a secret (the store holds none). A page reached by a plain
navigation comes through the guard's shell (see ``teachd.server.security``):
the browser's cookie alone opens nothing, because every local server gets
that cookie too. A page that redraws part of itself asks for the same
template's partial (``?part=…``), with the key, like any fetch."""

from __future__ import annotations

import hmac
import urllib.parse
from pathlib import Path
from typing import Any

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from compiler.plan import has_steps
from teachd.core.approval import GATED_TOOLS
from teachd.core.errors import NotFound
from teachd.core.history import history_entries
from teachd.runner.feedback import UNDO_SECONDS
from teachd.server.api import runs as runs_api
from teachd.server.api.common import daemon
from teachd.server.api.schedules import schedule_views
from teachd.server.api.skills import skill_view
from teachd.server.responses import JSONResponse
from teachd.server.state import Daemon
from teachd.server.ui import views
from teachd.server.ui.assets import ASSETS, CACHE, asset
from teachd.server.ui.words import duration, evidence_words, schedule_words, tool_words
from teachd.store.schedules import ScheduleStore

TEMPLATES = Path(__file__).resolve().parent / "templates"
NAV = (("/skills", "Skills"), ("/teach", "Teach"), ("/runs", "Runs"), ("/schedules", "Schedules"),
       ("/approvals", "Approvals"))
NO_STORE = {"Cache-Control": "no-store"}  # CSP & co: the guard, on every response


def q(segment: Any) -> str:
    """One path segment for a URL built in a template: encoded, so a name with
    '/', '%', '?' or '#' stays one segment and names only itself."""
    return urllib.parse.quote(str(segment), safe="")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(static=lambda name: asset(name).url, sri=lambda name: asset(name).integrity,
                       NAV=NAV, GATED_TOOLS=GATED_TOOLS, STEP_CLASS=views.STEP_CLASS, STEP_WORDS=views.STEP_WORDS,
                       worked_rate=views.worked_rate)
    env.filters.update(q=q, shown=views.shown, shown_rest=views.shown_rest, duration=duration,
                       evidence=evidence_words, tool_words=tool_words,
                       schedule_words=lambda v: schedule_words(v.get("cron"), v.get("every_s")))
    return env


templates = Jinja2Templates(env=_environment())


def nonce(request: Request) -> str:
    """This response's script nonce (the guard puts it in the CSP)."""
    return str(request.scope.get("state", {}).get("nonce", ""))


def _waiting(d: Daemon) -> int:
    """What waits for this person: approvals and secrets."""
    return d.approvals.waiting() + len(d.secrets.pending())


def render(request: Request, name: str, context: dict[str, Any], *, active: str = "", title: str = "",
           scripts: tuple[str, ...] = (), data: dict[str, Any] | None = None, status: int = 200,
           part: dict[str, str] | None = None) -> HTMLResponse:
    """A page from its template, in the frame of ``base.html``; with
    ``?part=NAME`` (a name ``part`` lists), only that partial, for a page
    that redraws itself."""
    state = request.scope.get("state", {})
    wanted = request.query_params.get("part")
    if part and wanted in part:
        html = templates.get_template(part[wanted]).render(**context)
        return HTMLResponse(html, headers=NO_STORE)
    waiting = context.pop("waiting", None)  # counted by ``page``, in a thread: never here, on the event loop
    page_data = {"title": f"{title} — teachd", "waiting": waiting, **(data or {})}
    full = {"nonce": nonce(request), "user": state.get("user") or "", "session": bool(state.get("sid")),
            "active": active, "title": title, "waiting": waiting or 0, "scripts": scripts,
            "page_data": page_data, **context}
    return templates.TemplateResponse(request, name, full, status_code=status, headers=NO_STORE)


async def page(request: Request, name: str, context: dict[str, Any], **kw: Any) -> HTMLResponse:
    """``render`` for a person's page: what waits for them (the count in the
    navigation) read from the store in a worker thread, off the event loop."""
    partial = request.query_params.get("part") in (kw.get("part") or {})  # a redraw shows no navigation
    if request.scope.get("state", {}).get("user") is not None and not partial:
        context = {**context, "waiting": await run_in_threadpool(_waiting, daemon(request))}
    return render(request, name, context, **kw)


_ERRORS = {400: "Not understood", 403: "Not allowed", 404: "Not found", 405: "Not allowed here",
           409: "Not now", 413: "Too large", 500: "Something went wrong"}


def error_page(request: Request, status: int, why: str) -> HTMLResponse:
    """What went wrong, on a page of the app (its navigation kept) rather
    than a bare status line or an API's JSON."""
    what = _ERRORS.get(status, "Something went wrong" if status >= 500 else "Not possible")
    why = {"Not Found": "There is no such page here", "Method Not Allowed": "This page cannot be asked that way"
           }.get(why, why.rstrip("."))
    # no count of what waits in its navigation: the store it would ask may be what went wrong (a 503)
    return render(request, "missing.html", {"what": what, "why": why, "waiting": 0}, title=what, status=status)


# -- the pages around logging in: no data, no navigation ------------------------------------


async def _login_user(request: Request, code: str) -> tuple[str | None, bool]:
    """(who ``code`` logs in, whether it is the printed one-time code). The
    printed code is checked here, on the event loop, so that it is spent by
    the one request that checked it; a person's token is looked up in the
    store in a worker thread."""
    d = daemon(request)
    if code and d.login_code and hmac.compare_digest(code.encode(), d.login_code.encode()):
        return d.sessions.owner, True
    return await run_in_threadpool(d.sessions.user_of, code), False


async def login(request: Request) -> Response:
    """``GET /login?token=…`` only shows a button: a link another site makes
    the browser open logs nobody in (login CSRF). The button POSTs the code
    from this very page, and only a POST from this origin logs in."""
    if request.method == "POST":
        return await _login_post(request)
    code = request.query_params.get("token", "")
    user, _one_time = await _login_user(request, code)
    if user is None:
        return RedirectResponse("/logged-out", status_code=303)
    now = request.scope.get("state", {}).get("cookie_user")
    return render(request, "login.html", {"code": code, "who": user, "now": now, "key": None, "waiting": 0},
                  title="Log in")


async def _login_post(request: Request) -> Response:
    d = daemon(request)
    host = request.headers.get("host", "")  # the guard allowed it: it names this daemon
    origin, site = request.headers.get("origin"), request.headers.get("sec-fetch-site")
    if origin != f"http://{host}" or site not in (None, "same-origin"):
        return PlainTextResponse("log in from this daemon's own login page (the link teachd serve printed)",
                                 status_code=403)
    raw = await request.body()
    code = (urllib.parse.parse_qs(raw.decode("utf-8", "replace")).get("token") or [""])[0]
    user, one_time = await _login_user(request, code)
    if user is None:
        return RedirectResponse("/logged-out", status_code=303)
    if one_time:
        d.login_code = ""  # one-time: the printed link logs in once
    old = request.cookies.get(d.sessions.cookie)
    if old:
        d.sessions.close(old)  # the browser's previous session ends here
    sid = d.sessions.open(None if one_time else code)
    response = render(request, "login.html", {"code": "", "who": user, "now": None, "waiting": 0,
                                              "key": d.sessions.csrf(sid)},
                      title="Logged in", scripts=("login.js",))
    response.set_cookie(d.sessions.cookie, sid, httponly=True, samesite="strict", path="/")
    return response


async def logout(request: Request) -> Response:
    """``POST /logout`` (with the page key): the session ends, its cookie goes."""
    d = daemon(request)
    d.sessions.close(request.scope.get("state", {}).get("sid"))
    response = JSONResponse({"logged_out": True})
    response.delete_cookie(d.sessions.cookie, path="/", httponly=True, samesite="strict")
    return response


async def logged_out(request: Request) -> HTMLResponse:
    return render(request, "logged_out.html", {"waiting": 0}, title="Not logged in", status=401,
                  scripts=("logged_out.js",))


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


async def static(request: Request) -> Response:
    """``/static/<name>``: the UI's CSS and JS (no data: open to every request
    the guard lets through, Host checked); long-cached, the URL carries the hash."""
    found = ASSETS.get(request.path_params["name"])
    if found is None:
        return PlainTextResponse("no such file", status_code=404)
    return Response(found.body, media_type=found.media_type,
                    headers={"Cache-Control": CACHE, "ETag": f'"{found.digest[:32]}"'})


async def home(request: Request) -> Response:
    return RedirectResponse("/skills", status_code=303)


# -- skills ----------------------------------------------------------------------------------


# Every page that reads a person's skills decrypts them: that work runs in a worker thread
# (run_in_threadpool), never on the event loop, so one person's thousands of skills hold up no
# one else's request (tests/security/test_listing_off_loop.py).


def _skill_rows(d: Daemon) -> list[dict[str, Any]]:
    health = ScheduleStore(d.store).health()
    # the kind is the store's own record of where the skill came from, never what its metadata claims
    kinds = {"taught": "taught", "imported": "imported", "created": "written here"}
    return [{"skill": s, "kind": kinds.get(s.origin, s.origin), "health": health.get(s.slug)}
            for s in d.store.all(shared=True)]


async def skills_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    rows = await run_in_threadpool(_skill_rows, d)
    from teachd.skills.templates import templates

    starters = [vars(t) for t in templates()]
    return await page(request, "skills.html", {"rows": rows, "templates": starters}, active="/skills", title="Skills",
                  scripts=("skills.js",), data={"templates": starters})


async def skill_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    every = request.query_params.get("versions") == "all"
    view = await run_in_threadpool(lambda: skill_view(d, d.store.get(request.path_params["slug"]), every))
    meta = view["metadata"].get("metadata", {}) if isinstance(view["metadata"].get("metadata"), dict) else {}
    forced = views.secret_typing(view)
    context = {"view": view, "meta": meta, "parameters": views.parameters_of(view), "forced": forced,
               "replayable": has_steps(view["files"]), "history": history_entries(view["instructions"]),
               "versions": list(reversed(view["versions"])), "files": sorted(view["files"].items())}
    data = {"slug": view["slug"], "access": view["access"], "forced": forced}
    return await page(request, "skill.html", context, active="/skills", title=view["name"], scripts=("skill.js",),
                  data=data)


# -- teach -----------------------------------------------------------------------------------


async def teach_page(request: Request) -> HTMLResponse:
    return await page(request, "teach.html", {}, active="/teach", title="Teach", scripts=("teach.js",))


# -- runs ------------------------------------------------------------------------------------


def _use_only(d: Daemon) -> set[str]:
    return {s.slug for s in d.store.all(enabled_only=True, shared=True) if s.access == "use"}


def _runs_context(d: Daemon) -> tuple[list[Any], list[dict[str, Any]]]:
    usable = d.store.all(enabled_only=True, shared=True)
    use_only = {s.slug for s in usable if s.access == "use"}
    pending = d.approvals.pending()
    runs = []
    for r in d.runs.recent():
        given, undo_left = d.runs.feedback_of(r["run_id"], UNDO_SECONDS)
        runs.append(views.run_view({**r, "undo_left": undo_left}, given, use_only,
                                   [p for p in pending if p["run_id"] == r["run_id"]]))
    return usable, runs


async def runs_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    usable, runs = await run_in_threadpool(_runs_context, d)
    queue = await run_in_threadpool(d.run_queue)
    return await page(request, "runs.html", {"runs": runs, "skills": views.replayable(usable), "queue": queue},
                  active="/runs", title="Runs", scripts=("params.js", "runs.js"), part={"list": "_runs_list.html"})


async def run_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    run_id = request.path_params["run_id"]
    try:
        raw = await run_in_threadpool(lambda: runs_api.run_view(d, d.runs.one(run_id)))  # GET /api/runs/{id}'s
    except NotFound as exc:
        return await page(request, "missing.html", {"what": "Run", "why": str(exc)}, active="/runs", title="Run",
                      status=404)
    run = views.run_view(raw, raw.get("feedback") or {}, await run_in_threadpool(_use_only, d))
    return await page(request, "run.html", {"run": run}, active="/runs", title=f"Run of {run.get('slug') or run_id}",
                  scripts=("runs.js", "run.js"), data={"run_id": run_id, "ended": run["ended"]},
                  part={"live": "_run_live.html"})


# -- approvals and secrets ----------------------------------------------------------------------


async def approvals_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    context = await run_in_threadpool(lambda: {"pending": runs_api.with_evidence(d, d.approvals.pending()),
                                               "asked": d.secrets.pending(), "rules": d.rules.all()})
    return await page(request, "approvals.html", context, active="/approvals", title="Approvals",
                  scripts=("approvals.js",), part={"waiting": "_waiting.html"})


async def secret_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    sid = request.path_params["sid"]
    try:
        asked = d.secrets.get(sid)
    except NotFound as exc:
        return await page(request, "missing.html", {"what": "Secret", "why": str(exc)}, active="/approvals",
                      title="Secret")
    return await page(request, "secret.html", {"asked": asked}, active="/approvals", title="Secret",
                  scripts=("secret.js",), data={"sid": sid})


# -- schedules -----------------------------------------------------------------------------------


async def schedules_page(request: Request) -> HTMLResponse:
    d = daemon(request)
    context = await run_in_threadpool(lambda: {"schedules": schedule_views(d), "leading": d.schedules.leading,
                                               "skills": views.replayable(d.store.all(enabled_only=True))})
    return await page(request, "schedules.html", context, active="/schedules", title="Schedules",
                  scripts=("params.js", "schedules.js"))


ROUTES = [  # pages, not the API: never in the OpenAPI schema (their docstrings are prose, not YAML)
    Route(path, endpoint, methods=methods, include_in_schema=False) for path, endpoint, methods in (
        ("/", home, None), ("/login", login, ["GET", "POST"]), ("/logout", logout, ["POST"]),
        ("/logged-out", logged_out, None), ("/favicon.ico", favicon, None),
        ("/static/{name}", static, ["GET", "HEAD"]),
        ("/skills", skills_page, None), ("/skills/{slug}", skill_page, None), ("/teach", teach_page, None),
        ("/runs", runs_page, None), ("/runs/{run_id}", run_page, None), ("/schedules", schedules_page, None),
        ("/approvals", approvals_page, None), ("/secrets/{sid}", secret_page, None))
]
