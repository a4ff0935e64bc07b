"""Real desktop pieces for tests: Xvfb, xdotool as the person, the recorder
as a subprocess driven over its DevTools port."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from teachd.demo.xvfb import xvfb
from teachd.teach.process import TeachProcess, free_port

__all__ = ["Teach", "free_port", "screen_point", "xdo", "xvfb_display"]


xvfb_display = xvfb


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
