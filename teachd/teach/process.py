"""``teachd teach`` as a child process, ready once it says it is recording:
how the demo (and the tests) play the person over the DevTools port."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from teachd.core.errors import Failed

LOWEST_PORT = 10_000  # below: well-known services' ports (PostgreSQL's 5432, X's 6000 + n, ...)
# the Fetch standard's "bad ports" from LOWEST_PORT up: a browser refuses to load a page there
# (ERR_UNSAFE_PORT), and the sample app's pages are loaded by one
BAD_PORTS = frozenset({10080})


def ephemeral_range(read: str | None = None) -> tuple[int, int]:
    """The kernel's ephemeral port range (``ip_local_port_range``), or Linux's default."""
    try:
        text = read if read is not None else Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        low, high = (int(n) for n in text.split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def port_candidates(low: int, high: int) -> range:
    """The larger stretch of [LOWEST_PORT, 65535] outside the ephemeral range [low, high]."""
    below, above = range(LOWEST_PORT, max(LOWEST_PORT, low)), range(max(LOWEST_PORT, high + 1), 65536)
    return below if len(below) >= len(above) else above


def bindable(port: int) -> bool:
    """Free on the loopback now, as a server that sets SO_REUSEADDR binds it."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


MIN_PORTS = 1_000  # fewer outside the ephemeral range (a machine that gave it all): the kernel's choice


def free_port(take: Callable[[int], bool] = bindable) -> int:
    """A loopback port outside the kernel's ephemeral range, free now.

    A port from ``bind(0)`` is the kernel's to hand out again as soon as it
    is let go: as the source port of any outgoing connection, or to another
    ``bind(0)``. The sample app a demo was taught on is started again on the
    same port (the skill's scope names it), so between two starts any
    connection on the machine could take it ("Address already in use"). A
    port outside that range is never handed out by the kernel itself; where
    the range leaves fewer than ``MIN_PORTS``, the kernel's choice is taken
    as before. ``take``: whether a port may be had (the suite also claims it
    for its process, tests/ports.py)."""
    import random

    ports = port_candidates(*ephemeral_range())
    if len(ports) < MIN_PORTS:
        for _ in range(100):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in BAD_PORTS and take(port):
                return port
        raise Failed("no free loopback port")
    start = random.SystemRandom().randrange(len(ports))
    for i in range(len(ports)):
        port = ports[(start + i) % len(ports)]
        if port not in BAD_PORTS and take(port):
            return port
    raise Failed(f"no free loopback port in {ports.start}-{ports.stop - 1}")


CONTROL_FILE = "teach.control"  # in TEACHD_HOME: bar commands for the running recording
TEACH_LOCK = "teach.lock"  # held (flock) by the running `teachd teach`: see cli/teach.py


def _json_line(line: str) -> dict[str, object]:
    try:
        data = json.loads(line)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_events(folder: Path) -> list[dict[str, Any]]:
    """A recording's events written so far (a torn last line is left out)."""
    out = []
    for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


class TeachProcess:
    """``teachd teach NAME --url URL`` (or, with ``repair``, ``teachd teach
    --repair RUN_ID``); ``answers`` is what its terminal would be told (the
    approvals a repair's replay before the step asks for)."""

    def __init__(self, env: dict[str, str], name: str, url: str, *flags: str,
                 cdp_port: int | None = None, timeout: float = 60, repair: str | None = None,
                 answers: str | None = None) -> None:
        self.cdp_port = cdp_port or free_port()
        what = ["--repair", repair] if repair else [name, "--url", url]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "teachd", "teach", *what, "--cdp-port", str(self.cdp_port), "--json",
             *flags],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.PIPE if answers is not None else subprocess.DEVNULL,
            start_new_session=True,  # so kill -9 of the group takes Chromium too
        )
        if answers is not None and self.proc.stdin is not None:
            self.proc.stdin.write(answers)
            self.proc.stdin.close()
            self.proc.stdin = None  # told everything: communicate() has nothing more to send
        self.err_lines: list[str] = []
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while True:
            line = self.proc.stderr.readline()
            if line:
                self.err_lines.append(line)
            event = _json_line(line)
            if event.get("event") == "recording":  # teach --json says so when it records
                self.recording_dir = Path(str(event["recording_dir"]))
                return
            if (not line and self.proc.poll() is not None) or time.monotonic() > deadline:
                self.proc.kill()
                said = [ln.strip().removeprefix("teachd: error: ") for ln in self.err_lines
                        if ln.startswith("teachd: error:")]
                raise Failed(said[-1] if said else "the recorder did not start: "
                             + " ".join("".join(self.err_lines).split())[-300:])

    @classmethod
    def repairing(cls, env: dict[str, str], run_id: str, *flags: str, answers: str | None = None,
                  timeout: float = 120) -> TeachProcess:
        return cls(env, "", "", *flags, repair=run_id, answers=answers, timeout=timeout)

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.recording_dir)

    def wait_for(self, written: Callable[[list[dict[str, Any]]], bool], timeout: float = 15) -> None:
        """Until the recorder has written what ``written`` looks for: a person
        waits to see the step land, not a fixed time."""
        deadline = time.monotonic() + timeout
        while not written(self.events()):
            if time.monotonic() > deadline:
                # kinds and target ids only: a typed value never goes into a message
                last = [(str(e.get("type")), (e.get("target") or {}).get("id")) for e in self.events()[-8:]]
                wrote = ", ".join(" #".join(filter(None, pair)) for pair in last)
                raise Failed(f"the recorder did not write the expected event in {timeout:g} s; "
                             f"its last events: {wrote or 'none'}")
            time.sleep(0.05)

    def finish(self, timeout: float = 90) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, "".join(self.err_lines) + err
