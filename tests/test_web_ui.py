"""The web UI on templates (issue 24), in Debian's Chromium against a live
``teachd serve``: every page with axe-core (0 serious or critical violations)
at 1280 and 390 px, no page wider than a phone, the static files hashed
with integrity and a CSP without 'unsafe-inline', answering in place by
keyboard, a run page that follows its run live, the Run form's parameters,
feedback chips with Undo, the skill page's guards — and the schedules'
plain words, a pure function.

One daemon for the module (its home a copy of the session's taught sample,
with runs, questions, a secret request and schedules put in as the store
would hold them); each test leaves the others' data as it found it.
``TEACHD_SCREENSHOTS=docs/ui`` writes the docs' pictures."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from teachd.config import Settings
from teachd.server.ui.words import (
    cron_words,
    duration,
    every_words,
    evidence_words,
    schedule_words,
    tool_words,
)
from teachd.store import open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore
from tests.axe import axe_violations, blocking
from tests.sample_task import PASSWORD, SLUG, copy_home
from tests.test_server import Server, browser_login, logged_in, serve, shot

TEMPLATES = Path(__file__).resolve().parent.parent / "teachd" / "server" / "templates"
STATIC = TEMPLATES.parent / "static"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}


# -- schedules in plain words (pure) ------------------------------------------------------------


@pytest.mark.parametrize(("cron", "every", "words"), [
    ("0 9 * * 1", None, "every Monday at 09:00"),
    ("30 7 * * *", None, "every day at 07:30"),
    ("0 */6 * * *", None, "every 6 hours"),
    ("*/15 * * * *", None, "every 15 minutes"),
    ("0 9 * * 1-5", None, "every weekday (Monday to Friday) at 09:00"),
    ("0 9 * * 1,3,5", None, "every Monday, Wednesday and Friday at 09:00"),
    ("0 18 * * 0", None, "every Sunday at 18:00"),
    ("0 18 * * 7", None, "every Sunday at 18:00"),
    ("0 8 1 * *", None, "every month on the 1st at 08:00"),
    ("15 * * * *", None, "every hour at 15 minutes past"),
    (None, 6 * 3600, "every 6 hours"),
    (None, 86400, "every day"),
    (None, 30 * 60, "every 30 minutes"),
    (None, 5400, "every 1 hour 30 minutes"),
    (None, 7 * 86400, "every week"),
])
def test_a_schedule_reads_in_plain_words(cron: str | None, every: int | None, words: str) -> None:
    assert schedule_words(cron, every) == (words, True)


def test_the_evidence_that_found_a_target_reads_in_plain_words_not_locator_names() -> None:
    assert evidence_words(["label~", "attr:name"]) == "its label (loosely), its field name"
    assert evidence_words(["css", "xpath", "test_id"]) == "its place on the page, its test id"
    assert evidence_words(["shadow_root"]) == "shadow root"  # one not named yet: still no underscore
    assert tool_words("computer_act") == "Act on the computer" and tool_words("new_tool") == "New tool"


def _now_card(run: dict[str, Any]) -> str:
    from teachd.server.pages import templates
    from teachd.server.ui.views import run_view

    base = {"run_id": "run-x", "origin": "web UI", "message": "", "slug": SLUG, "skills": {SLUG: 1},
            "started_at": "2026-12-03T10:00:00+00:00", "finished_at": "2026-12-03T10:01:00+00:00"}
    page = templates.env.get_template("_run_live.html").render(run=run_view({**base, **run}, {}, set()))
    card = re.search(r'<section class="card now-card".*?</section>', page, re.S)
    assert card is not None
    return " ".join(re.sub(r"<[^>]+>", " ", card.group(0)).split())


def test_the_now_card_says_where_a_run_is_of_its_plan_and_counts_an_agents_actions_without_one() -> None:
    halted = _now_card({"status": "failure", "plan": PLAN, "message": "step 4: the Sign in button was not found",
                        "steps": [*(_result(n) for n in range(1, 4)), _result(4, "halted")]})
    assert halted.startswith("Stopped at step 4 of 5 ") and "Show me this step" in halted
    done = _now_card({"status": "success", "plan": PLAN, "steps": [_result(n) for n in range(1, 6)]})
    assert done.startswith("5 of 5 steps done") and "Show me" not in done
    agent = _now_card({"status": "ended", "slug": None, "skills": {}, "steps": AGENT_ACTIONS[:1]})
    assert agent.startswith("1 step done") and " of " not in agent  # no plan: nothing to be "of"


@pytest.mark.parametrize("cron", ["0 9 1-7 * 1", "0 0 * 1 *", "0 9 * * 8", "61 9 * * *", "0 9 * *", "a b c d e"])
def test_a_cron_with_no_plain_words_is_shown_as_itself(cron: str) -> None:
    assert cron_words(cron) is None and schedule_words(cron, None) == (cron, False)


def test_durations_and_intervals() -> None:
    assert [duration(x) for x in (None, 850, 1234, 125_000)] == ["", "850 ms", "1.2 s", "2 min 5 s"]
    assert every_words(60) == "every minute" and every_words(90) == "every 1 minute 30 seconds"


def test_no_page_builds_markup_in_python_or_styles_inline() -> None:
    """Markup lives in templates; the CSP allows no inline style, so none is written."""
    pages = (TEMPLATES.parent / "pages.py").read_text()
    assert "<div" not in pages and "<tr" not in pages and "<button" not in pages
    for path in [*TEMPLATES.glob("*.html"), *STATIC.glob("*.js")]:
        text = path.read_text()
        assert not re.search(r"\sstyle\s*=", text), path.name
        assert not re.search(r"\son[a-z]+\s*=\s*['\"]", text), path.name  # no inline handlers
        assert "location.reload" not in text or path.name in ("skill.js", "skills.js", "schedules.js",
                                                              "approvals.js", "runs.js"), path.name
    for path in TEMPLATES.glob("*.html"):
        for tag in re.findall(r"<script[^>]*>", path.read_text()):
            assert "nonce=" in tag and ("src=" in tag or "application/json" in tag), (path.name, tag)


# -- the daemon, with something in every page ----------------------------------------------------


def _jpeg(color: tuple[int, int, int], label: str) -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (320, 200), (245, 246, 248))
    draw = ImageDraw.Draw(img)
    draw.rectangle((40, 70, 280, 130), outline=color, width=4)
    draw.text((60, 92), label, fill=color)
    out = io.BytesIO()
    img.save(out, "JPEG", quality=80)
    return out.getvalue()


PLAN = [
    {"n": 1, "action": "open", "target": "http://127.0.0.1:8111/login", "page": "http://127.0.0.1:8111/login",
     "value": None, "secret": False},
    {"n": 2, "action": "type into", "target": "the Email field", "page": "http://127.0.0.1:8111/login",
     "value": "alice@example.com", "secret": False},
    {"n": 3, "action": "type into", "target": "the Password field", "page": "http://127.0.0.1:8111/login",
     "value": "[secret password]", "secret": True},
    {"n": 4, "action": "click", "target": "the Sign in button", "page": "http://127.0.0.1:8111/login",
     "value": None, "secret": False},
    {"n": 5, "action": "type into", "target": "the Group name field", "page": "http://127.0.0.1:8111/groups/new",
     "value": "Auditors", "secret": False},
]
ORIGINS = ["http://127.0.0.1:8111"]


def _result(n: int, status: str = "ok", **extra: Any) -> dict[str, Any]:
    action = {1: "goto", 2: "type", 3: "type", 4: "click", 5: "type"}[n]
    return {"n": n, "action": action, "status": status, "detail": PLAN[n - 1]["target"], "via": ["role", "name"],
            "ms": 420 + 90 * n, "asked": n == 2, **extra}


def _request(step: int, offers_run: bool = True) -> dict[str, Any]:
    return {"step": step, "tool": "computer_act", "action": PLAN[step - 1]["target"], "page": PLAN[step - 1]["page"],
            "skills": [SLUG], "reason": "a loaded skill requires approval", "offers_run": offers_run,
            "plan": {"slug": SLUG, "steps": PLAN, "origins": ORIGINS} if offers_run else None,
            "of": len(PLAN) if offers_run else None}


@dataclass
class Asking:
    """A run waiting on the Approvals page (``ApprovalQueue.wait`` in a thread, as a replay waits)."""

    got: list[str] = field(default_factory=list)
    points: list[tuple[float, float] | None] = field(default_factory=list)
    thread: threading.Thread | None = None

    def answer(self, timeout: float = 10) -> list[str]:
        assert self.thread is not None
        self.thread.join(timeout)
        return self.got


@dataclass
class UI:
    server: Server
    settings: Settings
    runs: RunStore
    version: int
    done: str  # an ended run: plan, results, pictures
    live: str  # a running run, its step 2 waiting on a question that offers the plan
    halted: str  # a run that halted at step 4
    agent: str  # an agent's run that loaded many skills and used one
    secret: str  # a secret request's id
    asking: list[Asking] = field(default_factory=list)

    @property
    def login(self) -> str:
        """A login link that works more than once (the daemon's token; the printed one is one-time)."""
        return f"{self.server.url}/login?token={self.server.token}"

    def ask(self, run_id: str, request: dict[str, Any]) -> Asking:
        queue = ApprovalQueue(open_store(self.settings))  # its own connection, in its own thread
        asking = Asking()
        def wait() -> None:
            word, point = queue.wait_answer(run_id, request, timeout=600)
            asking.got.append(word)
            asking.points.append(point)

        asking.thread = threading.Thread(daemon=True, target=wait)
        before = {p["id"] for p in queue.pending()}
        asking.thread.start()
        deadline = time.monotonic() + 10
        while not ({p["id"] for p in queue.pending()} - before):
            assert time.monotonic() < deadline, "the question never showed"
            time.sleep(0.05)
        self.asking.append(asking)
        return asking


# An MCP session's actions as sessions recorded them before they were numbered: no "n".
AGENT_ACTIONS = [{"action": "click", "target": "the Reports link", "page": "http://127.0.0.1:1/", "status": "done"},
                 {"action": "type", "target": "the Title field", "page": "http://127.0.0.1:1/new",
                  "status": "refused", "detail": "outside the skill's scope"}]


def test_an_agents_run_shows_each_of_its_actions_as_a_step_in_the_api_and_on_its_page(ui: UI, browser) -> None:
    """An MCP session's run answered 500 (its actions had no step number):
    the person could not see what an agent did on their computer."""
    with ui.server.api() as api:
        shown = api.get(f"/api/runs/{ui.agent}")
    assert shown.status_code == 200, shown.text
    assert [(s["n"], s["target"], s["status"]) for s in shown.json()["steps"]] == [
        (1, "the Reports link", "done"), (2, "the Title field", "refused")]
    page = logged_in(browser, ui.server, ui.login)
    page.goto(f"{ui.server.url}/runs/{ui.agent}")
    page.get_by_text("the Title field").first.wait_for()
    assert "outside the skill" in page.content() and "Internal" not in page.content()


@pytest.fixture(scope="module")
def ui(taught_sample, tmp_path_factory: pytest.TempPathFactory) -> Iterator[UI]:
    env = copy_home(taught_sample, tmp_path_factory.mktemp("web-ui"))
    settings = Settings(home=Path(env["TEACHD_HOME"]), owner="alice")
    store = open_store(settings)
    runs = RunStore(store)
    version = store.get(SLUG).current_version
    base = {"slug": SLUG, "origin": "web UI", "used": [SLUG], "params": {"name": "Auditors"},
            "start_url": None, "plan": PLAN, "origins": ORIGINS}
    done, live, halted, agent = (f"run-20260105-09000{i}-{c * 6}" for i, c in enumerate("abcd"))
    runs.start(done, {SLUG: version})
    for n in range(1, 6):
        runs.put_picture(done, n, "before", _jpeg((45, 91, 215), f"step {n}: the target"))
        runs.put_picture(done, n, "after", _jpeg((27, 112, 48), f"step {n}: the page after"))
    runs.finish(done, "success", {**base, "message": "every step and the success check held",
                                  "steps": [_result(n) for n in range(1, 6)]})
    runs.start(halted, {SLUG: version})
    runs.finish(halted, "failure", {**base, "message": "step 4: the Sign in button was not found",
                                    "steps": [*(_result(n) for n in range(1, 4)),
                                              _result(4, "halted", detail="the Sign in button was not found")]})
    runs.start(agent, {SLUG: version, "taught-other": 1, "taught-third": 2})
    runs.finish(agent, "success", {"origin": "MCP (claude-code)", "used": [SLUG], "message": "the agent ended",
                                   "steps": AGENT_ACTIONS})
    runs.start(live, {SLUG: version})
    runs.progress(live, {**base, "steps": [_result(1)]})
    server = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    with server.api() as api:
        secret = api.post("/api/secrets", json={"name": "password", "run_id": live, "skills": [SLUG]}).json()["id"]
        for spec in ({"cron": "0 9 * * 1"}, {"every": "6h"}, {"cron": "0 9 1-7 * 1", "check": True}):
            r = api.post("/api/schedules", json={"slug": SLUG, **spec})
            assert r.status_code == 200, r.text
    ui = UI(server, settings, runs, version, done, live, halted, agent, secret)
    ui.ask(live, _request(2))
    try:
        yield ui
    finally:
        with server.api() as api:
            for p in api.get("/api/approvals").json()["pending"]:
                api.post(f"/api/approvals/{p['id']}", json={"answer": "deny"})
        server.stop()


PAGES = ("/skills", f"/skills/{SLUG}", "/teach", "/runs", "/runs/{done}", "/runs/{live}", "/approvals",
         "/schedules", "/secrets/{secret}")
SHOTS = {"/runs/{done}": "run-page", "/approvals": "approvals-plan", "/runs": "runs-list",
         "/runs/{live}": "run-page-waiting"}


def _watch(page: Any) -> list[str]:
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"{page.url}: {exc}"))
    page.on("console", lambda m: problems.append(f"{page.url}: {m.text}")
            if m.type == "error" and "favicon" not in m.text else None)
    return problems


# Each word of a table cell's text on one line: a narrow column breaks between words, never inside
# one ("pause d", "tomor row"). Names made of parts (a slug, an id, an address), links and messages
# may break anywhere: a long one has to.
_BROKEN_WORDS = """() => {
  const broken = [];
  for (const td of document.querySelectorAll('td')) {
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (n.parentElement.closest('code, a, td[data-label="Message"], template')) continue;
      for (const m of n.data.matchAll(/(?<![\\p{L}\\p{N}_-])\\p{L}{2,}(?![\\p{L}\\p{N}_-])/gu)) {
        const r = document.createRange();
        r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const lines = new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


def _settle(page: Any) -> None:
    page.wait_for_load_state("load")
    page.wait_for_function("() => typeof api === 'function' && !document.querySelector('img[data-src]:not([src])')")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_every_page_passes_axe_and_fits_the_screen(ui: UI, browser, viewport: dict[str, int]) -> None:
    found: dict[str, list[dict[str, Any]]] = {}
    page = browser.new_page(viewport=viewport)
    problems = _watch(page)
    browser_login(page, ui.login)
    for path in PAGES:
        url = ui.server.url + path.format(done=ui.done, live=ui.live, secret=ui.secret)
        page.goto(url)
        _settle(page)
        found[path] = blocking(axe_violations(page))
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= viewport["width"], (path, width)
        assert page.evaluate(_BROKEN_WORDS) == [], path
        if path in SHOTS:
            shot(page, SHOTS[path] + ("" if viewport is DESKTOP else "-390"))
    with ui.server.api() as api:  # a paused schedule says so in its narrow column
        sid = api.get("/api/schedules").json()[0]["id"]
        api.post(f"/api/schedules/{sid}/pause")
        try:
            for width in (viewport["width"], 820):  # 820: a tablet, or a window beside another
                page.set_viewport_size({"width": width, "height": 900})
                for path in ("/schedules", "/runs", f"/skills/{SLUG}"):
                    page.goto(ui.server.url + path)
                    _settle(page)
                    assert page.evaluate(_BROKEN_WORDS) == [], (path, width)
        finally:
            api.post(f"/api/schedules/{sid}/resume")
    page.set_viewport_size(viewport)
    # what goes wrong is a page of the app too: its navigation, a heading that says it, axe-clean
    for path, status, heading in (("/skills/nope", 404, "Not found"), ("/settings", 404, "Not found"),
                                  ("/runs/run-nope", 404, "Run"), ("/logout", 405, "Not allowed here")):
        with ui.server.api() as api:
            assert api.get(path).status_code == status, path
        page.goto(ui.server.url + path)  # the page shell (200), which writes the page it fetched into itself
        assert page.get_by_role("heading", level=1).inner_text() == heading, path
        assert page.get_by_role("navigation").get_by_role("link", name="Skills").count() == 1, path
        found[path] = blocking(axe_violations(page))
        assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"], path
        problems[:] = [p for p in problems if f"status of {status}" not in p]  # the page's own answer
    outside = browser.new_context(viewport=viewport).new_page()  # no session: the login pages
    problems += _watch(outside)
    for path in (f"/login?token={ui.server.token}", "/logged-out"):
        outside.goto(ui.server.url + path)
        outside.wait_for_load_state("load")
        found[path.split("?")[0]] = blocking(axe_violations(outside))
        assert outside.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"], path
    assert {p: v for p, v in found.items() if v} == {}
    assert [p for p in problems if "401" not in p] == []  # /logged-out answers 401, as it should


def test_the_skills_page_says_where_each_skill_came_from_by_the_stores_record(ui: UI) -> None:
    """The kind is the store's provenance: a skill written here from a
    template is not "imported", whatever its metadata says."""
    with ui.server.api() as api:
        made = api.post("/api/skills", json={"slug": "written-from-a-template", "template": "meeting-notes",
                                             "description": "Fill in a form on a site."})
        assert made.status_code == 200, made.text
        try:
            page = api.get("/skills").text
        finally:
            api.delete("/api/skills/written-from-a-template")
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r'<tr data-slug="([^"]+)".*?<td data-label="Kind">([^<]+)', page, re.S)}
    assert rows[SLUG] == "taught" and rows["written-from-a-template"] == "written here", rows


def test_static_files_are_hashed_with_integrity_long_cached_and_need_no_login(ui: UI) -> None:
    s = ui.server
    with httpx.Client(base_url=s.url) as anon, s.api() as api:
        page = api.get("/runs").text
        tags = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(/static/[^"]+)"[^>]*integrity="([^"]+)"', page)
        names = {u.split("?")[0].rsplit("/", 1)[1] for u, _i in tags}
        assert {"app.css", "app.js", "runs.js", "params.js"} <= names
        for url, integrity in tags:
            r = anon.get(url)  # no cookie, no token: the files hold no data
            assert r.status_code == 200 and "immutable" in r.headers["cache-control"], url
            assert url.endswith("?v=" + hashlib.sha256(r.content).hexdigest()[:12]), url
            assert integrity == "sha384-" + base64.b64encode(hashlib.sha384(r.content).digest()).decode()
            assert r.headers["content-type"].startswith(("text/css", "text/javascript"))
        assert anon.get("/static/nope.js").status_code == 404
        assert anon.get("/static/../api/skills").status_code in (401, 404)
        assert anon.get("/static/app.css", headers={"Host": "evil.example"}).status_code == 421
        assert anon.post("/static/app.js").status_code in (303, 405)  # only read: a POST is not let through
        policy = api.get("/runs").headers["content-security-policy"]
        assert "unsafe-inline" not in policy and "style-src 'self'" in policy
        assert re.search(r"script-src 'nonce-[A-Za-z0-9_-]+';", policy)


def test_answering_by_keyboard_keeps_focus_and_redraws_in_place(ui: UI, browser) -> None:
    first = ui.ask("run-20260105-100000-kkkkkk", _request(4, offers_run=False))
    second = ui.ask("run-20260105-100001-llllll", _request(5, offers_run=False))
    page = logged_in(browser, ui.server, ui.login)
    page.goto(ui.server.url + "/approvals")
    _settle(page)
    assert re.match(r"\((\d+)\) Approvals — teachd", page.title())
    before = int(page.locator("#waiting-count .n").inner_text())
    assert before >= 4  # three questions and the secret
    page.evaluate("() => { window.stayed = 'no reload'; }")
    rows = page.locator("#pending tr", has_text="kkkkkk")
    rows.get_by_role("button", name="Allow this step").focus()
    page.keyboard.press("Enter")
    rows.wait_for(state="detached")
    assert first.answer() == ["once"]
    focused = page.evaluate("() => [document.activeElement.dataset.word, document.activeElement.closest('tr')?.innerText]")
    assert focused[0] == "once" and focused[1] is not None  # the next question's same answer
    page.keyboard.press("Shift+Tab")  # the keyboard still works from there, no click needed
    page.keyboard.press("Tab")
    llll = page.locator("#pending tr", has_text="llllll")
    llll.get_by_role("button", name="Deny").focus()
    page.keyboard.press("Enter")
    llll.wait_for(state="detached")
    assert second.answer() == ["deny"]
    assert page.evaluate("() => window.stayed") == "no reload"
    page.wait_for_function(f"() => document.title.startsWith('({before - 2}) ')")
    assert page.locator("#waiting-count .n").inner_text() == str(before - 2)
    assert page.locator("#pending tr").filter(has_text=ui.live).get_by_role("button", name="Allow this run").count() == 1
    page.close()


def test_the_run_page_follows_its_run_and_asks_right_there(ui: UI, browser) -> None:
    page = logged_in(browser, ui.server, ui.login)
    page.goto(f"{ui.server.url}/runs/{ui.live}")
    _settle(page)
    question = page.locator(".question", has_text="teachd asks: step 2 of 5")
    question.wait_for()
    assert question.get_by_role("button", name="Allow this run").count() == 1
    assert page.locator(".question", has_text="This run needs the secret password").count() == 1
    plan = page.locator("ol.plan li")
    assert plan.count() == 5 and "masked" in plan.nth(2).inner_text() and PASSWORD not in page.content()
    page.evaluate("() => { window.stayed = 'no reload'; }")
    with ui.server.api() as api:
        pending = [p for p in api.get("/api/approvals").json()["pending"] if p["run_id"] == ui.live]
    question.get_by_role("button", name="Allow this run").click()
    question.wait_for(state="detached")
    assert pending and ui.asking[0].answer() == ["run"]  # the fixture's question, on this run
    # the run moves on: the page shows each step as the store records it, with its pictures
    for n in (2, 3):
        ui.runs.put_picture(ui.live, n, "before", _jpeg((45, 91, 215), f"live step {n}"))
        ui.runs.progress(ui.live, {"slug": SLUG, "used": [SLUG], "params": {"name": "Auditors"}, "plan": PLAN,
                                   "origins": ORIGINS, "origin": "web UI",
                                   "steps": [_result(k) for k in range(1, n + 1)]})
        page.locator(f"#step-{n} .badge", has_text="done").wait_for(timeout=15_000)
        page.locator(f"#step-{n} img[src^='blob:']").wait_for(timeout=15_000)
    ui.runs.finish(ui.live, "unverified", {"slug": SLUG, "used": [SLUG], "plan": PLAN, "params": {"name": "Auditors"},
                                           "message": "every step ran", "steps": [_result(k) for k in range(1, 6)]})
    page.get_by_role("button", name="Run again").wait_for(timeout=15_000)
    assert page.locator(".chip[data-run]").get_by_role("button", name="Worked").count() == 1
    assert page.evaluate("() => window.stayed") == "no reload"
    page.close()


def test_the_run_form_sends_the_skills_parameters_and_start_url(ui: UI, browser) -> None:
    """The skill field completes on $ (seed's "$ autocompletes slugs"): its
    options are $slug; with none chosen, Run says so next to it and sends nothing."""
    page = logged_in(browser, ui.server, ui.login)
    page.goto(ui.server.url + "/runs")
    skill = page.get_by_label("Skill to run")
    assert f"${SLUG}" in page.locator("#slug-options option").evaluate_all("(os) => os.map((o) => o.value)")
    skill.fill("")
    page.get_by_role("button", name="Run", exact=True).click()
    assert "type $" in page.locator("#run-form .flash.err").inner_text()
    skill.fill(f"${SLUG}")
    page.locator("#run-more summary").click()  # folded until the person wants other values
    field_ = page.locator("#run-params input[data-param]").first
    field_.wait_for()
    name = field_.get_attribute("data-param")
    assert field_.input_value() != ""  # the demonstration's value, as the default
    assert page.locator("#run-params input[type=password]").count() == 0  # secrets are never in the form
    field_.fill("Auditors 2026")
    page.get_by_label("Start URL").fill("http://127.0.0.1:9/start")
    held: list[Any] = []
    sent: list[dict[str, Any]] = []

    def hold(route: Any) -> None:
        sent.append(route.request.post_data_json)
        held.append(route)

    page.route("**/api/runs", lambda route: hold(route) if route.request.method == "POST" else route.continue_())
    run = page.get_by_role("button", name="Run", exact=True)
    run.click()
    page.wait_for_function("() => document.getElementById('run').disabled")  # no second start meanwhile
    deadline = time.monotonic() + 10
    while not held:
        page.wait_for_timeout(50)
        assert time.monotonic() < deadline
    assert sent[0]["slug"] == SLUG and sent[0]["params"][name] == "Auditors 2026"
    assert sent[0]["start_url"] == "http://127.0.0.1:9/start"
    held.pop().fulfill(status=409, content_type="application/json",
                       json={"error": f"a run of {SLUG} is starting already", "run_id": ui.done})
    page.get_by_text(f"a run of {SLUG} is starting already").wait_for()
    assert page.get_by_role("link", name="Go to the run under way").get_attribute("href") == f"/runs/{ui.done}"
    assert not run.is_disabled()
    run.click()
    while not held:
        page.wait_for_timeout(50)
    held.pop().fulfill(status=200, content_type="application/json", json={"run_id": ui.done})
    page.wait_for_url(f"**/runs/{ui.done}")
    page.close()


def test_chips_only_for_the_skills_a_run_used_and_a_click_can_be_undone(ui: UI, browser) -> None:
    page = logged_in(browser, ui.server, ui.login)
    page.goto(ui.server.url + "/runs")
    agent = page.locator(f"tr[data-run-row='{ui.agent}']")
    assert agent.locator(".chip[data-run]").count() == 1  # the one it used
    assert agent.locator("details.more .chip").count() == 2  # loaded, not used: collapsed, no buttons
    assert page.locator(f"tr[data-run-row='{ui.live}'] .chip[data-run]").count() in (0, 1)
    halted = page.locator(f"tr[data-run-row='{ui.halted}']")
    assert halted.get_by_role("button", name="Show me step 4").count() == 1
    chip = page.locator(f".chip[data-run='{ui.agent}']")
    chip.get_by_role("button", name="Worked").click()
    undo = chip.get_by_role("button", name="Undo")
    undo.wait_for()
    assert page.evaluate("() => document.activeElement.textContent") == "Undo"
    with ui.server.api() as api:
        record = api.get(f"/api/runs/{ui.agent}").json()
        assert record["feedback"] == {SLUG: "success"} and 0 < record["undo_left"][SLUG] <= 60
        page.reload()  # the Undo is the server's for its minute: a reload (or a visit elsewhere) keeps it
        undo = page.locator(f"tr[data-run-row='{ui.agent}']").get_by_role("button", name="Undo")
        undo.click()
        chip.get_by_role("button", name="Worked").wait_for()
        assert api.get(f"/api/runs/{ui.agent}").json()["feedback"] == {}
    page.close()


def test_the_skill_page_starts_with_a_summary_and_guards_its_edits(ui: UI, browser) -> None:
    page = logged_in(browser, ui.server, ui.login)
    page.goto(f"{ui.server.url}/skills/{SLUG}")
    summary = page.locator("dl.facts").first.inner_text()
    assert "Scope" in summary and "Parameters" in summary and "asks you first, each time it would: act on the computer" in summary
    assert not page.get_by_label("Instructions").is_visible()  # the raw editors start collapsed
    assert page.locator("details#files").get_attribute("open") is None
    with ui.server.api() as api:
        before = api.get(f"/api/skills/{SLUG}").json()
    said: list[str] = []
    page.once("dialog", lambda d: (said.append(d.message), d.dismiss()))
    page.get_by_label("Always ask").uncheck()
    page.get_by_role("button", name="Save approval").click()
    assert said and "types a secret" in said[0]  # a warning before the forced approval goes
    page.locator("details#files summary").click()
    path = sorted(before["files"])[0]
    page.once("dialog", lambda d: (said.append(d.message), d.dismiss()))
    page.locator(".card", has=page.get_by_label(f"File {path}")).get_by_role("button", name="Remove").click()
    assert "Remove " + path in said[-1]
    page.get_by_label("New file path").fill("../elsewhere.md")
    page.get_by_role("button", name="Add file").click()
    near = page.locator(".card", has=page.get_by_label("New file path")).locator(".flash.err")
    near.wait_for()  # the error next to the button that caused it
    with ui.server.api() as api:
        after = api.get(f"/api/skills/{SLUG}").json()
    assert after["version"] == before["version"] and after["approval"] == before["approval"]
    page.close()


def test_the_skill_page_sets_how_its_runs_go_on_the_run_queue(ui: UI, browser) -> None:
    """The owner's two marks on the skill's page: runs at once (a number,
    blank for none; a bad one said next to it, nothing saved) and safe to
    repeat; each saved as the API then shows it, and shown again on reload."""
    from tests.people import wait_for

    page = logged_in(browser, ui.server, ui.login)
    page.goto(f"{ui.server.url}/skills/{SLUG}")
    with ui.server.api() as api:
        def seen(field: str, value: Any) -> bool:
            return bool(api.get(f"/api/skills/{SLUG}").json()[field] == value)

        at_once = page.get_by_label("Runs at once")
        at_once.fill("2")
        at_once.press("Tab")
        wait_for(lambda: seen("at_once", 2), 10, "at most 2 at once saved")
        page.wait_for_load_state()
        page.get_by_label("Runs at once").wait_for()
        wait_for(lambda: page.get_by_label("Runs at once").input_value() == "2", 10, "2 shown after reload")
        page.get_by_label("Runs at once").fill("0")
        page.get_by_label("Runs at once").press("Tab")
        near = page.locator(".card", has=page.get_by_label("Runs at once")).locator(".flash.err")
        near.wait_for()
        assert "1 to 50" in near.inner_text() and seen("at_once", 2)
        page.get_by_label("Runs at once").fill("")
        page.get_by_label("Runs at once").press("Tab")
        wait_for(lambda: seen("at_once", None), 10, "no limit of its own saved")
        page.get_by_label("Safe to repeat", exact=False).check()
        wait_for(lambda: seen("repeatable", True), 10, "safe to repeat saved")
    page.close()


def test_a_new_skill_starts_from_a_template_in_three_clicks_and_its_name_is_edited_in_place(ui: UI, browser) -> None:
    """Authoring on the Skills page: New skill → a starter template → Create
    (the template fills slug, name, description — whose hint says the model
    reads it — and instructions); the name is then edited on the skill page;
    $ completes slugs in the search; a form without a description says why
    next to its button and makes nothing."""
    page = logged_in(browser, ui.server, ui.login)
    page.goto(f"{ui.server.url}/skills")
    page.locator("details#new-skill summary").click()
    page.get_by_label("Start from").select_option(label="Review a pull request")
    assert page.get_by_label("Slug").input_value() == "review-pull-request"
    assert "what the model sees" in page.locator("#new-description-hint").inner_text()
    page.get_by_role("button", name="Create skill").click()
    page.wait_for_url("**/skills/review-pull-request")
    with ui.server.api() as api:
        made = api.get("/api/skills/review-pull-request").json()
        templates = {t["name"]: t for t in api.get("/api/skill-templates").json()}
    assert made["version"] == 1 and made["name"] == "Review a pull request"
    assert made["description"] == templates["review-pull-request"]["description"]

    page.locator("details#edit-content summary").click()
    page.get_by_label("Name", exact=True).fill("PR review")
    with page.expect_navigation():  # a save reloads the page: wait for it, not for the old page's load
        page.get_by_role("button", name="Save name, description and instructions").click()
    with ui.server.api() as api:
        renamed = api.get("/api/skills/review-pull-request").json()
    assert renamed["name"] == "PR review" and renamed["version"] == 2

    page.goto(f"{ui.server.url}/skills")
    options = page.locator("#slugs option").evaluate_all("(os) => os.map((o) => o.value)")
    assert "$review-pull-request" in options and f"${SLUG}" in options
    page.locator("details#new-skill summary").click()
    page.get_by_label("Slug").fill("no-description-yet")
    page.get_by_role("button", name="Create skill").click()
    near = page.locator("#new-skill .flash.err")
    near.wait_for()
    assert "description" in near.inner_text()
    with ui.server.api() as api:
        assert api.get("/api/skills/no-description-yet").status_code == 404
    page.close()


def test_the_schedule_form_takes_the_skill_typed_after_dollar(ui: UI, browser) -> None:
    """Schedules → Add: "$" and the slug picks the skill (its parameters
    load), every 1d, Add; the schedule is the API's, for that skill."""
    page = logged_in(browser, ui.server, ui.login)
    page.goto(ui.server.url + "/schedules")
    page.get_by_label("Skill", exact=True).fill(f"${SLUG}")
    page.locator("#schedule-more summary").click()
    page.locator("#schedule-params input[data-param]").first.wait_for()  # the chosen skill's parameters
    page.get_by_label("or every").fill("1d")
    with page.expect_navigation():
        page.get_by_role("button", name="Add schedule").click()
    with ui.server.api() as api:
        made = [s for s in api.get("/api/schedules").json() if s["slug"] == SLUG and s["every_s"] == 86400]
        assert made, api.get("/api/schedules").json()
    # Remove asks first: No keeps the schedule, Yes removes it
    remove = page.locator(f"tr[data-schedule='{made[0]['id']}']").get_by_role("button", name="Remove")
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    remove.click()
    assert asked and f"Remove schedule {made[0]['id']}" in asked[0] and SLUG in asked[0]
    page.once("dialog", lambda d: d.accept())
    with page.expect_navigation():
        remove.click()
    with ui.server.api() as api:
        left = [s["id"] for s in api.get("/api/schedules").json()]
        assert made[0]["id"] not in left
        for s in made[1:]:
            assert api.delete(f"/api/schedules/{s['id']}").status_code < 300
    page.close()


def test_run_and_schedules_are_offered_only_for_skills_with_taught_steps(ui: UI) -> None:
    """A skill written here has no steps to replay: its page says so instead
    of offering Run, the Runs and Schedules pickers leave it out, and the API
    refuses a run or a schedule of it at once, saying why."""
    with ui.server.api() as api:
        made = api.post("/api/skills", json={"slug": "notes-by-hand", "template": "meeting-notes",
                                             "description": "Take meeting notes."})
        assert made.status_code == 200, made.text
        try:
            own, taught = api.get("/skills/notes-by-hand").text, api.get(f"/skills/{SLUG}").text
            assert 'href="/runs?skill=notes-by-hand"' not in own and 'id="not-replayable"' in own
            assert f'href="/runs?skill={SLUG}"' in taught
            for page in ("/runs", "/schedules"):
                options = re.findall(r'<option value="\$([^"]+)"', api.get(page).text)
                assert SLUG in options and "notes-by-hand" not in options, (page, options)
            run = api.post("/api/runs", json={"slug": "notes-by-hand"})
            assert run.status_code == 400 and "no taught steps to replay" in run.json()["error"], run.text
            schedule = api.post("/api/schedules", json={"slug": "notes-by-hand", "every": "1d"})
            assert schedule.status_code == 400 and "no steps to replay" in schedule.json()["error"], schedule.text
        finally:
            api.delete("/api/skills/notes-by-hand")


def test_an_exported_zip_imports_through_the_skills_page(ui: UI, browser, tmp_path: Path) -> None:
    """Export folder (zip) on one skill page, Import of that file on the
    Skills page: the same skill, files and all (the browser sends the bytes)."""
    with ui.server.api() as api:
        assert api.post("/api/skills", json={"slug": "zip-round-trip", "template": "meeting-notes",
                                             "description": "Travels as a zip."}).status_code == 200
        api.put("/api/skills/zip-round-trip/files/references/agenda.md", json={"text": "# Agenda\n"})
        before = api.get("/api/skills/zip-round-trip").json()
        archive = tmp_path / "zip-round-trip.zip"
        archive.write_bytes(api.get("/api/skills/zip-round-trip/export?format=zip").content)
        assert api.delete("/api/skills/zip-round-trip").status_code < 300
    page = logged_in(browser, ui.server, ui.login)
    try:
        page.goto(ui.server.url + "/skills")
        page.get_by_label("A SKILL.md, a JSON envelope or an exported zip").set_input_files(str(archive))
        page.get_by_role("button", name="Import", exact=True).click()
        page.wait_for_url("**/skills/zip-round-trip")
        with ui.server.api() as api:
            after = api.get("/api/skills/zip-round-trip").json()
            bad = api.post("/api/skills/import", json={"archive": "not base64!", "name": "x.zip"})
            assert bad.status_code == 400 and "base64" in bad.json()["error"]
        assert after["files"] == before["files"] and after["description"] == "Travels as a zip."
        assert after["instructions"].strip() == before["instructions"].strip()  # the file's blank line kept
        # the same file again: the skill exists, so it is asked, and becomes its next version
        page.goto(ui.server.url + "/skills")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_label("A SKILL.md, a JSON envelope or an exported zip").set_input_files(str(archive))
        page.get_by_role("button", name="Import", exact=True).click()
        page.wait_for_url("**/skills/zip-round-trip")
        with ui.server.api() as api:
            again = api.get("/api/skills/zip-round-trip").json()
        assert again["version"] == after["version"] + 1 and again["files"] == before["files"]
    finally:
        page.close()
        with ui.server.api() as api:
            api.delete("/api/skills/zip-round-trip")


def test_the_runs_list_shows_a_new_run_without_a_reload(ui: UI, browser) -> None:
    page = logged_in(browser, ui.server, ui.login)
    try:
        page.goto(ui.server.url + "/runs")
        _settle(page)
        page.evaluate("() => { window.notReloaded = true; }")
        run_id = ui.runs.new_run_id()
        ui.runs.start(run_id, {SLUG: ui.version})
        ui.runs.finish(run_id, "success", {"slug": SLUG, "origin": "a test", "used": [SLUG],
                                           "message": "every step and the success check held",
                                           "steps": [_result(1)]})
        row = page.locator(f"tr[data-run-row='{run_id}']")
        row.wait_for(timeout=15_000)
        assert "succeeded" in row.inner_text() and page.evaluate("() => window.notReloaded === true")
    finally:
        page.close()


def test_the_skill_page_shows_its_history_as_a_timeline_with_how_often_it_worked(ui: UI, browser) -> None:
    """One click after a run is a dated line on the skill page itself, newest
    first, linked to its run, with how often the judged runs worked — not
    only inside the instructions' text."""
    with ui.server.api() as api:
        clicked = api.post(f"/api/runs/{ui.done}/feedback", json={"slug": SLUG, "outcome": "success",
                                                                    "note": "all approvers there"})
        assert clicked.status_code == 200, clicked.text
    page = logged_in(browser, ui.server, ui.login)
    try:
        page.set_viewport_size(PHONE)
        page.goto(f"{ui.server.url}/skills/{SLUG}")
        newest = page.locator("#history li").first
        said = " ".join(newest.inner_text().split())
        assert said.startswith("worked ") and ui.done in said and "all approvers there" in said, said
        assert "1 of 1 worked" in page.locator("#history").inner_text()
        assert "(1 of 1 worked)" in page.locator("table").filter(has_text="Restore").inner_text()
        newest.get_by_role("link", name=ui.done).click()
        page.wait_for_url(f"**/runs/{ui.done}")
    finally:
        page.close()
        with ui.server.api() as api:
            assert api.delete(f"/api/runs/{ui.done}/feedback/{SLUG}").status_code == 200


def test_a_message_says_what_the_last_action_did_and_no_more(ui: UI, browser) -> None:
    """No stale messages: an error stays only until the next action, wherever
    on the page that is; a message that is not an error fades after its time
    (the page's clock run forward, not waited for)."""
    page = logged_in(browser, ui.server, ui.login)
    try:
        page.clock.install()
        page.goto(ui.server.url + "/skills")
        _settle(page)
        page.get_by_role("button", name="Import", exact=True).click()  # no file chosen
        error = page.get_by_text("Choose a file or a folder first")
        error.wait_for()
        switch = page.get_by_role("switch", name=f"Enabled: {SLUG}")
        switch.uncheck()
        done = page.get_by_text(f"{SLUG} disabled")
        done.wait_for()
        assert error.count() == 0  # the next action's message only, not an old error beside it
        page.clock.run_for(5_000)
        assert done.is_visible()  # still news a moment later
        page.clock.run_for(8_000)
        assert done.count() == 0  # faded
        switch.check()
        page.get_by_text(f"{SLUG} enabled").wait_for()
    finally:
        page.close()
        with ui.server.api() as api:
            api.put(f"/api/skills/{SLUG}/enabled", json={"on": True})


def test_a_question_asking_where_a_step_is_shows_what_to_look_for_as_demonstrated(ui: UI, browser) -> None:
    """A step not found asks where it is now, on the page's picture; beside it,
    the demonstration's own picture of the target (where the run kept one)."""
    run_id = ui.runs.new_run_id()
    ui.runs.start(run_id, {SLUG: ui.version})
    ui.runs.progress(run_id, {"slug": SLUG, "origin": "web UI", "used": [SLUG], "plan": PLAN, "origins": ORIGINS,
                              "steps": [_result(1), _result(2), _result(3)]})
    ui.runs.put_picture(run_id, 4, "now", _jpeg((240, 240, 240), "the page now"))
    ui.runs.put_picture(run_id, 4, "demonstrated", _jpeg((45, 91, 215), "the Sign in button, demonstrated"))
    asking = ui.ask(run_id, {**_request(4, offers_run=False), "show": True})
    page = logged_in(browser, ui.server, ui.login)
    try:
        page.goto(f"{ui.server.url}/runs/{run_id}")
        look_for = page.locator(".question figure.demonstrated img")
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=look_for.element_handle(),
                               timeout=15_000)
        assert "What to look for" in page.locator(".question").inner_text()
        # shown by keyboard as well as by a click: the arrow keys move a mark, Enter shows the run that place
        where = page.locator("img[data-where]")
        where.focus()
        for key in ("ArrowRight", "ArrowRight", "Shift+ArrowDown"):
            page.keyboard.press(key)
        assert page.locator(".where-mark").is_visible()
        page.keyboard.press("Enter")
        asking.thread.join(10)  # type: ignore[union-attr]
        assert asking.got == ["here"] and asking.points == [(pytest.approx(0.54), pytest.approx(0.6))]
    finally:
        page.close()
        ui.runs.finish(run_id, "aborted", {"message": "stopped by the test"})
