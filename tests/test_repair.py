"""Repair by showing one step, for real: the taught sample task halts on a
changed app, ``teachd teach --repair RUN_ID`` replays the steps before the
halted one in Chromium (approvals answered on its terminal, the password
from the environment), the person's part is played over DevTools with real
mouse and key events, and the new version is judged by the sample app's own
records on every drift variant."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from teachd.demo.sampleapp import SampleApp, Variant
from teachd.demo.sampleapp.judge import RIGHT, judge
from teachd.teach.process import TeachProcess
from tests.conftest import all_bytes_under
from tests.drift_suite import EXPECTED
from tests.sample_task import APPROVE_ALL, PASSWORD, SLUG, copy_home, replay

ROOT = Path(__file__).resolve().parent.parent


def teachd(env: dict[str, str], *args: str) -> tuple[int, Any, str]:
    p = subprocess.run([sys.executable, "-m", "teachd", *args, "--json"], capture_output=True, text=True,
                       env=env, timeout=120)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr


def halted_run(env: dict[str, str], port: int, variant: str) -> tuple[str, int]:
    with SampleApp(password=PASSWORD, variant=Variant.named(variant), port=port) as app:
        code, out, err = replay(env, "--step-timeout", "2")
        assert app.state.reports == [] or variant == "password_relabelled"
    halted = [s for s in out["steps"] if s["status"] == "halted"]
    assert code == 1 and len(halted) == 1, (out.get("message"), err[-800:])
    return out["run_id"], int(halted[0]["n"])


def repair(env: dict[str, str], port: int, variant: str, run_id: str, act: Callable[[Any, Any], None],
           *flags: str) -> tuple[int, Any, str, Path]:
    """``teachd teach --repair`` with the person's part played by ``act(page, teach)``;
    the person then closes the browser (the other way to say Done)."""
    from playwright.sync_api import sync_playwright

    with SampleApp(password=PASSWORD, variant=Variant.named(variant), port=port):
        teach = TeachProcess.repairing(dict(env, TEACHD_SECRET_PASSWORD=PASSWORD), run_id, "--headless",
                                       "--no-os-input", *flags, answers=APPROVE_ALL)
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}")
            context = browser.contexts[0]
            act(context.pages[-1], teach)
            for page in context.pages:
                page.close()
        code, out, err = teach.finish()
    return code, (json.loads(out) if out.strip() else None), err, teach.recording_dir


def show_send_for_approval(page: Any, teach: TeachProcess) -> None:
    assert page.url.endswith("/reports/new")  # the lead-in filled the form and stopped before submitting
    assert page.locator("[name=amount]").input_value() == "42.50"
    page.get_by_role("button", name="Send for approval").click()
    page.wait_for_url("**/reports/*")
    teach.wait_for(lambda evs: any(e["type"] == "page" for e in evs))


def version(env: dict[str, str]) -> dict[str, Any]:
    code, data, err = teachd(env, "skills", "show", SLUG)
    assert code == 0, err
    return data


def store_text(env: dict[str, str], n: int) -> tuple[str, dict[str, str]]:
    """SKILL.md instructions and files of version ``n`` (opened with the key)."""
    from teachd.config import settings_from_env
    from teachd.store import open_store

    content = open_store(settings_from_env(env)).version(SLUG, n).content
    return content.instructions, content.files


@pytest.fixture(scope="module")
def repaired_submit(taught_sample, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample skill repaired once on the variant whose Submit report
    button became "Send for approval" with no id."""
    env = copy_home(taught_sample, tmp_path_factory.mktemp("repaired"))
    port = taught_sample.port
    run_id, step = halted_run(env, port, "submit_relabelled")
    code, out, err, folder = repair(env, port, "submit_relabelled", run_id, show_send_for_approval)
    assert code == 0, err[-1500:]
    return {"env": env, "port": port, "run_id": run_id, "step": step, "out": out, "folder": folder}


def test_repair_saves_a_new_version_with_a_dated_history_line(repaired_submit) -> None:
    env, out, run_id, step = (repaired_submit[k] for k in ("env", "out", "run_id", "step"))
    assert out["slug"] == SLUG and out["version"] == 2 and out["step"] == step
    assert out["added"] == [] and out["skipped"] == [] and out["new_origins"] == []
    body, files = store_text(env, 2)
    assert f"— repaired step {step} (run {run_id})" in body.split("## History")[1]
    anchors = json.loads(files["references/anchors.json"])["anchors"]
    steps = json.loads(files["references/steps.json"])["steps"]
    anchor = anchors[steps[step - 1]["anchor"]]
    assert anchor["expect"]["name"] == "Submit report"
    assert [a["expect"]["name"] for a in anchor["alternates"]] == ["Send for approval"]
    old_body, old_files = store_text(env, 1)
    assert json.loads(old_files["references/steps.json"])["steps"] == [
        {k: v for k, v in s.items()} for s in steps]  # only the anchor's evidence changed
    old_anchors = json.loads(old_files["references/anchors.json"])["anchors"]
    changed = [k for k in set(old_anchors) | set(anchors) if old_anchors.get(k) != anchors.get(k)]
    assert changed == [steps[step - 1]["anchor"]]
    assert repaired_submit["folder"].is_dir()  # the repair's recording is kept


def test_a_repairs_replay_up_to_the_step_is_a_run_with_its_own_page(repaired_submit) -> None:
    """The lead-in (steps 1…N−1 replayed before the person shows step N) is
    a run of its own: recorded with each step, said to be the repair of the
    halted run, never offered for Worked/Failed, and its page and API
    record answer through the daemon."""
    from teachd.config import settings_from_env
    from teachd.store import open_store
    from teachd.store.runs import RunStore
    from tests.test_server import serve

    env, run_id, step = (repaired_submit[k] for k in ("env", "run_id", "step"))
    runs = RunStore(open_store(settings_from_env(env)))
    [lead] = [r for r in runs.recent() if r.get("origin") == f"repair of {run_id}"]
    record = runs.one(lead["run_id"])
    assert record["status"] == "success" and f"handed step {step} to you" in record["message"]
    assert [s["n"] for s in record["steps"]] == list(range(1, step))
    assert all(s["status"] == "ok" for s in record["steps"]) and not record.get("slug") and record["used"] == []
    server = serve(env)
    try:
        with server.api() as api:
            assert api.get(f"/api/runs/{lead['run_id']}").status_code == 200
            page = api.get(f"/runs/{lead['run_id']}")
            assert page.status_code == 200 and f"repair of {run_id}" in page.text
            assert all(f'id="step-{n}"' in page.text for n in range(1, step))
            assert "Did it work?" not in page.text
    finally:
        server.stop()


# The repair changed one anchor's evidence (the test above: steps and every
# other anchor are as they were), so the variants that can tell are
# those around that button: the one it was repaired on, the original, the
# button gone, look-alikes and ambiguity, its label reworded or translated,
# and everything at once. (The drift suite runs every variant on the original.)
AROUND_SUBMIT = ["ambiguous", "base", "changed_labels", "combination", "decoys", "renamed_ids",
                 "submit_relabelled", "submit_removed", "translated"]


def test_the_variants_around_the_repaired_button_are_drift_variants() -> None:
    assert set(AROUND_SUBMIT) <= set(EXPECTED)


@pytest.mark.parametrize("variant", AROUND_SUBMIT)
def test_repaired_skill_is_right_on_the_changed_page_the_original_and_wrong_nowhere(
        repaired_submit, variant: str) -> None:
    env, port = repaired_submit["env"], repaired_submit["port"]
    expected = RIGHT if variant == "submit_relabelled" else EXPECTED[variant]
    with SampleApp(password=PASSWORD, variant=Variant.named(variant), port=port) as app:
        code, out, err = replay(env, "--step-timeout", "10" if expected == RIGHT else "2")
        verdict = judge(out.get("status", ""), app.state)
    assert verdict.wrong == [], verdict.wrong
    assert verdict.verdict == expected, (out.get("message"), err[-1000:])
    if expected == RIGHT:
        assert out["skills"][SLUG] == 2


def test_password_typed_during_a_repair_is_never_stored(taught_sample, tmp_path: Path) -> None:
    env = copy_home(taught_sample, tmp_path)
    port = taught_sample.port
    run_id, step = halted_run(env, port, "password_relabelled")

    def sign_in(page: Any, teach: TeachProcess) -> None:
        field = page.get_by_label("Passphrase")
        field.click()
        page.keyboard.type(PASSWORD, delay=10)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/dashboard")
        teach.wait_for(lambda evs: any(e["type"] == "page" for e in evs))

    code, out, err, folder = repair(env, port, "password_relabelled", run_id, sign_in)
    assert code == 0, err[-1500:]
    assert out["step"] == step and out["skipped"] == []
    body, files = store_text(env, 2)
    plan = json.loads(files["references/steps.json"])
    assert plan["steps"][step - 1]["secret"] == "password" and list(plan["secrets"]) == ["password"]
    events = (folder / "events.jsonl").read_text()
    assert '"masked": true' in events.replace('"masked":true', '"masked": true')
    written = all_bytes_under(Path(env["TEACHD_HOME"])) + all_bytes_under(Path(env["HOME"])) + err.encode()
    assert PASSWORD.encode() not in written
    for variant in ("password_relabelled", "base"):
        with SampleApp(password=PASSWORD, variant=Variant.named(variant), port=port) as app:
            code, result, err = replay(env)
            assert judge(result.get("status", ""), app.state).verdict == RIGHT, (variant, result.get("message"))


def test_a_repair_that_leaves_the_scope_asks_first(taught_sample, tmp_path: Path) -> None:
    env = copy_home(taught_sample, tmp_path)
    port = taught_sample.port
    run_id, _step = halted_run(env, port, "submit_relabelled")

    def and_elsewhere(page: Any, teach: TeachProcess) -> None:
        show_send_for_approval(page, teach)
        page.goto(f"http://localhost:{port}/help")  # the same app under another origin
        teach.wait_for(lambda evs: any("localhost" in str(e.get("url")) for e in evs if e["type"] == "page"))

    code, out, err, folder = repair(env, port, "submit_relabelled", run_id, and_elsewhere)
    assert code == 7, err[-800:]  # nobody at a terminal to agree: refused, not extended
    assert f"http://localhost:{port}" in err and "--extend-scope" in err
    assert version(env)["version"] == 1 and folder.is_dir()
    code, out, err = teachd(env, "compile", str(folder), "--save", "--extend-scope")
    assert code == 0, err
    assert out["version"] == 2 and out["new_origins"] == [f"http://localhost:{port}"]
    scope = version(env)["metadata"]["metadata"]["teachd-scope"].split()
    assert scope == [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]


def test_a_failed_repair_leaves_the_skill_as_it_was_and_keeps_both_recordings(
        taught_sample, tmp_path: Path) -> None:
    env = copy_home(taught_sample, tmp_path)
    port = taught_sample.port
    recordings = Path(env["TEACHD_HOME"]) / "recordings"
    before = sorted(p.name for p in recordings.iterdir() if p.name.startswith("rec-"))
    run_id, step = halted_run(env, port, "submit_relabelled")
    code, out, err, folder = repair(env, port, "submit_relabelled", run_id, lambda page, teach: None)
    assert code == 2 and f"nothing was shown after step {step}" in err, err[-800:]
    assert str(folder) in err  # where the recording is kept
    assert version(env)["version"] == 1
    after = sorted(p.name for p in recordings.iterdir() if p.name.startswith("rec-"))
    assert after == sorted([*before, folder.name]) and len(before) == 1


def test_only_a_run_halted_at_a_step_can_be_repaired(taught_sample, tmp_path: Path) -> None:
    env = copy_home(taught_sample, tmp_path)
    with SampleApp(password=PASSWORD, port=taught_sample.port):
        code, out, err = replay(env)
    assert code == 0
    code, data, err = teachd(env, "teach", "--repair", out["run_id"], "--headless")
    assert code == 2 and "did not halt at a step" in err and "Traceback" not in err
    code, data, err = teachd(env, "teach", "--repair", "run-nope", "--headless")
    assert code == 3 and "no run 'run-nope'" in err


def test_the_bar_names_the_step_to_show() -> None:
    from compiler.plan import PlanStep
    from teachd.teach.repair import banner

    step = PlanStep(n=15, action="click", page=None, anchor="a1", describe="the **Submit report** button")
    assert banner(step) == ("Step 15: Click the **Submit report** button — show me where it is now, "
                            "then press Done")
    secret = PlanStep(n=3, action="type", page=None, anchor="a2", describe="the **Password** field",
                      secret="password")
    assert "Type into the **Password** field" in banner(secret) and "masked" in banner(secret)


def test_show_me_on_a_halted_run_repairs_it_from_the_web_ui(taught_sample, tmp_path: Path) -> None:
    """Runs page → *Show me step N* → the lead-in's approvals answered as on
    the Approvals page → the person shows the step in the taught browser →
    *Done* on the Teach page → the new version, linked."""
    import time

    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args
    from tests.test_server import logged_in, serve, shot

    env = copy_home(taught_sample, tmp_path)
    port = taught_sample.port
    run_id, step = halted_run(env, port, "submit_relabelled")
    daemon_env = {k: v for k, v in env.items() if k != "DISPLAY"}  # no display: the repair runs headless
    s = serve({**daemon_env, "TEACHD_SECRET_PASSWORD": PASSWORD})
    try:
        with SampleApp(password=PASSWORD, variant=Variant(submit_relabelled=True), port=port) as app, \
                sync_playwright() as pw, s.api() as api:
            browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), args=launch_args(None))
            page = logged_in(browser, s)
            page.goto(s.url + "/runs")
            page.get_by_role("button", name=f"Show me step {step}").click()
            page.wait_for_url("**/teach")
            deadline = time.monotonic() + 120
            while not api.get("/api/teach").json()["recording"]:  # the person allows each replayed step
                assert time.monotonic() < deadline, api.get("/api/teach").json()
                for asked in api.get("/api/approvals").json()["pending"]:
                    assert asked["run_id"] == run_id and asked["step"] < step
                    api.post(f"/api/approvals/{asked['id']}", json={"allow": True})
                time.sleep(0.1)
            page.get_by_text(f"Show me — Step {step}: Click the Submit report button").wait_for(timeout=15_000)
            cdp = api.get("/api/teach").json()["cdp_port"]
            taught = browser.browser_type.connect_over_cdp(f"http://127.0.0.1:{cdp}").contexts[0].pages[-1]
            taught.get_by_role("button", name="Send for approval").click()
            taught.wait_for_url("**/reports/*")
            page.locator("#steps").get_by_text("the Send for approval button").wait_for(timeout=15_000)
            shot(page, "repair")
            page.get_by_role("button", name="Done").click()
            page.get_by_role("link", name=f"{SLUG} v2").wait_for(timeout=60_000)
            assert len(app.state.reports) == 1  # the person's click submitted the report once
            browser.close()
    finally:
        s.stop()
    body, _files = store_text(env, 2)
    assert f"— repaired step {step} (run {run_id})" in body
