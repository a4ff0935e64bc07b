"""Desktop steps replayed for real: "type a line and save it as notes.txt"
in Debian's Mousepad (GTK, with an accessibility tree) on Xvfb, judged by the
file on disk — on the unchanged desktop and on drifted ones (the window
moved and resized, another theme and font size, another app's window on
top), and a halt with nothing written where two windows could be meant."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.desktop import desktop_anchor
from compiler.plan import PlanStep, Procedure
from teachd.runner.gate import Answer, Gate, Request
from teachd.runner.replay import Halt, Replayer
from tests.desktop import DesktopSession, until

NOTE = "Call the bank on Monday"
EDITOR = {"role": "text", "name": "", "path": [["frame", "Untitled 1 - Mousepad"], ["page tab list", ""]],
          "app": "mousepad", "box": {"x": 1, "y": 52, "w": 638, "h": 425}}
NAME_FIELD = {"role": "text", "name": "", "path": [["file chooser", "Save As"],
                                                    ["file chooser", "File Chooser Widget"]], "app": "mousepad"}


class Approve:
    def __init__(self) -> None:
        self.asked: list[Request] = []

    def ask(self, request: Request) -> Answer:
        self.asked.append(request)
        return Answer(request.id, True)


def save_a_note() -> Procedure:
    """The task as the compiler writes it from the recording
    (tests/test_desktop_recording.py records the same demonstration): the
    Save As dialog opens in the folder Mousepad was started in."""
    d1 = desktop_anchor(EDITOR, "Untitled 1 - Mousepad", "mousepad mousepad", {"x": 320, "y": 264}, None)
    d2 = desktop_anchor(NAME_FIELD, "Save As", "mousepad mousepad", None, None)
    steps = [
        PlanStep(1, "os_click", None, window="Untitled 1 - Mousepad", desktop="d1", describe=d1["describe"]),
        PlanStep(2, "os_type", None, window="Untitled 1 - Mousepad", desktop="d1", describe=d1["describe"],
                 param="note"),
        PlanStep(3, "os_key", None, window="*Untitled 1 - Mousepad", key="s", modifiers=["ctrl"]),
        PlanStep(4, "os_type", None, window="Save As", desktop="d2", describe=d2["describe"], param="file"),
        PlanStep(5, "os_key", None, window="Save As", key="enter"),
    ]
    return Procedure(start_url="about:blank", steps=steps, anchors={}, scope=[], success={},
                     parameters={"note": {"default": NOTE}, "file": {"default": "notes.txt"}},
                     desktop={"d1": d1, "d2": d2}, apps=["mousepad mousepad"])


@pytest.fixture
def on_desk(desk: DesktopSession, monkeypatch: pytest.MonkeyPatch) -> DesktopSession:
    """The replay's process on the desktop session, as `teachd run` on a desktop is."""
    monkeypatch.setenv("DISPLAY", desk.display)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desk.env["DBUS_SESSION_BUS_ADDRESS"])
    return desk


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Any]]:
    context = browser.new_context()
    yield context, context.new_page()
    context.close()


def replay(page: tuple[Any, Any], proc: Procedure, approver: Approve | None = None) -> Replayer:
    context, p = page
    r = Replayer(context, p, proc, Gate(approver or Approve()), {}, lambda _n: "", step_timeout=10)
    r.run()
    return r


def saved(folder: Path) -> str | None:
    path = folder / "notes.txt"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def variant_env(variant: str) -> dict[str, str]:
    return {"GTK_THEME": "Adwaita:dark", "GDK_DPI_SCALE": "1.4"} if variant == "theme_and_font" else {}


@pytest.mark.parametrize("variant", ["unchanged", "moved_and_resized", "theme_and_font", "another_app_on_top"])
def test_the_note_is_typed_and_saved_where_the_demonstration_saved_it(
        on_desk: DesktopSession, page: tuple[Any, Any], tmp_path: Path, variant: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    approver = Approve()
    with on_desk.mousepad(tmp_path / "person", out, **variant_env(variant)) as mousepad:
        cover = None
        if variant == "moved_and_resized":
            on_desk.place("Untitled 1 - Mousepad", mousepad.pid, 400, 250)
            wid = on_desk.xdo("search", "--pid", str(mousepad.pid), "--name", "Mousepad").split()[-1]
            on_desk.xdo("windowsize", "--sync", wid, "820", "560")
        if variant == "another_app_on_top":
            cover = on_desk.start(["zenity", "--info", "--text", "A reminder over the editor", "--width", "600",
                                   "--height", "400"], tmp_path / "other")
            until(lambda: on_desk.find(cover.pid, "push button"), 30, "the other app's window")
            on_desk.place("Information", cover.pid, 20, 40)
        try:
            r = replay(page, save_a_note(), approver)
        finally:
            if cover is not None:
                cover.kill()
        until(lambda: saved(out) is not None, 20, "notes.txt on disk")
    assert saved(out) == NOTE  # the file itself, as the app saved it (Mousepad adds no newline)
    assert [s.status for s in r.results] == ["ok"] * 5
    assert r.results[0].via[-1] in ("pointer", "click", "press", "activate")
    assert len(approver.asked) == 0  # no secret, no scope question: the gate had nothing to ask


def test_two_windows_that_both_fit_halt_before_anything_is_typed(
        on_desk: DesktopSession, page: tuple[Any, Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with on_desk.mousepad(tmp_path / "person", out) as mousepad:
        on_desk.start(["mousepad", "--opening-mode=window"], tmp_path / "person", out)  # its second window
        until(lambda: len(editors(on_desk, mousepad.pid)) == 2 or None, 30, "two Mousepad windows")
        with pytest.raises(Halt, match=r"step 1: the text field in the \*Mousepad\* window is ambiguous"):
            replay(page, save_a_note())
        texts = [on_desk.desktop.text(w) for w in editors(on_desk, mousepad.pid)]
    assert texts == ["", ""] and saved(out) is None  # 0 wrong actions: nothing typed, nothing saved


def editors(desk: DesktopSession, pid: int) -> list[Any]:
    return [w for node, title, wpid, app in desk.desktop.windows(pid)
            for w in desk.desktop.walk(node, title, wpid, app) if w.role == "text"]
