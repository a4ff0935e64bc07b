"""A desktop app that names nothing to accessibility, replayed by its
picture: Debian's xcalc (Athena widgets) on Xvfb with Openbox. The person
clicks its "7" key once; the replay finds that key again by the crop the
recorder took — after the window moved — and a second xcalc beside it is a
halt with neither display changed. Judged by each calculator's display."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from compiler.desktop import desktop_anchor
from compiler.plan import PlanStep, Procedure
from recorder.crops import grab_screen
from teachd.runner.gate import Gate
from teachd.runner.replay import Halt, Replayer
from tests.desktop import DesktopSession, until
from tests.test_desktop_replay import Approve, on_desk, page  # noqa: F401  (fixtures)

SEVEN = (67, 282)  # the "7" key in xcalc's window (its default layout), where the person clicks
DISPLAY_BOX = (10, 0, 235, 30)  # its display, in the window


def geometry(desk: DesktopSession, wid: str) -> dict[str, int]:
    shell = desk.xdo("getwindowgeometry", "--shell", wid).split()
    return {k: int(v) for k, v in (line.split("=", 1) for line in shell if "=" in line) if k in "XYWIDTHHEIGHT"}


def shot(desk: DesktopSession, wid: str, box: tuple[int, int, int, int] | None = None) -> Image.Image:
    g = geometry(desk, wid)
    img = grab_screen({"x": g["X"], "y": g["Y"], "w": g["WIDTH"], "h": g["HEIGHT"]})
    assert img is not None
    return img.crop(box) if box else img


def xcalcs(desk: DesktopSession) -> list[str]:
    return desk.xdo("search", "--onlyvisible", "--class", "^xcalc$").split()


@pytest.fixture
def xcalc(on_desk: DesktopSession, tmp_path: Path) -> Iterator[Any]:  # noqa: F811
    procs: list[subprocess.Popen[bytes]] = []

    def start(n: int = 1) -> list[str]:
        want = len(xcalcs(on_desk)) + n
        for i in range(n):
            procs.append(on_desk.start(["xcalc"], tmp_path / f"h{len(procs)}{i}"))
        return until(lambda: ids if len(ids := xcalcs(on_desk)) == want else None, 30, "xcalc shown")

    yield start
    for p in procs:
        p.kill()
        p.wait(10)


def demonstrated(desk: DesktopSession, wid: str) -> tuple[dict[str, Any], Image.Image]:
    """The person's click on "7" as the recorder keeps it: an 80×40 crop around
    the click, then the display it led to."""
    g = geometry(desk, wid)
    x, y = g["X"] + SEVEN[0], g["Y"] + SEVEN[1]
    crop = grab_screen({"x": x - 40, "y": y - 20, "w": 80, "h": 40})
    assert crop is not None
    buf = io.BytesIO()
    crop.save(buf, format="PNG")
    blank = shot(desk, wid, DISPLAY_BOX).tobytes()
    desk.xdo("mousemove", "--sync", str(x), str(y), "click", "1")
    shown = until(lambda: s if (s := shot(desk, wid, DISPLAY_BOX)).tobytes() != blank else None,
                  10, "the display changed")
    anchor = desktop_anchor(None, "Calculator", "xcalc xcalc", {"x": x, "y": y}, buf.getvalue())
    return anchor, shown


def plan(anchor: dict[str, Any]) -> Procedure:
    step = PlanStep(1, "os_click", None, window="Calculator", desktop="d1", describe=anchor["describe"])
    return Procedure(start_url="about:blank", steps=[step], anchors={}, scope=[], success={},
                     desktop={"d1": anchor}, apps=["xcalc xcalc"])


def replay(page: tuple[Any, Any], proc: Procedure) -> Replayer:  # noqa: F811
    context, p = page
    r = Replayer(context, p, proc, Gate(Approve()), {}, lambda _n: "", step_timeout=5)
    r.run()
    return r


def test_a_key_found_by_its_picture_is_clicked_after_the_window_moved(
        on_desk: DesktopSession, page: tuple[Any, Any], xcalc: Any) -> None:  # noqa: F811
    [wid] = xcalc()
    anchor, seven_shown = demonstrated(on_desk, wid)
    assert "widget" not in anchor and anchor["picture"]["png"]
    fresh = xcalc()  # a new calculator, elsewhere on the screen
    on_desk.xdo("windowkill", wid)
    until(lambda: len(xcalcs(on_desk)) == 1 or None, 10, "one calculator left")
    [new] = [w for w in fresh if w != wid]
    on_desk.xdo("windowmove", "--sync", new, "300", "150")
    r = replay(page, plan(anchor))
    assert r.results[0].via == ["picture", "picture"]
    until(lambda: shot(on_desk, new, DISPLAY_BOX).tobytes() == seven_shown.tobytes() or None, 10,
          "the new calculator shows 7")


def test_two_calculators_are_a_halt_and_neither_display_changes(
        on_desk: DesktopSession, page: tuple[Any, Any], xcalc: Any) -> None:  # noqa: F811
    [wid] = xcalc()
    anchor, _shown = demonstrated(on_desk, wid)
    on_desk.xdo("windowkill", wid)
    until(lambda: not xcalcs(on_desk) or None, 10, "the first calculator gone")
    ids = xcalc(2)
    before = [shot(on_desk, w, DISPLAY_BOX).tobytes() for w in ids]
    with pytest.raises(Halt, match=r"step 1: .*(ambiguous|two places)"):
        replay(page, plan(anchor))
    assert [shot(on_desk, w, DISPLAY_BOX).tobytes() for w in ids] == before  # 0 wrong clicks
