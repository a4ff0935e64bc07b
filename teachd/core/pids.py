"""Whether a process still runs, by its pid: the daemon that ``daemon.json``
names, the process a run records as running it."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """A process with this id runs (one of another user counts too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
