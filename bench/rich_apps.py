"""The rich-app drift table (issue 23): the sample app's "Publish a post" task
(a Quill rich-text body synced on a debounce, an icon-only menu toggle, a
submit <input>) taught once, then replayed on each variant by teachd and by
two peers (bench/peers.py: codegen-style, coordinates), every run judged by
the app's own saved state.

    .venv/bin/python bench/rich_apps.py [--step-timeout 3] [--only VARIANT ...]

Prints one Markdown table (variant × teachd / codegen-style / coordinates) for
docs/replay.md; progress and each wrong effect go to stderr.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.peers import PEERS, replay_peer  # noqa: E402
from teachd.demo.sampleapp.judge import RIGHT, WRONG, Judgement, teachd_env  # noqa: E402
from tests.drift_suite import (  # noqa: E402
    POSTS_DESCRIBED,
    POSTS_EXPECTED,
    POSTS_SLUG,
    judge_posts,
    posts_app,
    replay_cli,
    teach_posts_task,
)

PASSWORD = "bench-posts-Pw-1"
REPLAYERS = ("teachd", *PEERS)


def cell(j: Judgement) -> str:
    return f"{j.verdict} ({len(j.wrong)})" if j.wrong else j.verdict


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step-timeout", default="3", help="seconds a step may look for its target")
    ap.add_argument("--only", nargs="*", default=None, help="these variants only")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="teachd-rich-"))
    started = time.monotonic()
    taught = teach_posts_task(home, PASSWORD)
    recording = Path(taught.result["recording_dir"])
    print(f"taught {taught.result['slug']} in {time.monotonic() - started:.1f} s", file=sys.stderr)
    results: dict[str, dict[str, Judgement]] = {}
    for name in args.only or POSTS_EXPECTED:
        results[name] = {}
        for who in REPLAYERS:
            with posts_app(PASSWORD, name, taught.port) as app:
                t0 = time.monotonic()
                if who == "teachd":
                    _code, out, _err = replay_cli(teachd_env(home), "--step-timeout", args.step_timeout,
                                                  password=PASSWORD, slug=POSTS_SLUG)
                    status, message = out.get("status", ""), out.get("message", "")
                else:
                    status, message = replay_peer(who, recording, PASSWORD, float(args.step_timeout))
                j = judge_posts(status, app.state)
            results[name][who] = j
            print(f"{name:<24} {who:<14} {j.verdict:<7} {time.monotonic() - t0:5.1f} s  "
                  f"{'; '.join(j.wrong) or message[:120]}", file=sys.stderr)
    lines = ["| variant | what changed | expected | " + " | ".join(REPLAYERS) + " |",
             "|---|---|---|" + "---|" * len(REPLAYERS)]
    for name, row in results.items():
        lines.append(f"| {name} | {POSTS_DESCRIBED[name]} | {POSTS_EXPECTED[name]} | "
                     + " | ".join(cell(row[w]) for w in REPLAYERS) + " |")
    totals = []
    for w in REPLAYERS:
        as_expected = sum(row[w].verdict == POSTS_EXPECTED[n] for n, row in results.items())
        wrong = sum(row[w].verdict == WRONG for row in results.values())
        totals.append(f"{as_expected}/{len(results)} as expected, {wrong} wrong")
    lines.append("| **total** | | | " + " | ".join(totals) + " |")
    print("\n".join(lines))
    print("(verdicts from the app's saved state; `wrong (n)`: n wrong actions or effects; "
          f"expected `{RIGHT}` means a careful person succeeds)", file=sys.stderr)
    bad = [n for n, row in results.items()
           if row["teachd"].verdict != POSTS_EXPECTED[n] or row["teachd"].wrong]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
