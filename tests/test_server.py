"""`teachd serve` for real: the command on a free loopback port, httpx for
each security point, Playwright in Debian's Chromium for the pages, the
sample app for runs that wait on approvals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from teachd.config import Settings
from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.conftest import all_bytes_under
from tests.desktop import free_port
from tests.sample_task import PASSWORD, SLUG, sign_in

SHOTS = os.environ.get("TEACHD_SCREENSHOTS")  # a folder: the README's pictures are made here


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str
    login_url: str
    token: str
    home: Path
    env: dict[str, str]

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def serve(env: dict[str, str], *args: str) -> Server:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "teachd", "serve", "--port", str(port), "--json", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first, proc.stderr.read() if proc.stderr else ""
    info = json.loads(first)
    home = Path(env["TEACHD_HOME"])
    server = Server(proc, info["url"].rstrip("/"), info["login_url"], (home / "token").read_text().strip(),
                    home, env)
    for _ in range(100):  # the line comes before uvicorn binds: wait until it answers
        try:
            httpx.get(server.url + "/logged-out", timeout=1)
            break
        except httpx.TransportError:
            import time

            time.sleep(0.05)
    return server


@pytest.fixture
def server(taught) -> Iterator[Server]:
    env, _port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    yield s
    s.stop()


def browser_login(page: Any, link: str) -> Any:
    """What a person does with the login link: open it, click Log in (the
    GET alone logs nobody in), land on Skills."""
    page.goto(link)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/skills")
    return page


def logged_in(browser: Any, server: Server, link: str | None = None) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    browser_login(page, link or server.login_url)
    assert page.url.endswith("/skills")
    return page


def web_login(base: str, link: str) -> httpx.Client:
    """A browser session in httpx, as the login page makes one: the POST
    from this origin, the cookie, and the page key every request sends."""
    web = httpx.Client(base_url=base, timeout=30)
    code = link.split("token=", 1)[1]
    r = web.post("/login", data={"token": code}, headers={"Origin": base})
    assert r.status_code == 200, r.text
    key = re.search(r"name='teachd-key' content='([^']+)'", r.text)
    assert key is not None
    web.headers["X-CSRF-Token"] = key.group(1)
    return web


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


# -- security ---------------------------------------------------------------


def test_loopback_unless_allow_remote_and_the_token_file_is_private(env) -> None:
    p = subprocess.run([sys.executable, "-m", "teachd", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
                       env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--allow-remote" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    s = serve(env)
    try:
        assert s.url.startswith("http://127.0.0.1:")
        assert (s.home / "token").stat().st_mode & 0o777 == 0o600
        taken = subprocess.run([sys.executable, "-m", "teachd", "serve", "--port", s.url.rsplit(":", 1)[1]],
                               env=env, capture_output=True, text=True, timeout=30)
        assert taken.returncode == 69 and taken.stderr.startswith("teachd: error: cannot listen on")
        assert len(taken.stderr.strip().splitlines()) == 1
    finally:
        assert s.stop() == 0


def test_every_page_and_api_route_refuses_an_unauthenticated_request(server: Server) -> None:
    with httpx.Client(base_url=server.url) as anon:
        for path in ("/skills", f"/skills/{SLUG}", "/teach", "/runs", "/schedules", "/approvals", "/"):
            r = anon.get(path)
            assert r.status_code == 303 and r.headers["location"] == "/logged-out", path
        assert anon.get("/logged-out").status_code == 401
        for method, path in (("GET", "/api/skills"), ("GET", f"/api/skills/{SLUG}"), ("GET", "/api/runs"),
                             ("POST", "/api/runs"), ("PUT", f"/api/skills/{SLUG}/enabled"),
                             ("GET", "/openapi.json"), ("POST", "/api/teach")):
            assert anon.request(method, path, json={}).status_code == 401, path
        assert anon.get("/api/skills", headers={"Authorization": "Bearer wrong-token"}).status_code == 401
    with server.api() as api:
        assert api.get("/api/skills").status_code == 200


def test_a_host_other_than_the_bound_one_gets_421(server: Server) -> None:
    with server.api() as api:
        for host in ("evil.example:80", "attacker.test", f"127.0.0.2:{server.url.rsplit(':', 1)[1]}"):
            r = api.get("/api/skills", headers={"Host": host})
            assert r.status_code == 421, host
        assert api.get("/api/skills", headers={"Host": server.url.removeprefix("http://")}).status_code == 200


def test_the_login_link_works_once_sets_a_strict_cookie_and_changes_need_csrf(server: Server) -> None:
    with httpx.Client(base_url=server.url) as look:
        shown = look.get(server.login_url.removeprefix(server.url))  # the GET only shows the button
        assert shown.status_code == 200 and "set-cookie" not in shown.headers and "Log in" in shown.text
    web = web_login(server.url, server.login_url)
    try:
        page = web.get("/skills")
        assert page.status_code == 200 and SLUG in page.text
        key = web.headers.pop("X-CSRF-Token")
        change = f"/api/skills/{SLUG}/enabled"
        assert web.put(change, json={"on": False}).status_code == 403  # the cookie alone is not enough
        assert web.put(change, json={"on": False}, headers={"X-CSRF-Token": "x" + key}).status_code == 403
        assert web.put(change, json={"on": False}, headers={"X-CSRF-Token": key}).status_code == 200
    finally:
        web.close()
    with httpx.Client(base_url=server.url) as again:
        r = again.get(server.login_url.removeprefix(server.url))  # used already
        assert r.headers["location"] == "/logged-out" and "set-cookie" not in r.headers
        r = again.post("/login", data={"token": server.login_url.split("token=")[1]}, headers={"Origin": server.url})
        assert r.headers["location"] == "/logged-out" and "set-cookie" not in r.headers
    with server.api() as api:
        assert api.get(f"/api/skills/{SLUG}").json()["enabled"] is False


def test_the_session_cookie_is_httponly_and_strict(server: Server) -> None:
    with httpx.Client(base_url=server.url) as web:
        r = web.post("/login", data={"token": server.token}, headers={"Origin": server.url})
        cookie = r.headers["set-cookie"]
        assert r.status_code == 200 and "HttpOnly" in cookie and "samesite=strict" in cookie.lower()


def test_bodies_are_capped_and_no_cors_is_offered(server: Server) -> None:
    with server.api() as api:
        big = api.put(f"/api/skills/{SLUG}/files/references/big.md",
                      content=json.dumps({"text": "x" * (9 * 1024 * 1024)}))
        assert big.status_code == 413
        r = api.options("/api/skills", headers={"Origin": "https://evil.example",
                                                 "Access-Control-Request-Method": "PUT"})
        assert "access-control-allow-origin" not in {k.lower() for k in r.headers}
        r = api.get("/api/skills", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in {k.lower() for k in r.headers}


def test_sigterm_stops_cleanly_and_a_waiting_run_is_recorded_as_aborted(taught) -> None:
    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    with SampleApp(password=PASSWORD, port=port) as app, s.api() as api:
        api.post("/api/runs", json={"slug": SLUG})
        for _ in range(200):
            if api.get("/api/approvals").json()["pending"]:
                break
            import time

            time.sleep(0.05)
        assert s.stop() == 0
        assert app.state.sessions == set() and app.state.clicked() == []
    runs = RunStore(open_store(Settings(home=s.home, owner="alice"))).recent()
    assert runs[0]["status"] == "aborted" and "not approved" in runs[0]["message"]


# -- pages, in a real browser -------------------------------------------------


def test_every_page_runs_its_script_without_an_error(server: Server, browser) -> None:
    """A page whose inline script does not parse loses every button: caught here."""
    page = logged_in(browser, server)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
    for path in ("/skills", f"/skills/{SLUG}", "/teach", "/runs", "/schedules", "/approvals"):
        page.goto(server.url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof api") == "function", path  # the page's script ran
    assert errors == []


def test_skills_page_switches_search_and_the_editor(server: Server, browser) -> None:
    page = logged_in(browser, server)
    shot(page, "skills")
    switch = page.get_by_role("switch", name=f"Enabled: {SLUG}")
    switch.uncheck()
    page.get_by_text(f"{SLUG} disabled").wait_for()
    with server.api() as api:
        assert api.get(f"/api/skills/{SLUG}").json()["enabled"] is False
        v0 = api.get(f"/api/skills/{SLUG}").json()["version"]
    page.get_by_role("combobox", name="Search skills").fill("$no-such-skill")
    assert not page.get_by_role("row").filter(has_text=SLUG).is_visible()
    page.get_by_role("combobox", name="Search skills").fill(f"${SLUG}")
    page.get_by_role("link", name=SLUG).click()
    shot(page, "skill")
    # the approval: Always ask off (the skill types a secret: the page warns first), then on with two tools
    warned: list[str] = []
    page.once("dialog", lambda d: (warned.append(d.message), d.accept()))
    page.get_by_label("Always ask").uncheck()
    with page.expect_navigation():
        page.get_by_role("button", name="Save approval").click()
    assert "types a secret" in warned[0]
    with server.api() as api:
        assert api.get(f"/api/skills/{SLUG}").json()["approval"]["always_ask"] is False
    page.get_by_label("Always ask").check()
    page.get_by_label("Run a command").check()
    page.get_by_role("button", name="Save approval").click()
    page.get_by_text(f"v{v0 + 2}").first.wait_for()
    # a file within the limits, then one over them (the raw editors start collapsed)
    page.locator("details#files summary").click()
    page.get_by_label("New file path").fill("references/notes.md")
    page.get_by_label("New file text").fill("Ask finance before filing.")
    page.get_by_role("button", name="Add file").click()
    page.get_by_label("File references/notes.md").wait_for()
    page.get_by_label("New file path").fill("references/huge.md")
    page.get_by_label("New file text").fill("y" * (201 * 1024))
    page.get_by_role("button", name="Add file").click()
    page.get_by_text("over the 204800-byte limit").wait_for()  # a clear message; nothing saved
    with server.api() as api:
        view = api.get(f"/api/skills/{SLUG}").json()
    assert view["approval"]["always_ask"] and sorted(view["approval"]["tools"]) == ["computer_act", "run_command"]
    assert view["files"]["references/notes.md"] == "Ask finance before filing."
    assert "references/huge.md" not in view["files"] and view["version"] == v0 + 3
    # restore the first version: a new version equal to it
    page.get_by_role("button", name="Restore v1").click()
    page.get_by_text(f"v{v0 + 4}").first.wait_for()
    with server.api() as api:
        view = api.get(f"/api/skills/{SLUG}").json()
    assert view["version"] == v0 + 4 and "references/notes.md" not in view["files"]
    assert view["approval"] == {"always_ask": True, "tools": ["computer_act"]}


def test_one_click_on_a_run_chip_is_one_version_even_double_clicked(server: Server, browser) -> None:
    runs = RunStore(open_store(Settings(home=server.home, owner="alice")))
    for run_id, status in (("run-20261130-000001-aaaaaa", "success"), ("run-20261130-000002-bbbbbb", "failure")):
        runs.start(run_id, {SLUG: 1})
        runs.finish(run_id, status, {"message": "replayed", "slug": SLUG,
                                     "steps": [{"n": 1, "action": "goto", "status": "ok"}]})
    with server.api() as api:
        v0 = api.get(f"/api/skills/{SLUG}").json()["version"]
    page = logged_in(browser, server)
    page.goto(server.url + "/runs")
    shot(page, "runs")
    chip = page.locator(".chip[data-run='run-20261130-000001-aaaaaa']")
    chip.get_by_role("button", name="Worked").dblclick()
    page.get_by_text("✓ worked").first.wait_for()
    other = logged_in(browser, server, f"{server.url}/login?token={server.token}")  # another tab, another session
    other.goto(server.url + "/runs")
    with server.api() as api:
        again = api.post("/api/runs/run-20261130-000001-aaaaaa/feedback", json={"slug": SLUG, "outcome": "failure"})
        assert again.status_code == 200
        view = api.get(f"/api/skills/{SLUG}").json()
    assert view["version"] == v0 + 1  # one click, one version
    history = view["instructions"].split("## History", 1)[1]
    assert history.count("run run-20261130-000001-aaaaaa") == 1 and "— success —" in history
    assert other.locator(".chip").filter(has_text="✓ worked").count() == 1


def test_allow_once_unblocks_a_waiting_replay_and_deny_stops_it_with_no_effect(taught, browser) -> None:
    env, port = taught
    s = serve({**env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            page = logged_in(browser, s)
            page.goto(s.url + "/runs")
            page.get_by_role("button", name="Run", exact=True).click()
            page.wait_for_url("**/runs/run-*")  # the run's own page
            page.goto(s.url + "/approvals")
            first = page.get_by_role("button", name="Allow this step")
            first.wait_for(timeout=30_000)
            assert "step 1" in page.locator("#pending").inner_text()
            shot(page, "approvals")
            first.click()
            page.wait_for_function("() => document.querySelector('#pending').innerText.includes('step 2')",
                                   timeout=30_000)
            page.get_by_role("button", name="Deny").click()
            with s.api() as api:
                for _ in range(200):
                    runs = api.get("/api/runs").json()
                    if runs and runs[0]["status"] != "running":
                        break
                    page.wait_for_timeout(100)
            assert runs[0]["status"] == "aborted", runs[0]
            assert app.state.reports == [] and app.state.sessions == set()  # step 2 (typing) never happened
            assert app.state.clicked() == []
    finally:
        s.stop()


def start_teaching(page: Any, s: Server, browser: Any, name: str, url: str) -> Any:
    """A demonstration started from the Teach page (``page``, open on it):
    the taught browser's context, over its DevTools port, on the sign-in page."""
    page.get_by_label("Task name").fill(name)
    page.get_by_label("Start URL").fill(url)
    page.get_by_role("button", name="Start").click()
    page.get_by_text(f"Recording “{name}”").wait_for(timeout=30_000)
    with s.api() as api:
        cdp = api.get("/api/teach").json()["cdp_port"]
    context = browser.browser_type.connect_over_cdp(f"http://127.0.0.1:{cdp}").contexts[0]
    context.pages[0].wait_for_selector("#email")
    return context


def test_teach_from_the_page_shows_live_steps_and_saves_the_skill(taught, browser) -> None:
    env, port = taught
    env = {k: v for k, v in env.items() if k != "DISPLAY"}  # no display: the page teaches headless
    s = serve(env)
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            page = logged_in(browser, s)
            page.goto(s.url + "/teach")
            # each button only where it acts: nothing records yet, so only Start
            assert page.get_by_role("button", name="Stop and review").is_disabled()
            assert page.get_by_role("button", name="Pause").is_disabled()
            taught_page = start_teaching(page, s, browser, "Sign in to expenses", app.url + "/login").pages[0]
            page.wait_for_function("() => document.getElementById('start').disabled")
            # the page's controls act as the bar's: pause (a click is not recorded), resume
            page.get_by_role("button", name="Pause").click()
            page.locator("#state").get_by_text("paused").wait_for(timeout=15_000)
            page.wait_for_function("() => document.querySelector('[data-command=pause]').disabled")
            taught_page.click("h1")
            page.get_by_role("button", name="Resume").click()
            page.wait_for_function("() => !document.getElementById('state').textContent.includes('paused')",
                                   timeout=15_000)
            sign_in(taught_page)
            page.locator("#steps").get_by_text("the Sign in button").wait_for(timeout=15_000)
            steps = page.locator("#steps").inner_text()
            assert "type\tthe Password field masked" in steps and PASSWORD not in steps
            assert "type\tthe Email field alice@example.com" in steps  # what was typed, as it will be saved
            # mark next field secret from the page — armed once the page says so (the recorder took it:
            # a person types on, however late the command reaches it) — then a plain field: masked
            page.get_by_role("button", name="Mark next field secret").click()
            page.get_by_text("Armed: the next field you type into is masked").wait_for(timeout=15_000)
            taught_page.get_by_role("tab", name="Reports").click()
            taught_page.get_by_role("link", name="New report").click()
            taught_page.wait_for_url("**/reports/new")
            taught_page.click("#description")
            taught_page.keyboard.type("Private trip to Lyon")
            taught_page.click("#amount")
            taught_page.keyboard.type("12.00")
            page.locator("#steps").get_by_text("the Description field masked").wait_for(timeout=15_000)
            # undo from the page: the typed amount goes
            # (a pause in typing sends it: the typed amount becomes the last step)
            page.locator("#steps tr").filter(has_text="type").filter(has_text="the Amount field").wait_for(
                timeout=15_000)
            page.get_by_role("button", name="Undo last step").click()
            undone = page.locator("#steps tr.undone").filter(has_text="the Amount field")
            undone.wait_for(timeout=15_000)  # struck through, not a row of its own
            assert "taken back" in undone.inner_text()
            assert "\tpause" not in page.locator("#steps").inner_text()  # no raw events
            shot(page, "teach")
            listed = page.locator("#steps tr:not(.undone)").count()
            page.get_by_role("button", name="Stop and review").click()
            # the review: every step with its values; one left out, then saved
            save = page.get_by_role("button", name="Save the skill")
            save.wait_for(timeout=60_000)
            with s.api() as api:
                assert "slug" not in (api.get("/api/teach").json()["result"] or {})  # nothing saved yet
            page.get_by_role("checkbox", name=re.compile(r"Keep step \d+: type the Password field")).uncheck()
            page.get_by_role("textbox", name=re.compile(r"Name step \d+: click the Sign in button")).fill("Log in")
            page.get_by_role("combobox", name=re.compile(r"The value of step \d+: type the Email field")
                             ).select_option(label="a secret: asked each run, never kept")
            check = page.get_by_role("textbox", name="A check of your own: the final page shows…")
            check.fill("Never on that page")
            page.get_by_role("button", name="Add check").click()
            save.click()  # a check the final page never showed would fail every run: refused, nothing saved
            page.get_by_text("did not show 'Never on that page'").wait_for(timeout=15_000)
            page.get_by_role("button", name="Remove the check “Never on that page”").click()
            check.fill("New report")
            page.get_by_role("button", name="Add check").click()
            assert page.get_by_text("The final page shows “New report”").is_visible()
            save.click()
            page.get_by_role("link", name="taught-sign-in-to-expenses v1").click()
            assert page.url.endswith("/skills/taught-sign-in-to-expenses")
            # the step's own name, in the skill's instructions
            assert "**Log in** — Click the **Sign in** button" in page.locator("#instructions").input_value()
            facts = " ".join(page.locator("dl.facts").inner_text().split())  # what the review set, at a glance
            assert "Success check the final page shows New report" in facts and "never kept: description, email" in facts
            with s.api() as api:
                recording = Path(api.get("/api/teach").json()["result"]["recording_dir"])
    finally:
        s.stop()
    assert PASSWORD.encode() not in all_bytes_under(s.home)
    assert b"Private trip to Lyon" not in all_bytes_under(s.home)
    assert b"alice@example.com" not in all_bytes_under(recording)  # marked secret after the fact
    store = open_store(Settings(home=s.home, owner="alice"))
    skill = store.get("taught-sign-in-to-expenses").current
    plan = json.loads(skill.files["references/steps.json"])
    described = [st.get("describe", "") for st in plan["steps"]]
    assert "the **Amount** field" not in described  # undone
    assert not any("heading" in d for d in described)  # the heading was clicked only while paused
    assert "description" in plan["secrets"] and "description" not in plan["parameters"]
    assert "email" in plan["secrets"] and "alice@example.com" not in json.dumps(plan) + skill.instructions
    assert len(plan["steps"]) == listed - 1  # the steps the page listed, the start page's too, less the one left out
    assert "the **Password** field" not in described and "the **Email** field" in described
    assert [st.get("name") for st in plan["steps"] if st.get("describe") == "the **Sign in** button"] == ["Log in"]
    assert "New report" in plan["success"]["shows"]


def test_closing_the_recording_browser_goes_to_the_review_and_saves_from_there(taught, browser) -> None:
    """The person closes the taught browser instead of pressing Stop: the
    Teach page goes to the review as after Stop (never a silent save), and
    shows what it saved."""
    env, port = taught
    env = {k: v for k, v in env.items() if k != "DISPLAY"}
    s = serve(env)
    try:
        with SampleApp(password=PASSWORD, port=port) as app:
            page = logged_in(browser, s)
            page.goto(s.url + "/teach")
            context = start_teaching(page, s, browser, "Open the sign in page", app.url + "/login")
            taught_page = context.pages[0]
            taught_page.click("#email")
            taught_page.keyboard.type("alice@example.com")
            page.locator("#steps").get_by_text("the Email field").wait_for(timeout=15_000)
            for p in context.pages:
                p.close()
            page.get_by_role("button", name="Save the skill").wait_for(timeout=60_000)  # the review, as after Stop
            page.evaluate("""() => {  // what the state says while it saves, and whether Save waits meanwhile
              window.said = [];
              new MutationObserver(() => window.said.push([document.getElementById('state').textContent,
                  Boolean(document.querySelector('[data-save]')?.disabled)]))
                .observe(document.getElementById('state'), {childList: true, characterData: true, subtree: true});
            }""")
            page.get_by_role("button", name="Save the skill").click()
            page.get_by_role("link", name="taught-open-the-sign-in-page v1").wait_for(timeout=60_000)
            said = page.evaluate("() => window.said")
            assert ["Saving: compiling 2 steps into the skill…", True] in said, said
            assert page.get_by_role("button", name="Start").is_enabled()  # free for the next one
    finally:
        s.stop()


def test_the_api_loads_updates_and_shows_runs_as_the_cli_does(server: Server, cli_env_runner) -> None:
    with server.api() as api:
        loaded = api.get(f"/api/skills/{SLUG}/load").json()
        cli_loaded = json.loads(cli_env_runner(server.env, "skills", "load", SLUG, "--json").stdout)
        assert loaded == cli_loaded
        envelope = api.get(f"/api/skills/{SLUG}/export", params={"format": "json"}).text
        data = json.loads(envelope)
        data["description"] = "Files an expense report and sets up the approvers group."
        updated = api.put(f"/api/skills/{SLUG}", json={"envelope": json.dumps(data)})
        assert updated.status_code == 200 and updated.json()["description"] == data["description"]
        assert api.put("/api/skills/taught-nope", json={"envelope": envelope}).status_code == 404
        assert api.get("/api/runs/run-nope").status_code == 404
        api.put(f"/api/skills/{SLUG}/enabled", json={"on": False})
        assert api.get(f"/api/skills/{SLUG}/load").status_code == 409  # a disabled skill does not load


def test_import_a_folder_from_the_page_and_export_it_again(server: Server, browser, tmp_path: Path) -> None:
    folder = tmp_path / "expense-policy"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: expense-policy\ndescription: What the expense policy allows."
                                     "\n---\n\n# Expense policy\n\nSee references/limits.md.\n")
    (folder / "references" / "limits.md").write_text("Taxi: up to 60 EUR.\n")
    page = logged_in(browser, server)
    page.get_by_label("A skill folder").set_input_files(str(folder))
    page.get_by_role("button", name="Import", exact=True).click()
    page.wait_for_url("**/skills/expense-policy")
    assert page.get_by_label("File references/limits.md").input_value() == "Taxi: up to 60 EUR.\n"
    with page.expect_download() as download:
        page.get_by_role("link", name="Export SKILL.md").click()
    exported = Path(download.value.path()).read_text()
    assert exported.startswith("---\nname: expense-policy\n") and "# Expense policy" in exported
    page.goto(server.url + "/skills")
    page.get_by_label("A skill folder").set_input_files(str(folder))
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("already exists").wait_for()  # a second import is refused, with the reason


def test_a_body_of_unknown_length_is_refused_before_it_is_read(server: Server) -> None:
    def chunks():
        yield b'{"on": '
        yield b"false}"

    with server.api() as api:
        r = api.put(f"/api/skills/{SLUG}/enabled", content=chunks())
        assert r.status_code == 411
        assert api.get(f"/api/skills/{SLUG}").json()["enabled"] is True


def test_an_unanswered_approval_is_a_deny_after_its_timeout(settings: Settings) -> None:
    from teachd.store.approvals import ApprovalQueue

    request = {"step": 3, "tool": "computer_act", "action": "click Save", "page": "http://127.0.0.1/x",
               "skills": ["taught-x"], "reason": "asks"}
    asking = ApprovalQueue(open_store(settings), timeout=0.3)
    assert asking.wait("run-1", request) == "deny"
    assert asking.pending() == []


def test_an_approval_asked_in_one_process_is_answered_from_another_once(settings: Settings, written) -> None:
    """The asker (``teachd mcp``, say) and the Approvals page (the daemon)
    meet in the store; the first answer wins and a late one is refused."""
    import threading

    from teachd.core.errors import NotFound
    from teachd.store.approvals import ApprovalQueue

    asking, page = ApprovalQueue(open_store(settings), timeout=10), ApprovalQueue(open_store(settings))
    answers: list[str] = []
    request = {"step": None, "tool": "computer_act", "action": "click Save", "page": None,
               "skills": ["taught-x"], "reason": "a loaded skill requires approval"}
    t = threading.Thread(target=lambda: answers.append(asking.wait("run-2", request)))
    t.start()
    [shown] = _pending(page)
    assert shown["action"] == "click Save" and shown["skills"] == ["taught-x"] and shown["run_id"] == "run-2"
    page.answer(shown["id"], "once")
    t.join(5)
    assert answers == ["once"]
    with pytest.raises(NotFound):
        page.answer(shown["id"], "deny")
    assert b"click Save" not in written()  # sealed like a run's detail


def _pending(queue: Any) -> list[dict[str, Any]]:
    """What waits on the Approvals page, once something does (another thread asks)."""
    for _ in range(500):
        if waiting := queue.pending():
            return list(waiting)
        time.sleep(0.01)
    return []


def test_a_question_that_asks_where_takes_only_a_point_or_a_deny_and_no_other_takes_a_point(
        settings: Settings) -> None:
    """A step not found asks where it is now (``Gate.point``): its answer is
    the point clicked on the page's picture (fractions), or a deny; a plain
    allow would say nothing of where, and a point means nothing elsewhere."""
    import threading

    from teachd.core.errors import BadInput
    from teachd.runner.gate import Action, Gate, PageApprover
    from teachd.store.approvals import ApprovalQueue

    asking, page = ApprovalQueue(open_store(settings), timeout=10), ApprovalQueue(open_store(settings))
    points: list[tuple[float, float] | None] = []
    gate = Gate(PageApprover(asking, "run-3", points=True))
    act = Action("computer_act", "click the Submit button", "http://127.0.0.1/x", 7)
    t = threading.Thread(target=lambda: points.append(gate.point(act, "step 7: not found")))
    t.start()
    [shown] = _pending(page)
    assert shown["show"] and shown["step"] == 7 and not shown["offers_run"]
    for word, point in (("once", None), ("run", None), ("here", None), ("here", (1.5, 0.2))):
        with pytest.raises(BadInput):
            page.answer(shown["id"], word, point)
    page.answer(shown["id"], "here", (0.25, 0.5))
    t.join(5)
    assert points == [(0.25, 0.5)]
    assert gate.log[-1]["decision"] == "shown by the person"
    other = {"step": 2, "tool": "computer_act", "action": "click Save", "page": None, "skills": [], "reason": "r"}
    t = threading.Thread(target=lambda: asking.wait("run-3", other))
    t.start()
    [plain_question] = _pending(page)
    with pytest.raises(BadInput):
        page.answer(plain_question["id"], "here", (0.5, 0.5))
    page.answer(plain_question["id"], "deny")
    t.join(5)
    # an approver that cannot show the page's picture (a terminal, an agent's client) is not asked
    assert Gate(PageApprover(asking, "run-4")).point(act, "not found") is None
