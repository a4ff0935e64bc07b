"""Runs whose process died — a daemon SIGKILLed mid-run, a ``teachd run``
whose machine lost power — would say *running* for ever. Each run records
the process running it (``host:pid``); a daemon that starts ends those of
its own host whose process is gone: aborted at the step they reached, their
waiting questions withdrawn. A run of another host, or of a process still
alive (another daemon, a ``teachd mcp`` session), is left alone."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

from teachd.store.skills import SkillStore

log = logging.getLogger("teachd.store.orphans")
GONE = "the process running it went away (killed or crashed)"


def runner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _alive(pid: int) -> bool:
    """A teachd process of this machine is still there (a pid reused by
    something else does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"teachd" in cmdline.read_bytes() or not cmdline.parent.exists()
    except OSError:
        return True


def end_orphans(store: SkillStore) -> list[str]:
    """End every orphaned run of this host, whoever's it is; returns their ids."""
    from teachd.store.approvals import ApprovalQueue
    from teachd.store.runs import RunStore

    host = socket.gethostname()
    rows = store.db.query("SELECT id, owner, runner FROM runs WHERE status = 'running' AND runner LIKE ?",
                          (host + ":%",))
    ended = []
    for r in rows:
        pid = str(r["runner"]).rsplit(":", 1)[1]
        if pid.isdigit() and _alive(int(pid)):
            continue
        person = store if r["owner"] == store.owner else store.as_person(str(r["owner"]))
        message = RunStore(person).abandon(str(r["id"]), GONE)
        if message is not None:
            ApprovalQueue(person).withdraw(str(r["id"]))
            log.warning("run %s of %s: %s", r["id"], r["owner"], message)
            ended.append(str(r["id"]))
    return ended
