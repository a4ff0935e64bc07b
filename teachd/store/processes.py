"""Which process runs a run, told so that another process can later prove it
gone: ``host:boot=BOOT_ID:pidns=INODE:pid:start`` (``orphans.py`` says why
each part is there). The run store writes it; ``end_orphans`` reads it."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from teachd.core.pids import alive

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Runner:
    """Which process runs a run, as recorded (``Runner.parse``)."""

    host: str
    boot: str  # /proc/sys/kernel/random/boot_id; "" when it could not be read
    pidns: str  # the inode of /proc/self/ns/pid; "" when it could not be read
    pid: int
    start: str  # field 22 of /proc/PID/stat: clock ticks since boot

    def __str__(self) -> str:
        return f"{self.host}:boot={self.boot}:pidns={self.pidns}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, text: str) -> Runner | None:
        """The recorded runner, or None for what names no machine identity
        (the older ``host:pid:start``, or anything else)."""
        parts = text.rsplit(":", 4)
        if len(parts) != 5 or not parts[1].startswith("boot=") or not parts[2].startswith("pidns="):
            return None
        if not parts[3].isdigit():
            return None
        return cls(parts[0], parts[1].removeprefix("boot="), parts[2].removeprefix("pidns="), int(parts[3]),
                   parts[4])

    def same_machine(self, other: Runner) -> bool:
        """Recorded by this boot of this machine, in this PID namespace: its
        pid means here what it meant there (an unknown identity proves nothing)."""
        return bool(self.boot and self.pidns) and (self.boot, self.pidns) == (other.boot, other.pidns)


def this_runner() -> Runner:
    pid = os.getpid()
    return Runner(socket.gethostname(), _boot_id(), _pid_namespace(), pid, _started(pid))


def runner_id() -> str:
    """What a run records as its runner: ``host:boot=…:pidns=…:pid:start``."""
    return str(this_runner())


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:  # "pid:[4026531836]": the namespace's inode
        return os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        return ""


def _started(pid: int) -> str:
    try:  # field 22 of /proc/PID/stat, after the command name in parentheses
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError):
        return "0"


def _running(runner: Runner) -> bool:
    """The process a run recorded still runs (not another that reused its pid)."""
    if not alive(runner.pid):
        return False
    return runner.start == "0" or _started(runner.pid) in (runner.start, "0")


def orphaned(recorded: str, here: Runner | None = None) -> bool:
    """Whether a run recorded as run by ``recorded`` is provably this
    machine's (same boot, same PID namespace) and its process is gone."""
    here = here or this_runner()
    runner = Runner.parse(recorded)
    return runner is not None and runner.same_machine(here) and not _running(runner)
