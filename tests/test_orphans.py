"""Orphaned runs, from the side of a run that is *not* an orphan: a live run
of another machine (or a container) that happens to share this host's name
must never be marked aborted by this daemon's clean-up. A run is ended only
when it was recorded by this boot of this machine, in this PID namespace,
and its process is gone."""

from __future__ import annotations

import os
from dataclasses import replace

from teachd.store import SkillStore
from teachd.store.orphans import end_orphans
from teachd.store.processes import Runner, runner_id, this_runner
from teachd.store.runs import RunStore

OTHER_BOOT = "00000000-0000-4000-8000-000000000000"


def _started(store: SkillStore, runners: dict[str, str]) -> RunStore:
    runs = RunStore(store)
    for name, runner in runners.items():
        runs.start(f"run-{name}", {})
        with store.db.atomic() as tx:
            tx.execute("UPDATE runs SET runner = ? WHERE id = ?", (runner, f"run-{name}"))
    return runs


def test_the_runner_names_host_boot_pid_namespace_pid_and_start() -> None:
    here = this_runner()
    assert Runner.parse(runner_id()) == here and here.pid == os.getpid()
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert here.boot == f.read().strip()
    assert os.readlink("/proc/self/ns/pid") == f"pid:[{here.pidns}]"
    assert here.start.isdigit() and here.start != "0"


def test_a_run_of_the_same_host_name_elsewhere_stays_running(store: SkillStore) -> None:
    """Same host name, a dead-looking pid here — but another boot (another
    machine, or this one before a reboot) or another PID namespace (a
    container): nothing proves its process is gone, so it is left alone."""
    here = this_runner()
    dead = replace(here, pid=999_999_999, start="1")  # no such process here
    runners = {
        "dead": str(dead),
        "reused": str(replace(here, start="1")),  # this pid, but a later process got it
        "alive": runner_id(),
        "other-boot": str(replace(dead, boot=OTHER_BOOT)),
        "other-namespace": str(replace(dead, pidns="4026530000" if here.pidns != "4026530000" else "4026530001")),
        "other-boot-our-pid": str(replace(here, boot=OTHER_BOOT, start="1")),
        "unknown-identity": str(replace(dead, boot="", pidns="")),
        "old-format": f"{here.host}:999999999:1",  # host:pid:start, before boot ids were recorded
        "other-host": f"another-host:boot={OTHER_BOOT}:pidns=1:1:1",
        "garbage": f"{here.host}:boot={here.boot}:pidns={here.pidns}:not-a-pid:1",
    }
    runs = _started(store, runners)
    assert sorted(end_orphans(store)) == ["run-dead", "run-reused"]
    status = {n: runs.one(f"run-{n}")["status"] for n in runners}
    assert status.pop("dead") == status.pop("reused") == "interrupted"
    assert set(status.values()) == {"running"}, status

