"""Headless Chromium: Debian's full browser against its old headless shell
(``chromium-headless-shell``, what Playwright itself runs headless), each
started, signed in to the sample app, a screenshot taken, closed — the work
a headless run's browser does around its steps. Prints wall and CPU time
(this process and its children, Chromium's included) for each.

    .venv/bin/python bench/headless_shell.py [--runs 8]

teachd starts the shell for a headless run when it is installed
(``recorder.browser.chromium_path``); TEACHD_CHROMIUM still names any other.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recorder.browser import HEADLESS_SHELL, launch_args  # noqa: E402
from teachd.demo.sampleapp import SampleApp  # noqa: E402

PASSWORD = "Bench-pw-1"


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(exe: str, runs: int, url: str) -> tuple[float, float]:
    from playwright.sync_api import sync_playwright

    wall, used = time.monotonic(), cpu()
    with sync_playwright() as pw:
        for _ in range(runs):
            browser = pw.chromium.launch(executable_path=exe, args=launch_args(None), headless=True)
            page = browser.new_page()
            page.goto(url + "/login")
            page.fill("#email", "alice@example.com")
            page.fill("#password", PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url("**/dashboard")
            page.screenshot()
            browser.close()
    return time.monotonic() - wall, cpu() - used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    runs = parser.parse_args().runs
    with SampleApp(password=PASSWORD) as app:
        browsers = (("chromium (full)", "/usr/bin/chromium"), ("chromium-headless-shell", HEADLESS_SHELL))
        rows = [(name, *measure(exe, runs, app.url)) for name, exe in browsers]
    print(f"| browser ({runs} runs) | wall s | CPU s | CPU a run |")
    print("|---|---|---|---|")
    for name, wall, used in rows:
        print(f"| {name} | {wall:.1f} | {used:.1f} | {used / runs:.2f} |")


if __name__ == "__main__":
    main()
