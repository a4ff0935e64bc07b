"""A run's browser yields the CPU to the daemon's requests (teachd.runner.priority)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from teachd.runner.policy import RunPolicy, Who
from teachd.runner.priority import BROWSER_NICE
from teachd.runner.run import RunOptions, open_chromium


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _threads_nice(pid: int) -> set[int]:
    """The nice value of each thread of ``pid`` (Linux keeps one per thread)."""
    values = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            values.add(int((task / "stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (OSError, IndexError):
            continue
    return values


def test_every_process_and_thread_of_a_runs_browser_runs_below_the_process_that_started_it() -> None:
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with open_chromium(RunOptions(headless=True), RunPolicy(Who("alice", host_network=True))) as (_c, page):
        page.set_content("<p>a page with a script</p><script>document.title = 'ran'</script>")
        assert page.title() == "ran"
        browsers = {pid: _threads_nice(pid) for pid in _descendants(os.getpid())
                    if "chrom" in Path(f"/proc/{pid}/comm").read_text(errors="replace")}
        assert len(browsers) >= 2, browsers  # the browser and at least its renderer
        assert all(values == {mine + BROWSER_NICE} for values in browsers.values()), browsers
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine  # this process's own thread is as it was


def test_the_capability_to_raise_priorities_is_dropped_only_where_it_is_held_and_can_be(
        monkeypatch: Any) -> None:
    """A container's root without CAP_SETPCAP cannot drop a capability:
    ``setpriv`` would fail and no browser would start; there the browser
    runs under ``nice`` alone (which Chromium may undo), and where the
    process cannot raise a priority at all, ``nice`` alone holds."""
    import shutil

    from teachd.runner import priority

    def having(*caps: int) -> None:
        monkeypatch.setattr(priority, "_capabilities", lambda: sum(1 << c for c in caps))

    having()
    assert priority._command("/usr/bin/chromium", 10) == [shutil.which("nice"), "-n", "10", "/usr/bin/chromium"]
    having(priority.CAP_SYS_NICE)
    assert priority._command("/usr/bin/chromium", 10)[0] == shutil.which("nice")  # type: ignore[index]
    having(priority.CAP_SYS_NICE, priority.CAP_SETPCAP)
    assert priority._command("/usr/bin/chromium", 10)[:3] == [  # type: ignore[index]
        shutil.which("setpriv"), "--inh-caps=-sys_nice", "--bounding-set=-sys_nice"]
    assert priority._command("/usr/bin/chromium", 0) is None


def test_a_launcher_removed_by_a_cleaner_of_the_temporary_folder_is_made_again() -> None:
    import shutil

    from teachd.runner.priority import yielding

    first = yielding("/usr/bin/true")
    assert first != "/usr/bin/true" and os.access(first, os.X_OK)
    shutil.rmtree(Path(first).parent)
    again = yielding("/usr/bin/true")
    assert again != first and os.access(again, os.X_OK)
    assert yielding("/usr/bin/true") == again
