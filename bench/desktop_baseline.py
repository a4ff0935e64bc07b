"""Desktop replay beside the coordinates baseline, on two apps nobody here
wrote, of two toolkits: Debian's galculator (GTK 3), "7 + 2 =" taught once
through the recorder; and FeatherPad (Qt 5), a two-line note saved under a
file name through Qt's own Save dialog. Then, on each condition, (a) the
recorded screen coordinates clicked again with xdotool (and, for the editor,
this run's values typed and the recorded keys pressed), (b) teachd's replay
— each judged by the app's own result, and teachd's status beside it.

    .venv/bin/python bench/desktop_baseline.py

Prints Markdown tables (condition × baseline / teachd) for docs/desktop.md:
right (the display shows 9; the file holds this run's note), nothing
(nothing changed: halted before acting), wrong (anything else).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.plan import Procedure  # noqa: E402
from teachd.config import Settings  # noqa: E402
from teachd.demo.sampleapp import SampleApp  # noqa: E402
from teachd.runner.gate import Gate  # noqa: E402
from teachd.runner.replay import Halt, Replayer  # noqa: E402
from teachd.store import open_store  # noqa: E402
from tests.desktop import (  # noqa: E402
    DARK_QSS,
    FEATHERPAD,
    AllowAll,
    DesktopSession,
    a11y_session,
    calc_shows,
    calculator,
    save_a_note,
    teach_a_sum,
)


class Condition(NamedTuple):
    """Where the app's window is placed (and its size), its environment, and
    for the calculator a second one focused over it, for the editor a dark
    style sheet."""

    at: tuple[int, int]
    env: dict[str, str] = {}
    size: tuple[int, int] | None = None
    second: bool = False
    dark: bool = False


CONDITIONS: dict[str, Condition] = {
    "unchanged": Condition((150, 120)),
    "moved and resized": Condition((600, 300), size=(420, 520)),
    "dark theme, font 1.4×": Condition((150, 120), {"GTK_THEME": "Adwaita:dark", "GDK_DPI_SCALE": "1.4"}),
    "2× scale": Condition((100, 40), {"GDK_SCALE": "2"}),
    "a second window, focused": Condition((150, 120), second=True),
}
EDITOR_CONDITIONS: dict[str, Condition] = {
    "another note and name": Condition((80, 80)),
    "moved and resized": Condition((420, 200), size=(560, 420)),
    "dark theme, font 1.4×": Condition((80, 80), {"QT_FONT_DPI": "134"}, dark=True),
    "2× scale": Condition((0, 0), {"QT_SCALE_FACTOR": "2"}),
}
NOTE, AGAIN = "Call the bank\non Monday", "Water the plants\nand feed the cat"


def verdict(before: str, after: str) -> str:
    return "right" if after == "9" else "nothing" if after == before else f"wrong ({after!r})"


def baseline(desk: DesktopSession, proc: Procedure) -> str:
    """The person's recorded screen coordinates, clicked again."""
    for step in proc.steps:
        if step.action == "os_click" and step.x is not None and step.y is not None:
            desk.xdo("mousemove", "--sync", str(int(step.x)), str(int(step.y)))
            desk.xdo("click", "1")
            time.sleep(0.3)
    return ""


def one(desk: DesktopSession, folder: Path, condition: str, act: Callable[[], str]) -> str:
    """Judged by the display of the calculator on top (and the one behind, untouched)."""
    at, env, size, second, _dark = CONDITIONS[condition]
    with calculator(desk, folder / "calc", at, size, **env) as calc:
        if second:
            with calculator(desk, folder / "calc2", (at[0] + 40, at[1] + 40), size, **env) as other:
                before = calc_shows(desk, other.pid), calc_shows(desk, calc.pid)
                said = act()
                time.sleep(0.5)
                after = calc_shows(desk, other.pid), calc_shows(desk, calc.pid)
                if after[1] != before[1]:
                    return f"wrong (the window behind: {after[1]!r}){said}"
                return verdict(before[0], after[0]) + said
        before_one = calc_shows(desk, calc.pid)
        said = act()
        time.sleep(0.5)
        return verdict(before_one, calc_shows(desk, calc.pid)) + said


def baseline_editor(desk: DesktopSession, proc: Procedure, values: dict[str, str]) -> str:
    """The recorded coordinates clicked, this run's values typed, the keys pressed."""
    for step in proc.steps:
        if step.action == "os_click" and step.x is not None and step.y is not None:
            desk.xdo("mousemove", "--sync", str(int(step.x)), str(int(step.y)))
            desk.xdo("click", "1")
        elif step.action == "os_type" and step.param:
            desk.xdo("key", "ctrl+a")
            for i, line in enumerate(values[step.param].split("\n")):
                if i:
                    desk.xdo("key", "Return")
                desk.xdo("type", "--delay", "15", line)
        elif step.action == "os_key" and step.key:
            desk.xdo("key", "+".join([*step.modifiers, {"enter": "Return"}.get(step.key, step.key)]))
        time.sleep(0.5)
    return ""


def one_editor(desk: DesktopSession, folder: Path, condition: str, act: Callable[[], str]) -> str:
    """Judged by the file the editor saved in its home (the Save dialog opens there)."""
    at, env, size, _second, dark = EDITOR_CONDITIONS[condition]
    home = folder / "home"
    (folder / "dark.qss").parent.mkdir(parents=True, exist_ok=True)
    (folder / "dark.qss").write_text(DARK_QSS, encoding="utf-8")
    args = ("-stylesheet", str(folder / "dark.qss")) if dark else ()
    with desk.editor(FEATHERPAD, home, folder, args, **env) as app:
        desk.place("Untitled", app.pid, *at, size=size)
        said = act()
        time.sleep(1)
        text = desk.desktop.text(desk.find(app.pid, "text", "")) if desk.find(app.pid, "text", "") else None
    saved = home / "todo.txt"
    if saved.is_file() and saved.read_text(encoding="utf-8").rstrip("\n") == AGAIN:
        return f"right{said}"
    if not saved.is_file() and not list(home.glob("*.txt")) and not text:
        return f"nothing{said}"
    return f"wrong{said}"


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
        _teach, (code, out, err) = teach_a_sum(desk, env, app.url + "/login", pw, tmp / "person")
        if code != 0:
            print(err[-1500:], file=sys.stderr)
            return 1
        skill = open_store(Settings(home=tmp / "home", owner="bench")).get(json.loads(out)["slug"])
        proc = Procedure.from_files(skill.current.files)
        browser = pw.chromium.launch(executable_path=chromium_path(None, headless=True),
                                     args=launch_args(None))

        def replayed(plan: Procedure, values: dict[str, str]) -> str:
            """teachd's replay, and what it said of it."""
            context = browser.new_context()
            try:
                r = Replayer(context, context.new_page(), plan, Gate(AllowAll()), values, lambda _n: "",
                             step_timeout=5)
                r.run()
                return " (success)" if r.verified else " (unverified)"
            except Halt as exc:
                print(f"  teachd halted: {exc}", file=sys.stderr)
                return " (halted)"
            finally:
                context.close()

        for i, condition in enumerate(CONDITIONS):
            row: list[Any] = [condition]
            for j, act in enumerate((lambda: baseline(desk, proc), lambda: replayed(proc, {}))):
                row.append(one(desk, tmp / f"run{i}-{j}", condition, act))
            rows.append(row)
            print(f"{condition}: {row[1]} / {row[2]}", file=sys.stderr)
        # the Qt editor, taught once
        _teach, (code, out, err) = save_a_note(desk, env, app.url + "/login", pw, tmp / "note", NOTE,
                                               FEATHERPAD, save="Save")
        if code != 0:
            print(err[-1500:], file=sys.stderr)
            return 1
        note = Procedure.from_files(open_store(Settings(home=tmp / "home", owner="bench")).get(
            json.loads(out)["slug"]).current.files)
        values = {name: (AGAIN if p["default"] == NOTE else "todo.txt")
                  for name, p in note.parameters.items()}

        editor_rows = []
        for i, condition in enumerate(EDITOR_CONDITIONS):
            row = [condition, *(one_editor(desk, tmp / f"note{i}-{j}", condition, act)
                                for j, act in enumerate((lambda: baseline_editor(desk, note, values),
                                                         lambda: replayed(note, values))))]
            editor_rows.append(row)
            print(f"{condition}: {row[1]} / {row[2]}", file=sys.stderr)
        browser.close()
    table("galculator (GTK 3): 7 + 2 =", rows)
    table("FeatherPad (Qt 5): a two-line note saved as another file", editor_rows)
    return 0


def table(title: str, rows: list[list[Any]]) -> None:
    print(f"\n{title}\n")
    print("| condition | coordinates baseline | teachd |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    right = [sum(str(r[k]).startswith("right") for r in rows) for k in (1, 2)]
    wrong = [sum(str(r[k]).startswith("wrong") for r in rows) for k in (1, 2)]
    print(f"\nright: baseline {right[0]}/{len(rows)}, teachd {right[1]}/{len(rows)}; "
          f"wrong: baseline {wrong[0]}, teachd {wrong[1]}")


if __name__ == "__main__":
    raise SystemExit(main())
