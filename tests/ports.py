"""Loopback ports for the suite's servers that nothing else can take meanwhile.

A port the kernel hands out for ``bind(("127.0.0.1", 0))`` comes from its
ephemeral range, and the kernel hands the same port out again as soon as it is
free: as the source port of any outgoing connection (a browser's, PostgreSQL's
clients'), or to another test's ``bind(0)``. Many tests keep one port for a
long time and let it go between uses (the sample app a skill was taught on is
started again on the same port by every test that replays it, since the
skill's scope names it). Between two uses, a connection from anywhere on the
machine may take it, and the next ``SampleApp(port=...)`` fails with
"Address already in use" (seen once in a fresh-clone CI, stop 60).

So the suite takes its ports from outside the ephemeral range, where the
kernel never hands one out by itself, and holds a lock file for each port it
took (``flock``, released when the process ends, however it ends), so another
xdist worker, or another run of the suite on the same machine, never takes
the same one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path
from typing import IO

LOCKS = Path(tempfile.gettempdir()) / "teachd-test-ports"
_held: list[IO[bytes]] = []  # the lock files of the ports this process took, open for its life

LOWEST = 10_000  # below: well-known services' ports (PostgreSQL's 5432, X's 6000 + n, ...)


def ephemeral_range(read: str | None = None) -> tuple[int, int]:
    """The kernel's ephemeral range (``ip_local_port_range``), or Linux's default."""
    try:
        text = read if read is not None else Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        low, high = (int(n) for n in text.split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def candidates(low: int, high: int) -> range:
    """The larger stretch of [LOWEST, 65535] outside the ephemeral range [low, high]."""
    below, above = range(LOWEST, max(LOWEST, low)), range(max(LOWEST, high + 1), 65536)
    return below if len(below) >= len(above) else above


def _lock(port: int) -> IO[bytes] | None:
    LOCKS.mkdir(exist_ok=True)
    with contextlib.suppress(PermissionError):
        os.chmod(LOCKS, 0o1777)  # shared by whoever runs the suite here
    handle = open(LOCKS / f"{port}.lock", "ab")  # noqa: SIM115 - held open for the process's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers that will bind it do
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port outside the ephemeral range, free now, and this
    process's until it ends (nobody else in the suite takes it)."""
    ports = candidates(*ephemeral_range())
    start = random.SystemRandom().randrange(len(ports))
    for i in range(len(ports)):
        port = ports[(start + i) % len(ports)]
        handle = _lock(port)
        if handle is None:
            continue
        if _bindable(port):
            _held.append(handle)
            return port
        handle.close()
    raise RuntimeError(f"no free loopback port in {ports.start}-{ports.stop - 1}")
