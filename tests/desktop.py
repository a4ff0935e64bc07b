"""Real desktop pieces for tests: Xvfb, xdotool as the person, the recorder
as a subprocess driven over its DevTools port."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from teachd.teachproc import TeachProcess, free_port

__all__ = ["Teach", "free_port", "screen_point", "xdo", "xvfb_display"]


@contextlib.contextmanager
def xvfb_display() -> Iterator[str]:
    if not shutil.which("Xvfb"):
        raise RuntimeError("Xvfb is missing: `make test` installs Debian's xvfb")
    for n in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            break
    display = f":{n}"
    proc = subprocess.Popen(["Xvfb", display, "-screen", "0", "1400x1000x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("Xvfb did not start")
        time.sleep(0.05)
    try:
        yield display
    finally:
        proc.terminate()
        proc.wait(10)


def xdo(display: str, *args: str) -> str:
    out = subprocess.run(["xdotool", *args], env={**os.environ, "DISPLAY": display},
                         capture_output=True, text=True, timeout=30)
    return out.stdout


Teach = TeachProcess


def screen_point(page: Any, selector: str, frame: Any = None) -> tuple[int, int]:
    """Where an element's centre is on the X screen (headed Chromium)."""
    el = (frame or page).locator(selector)
    el.scroll_into_view_if_needed()
    box = el.bounding_box()  # relative to the main frame's viewport
    chrome = page.evaluate("() => ({x: window.screenX + (window.outerWidth - window.innerWidth),"
                           " y: window.screenY + (window.outerHeight - window.innerHeight)})")
    return int(chrome["x"] + box["x"] + box["width"] / 2), int(chrome["y"] + box["y"] + box["height"] / 2)
