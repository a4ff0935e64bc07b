"""Desktop replay on a Qt 5 editor nobody here wrote (Debian's FeatherPad):
taught once through the recorder — a note of two lines, Ctrl+S, a file
name over the one Qt's own Save dialog proposes, its Save button — then replayed
with other values, moved and resized, dark with a bigger font, and at
twice the scale (``QT_SCALE_FACTOR=2``:
Qt reports every place in its logical pixels, half the X server's).
Judged by the file FeatherPad saves, and by the success check, which reads
the note back from FeatherPad's own text field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.plan import Procedure
from teachd.runner.gate import Gate
from teachd.runner.replay import Replayer
from tests.desktop import DARK_QSS, FEATHERPAD, AllowAll, DesktopSession, save_a_note, taught_on_desk, until

NOTE = "Call the bank\non Monday"


@pytest.fixture(scope="module")
def taught(desk: DesktopSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Procedure]:
    tmp = tmp_path_factory.mktemp("qt")
    with taught_on_desk(tmp, lambda env, url, pw: save_a_note(desk, env, url, pw, tmp, NOTE, FEATHERPAD,
                                                                      save="Save")[1]) \
            as taught:
        yield taught[2]


def names(proc: Procedure) -> tuple[str, str]:
    """The note's parameter and the file name's, by what the person typed."""
    by_default = {str(p["default"]): name for name, p in proc.parameters.items()}
    return by_default[NOTE], by_default["notes.txt"]


def test_the_qt_editors_steps_are_taught_against_their_own_windows(taught: Procedure) -> None:
    """The click and typing in the Save dialog are the dialog's, its name
    field a parameter, the name typed read before the dialog closed on the
    click; the saved title's pattern holds no folder and no file name of the
    person's (another run saves another name elsewhere)."""
    note, file_name = names(taught)
    typed = {s.param: s.window for s in taught.steps if s.action == "os_type"}
    assert typed == {note: "*Untitled", file_name: "Save as..."}, typed
    assert note == "feather_pad_text"  # named after the app (FeatherPad), not its document's title
    # the click on the dialog's Save button is the dialog's, though the dialog closed on it
    save = taught.steps[-1]
    assert (save.action, save.window, save.describe) == (
        "os_click", "Save as...", "the **Save** button in the *FeatherPad* window"), save
    saved = save.expect["window"]
    assert saved["title_pattern"] == "*/*" and saved["shows"] == [f"{{{{{file_name}}}}}"], saved
    assert "person" not in json.dumps(taught.desktop)  # no folder of the person's in the anchors
    (end,) = taught.success["desktop"]
    assert [(t["role"], t["text"]) for t in end["shows"]] == [("text", f"{{{{{note}}}}}")], end


@pytest.mark.parametrize(("condition", "at", "env"), [
    ("another note and name", (80, 80), {}),
    ("moved and resized", (420, 200), {}),
    ("dark theme, bigger font", (80, 80), {"QT_FONT_DPI": "134"}),
    ("twice the scale", (0, 0), {"QT_SCALE_FACTOR": "2"}),
])
def test_a_qt_editor_saves_this_runs_note_under_this_runs_name(
        desk: DesktopSession, taught: Procedure, on_desk: tuple[Any, Any], tmp_path: Path,
        condition: str, at: tuple[int, int], env: dict[str, str]) -> None:
    note, file_name = names(taught)
    home = tmp_path / "home"
    values = {note: "Water the plants\nand feed the cat", file_name: "todo.txt"}
    dark = condition.startswith("dark")
    (tmp_path / "dark.qss").write_text(DARK_QSS, encoding="utf-8")
    args = ("-stylesheet", str(tmp_path / "dark.qss")) if dark else ()
    with desk.editor(FEATHERPAD, home, tmp_path, args, **env) as app:
        desk.place("Untitled", app.pid, *at, size=(560, 420) if condition.startswith("moved") else None)
        context, page = on_desk
        r = Replayer(context, page, taught, Gate(AllowAll()), values, lambda _n: "", step_timeout=10)
        r.run()
        until(lambda: (home / "todo.txt").is_file() or None, 10, "todo.txt saved by FeatherPad")
    assert (home / "todo.txt").read_text(encoding="utf-8").rstrip("\n") == values[note]
    assert [s.status for s in r.results] == ["ok"] * len(taught.steps)
    assert r.verified and not r.notes, (condition, r.notes)

