"""Runs whose process died — a daemon SIGKILLed mid-run, a ``teachd run``
whose machine lost power — would say *running* for ever. Each run records
the process running it: ``host:boot=BOOT_ID:pidns=INODE:pid:start`` — the
host name for people, the kernel's boot id and the PID namespace for the
machine and the pid space the pid belongs to, the start time (clock ticks
since that boot) for the process itself. A daemon that starts ends the runs
recorded by this very boot and PID namespace whose process is gone: interrupted
at the step they reached, their waiting questions withdrawn.

Left alone: a run of a process still alive (another daemon, a ``teachd mcp``
session); a run of another machine, another boot, or another PID namespace
(a container) — even one with the same host name, whose pids say nothing
here; and a run recorded in the older ``host:pid:start`` form, which names
no boot nor namespace, so nothing proves it is this machine's (it stays
*running* until it is cancelled)."""

from __future__ import annotations

import logging

from teachd.store.approvals import ApprovalQueue
from teachd.store.processes import orphaned, this_runner
from teachd.store.runs import RunStore
from teachd.store.skills import SkillStore

log = logging.getLogger("teachd.store.orphans")
GONE = "the process running it went away (killed or crashed)"


def end_orphans(store: SkillStore) -> list[str]:
    """End every orphaned run of this machine, whoever's it is; returns their ids."""
    here = this_runner()
    if not here.same_machine(here):
        log.warning("orphaned runs are not looked for: this machine's boot id or PID namespace is unknown")
        return []
    rows = store.db.query("SELECT id, owner, runner FROM runs WHERE status = 'running' AND runner LIKE ?",
                          (f"%:boot={here.boot}:pidns={here.pidns}:%",))
    ended = []
    for r in rows:
        if not orphaned(str(r["runner"]), here):
            continue
        person = store if r["owner"] == store.owner else store.as_person(str(r["owner"]))
        message = RunStore(person).abandon(str(r["id"]), GONE)
        if message is not None:
            ApprovalQueue(person).withdraw(str(r["id"]))
            log.warning("run %s of %s: %s", r["id"], r["owner"], message)
            ended.append(str(r["id"]))
    return ended
