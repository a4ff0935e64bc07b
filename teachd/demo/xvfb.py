"""A virtual X display for headless machines (Debian's Xvfb): the demo
starts one when there is no desktop, the tests start one for real windows."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator

from teachd.core.errors import Unavailable


@contextlib.contextmanager
def xvfb(size: str = "1400x1000x24", timeout: float = 10.0) -> Iterator[str]:
    """Start Xvfb on a display number it picks itself (``-displayfd``: no
    scanning of /tmp, no race with another Xvfb, no polling for a socket);
    yields ``:N``; stops it after."""
    if not shutil.which("Xvfb"):
        raise Unavailable("Xvfb is missing: install Debian's xvfb (`make demo` and `make test` do)")
    read_fd, write_fd = os.pipe()
    # -noreset: an X server resets when its last client leaves; a browser
    # closing between two tests must not take the display down with it.
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-noreset", "-screen", "0", size,
                             "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        said = _read_all(read_fd, timeout)
    finally:
        os.close(read_fd)
    if not said.isdigit() or proc.poll() is not None:
        proc.kill()
        proc.wait(10)
        raise Unavailable("Xvfb did not start")
    try:
        yield f":{said}"
    finally:
        proc.terminate()
        proc.wait(10)


def _read_all(fd: int, timeout: float) -> str:
    """Everything Xvfb writes to the displayfd, up to its close. It writes the
    number and the newline separately: closing our end after the first read
    would make the second write fail, and Xvfb exit."""
    deadline = time.monotonic() + timeout
    data = b""
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break  # Xvfb closed it: the number is complete
        data += chunk
    return data.decode(errors="replace").strip()
