"""Replay speed: the sample task replayed by teachd and by a hand-written
Playwright script doing the same steps, in the same run, on the same browser
(goal: teachd ≤ 1.2× the raw script per step).

    .venv/bin/python bench/replay_speed.py [--runs 5]

Both sides type with real key events (``press_sequentially``) and wait for
each navigation; teachd also resolves every target through its anchor and
checks the evidence, asks its gate and verifies each effect. Browser start-up
is left out of both. The app runs in a process of its own, as a real app
does: in this one its server threads would take turns with the replay's
Python for the interpreter lock, charging whichever side does more Python
work for the app's. Prints a table of medians.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.plan import Procedure  # noqa: E402
from recorder.browser import CAPTURE_JS, chromium_path, launch_args  # noqa: E402
from teachd.config import Settings  # noqa: E402
from teachd.demo.sampleapp import SampleApp  # noqa: E402
from teachd.demo.sampleapp.judge import SLUG  # noqa: E402
from teachd.demo.sampleapp.script import FORM, GROUP, NOTE  # noqa: E402
from teachd.demo.sampleapp.server import USER  # noqa: E402
from teachd.runner.gate import Answer, Gate, Request  # noqa: E402
from teachd.runner.replay import Replayer  # noqa: E402
from teachd.store import open_store  # noqa: E402
from tests.drift_suite import teach_task  # noqa: E402

PASSWORD = "bench-speed-Pw-1"


class Approve:
    def ask(self, request: Request) -> Answer:
        return Answer(request.id, True)


def serve(port: int, conn: Any) -> None:
    """The app's process: a fresh app for each "start", its counts at "stop"."""
    while conn.recv() == "start":
        with SampleApp(password=PASSWORD, port=port) as app:
            conn.send(app.url)
            conn.recv()
            conn.send((len(app.state.groups), len(app.state.reports)))


def raw_script(page: Any, base: str) -> int:
    """The task as a developer would script it by hand: 28 steps."""
    page.goto(base + "/login")
    page.locator("#email").press_sequentially(USER)
    page.locator("#password").press_sequentially(PASSWORD)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url("**/dashboard")
    page.get_by_role("tab", name="Reports").click()
    page.wait_for_url("**/dashboard/reports")
    page.get_by_role("link", name="New report").click()
    page.wait_for_url("**/reports/new")
    page.locator("#amount").press_sequentially(FORM["amount"])
    page.locator("#description").press_sequentially(FORM["description"])
    page.locator("#merchant").press_sequentially("Tax")
    page.get_by_role("option", name="Taxi Paris", exact=True).click()
    page.locator("#category").select_option(FORM["category"])
    page.locator("#has-receipt").check()
    note = page.frame_locator("iframe[title=Note]")
    note.locator("#note").press_sequentially(NOTE)
    note.get_by_role("button", name="Save note").click()
    page.get_by_role("button", name="Submit report").click()
    page.wait_for_url(re.compile(r"/reports/\d+$"))
    page.get_by_role("link", name="Groups").click()
    page.wait_for_url("**/groups")
    page.get_by_role("link", name="Add group").click()
    page.wait_for_url("**/groups/add")
    page.locator("#group-name").press_sequentially(GROUP["name"])
    for query, option in (("approve r", "Can approve reports"), ("export", "Can export reports")):
        page.locator("#perm-filter").fill("")
        page.locator("#perm-filter").press_sequentially(query)
        page.get_by_role("option", name=option, exact=True).click()
        page.get_by_role("button", name="Choose", exact=True).click()
    page.locator("#perm-filter").fill("")
    page.locator("#perm-filter").press_sequentially("archive")
    page.get_by_role("button", name="Choose all").click()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r"/groups/\d+$"))
    with page.context.expect_page() as tab:
        page.get_by_role("link", name="Open audit log").click()
    tab.value.wait_for_load_state("domcontentloaded")
    return 28


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="teachd-speed-"))
    taught = teach_task(home, PASSWORD)
    skill = open_store(Settings(home=home, owner="alice")).get(SLUG)
    proc = Procedure.from_files(skill.current.files)
    from playwright.sync_api import sync_playwright

    spawn = multiprocessing.get_context("spawn")
    here, there = spawn.Pipe()
    server = spawn.Process(target=serve, args=(taught.port, there), daemon=True)
    server.start()
    times: dict[str, list[float]] = {"teachd": [], "raw": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True), headless=True,
                                     args=launch_args(None))
        for _ in range(args.runs):
            for side in ("raw", "teachd"):
                here.send("start")
                url = here.recv()
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.add_init_script(path=str(CAPTURE_JS))
                page = context.new_page()
                page.goto(url + "/help")  # warm: the first page load is not a step
                t0 = time.perf_counter()
                if side == "raw":
                    steps = raw_script(page, url)
                else:
                    gate = Gate(Approve())
                    gate.load(SLUG, skill.current.approval)
                    Replayer(context, page, proc, gate, {}, lambda _n: PASSWORD).run()
                    steps = len(proc.steps)
                times[side].append((time.perf_counter() - t0) / steps * 1000)
                context.close()
                here.send("stop")
                assert here.recv() == (1, 1), f"{side}: the app did not keep one group and one report"
        browser.close()
    here.send("end")
    server.join(5)
    raw, ours = statistics.median(times["raw"]), statistics.median(times["teachd"])
    print(f"| replay of the {len(proc.steps)}-step sample task ({args.runs} runs) | median ms per step |")
    print("|---|---|")
    print(f"| raw Playwright script | {raw:.1f} |")
    print(f"| teachd (anchors, evidence, gate, verification) | {ours:.1f} |")
    print(f"| ratio teachd / raw (goal ≤ 1.2) | {ours / raw:.2f} |")
    pairs = sorted(t / r for t, r in zip(times["teachd"], times["raw"], strict=True))
    print(f"\nratio run by run (each teachd run beside the raw run before it): "
          f"{', '.join(f'{p:.2f}' for p in pairs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
