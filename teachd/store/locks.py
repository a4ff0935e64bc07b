"""Locks that die with their holder: an ``flock`` on a file in TEACHD_HOME.
The kernel lets go when the process ends, however it ends, so no stale pid
file ever blocks the next one. Used for "one recording per home" and "one
scheduler per deployment" (on SQLite; PostgreSQL has its own, see db.py)."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path


class FileLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def describe(self, info: dict[str, object]) -> None:
        """What the holder is (read by ``holder()`` in other processes)."""
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(info).encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def holder(self) -> dict[str, object] | None:
        """What the holder wrote; None when nothing holds the lock."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            data = os.read(fd, 4096)
            os.close(fd)
            try:
                info = json.loads(data or b"{}")
            except ValueError:
                info = {}
            return info if isinstance(info, dict) else {}
        os.close(fd)
        return None
