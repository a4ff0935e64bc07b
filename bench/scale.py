"""The store at scale, on SQLite and on PostgreSQL side by side: manifest,
load_skill and feedback, p50/p99 over repeated calls, with N skills.

    .venv/bin/python bench/scale.py [--sizes 10,100,1000,10000] [--calls 50]

PostgreSQL is a throwaway cluster started here (Debian's binaries, as the
tests do). Goals: the manifest of 1,000 encrypted skills ≤ 50 ms on either;
of 10,000, ≤ 100 ms p99 once a process has read their names (the first
call, which decrypts every name and description, is shown on its own).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.config import Settings  # noqa: E402
from teachd.runner.feedback import give_feedback  # noqa: E402
from teachd.runner.session import manifest  # noqa: E402
from teachd.store import SkillContent, SkillStore, open_store  # noqa: E402
from teachd.store.runs import RunStore  # noqa: E402
from tests.postgres import fresh_database, postgres_cluster  # noqa: E402


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def percentiles(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def fill(store: SkillStore, n: int) -> None:
    for i in range(n):
        store.create(f"skill-{i:05d}", SkillContent(
            name=f"Skill {i}", description=f"Does thing {i}. Use when thing {i} is asked for.",
            instructions=f"# Skill {i}\n\n" + "A line of instructions.\n" * 40,
            files={"references/notes.md": "Notes.\n" * 50}))


def measure(store: SkillStore, n: int, calls: int) -> dict[str, tuple[float, float]]:
    runs = RunStore(store)
    run_id = runs.new_run_id()
    runs.start(run_id, {"skill-00000": 1})
    cold = timed(lambda: manifest(store, None))  # the first, in a fresh process: nothing remembered yet
    out = {"manifest (first)": (cold, cold), "manifest": percentiles(lambda: manifest(store, None), calls),
           "load_skill": percentiles(lambda: store.load(f"skill-{n // 2:05d}").loaded(), calls)}
    counter = iter(range(10**9))

    def after_a_write() -> float:  # a feedback click moves the store's revision: the list is read again
        give_feedback(runs, f"ext-{next(counter)}", "skill-00001", "success")
        return timed(lambda: manifest(store, None))

    written = sorted(after_a_write() for _ in range(min(calls, 30)))
    out["manifest (after a write)"] = (statistics.median(written),
                                       written[min(len(written) - 1, int(len(written) * 0.99))])
    out["feedback"] = percentiles(
        lambda: give_feedback(runs, f"ext-{next(counter)}", "skill-00000", "success"), min(calls, 30))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with postgres_cluster() as cluster:
        for n in sizes:
            results = {}
            for engine in ("sqlite", "postgresql"):
                home = Path(tempfile.mkdtemp(prefix="teachd-scale-"))
                url = fresh_database(cluster, f"scale_{n}") if engine == "postgresql" else None
                store = open_store(Settings(home=home, owner="bench", db_url=url))
                fill(store, n)
                results[engine] = measure(store, n, args.calls)
            for op in ("manifest (first)", "manifest", "manifest (after a write)", "load_skill", "feedback"):
                s, p = results["sqlite"][op], results["postgresql"][op]
                rows.append((n, op, s, p))
    print(f"{'skills':>7} {'operation':<25} {'SQLite p50':>11} {'p99':>8} {'PostgreSQL p50':>15} "
          f"{'p99':>8}  (ms)")
    for n, op, s, p in rows:
        print(f"{n:>7} {op:<25} {s[0]:>11.2f} {s[1]:>8.2f} {p[0]:>15.2f} {p[1]:>8.2f}")


if __name__ == "__main__":
    main()
