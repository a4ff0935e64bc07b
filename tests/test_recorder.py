"""The recorder for real: Debian's Chromium under Xvfb, xdotool typing as the
person, the recording driven over the DevTools port, events read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from teachd.demo.sampleapp import SampleApp
from tests.conftest import all_bytes_under
from tests.desktop import Teach, connect, kill9, screen_point, xdo

PASSWORD = "Zq7-Tr0ub4dor-pw"


@pytest.fixture
def app() -> Iterator[SampleApp]:
    with SampleApp(password=PASSWORD) as a:
        yield a


def close_browser(browser) -> None:
    """What the person does: close every tab (ends the recording)."""
    for context in browser.contexts:
        for page in context.pages:
            page.close()
    browser.close()


def test_headed_demo_with_real_keystrokes_masks_password_everywhere(env, display, app, pw, cli, home):
    env = {**env, "DISPLAY": display}
    teach = Teach(env, "Submit an expense report", app.url + "/login")
    browser, page = connect(pw, teach.cdp_port)
    # the person, through the X server: click, type, fix a typo with backspace
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "#email")), "click", "1")
    xdo(display, "type", "--delay", "30", "alice@example.com")
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "#password")), "click", "1")
    xdo(display, "type", "--delay", "30", PASSWORD[:6] + "xyz")
    xdo(display, "key", "--delay", "30", "BackSpace", "BackSpace", "BackSpace")
    xdo(display, "type", "--delay", "30", PASSWORD[6:])
    assert page.input_value("#password") == PASSWORD
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "button[type=submit]")), "click", "1")
    page.wait_for_url("**/dashboard")
    page.get_by_role("tab", name="Reports").click()  # a client-side route (pushState)
    page.wait_for_url("**/dashboard/reports")
    # an action link styled text-transform:uppercase, clicked through X
    assert page.locator("main a.action").inner_text() == "NEW REPORT"  # what the person sees
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "main a.action")), "click", "1")
    page.wait_for_url("**/reports/new")
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "#amount")), "click", "1")
    xdo(display, "type", "--delay", "30", "42.50")
    page.click("#description")
    page.keyboard.type("Taxi from the airport")
    page.select_option("#category", "travel")
    page.click("#has-receipt")
    frame = page.frame_locator("iframe[title=Note]")
    frame.locator("#note").click()
    page.keyboard.type("see receipt")
    with page.context.expect_page() as new_tab:
        page.click("text=Help")
    new_tab.value.wait_for_load_state()
    page.bring_to_front()
    page.click("button[type=submit]")
    page.wait_for_url("**/reports/*")
    teach.wait_for(lambda evs: any(e["type"] == "page" and "/reports/" in e["url"]
                                   and not e["url"].endswith("/new") for e in evs))
    browser.close()
    assert cli("teach", "stop").code == 0
    code, out, err = teach.finish()
    assert code == 0, err
    result = json.loads(out)
    assert result["slug"] == "taught-submit-an-expense-report" and result["version"] == 1

    evs = teach.events()
    assert [e["seq"] for e in evs] == list(range(len(evs)))
    assert evs[0]["type"] == "start" and evs[-1]["type"] == "stop"
    types = [e["type"] for e in evs]
    assert types.count("click") >= 7
    pages = [(e["url"].removeprefix(app.url), e["tab"]) for e in evs if e["type"] == "page"]
    assert pages[:4] == [("/login", 0), ("/dashboard", 0), ("/dashboard/reports", 0), ("/reports/new", 0)]
    assert ("/help", 1) in pages and pages[-1][0].startswith("/reports/")
    pw_inputs = [e for e in evs if e["type"] == "input" and e["target"]["id"] == "password"]
    assert pw_inputs and all(e.get("masked") is True and "value" not in e for e in pw_inputs)
    emails = [e["value"] for e in evs if e["type"] == "input" and e["target"]["id"] == "email"]
    assert emails[-1] == "alice@example.com"
    note = [e for e in evs if e["type"] == "input" and e["target"]["id"] == "note"]
    assert note and note[-1]["target"]["frame_url"].endswith("/frame/note")
    sign_in = next(e for e in evs if e["type"] == "click" and e["target"].get("test_id") == "login-submit")
    assert sign_in["target"]["role"] == "button" and sign_in["target"]["name"] == "Sign in"
    assert (teach.recording_dir / sign_in["frame"]).is_file()
    # the uppercase-styled link is named as its author wrote it, not as CSS shows it
    new_report = next(e for e in evs if e["type"] == "click" and e["target"].get("attrs", {}).get("href") == "/reports/new")
    assert new_report["target"]["role"] == "link"
    assert new_report["target"]["name"] == "New report" and new_report["target"]["text"] == "New report"
    assert new_report["target"]["container"]["role"] == "main"
    assert not [e for e in evs if e["type"] in ("os_key", "os_click")]  # browser events win
    assert not (teach.recording_dir / ".incomplete").exists()
    # the secret is nowhere: events, crops, logs, database, the exported skill
    everything = all_bytes_under(home) + cli("skills", "export", result["slug"], "--format", "json").out.encode()
    for piece in (PASSWORD, PASSWORD[:6] + "xyz", PASSWORD[6:]):
        assert piece.encode() not in everything
    assert app.state.reports[-1]["amount"] == "42.50"  # the demonstration really happened


def test_paste_into_password_field_never_reaches_disk(env, display, app, pw, home):
    env = {**env, "DISPLAY": display}
    teach = Teach(env, "Paste login", app.url + "/login", "--no-os-input")
    browser, page = connect(pw, teach.cdp_port)
    # put the password on the clipboard from outside any watched field, then paste with ctrl+v
    page.evaluate("""pw => { const t = document.createElement('textarea'); t.value = pw;
        t.style = 'position:fixed;left:-999px'; document.body.appendChild(t); t.select();
        document.execCommand('copy'); t.remove(); }""", PASSWORD)
    xdo(display, "mousemove", "--sync", *map(str, screen_point(page, "#password")), "click", "1")
    xdo(display, "key", "ctrl+v")
    page.wait_for_function("() => document.querySelector('#password').value.length > 0")
    assert page.input_value("#password") == PASSWORD  # the paste really happened
    page.click("#email")
    page.keyboard.insert_text("ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8")  # a token in a plain field
    page.click("button[type=submit]")
    teach.wait_for(lambda evs: sum(e["type"] == "click" for e in evs) >= 3)
    close_browser(browser)
    code, out, err = teach.finish()
    assert code == 0, err
    assert "browser closed" in err
    evs = teach.events()
    assert evs[-1] == {**evs[-1], "type": "stop", "reason": "browser closed"}
    inputs = [e for e in evs if e["type"] == "input"]
    assert len(inputs) == 2 and all(e.get("masked") and "value" not in e for e in inputs)
    raw = all_bytes_under(home)
    assert PASSWORD.encode() not in raw and b"ghp_1A2b3C4d" not in raw


def test_desktop_clicks_and_shortcuts_outside_the_browser(env, display, app, pw):
    from Xlib import X
    from Xlib import display as xdisplay

    d = xdisplay.Display(display)
    screen = d.screen()
    win = screen.root.create_window(1300, 900, 90, 90, 0, screen.root_depth, X.InputOutput,
                                    X.CopyFromParent, background_pixel=screen.white_pixel,
                                    event_mask=X.ExposureMask | X.KeyPressMask)
    win.set_wm_name("Receipts folder")
    win.set_wm_class("receipts", "Receipts")
    win.map()
    d.sync()
    env = {**env, "DISPLAY": display}
    teach = Teach(env, "Desktop task", app.url + "/login")
    browser, page = connect(pw, teach.cdp_port)
    xdo(display, "mousemove", "--sync", "1340", "950", "click", "1")
    win.set_input_focus(X.RevertToParent, X.CurrentTime)  # what a window manager does on click
    d.sync()
    teach.wait_for(lambda evs: any(e["type"] == "os_click" for e in evs))
    xdo(display, "type", "--delay", "30", "plain words")
    xdo(display, "key", "ctrl+s")
    xdo(display, "key", "Return")
    teach.wait_for(lambda evs: sum(e["type"] == "os_key" for e in evs) >= 2)
    close_browser(browser)
    code, out, err = teach.finish()
    assert code == 0, err
    evs = teach.events()
    os_clicks = [e for e in evs if e["type"] == "os_click"]
    os_keys = [e for e in evs if e["type"] == "os_key"]
    assert os_clicks and os_clicks[0]["window"] == "Receipts folder"
    assert (os_clicks[0]["x"], os_clicks[0]["y"]) == (1340, 950)
    assert (teach.recording_dir / os_clicks[0]["frame"]).is_file()
    assert [k["key"] for k in os_keys] == ["s", "enter"]
    assert os_keys[0]["modifiers"] == ["ctrl"]
    assert b"plain" not in (teach.recording_dir / "events.jsonl").read_bytes()
    win.destroy()
    d.close()


def test_kill_9_loses_at_most_the_last_100ms_and_still_compiles(env, app, pw, tmp_path, cli):
    teach = Teach(env, "Crash test", app.url + "/login", "--headless", "--no-os-input")
    browser, page = connect(pw, teach.cdp_port)
    # the recorder's answers (the bar's toasts), heard as the page hears them
    page.evaluate("""() => { const answer = window.__teachdBarAnswer; window.__toasts = [];
        window.__teachdBarAnswer = (r) => { if (r.toast) window.__toasts.push(r.toast); return answer(r); }; }""")
    page.click("#email")
    page.keyboard.type("alice@example.com")
    page.click("#password")  # flushes the email field
    clicks_before = 2
    # the recorder has the second click whole — delivered (a busy machine may take its time)
    # and its crop taken (a click holds its place in the order while it is) ...
    page.wait_for_function("() => window.__toasts.filter((t) => t.startsWith('Clicked')).length >= 2")
    frames = teach.recording_dir / "frames"
    deadline = time.monotonic() + 30
    while len(list(frames.glob("*.png"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.15)  # ... and the promise under test: what it had whole 100 ms ago is on disk
    kill9(teach)
    evs = teach.events()
    assert sum(e["type"] == "click" for e in evs) == clicks_before
    assert any(e["type"] == "input" and e.get("value") == "alice@example.com" for e in evs)
    assert evs[-1]["type"] != "stop"
    assert (teach.recording_dir / ".incomplete").exists()  # marked, not passed off as whole
    r = cli("compile", str(teach.recording_dir), "--out", str(tmp_path), "--json")
    assert r.code == 0, r.err
    skill_md = (Path(json.loads(r.out)["path"]) / "SKILL.md").read_text()
    assert "{{email}}" in skill_md


@pytest.mark.parametrize("case", ["no-chromium", "unreachable", "no-display"])
def test_start_failures_are_one_line_and_leave_nothing(env, home, case):
    env = dict(env)
    args = ["teach", "Broken", "--url", "http://127.0.0.1:9/", "--no-os-input"]
    if case == "no-chromium":
        env["TEACHD_CHROMIUM"] = "/nonexistent/chromium"
        args.append("--headless")
    elif case == "unreachable":
        args.append("--headless")
    else:
        env.pop("DISPLAY", None)
    p = subprocess.run([sys.executable, "-m", "teachd", *args], env=env, capture_output=True,
                       text=True, timeout=120)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == {"no-chromium": 69, "unreachable": 1, "no-display": 69}[case], p.stderr
    assert len(lines) == 1 and lines[0].startswith("teachd: error:"), p.stderr
    expected = {"no-chromium": "Chromium not found", "unreachable": "cannot open",
                "no-display": "no display"}[case]
    assert expected in lines[0]
    rec_dir = home / "recordings"
    assert not rec_dir.exists() or not any(p for p in rec_dir.iterdir() if not p.name.startswith("."))


def test_recordings_are_private(env, app, pw, home):
    teach = Teach(env, "Private", app.url + "/login", "--headless", "--no-os-input")
    browser, page = connect(pw, teach.cdp_port)
    page.click("#email")
    close_browser(browser)
    code, _, err = teach.finish()
    assert code == 0, err
    assert (teach.recording_dir.stat().st_mode & 0o777) == 0o700
    assert ((teach.recording_dir / "events.jsonl").stat().st_mode & 0o777) == 0o600
    assert ((home / "recordings").stat().st_mode & 0o077) == 0
    assert not os.listdir(home / "recordings") or all(
        not n.startswith(".profile") for n in os.listdir(home / "recordings"))


def test_one_recording_at_a_time_and_a_killed_one_leaves_no_lock(env, app, cli):
    first = Teach(env, "First", app.url + "/login", "--headless", "--no-os-input")
    second = cli("teach", "Second", "--url", app.url + "/login", "--headless", "--no-os-input")
    assert second.code == 5 and "already running" in second.err
    kill9(first)  # the kernel lets go of the lock with the process: nothing stale to clean
    again = Teach(env, "Again", app.url + "/login", "--headless", "--no-os-input")
    stopped = cli("teach", "stop", "--json")
    assert stopped.code == 0 and json.loads(stopped.out)["recording_dir"] == str(again.recording_dir)
    code, out, err = again.finish()
    assert code == 0, err
    assert cli("teach", "stop").code == 3  # nothing running now
