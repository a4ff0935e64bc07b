"""Loopback ports for the suite's servers that nothing else can take meanwhile.

The product's ``free_port`` (teachd/teach/process.py) takes a port from
outside the kernel's ephemeral range, where the kernel never hands one out
by itself (a sample app's port, let go between tests, was taken by some
connection meanwhile: "Address already in use", stop 60's CI). The suite
also holds a lock file for each port it took (``flock``, released when the
process ends, however it ends), so that another xdist worker, or another run
of the suite on the same machine, never takes the same one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import IO

from teachd.teach import process

LOCKS = Path(tempfile.gettempdir()) / "teachd-test-ports"
_held: list[IO[bytes]] = []  # the lock files of the ports this process took, open for its life


def _take(port: int) -> bool:
    LOCKS.mkdir(exist_ok=True)
    with contextlib.suppress(PermissionError):
        os.chmod(LOCKS, 0o1777)  # shared by whoever runs the suite here
    handle = open(LOCKS / f"{port}.lock", "ab")  # noqa: SIM115 - held open for the process's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    if not process.bindable(port):
        handle.close()
        return False
    _held.append(handle)
    return True


def free_port() -> int:
    """A loopback port outside the ephemeral range, free now, and this
    process's until it ends (nobody else in the suite takes it)."""
    return process.free_port(_take)
