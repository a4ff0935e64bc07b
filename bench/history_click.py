"""What one feedback click costs as a skill's History grows: the click
(``give_feedback``: the version read, its line added, the new version
sealed and written with the feedback row), a read of the current version,
and the bytes a version's instructions take in the database — on one
PostgreSQL, no HTTP in the way. Every click writes a whole version, so
this is what a soak's thousands of clicks a skill pay each time.

    .venv/bin/python bench/history_click.py [--clicks 100] [--lines 10 1000 2700]

Prints a table: History lines, SKILL.md characters, sealed bytes, click ms,
read ms (each the mean of ``--clicks``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.config import Settings  # noqa: E402
from teachd.core.history import append_history, history_line  # noqa: E402
from teachd.runner.feedback import give_feedback  # noqa: E402
from teachd.store import SkillContent, open_store  # noqa: E402
from teachd.store.runs import RunStore  # noqa: E402
from tests.postgres import fresh_database, postgres_cluster  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clicks", type=int, default=100)
    ap.add_argument("--lines", type=int, nargs="+", default=[10, 1000, 2700])
    args = ap.parse_args()
    print(f"{'lines':>6} {'chars':>8} {'sealed B':>9} {'click ms':>9} {'read ms':>8}")
    with postgres_cluster() as cluster:
        home = Path(tempfile.mkdtemp(prefix="teachd-history-click-"))
        os.chmod(home, 0o700)
        store = open_store(Settings(home=home, owner="alice", db_url=fresh_database(cluster, "clicks")))
        runs = RunStore(store)
        for lines in args.lines:
            slug = f"history-{lines}"
            body = "# A skill\n\nDo it.\n"
            for _ in range(lines):
                ref = f"ext-{uuid.uuid4().hex[:12]}"
                body = append_history(body, history_line("2026-12-05", "success", ref, None))
            store.create(slug, SkillContent(name=slug, description="A skill with a long History.",
                                            instructions=body))
            for _ in range(5):  # the connections' statements prepared, as in a running daemon
                give_feedback(runs, f"ext-{uuid.uuid4().hex[:12]}", slug, "success")
            began = time.perf_counter()
            for _ in range(args.clicks):
                give_feedback(runs, f"ext-{uuid.uuid4().hex[:12]}", slug, "success")
            click = (time.perf_counter() - began) / args.clicks * 1000
            began = time.perf_counter()
            for _ in range(args.clicks):
                store.version(slug)
            read = (time.perf_counter() - began) / args.clicks * 1000
            current = store.get(slug)
            sealed = store.db.query("SELECT instructions FROM skill_versions WHERE slug = ? AND version = ?",
                                    (slug, current.current_version))[0]["instructions"]
            print(f"{lines:>6} {len(current.current.instructions):>8} {len(bytes(sealed)):>9} "
                  f"{click:>9.1f} {read:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
