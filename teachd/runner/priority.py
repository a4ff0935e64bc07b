"""A run's browser yields the CPU to the people and agents asking things of
teachd: every Chromium a run, a health check or an agent's session starts
runs at a lower CPU priority (``nice``) than the process that asked.

On a machine of their own (a worker's) nothing else wants the CPU and the
browser runs as fast as before; beside a daemon, a click, a listing or an
agent's call is answered before a page's scripts. Measured with the soak
(docs/benchmarks.md, "A fifth time"): an agent's ``computer_act`` took as
long as before (p50 1.6–1.9 s); the requests' p99 did not fall by this
alone — what it gives is an order, not speed.

Chromium starts many processes and threads; each inherits the priority of
the one that made it. So the browser is started under ``nice`` itself — a
two-line launcher in a folder of this process's own, since Playwright
starts the program it is given — and all it makes runs at that priority.
Run as root (a worker in a container), Chromium would raise its own
threads' priority back (to -8): there it is started without the one
capability that allows it (``CAP_SYS_NICE``, dropped with ``setpriv``),
which a browser has no other use for. The recorder's browser, which a
person uses, is not started this way.
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import tempfile
import threading
from pathlib import Path

BROWSER_NICE = 10  # the nice value of a run's browser: a tenth of the CPU weight of the daemon's threads
CAP_SETPCAP, CAP_SYS_NICE = 8, 23  # capability numbers (linux/capability.h)

_launchers: dict[tuple[str, int], str] = {}
_lock = threading.Lock()


def _capabilities() -> int:
    """This process's effective capabilities (``CapEff``, a bit each); 0 where not Linux."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def _command(exe: str, nice: int) -> list[str] | None:
    """``exe`` under ``nice``; where this process may raise priorities
    (``CAP_SYS_NICE``), also without that capability — as root Chromium
    would raise its own threads back. None when neither can be done."""
    runner = shutil.which("nice")
    if nice <= 0 or os.name != "posix" or runner is None:
        return None
    command = [runner, "-n", str(nice), exe]
    held = _capabilities()
    if not held >> CAP_SYS_NICE & 1:
        return command  # cannot raise a priority: nice holds
    setpriv = shutil.which("setpriv")
    if setpriv is None or not held >> CAP_SETPCAP & 1:
        return command  # cannot drop it (a container without CAP_SETPCAP): nice, which Chromium may undo
    return [setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", *command]


def yielding(exe: str, nice: int = BROWSER_NICE) -> str:
    """The program to start for ``exe`` so that it runs at ``nice``: ``exe``
    itself where that cannot be done (no ``nice``; a temporary folder whose
    programs may not run, ``noexec``). Worked out once a process (a browser
    is opened for every run), and again should a cleaner of /tmp remove it."""
    with _lock:
        known = _launchers.get((exe, nice))
        if known is None or not os.access(known, os.X_OK):
            known = _launchers[(exe, nice)] = _launcher(exe, nice)
        return known


def _launcher(exe: str, nice: int) -> str:
    command = _command(exe, nice)
    if command is None:
        return exe
    folder = tempfile.mkdtemp(prefix="teachd-browser-")  # 0700: only this user's
    if os.statvfs(folder).f_flag & os.ST_NOEXEC:
        shutil.rmtree(folder, True)
        return exe
    atexit.register(shutil.rmtree, folder, True)
    launcher = Path(folder) / "chromium"
    launcher.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n', encoding="utf-8")
    launcher.chmod(0o700)
    return str(launcher)
