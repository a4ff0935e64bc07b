"""The drift table: the sample task taught once, replayed on every variant of
the app, each run judged by the app's own log of what was clicked and saved.

    .venv/bin/python bench/drift.py [--step-timeout 3]

Prints a Markdown table (variant × right / halted / wrong) for docs/replay.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.demo.sampleapp import SampleApp, Variant  # noqa: E402
from teachd.demo.sampleapp.judge import judge, teachd_env  # noqa: E402
from tests.drift_suite import EXPECTED, replay_cli, table, teach_task  # noqa: E402

PASSWORD = "bench-drift-Pw-1"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step-timeout", default="3", help="seconds a step may look for its target")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="teachd-drift-"))
    started = time.monotonic()
    taught = teach_task(home, PASSWORD)
    print(f"taught {taught.result['slug']} in {time.monotonic() - started:.1f} s", file=sys.stderr)
    rows = []
    for name in EXPECTED:
        with SampleApp(password=PASSWORD, variant=Variant.named(name), port=taught.port) as app:
            t0 = time.monotonic()
            code, out, _err = replay_cli(teachd_env(home), "--step-timeout", args.step_timeout,
                                         password=PASSWORD)
            seconds = time.monotonic() - t0
            verdict = judge(out.get("status", ""), app.state)
        halted = next((s for s in out.get("steps", []) if s["status"] == "halted"), None)
        rows.append({"variant": name, "verdict": verdict.verdict, "wrong": verdict.wrong,
                     "halted_at": f"step {halted['n']}" if halted else None})
        wrong = "; ".join(verdict.wrong)
        print(f"{name:<18} {verdict.verdict:<7} {seconds:5.1f} s  {wrong}", file=sys.stderr)
    print(table(rows))
    bad = [r for r in rows if r["verdict"] != EXPECTED[r["variant"]] or r["wrong"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
