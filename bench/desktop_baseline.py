"""Desktop replay beside the coordinates baseline, on a calculator nobody
here wrote (Debian's galculator, GTK 3): "7 + 2 =" taught once through the
recorder, then, on each condition, (a) the recorded screen coordinates
clicked again with xdotool, (b) teachd's replay — each judged by the
calculator's own display.

    .venv/bin/python bench/desktop_baseline.py

Prints a Markdown table (condition × baseline / teachd) for docs/desktop.md:
right (the display shows 9), nothing (the display unchanged: halted before
any key), wrong (anything else).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.plan import Procedure  # noqa: E402
from teachd.config import Settings  # noqa: E402
from teachd.demo.sampleapp import SampleApp  # noqa: E402
from teachd.runner.gate import Answer, Gate, Request  # noqa: E402
from teachd.runner.replay import Halt, Replayer  # noqa: E402
from teachd.store import open_store  # noqa: E402
from tests.desktop import DesktopSession, a11y_session, calc_shows, calculator, teach_a_sum  # noqa: E402


class Allow:
    def ask(self, request: Request) -> Answer:
        return Answer(request.id, True)


# condition → (where the window is placed, the app's environment, a second window focused over it)
CONDITIONS: dict[str, tuple[tuple[int, int], dict[str, str], bool]] = {
    "unchanged": ((150, 120), {}, False),
    "moved": ((600, 300), {}, False),
    "dark theme, font 1.4×": ((150, 120), {"GTK_THEME": "Adwaita:dark", "GDK_DPI_SCALE": "1.4"}, False),
    "2× scale": ((100, 40), {"GDK_SCALE": "2"}, False),
    "a second window, focused": ((150, 120), {}, True),
}


def verdict(before: str, after: str) -> str:
    return "right" if after == "9" else "nothing" if after == before else f"wrong ({after!r})"


def baseline(desk: DesktopSession, proc: Procedure) -> None:
    """The person's recorded screen coordinates, clicked again."""
    for step in proc.steps:
        if step.action == "os_click" and step.x is not None and step.y is not None:
            desk.xdo("mousemove", "--sync", str(int(step.x)), str(int(step.y)))
            desk.xdo("click", "1")
            time.sleep(0.3)


def one(desk: DesktopSession, folder: Path, condition: str, act: Callable[[], None]) -> str:
    at, env, second = CONDITIONS[condition]
    with calculator(desk, folder / "calc", at, **env) as calc:
        judged = calc
        if second:
            with calculator(desk, folder / "calc2", (at[0] + 40, at[1] + 40), **env) as other:
                before = calc_shows(desk, other.pid), calc_shows(desk, calc.pid)
                act()
                time.sleep(0.5)
                after = calc_shows(desk, other.pid), calc_shows(desk, calc.pid)
                if after[1] != before[1]:
                    return f"wrong (the window behind: {after[1]!r})"
                return verdict(before[0], after[0])
        before_one = calc_shows(desk, judged.pid)
        act()
        time.sleep(0.5)
        return verdict(before_one, calc_shows(desk, judged.pid))


def main() -> int:
    from playwright.sync_api import sync_playwright

    from recorder.browser import chromium_path, launch_args

    tmp = Path(tempfile.mkdtemp(prefix="teachd-desktop-bench-"))
    (tmp / "home").mkdir(mode=0o700)
    (tmp / "user").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(tmp / "home"), HOME=str(tmp / "user"), TEACHD_OWNER="bench", PYTHONUTF8="1")
    rows = []
    with a11y_session() as desk, SampleApp(password="unused-Pw-1") as app, sync_playwright() as pw:
        os.environ["DISPLAY"] = desk.display
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = desk.env["DBUS_SESSION_BUS_ADDRESS"]
        teach = teach_a_sum(desk, env, app.url + "/login", pw, tmp / "person")
        code, out, err = teach.finish()
        if code != 0:
            print(err[-1500:], file=sys.stderr)
            return 1
        skill = open_store(Settings(home=tmp / "home", owner="bench")).get(json.loads(out)["slug"])
        proc = Procedure.from_files(skill.current.files)
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True),
                                     args=launch_args(None))

        def teachd() -> None:
            context = browser.new_context()
            try:
                Replayer(context, context.new_page(), proc, Gate(Allow()), {}, lambda _n: "",
                         step_timeout=5).run()
            except Halt as exc:
                print(f"  teachd halted: {exc}", file=sys.stderr)
            finally:
                context.close()

        for i, condition in enumerate(CONDITIONS):
            row: list[Any] = [condition]
            for j, act in enumerate((lambda: baseline(desk, proc), teachd)):
                row.append(one(desk, tmp / f"run{i}-{j}", condition, act))
            rows.append(row)
            print(f"{condition}: {row[1]} / {row[2]}", file=sys.stderr)
        browser.close()
    print("| condition | coordinates baseline | teachd |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    right = [sum(r[k] == "right" for r in rows) for k in (1, 2)]
    wrong = [sum(str(r[k]).startswith("wrong") for r in rows) for k in (1, 2)]
    print(f"\nright: baseline {right[0]}/{len(rows)}, teachd {right[1]}/{len(rows)}; "
          f"wrong: baseline {wrong[0]}, teachd {wrong[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
