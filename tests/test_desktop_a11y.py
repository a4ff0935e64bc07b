"""The desktop's accessibility layer read for real: Debian's Mousepad (a GTK
editor) on Xvfb with an AT-SPI bus, xdotool as the person."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recorder.a11y import Widget
from tests.desktop import DesktopSession, until


@pytest.fixture
def mousepad(desk: DesktopSession, tmp_path: Path) -> Iterator[Any]:
    with desk.mousepad(tmp_path / "home") as proc:
        yield proc


def find(desk: DesktopSession, pid: int, role: str, name: str) -> Widget:
    if (widget := desk.find(pid, role, name)) is None:
        raise AssertionError(f"no {role} {name!r} in {pid}")
    return widget


def test_the_widget_under_a_point_is_named_with_its_window_and_path(desk: DesktopSession, mousepad: Any) -> None:
    editor = find(desk, mousepad.pid, "text", "")
    assert editor.centre is not None and "editable" in editor.states
    under = desk.desktop.at(*editor.centre)
    assert under is not None and (under.role, under.app, under.pid) == ("text", "mousepad", mousepad.pid)
    assert under.path[0] == ("frame", "Untitled 1 - Mousepad") and under.window == "Untitled 1 - Mousepad"
    assert all(name for _role, name in under.path[1:]) or under.path[1:] == (("page tab list", ""),)
    menu = find(desk, mousepad.pid, "menu", "File")  # GTK pads its items' names: read as a person reads them
    assert menu.centre is not None
    at_menu = desk.desktop.at(*menu.centre)
    assert at_menu is not None and (at_menu.role, at_menu.name) == ("menu", "File") and "click" in at_menu.actions
    evidence = at_menu.as_evidence()
    assert evidence["path"][0] == ["frame", "Untitled 1 - Mousepad"] and "node" not in evidence


def test_typed_text_reads_back_from_the_focused_widget(desk: DesktopSession, mousepad: Any) -> None:
    editor = find(desk, mousepad.pid, "text", "")
    assert editor.centre is not None
    desk.xdo("mousemove", str(editor.centre[0]), str(editor.centre[1]), "click", "1")
    desk.xdo("type", "--delay", "10", "notes for teachd")
    focused = until(lambda: desk.desktop.focused(mousepad.pid), 10, "the editor focused")
    assert focused.role == "text"
    until(lambda: desk.desktop.text(focused) == "notes for teachd", 10, "the typed line in the editor")
    assert desk.desktop.text(find(desk, mousepad.pid, "menu", "File")) is None  # not a text widget


def test_a_widgets_own_action_opens_its_menu(desk: DesktopSession, mousepad: Any) -> None:
    menu = find(desk, mousepad.pid, "menu", "File")
    with pytest.raises(AssertionError):
        find(desk, mousepad.pid, "menu item", "Save As...")  # not showing until the menu opens
    assert desk.desktop.act(menu, "click")
    item = until(lambda: desk.find(mousepad.pid, "menu item", "Save As..."), 10, "the File menu open")
    assert item.box is not None


def test_without_an_accessibility_bus_it_says_so_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={tmp_path}/no-bus"
    code = ("from recorder.a11y import open_desktop, NoAccessibility\n"
            "try:\n    open_desktop()\nexcept NoAccessibility as e:\n    print('NO:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.startswith("NO: no accessibility bus"), (out.stdout, out.stderr[-500:])


def test_an_apps_scale_is_read_from_its_toolkits_own_settings_and_only_those() -> None:
    """GDK_SCALE and QT_SCALE_FACTOR (and one screen's QT_SCREEN_SCALE_FACTORS)
    move places; GDK_DPI_SCALE only text; nonsense counts as 1."""
    from recorder.a11y import scale_of

    assert scale_of({}) == 1.0 and scale_of({"GDK_SCALE": "2"}) == 2.0
    assert scale_of({"QT_SCALE_FACTOR": "1.5"}) == 1.5 and scale_of({"QT_SCREEN_SCALE_FACTORS": "eDP-1=2"}) == 2.0
    assert scale_of({"QT_SCREEN_SCALE_FACTORS": "A=2;B=1"}) == 1.0  # which screen is not known
    assert scale_of({"GDK_DPI_SCALE": "1.4"}) == 1.0
    assert scale_of({"GDK_SCALE": "lots", "QT_SCALE_FACTOR": "1000"}) == 1.0
