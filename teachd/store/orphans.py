"""Runs whose process died — a daemon SIGKILLed mid-run, a ``teachd run``
whose machine lost power — would say *running* for ever. Each run records
the process running it (``host:pid:start``); a daemon that starts ends those of
its own host whose process is gone: aborted at the step they reached, their
waiting questions withdrawn. A run of another host, or of a process still
alive (another daemon, a ``teachd mcp`` session), is left alone."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

from teachd.pids import alive
from teachd.store.skills import SkillStore

log = logging.getLogger("teachd.store.orphans")
GONE = "the process running it went away (killed or crashed)"


def runner_id() -> str:
    """``host:pid:start``: the start time (in clock ticks since boot) tells
    this process from a later one that got the same pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{_started(os.getpid())}"


def _started(pid: int) -> str:
    try:  # field 22 of /proc/PID/stat, after the command name in parentheses
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError):
        return "0"


def _running(runner: str) -> bool:
    """The process a run recorded still runs (not another that reused its pid)."""
    parts = runner.rsplit(":", 2)  # host:pid:start (a host name holds no colon; IPv6 would)
    pid, started = (parts[1], parts[2]) if len(parts) == 3 else (parts[-1], "0")
    if not pid.isdigit() or not alive(int(pid)):
        return False
    return started == "0" or _started(int(pid)) in (started, "0")


def end_orphans(store: SkillStore) -> list[str]:
    """End every orphaned run of this host, whoever's it is; returns their ids."""
    from teachd.store.approvals import ApprovalQueue
    from teachd.store.runs import RunStore

    host = socket.gethostname()
    rows = store.db.query("SELECT id, owner, runner FROM runs WHERE status = 'running' AND runner LIKE ?",
                          (host + ":%",))
    ended = []
    for r in rows:
        if _running(str(r["runner"])):
            continue
        person = store if r["owner"] == store.owner else store.as_person(str(r["owner"]))
        message = RunStore(person).abandon(str(r["id"]), GONE)
        if message is not None:
            ApprovalQueue(person).withdraw(str(r["id"]))
            log.warning("run %s of %s: %s", r["id"], r["owner"], message)
            ended.append(str(r["id"]))
    return ended
