"""Runs on many machines, measured: one PostgreSQL, one daemon that takes
no runs itself (``--slots 0``), and 1, 2, then 3 ``teachd worker``
processes (each in a home of its own, standing in for another machine;
one slot each) on this machine. ``--runs`` replays of the sample task go
on the queue at once through the daemon's API; a person at the daemon
answers what they ask. With the most workers, one worker is killed with
SIGKILL mid-run.

    .venv/bin/python bench/fleet.py [--runs 60] [--workers 1,2,3]

Prints a table: per number of workers, the runs, how long they took, the
throughput (runs a minute) and its ratio to one worker's, the queue wait
(enqueued → taken by a worker) p50/p99, and the checks: 0 runs lost (every
run ended), 0 done twice (each run taken by exactly one worker, and the
sample app holds one report per run that got that far), the killed
worker's run reported *interrupted at step N* with its writes.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.demo.sampleapp import SampleApp  # noqa: E402
from teachd.demo.sampleapp.judge import teachd_env  # noqa: E402
from tests.drift_suite import teach_task  # noqa: E402
from tests.people import PersonAtTheDaemon  # noqa: E402
from tests.postgres import fresh_database, postgres_cluster  # noqa: E402
from tests.queue_team import team_on  # noqa: E402
from tests.sample_task import PASSWORD, SLUG  # noqa: E402
from tests.test_server import serve  # noqa: E402

TAKEN = re.compile(r"teachd worker (\S+): run (\S+) ")


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "teachd", *args], env=env, capture_output=True, text=True,
                          timeout=180)


class Taken:
    """Which worker took which run, and when (read off each worker's own lines as it says them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at: dict[str, list[tuple[str, float]]] = {}

    def follow(self, proc: subprocess.Popen[str]) -> None:
        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                if m := TAKEN.search(line):
                    with self.lock:
                        self.at.setdefault(m.group(2), []).append((m.group(1), time.monotonic()))

        threading.Thread(target=read, daemon=True).start()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def one_fleet(cluster: str, taught: Any, env: dict[str, str], n: int, runs: int, kill: bool,
              root: Path) -> dict[str, Any]:
    url = fresh_database(cluster, f"fleet_{n}")
    base = root / f"fleet-{n}"
    base.mkdir()
    team = team_on(env, url, base, cli)
    team.env.pop("DISPLAY", None)  # headless: nobody watches a fleet
    server = serve(team.env, "--slots", "0")
    taken, killed = Taken(), None
    try:
        with SampleApp(password=PASSWORD, port=taught.port) as app, server.api() as api, \
                PersonAtTheDaemon(api, [], {}):
            for i in range(n):
                taken.follow(team.worker(f"w{i + 1}", "--slots", "1"))
            time.sleep(3)  # the workers are up and listening
            enqueued: dict[str, float] = {}
            started = time.monotonic()
            for i in range(runs):  # each its own amount: the same run twice is a double click, refused
                r = api.post("/api/runs", json={"slug": SLUG, "params": {"amount": f"{i + 1}.00"}})
                r.raise_for_status()
                enqueued[r.json()["run_id"]] = time.monotonic()
            ended: dict[str, dict[str, Any]] = {}
            names = [f"w{i + 1}" for i in range(n)]
            while len(ended) < runs and time.monotonic() - started < 60 * 60:
                for run_id in enqueued:
                    if run_id in ended:
                        continue
                    rec = api.get(f"/api/runs/{run_id}").json()
                    if rec["status"] != "running":
                        ended[run_id] = rec
                    elif kill and killed is None and len(ended) >= runs // 3 and len(rec["steps"]) >= 8 \
                            and run_id in taken.at:  # mid-run: past its first writes (the sign-in)
                        killed = taken.at[run_id][0][0]
                        victim = team.workers[names.index(killed)]
                        victim.send_signal(signal.SIGKILL)
                        victim.wait(30)
                time.sleep(0.5)
            took = time.monotonic() - started
            reports = len(app.state.reports)
    finally:
        team.stop()
        server.stop()
    waits = [taken.at[r][0][1] - t for r, t in enqueued.items() if r in taken.at]
    statuses = [rec["status"] for rec in ended.values()]
    interrupted = [rec for rec in ended.values() if rec["status"] == "interrupted"]
    wrote_report = sum(1 for rec in interrupted
                       if any("/reports" in w["path"] for w in (rec.get("partial") or {}).get("wrote", [])))
    return {"workers": n, "runs": runs, "took_s": took, "per_min": 60 * statuses.count("success") / took,
            "wait_p50": pct(waits, 0.5), "wait_p99": pct(waits, 0.99),
            "lost": runs - len(ended), "twice": sum(1 for t in taken.at.values() if len(t) > 1),
            "succeeded": statuses.count("success"), "other": sorted(set(statuses) - {"success"}),
            "reports": reports, "expected_reports": statuses.count("success") + wrote_report,
            "killed": killed, "interrupted": [r["message"][:160] for r in interrupted],
            "interrupted_wrote": [len((r.get("partial") or {}).get("wrote", [])) for r in interrupted]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--workers", default="1,2,3")
    args = ap.parse_args()
    counts = [int(c) for c in args.workers.split(",")]
    root = Path(tempfile.mkdtemp(prefix="teachd-fleet-"))
    home, user = root / "taught", root / "user"
    home.mkdir(mode=0o700)
    user.mkdir()
    env = teachd_env(home, user)
    env.pop("DISPLAY", None)
    taught = teach_task(home, PASSWORD, env)
    rows = []
    with postgres_cluster() as cluster:
        for n in counts:
            kill = n == max(counts) and n > 1
            rows.append(one_fleet(cluster, taught, env, n, args.runs, kill=kill, root=root))
            print(f"{n} worker(s): {rows[-1]}", file=sys.stderr, flush=True)
    one = rows[0]["per_min"] if rows and rows[0]["workers"] == 1 else None
    print("| workers | runs | took | succeeded | runs/min | × one worker | queue wait p50 | p99 | lost | "
          "twice | reports (expected) | killed mid-run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['per_min'] / one:.2f}×" if one else "—"
        print(f"| {r['workers']} | {r['runs']} | {r['took_s']:.0f} s | {r['succeeded']} | "
              f"{r['per_min']:.1f} | {ratio} | {r['wait_p50']:.1f} s | {r['wait_p99']:.1f} s | {r['lost']} | "
              f"{r['twice']} | {r['reports']} ({r['expected_reports']}) | {r['killed'] or '—'} |")
    for r in rows:
        for message, wrote in zip(r["interrupted"], r["interrupted_wrote"], strict=True):
            print(f"\n{r['workers']} workers, the killed worker's run: {message}… ({wrote} write(s) listed)")
    bad = any(r["lost"] or r["twice"] or r["reports"] != r["expected_reports"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
