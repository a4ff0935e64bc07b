"""How many runs a second the run queue itself takes on one PostgreSQL, with
no browser in the way: the daemon's side (``RunQueue.submit``: a person's
count, then procrastinate's defer) and the workers' side (procrastinate's
own fetch and finish functions, from several connections at once, as many
workers would). The figures the sizing note for 1,000 workers is worked out
from (docs/benchmarks.md).

    .venv/bin/python bench/queue_rate.py [--jobs 3000] [--takers 8] [--people 50]

Prints a table: jobs, seconds, jobs a second, for each side.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.queue.app import RunQueue  # noqa: E402
from teachd.queue.jobs import RunJob, queues_for  # noqa: E402
from teachd.store.postgres import PostgresDatabase  # noqa: E402
from tests.postgres import fresh_database, postgres_cluster  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=3000)
    ap.add_argument("--takers", type=int, default=8, help="connections fetching at once (workers)")
    ap.add_argument("--people", type=int, default=50)
    args = ap.parse_args()
    with postgres_cluster() as cluster:
        url = fresh_database(cluster, "queue_rate")
        queue = RunQueue(url, PostgresDatabase(url))
        began = time.monotonic()
        for i in range(args.jobs):
            queue.submit(RunJob(f"run-{i}", f"person-{i % args.people}", "taught-x"))
        submitted = time.monotonic() - began
        done = [0] * args.takers
        queues = queues_for([])

        def take(k: int) -> None:
            db = PostgresDatabase(url)
            while True:
                rows = db.query("SELECT id FROM procrastinate_fetch_job_v2(?, NULL)", (queues,))
                if not rows or rows[0]["id"] is None:
                    return
                db.query("SELECT procrastinate_finish_job_v1(?, 'succeeded', false)", (int(rows[0]["id"]),))
                done[k] += 1

        began = time.monotonic()
        threads = [threading.Thread(target=take, args=(k,)) for k in range(args.takers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        taken = time.monotonic() - began
        queue.close()
    print("| side | jobs | seconds | jobs/s |")
    print("|---|---|---|---|")
    print(f"| submit (the daemon: count + defer, one connection) | {args.jobs} | {submitted:.1f} | "
          f"{args.jobs / submitted:.0f} |")
    print(f"| take + finish ({args.takers} connections, procrastinate's fetch) | {sum(done)} | {taken:.1f} | "
          f"{sum(done) / taken:.0f} |")
    return 0 if sum(done) == args.jobs else 1


if __name__ == "__main__":
    raise SystemExit(main())
