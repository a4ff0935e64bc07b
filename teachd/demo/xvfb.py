"""A virtual X display for headless machines (Debian's Xvfb): the demo
starts one when there is no desktop, the tests start one for real windows."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
from collections.abc import Iterator

from teachd.errors import Unavailable


@contextlib.contextmanager
def xvfb(size: str = "1400x1000x24", timeout: float = 10.0) -> Iterator[str]:
    """Start Xvfb on a display number it picks itself (``-displayfd``: no
    scanning of /tmp, no race with another Xvfb); yields ``:N``; stops it after."""
    if not shutil.which("Xvfb"):
        raise Unavailable("Xvfb is missing: install Debian's xvfb (`make demo` and `make test` do)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", size, "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], timeout)
        number = os.read(read_fd, 32).decode().strip() if ready else ""
    finally:
        os.close(read_fd)
    if not number.isdigit():
        proc.kill()
        proc.wait(10)
        raise Unavailable("Xvfb did not start")
    try:
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)
