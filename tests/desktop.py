"""Real desktop pieces for tests: Xvfb, xdotool as the person, the recorder
as a subprocess driven over its DevTools port."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


class Teach:
    """``teachd teach`` in a subprocess of its own session (so kill -9 takes
    Chromium too), ready once it says it is recording."""

    def __init__(self, env: dict[str, str], name: str, url: str, *flags: str,
                 cdp_port: int | None = None) -> None:
        self.cdp_port = cdp_port or free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "teachd", "teach", name, "--url", url, "--cdp-port",
             str(self.cdp_port), "--json", *flags],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
        self.err_lines: list[str] = []
        deadline = time.monotonic() + 60
        while True:
            line = self.proc.stderr.readline()
            if line:
                self.err_lines.append(line)
            if "recording" in line:
                self.recording_dir = Path(line.split(" into ", 1)[1].split(";")[0].split(". ")[0])
                return
            if not line and self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("teach did not start: " + "".join(self.err_lines)
                                   + self.proc.stderr.read())

    def finish(self, timeout: float = 90) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "".join(self.err_lines) + err

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


def screen_point(page: Any, selector: str, frame: Any = None) -> tuple[int, int]:
    """Where an element's centre is on the X screen (headed Chromium)."""
    el = (frame or page).locator(selector)
    el.scroll_into_view_if_needed()
    box = el.bounding_box()  # relative to the main frame's viewport
    chrome = page.evaluate("() => ({x: window.screenX + (window.outerWidth - window.innerWidth),"
                           " y: window.screenY + (window.outerHeight - window.innerHeight)})")
    return int(chrome["x"] + box["x"] + box["width"] / 2), int(chrome["y"] + box["y"] + box["height"] / 2)
