"""Desktop replay on a calculator nobody here wrote (Debian's galculator,
GTK 3), taught once through the recorder at the usual scale: "7 + 2 =".
Judged by the calculator's own display.

At twice the scale (``GDK_SCALE=2``) GTK reports every place in its own
logical pixels, half the X server's: teachd reads the app's scale and
clicks the right keys. Where AT-SPI's places are not the screen's (a scale
teachd could not read; places off by a key) AT-SPI still agrees with
itself, so two other sources decide: the X server's size of the window,
and the demonstrated picture of the key found elsewhere in it. Either
stops the run before any key is pressed — never the wrong keys and a
success.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.plan import Procedure
from teachd.runner.desktop import DesktopHalt
from teachd.runner.gate import Gate
from teachd.runner.replay import Halt, Replayer
from tests.desktop import AllowAll, DesktopSession, calc_shows, calculator, taught_on_desk, teach_a_sum, until


@pytest.fixture(scope="module")
def taught(desk: DesktopSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Procedure]:
    """"7 + 2 =" taught through the recorder: a page first (every recording
    begins in the browser; it stays up for the replays' first step), then
    the calculator's keys clicked by the person."""
    tmp = tmp_path_factory.mktemp("calc")
    with taught_on_desk(tmp, lambda env, url, pw: teach_a_sum(desk, env, url, pw, tmp / "person")[1]) as taught:
        yield taught[2]


def replay(page: tuple[Any, Any], proc: Procedure) -> Replayer:
    context, p = page
    r = Replayer(context, p, proc, Gate(AllowAll()), {}, lambda _n: "", step_timeout=10)
    r.run()
    return r


@pytest.mark.parametrize(("at", "env"), [
    ((150, 120), {}),  # as taught
    ((600, 300), {}),  # moved
    ((150, 120), {"GTK_THEME": "Adwaita:dark", "GDK_DPI_SCALE": "1.4"}),  # dark, bigger text
    ((100, 40), {"GDK_SCALE": "2"}),  # twice the scale
], ids=["unchanged", "moved", "dark-theme-bigger-font", "twice-the-scale"])
def test_the_taught_keys_are_clicked_moved_themed_and_at_twice_the_scale(
        desk: DesktopSession, taught: Procedure, on_desk: tuple[Any, Any], tmp_path: Path,
        at: tuple[int, int], env: dict[str, str]) -> None:
    clicks = [s for s in taught.steps if s.action == "os_click"]
    assert len(clicks) == 4
    with calculator(desk, tmp_path / "calc", at, **env) as calc:
        r = replay(on_desk, taught)
        until(lambda: calc_shows(desk, calc.pid) == "9", 10, f"9 on the display (it shows {calc_shows(desk, calc.pid)!r})")
    assert [s.status for s in r.results] == ["ok"] * len(taught.steps)
    assert all(s.via[-1] == "pointer" for s in r.results if s.action == "os_click"), [s.via for s in r.results]
    # the success check read the calculator's own display: a success, proven
    assert r.verified and not r.notes, r.notes


def test_the_calculators_display_at_the_end_of_the_demonstration_is_the_success_check(taught: Procedure) -> None:
    """Its display went from 0 to 9 while the person pressed the keys: the
    one text of the window that changed, kept as what a run must show."""
    (end,) = taught.success["desktop"]
    assert "galculator" in end["class"]
    assert [(t["role"], t["text"]) for t in end["shows"]] == [("text", "9")], end


def test_keys_that_all_land_but_leave_another_result_are_not_a_success(
        desk: DesktopSession, taught: Procedure, on_desk: tuple[Any, Any], tmp_path: Path) -> None:
    """A calculator with a 1 already typed: every key is found and pressed,
    and the display ends on 19, not the demonstration's 9. Unverified,
    saying what the display shows, never a success."""
    with calculator(desk, tmp_path / "calc") as calc:
        desk.click(desk.find(calc.pid, "toggle button", "1"))
        until(lambda: calc_shows(desk, calc.pid) == "1", 10, "1 on the display")
        r = replay(on_desk, taught)
        assert calc_shows(desk, calc.pid) == "19"
    assert [s.status for s in r.results] == ["ok"] * len(taught.steps)
    assert not r.verified
    assert r.notes == ["the Galculator text field shows '19' where the demonstration ended on '9'"], r.notes


def test_places_the_x_server_does_not_bear_out_stop_the_run_before_any_key(
        desk: DesktopSession, taught: Procedure, on_desk: tuple[Any, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The app at twice the scale, teachd unable to read it: every place
    AT-SPI gives is half where the X server draws it, and AT-SPI agrees
    with itself (the point it gives lies on its own widget). The X server's
    size of the window is the second source."""
    monkeypatch.setattr("recorder.a11y.app_scale", lambda _pid: 1.0)
    # at the screen's corner, half of each place is still in the window: on another key
    said = stopped_before_any_key(desk, on_desk, taught, tmp_path, (0, 0), GDK_SCALE="2")
    assert said.startswith("step 2: not clicking toggle button '7'") and "the X server's" in said, said


def test_a_key_whose_picture_shows_elsewhere_stops_the_run_before_any_key(
        desk: DesktopSession, taught: Procedure, on_desk: tuple[Any, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """AT-SPI off by one key to the right (every place, the window's too: its
    size agrees with the X server's): the point it gives is its own widget,
    and the X server's window there is the calculator's. The demonstrated
    picture of the 7, found one key to the left, is the source that says no."""
    from recorder.a11y import Desktop

    real = Desktop._box

    def shifted(self: Desktop, node: Any, pid: int | None = None) -> tuple[int, int, int, int] | None:
        box = real(self, node, pid)
        return None if box is None else (box[0] + 65, box[1], box[2], box[3])

    monkeypatch.setattr(Desktop, "_box", shifted)
    said = stopped_before_any_key(desk, on_desk, taught, tmp_path, (150, 120))
    assert said.startswith("step 2: not clicking toggle button '7'") and "demonstrated picture" in said, said


def stopped_before_any_key(desk: DesktopSession, page: tuple[Any, Any], taught: Procedure, folder: Path,
                           at: tuple[int, int], **env: str) -> str:
    """The replay on a calculator placed ``at``: it must stop with the
    display as it was (no key pressed); what it said."""
    with calculator(desk, folder / "calc", at, **env) as calc:
        before = calc_shows(desk, calc.pid)
        with pytest.raises((Halt, DesktopHalt)) as stopped:
            replay(page, taught)
        assert calc_shows(desk, calc.pid) == before  # no key pressed
    return str(stopped.value)
