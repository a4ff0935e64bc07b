"""A virtual X display for headless machines (Debian's Xvfb): the demo
starts one when there is no desktop, the tests start one for real windows."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from teachd.errors import Unavailable


@contextlib.contextmanager
def xvfb(size: str = "1400x1000x24") -> Iterator[str]:
    """Start Xvfb on a free display number; yields ``:N``; stops it after."""
    if not shutil.which("Xvfb"):
        raise Unavailable("Xvfb is missing: install Debian's xvfb (`make demo` and `make test` do)")
    n = next(i for i in range(90, 200) if not Path(f"/tmp/.X11-unix/X{i}").exists()
             and not Path(f"/tmp/.X{i}-lock").exists())
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", size, "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise Unavailable("Xvfb did not start")
        time.sleep(0.05)
    try:
        yield f":{n}"
    finally:
        proc.terminate()
        proc.wait(10)
