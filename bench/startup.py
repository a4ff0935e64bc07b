"""Start-up and manifest speed, against the reference validator's CLI.

    .venv/bin/python bench/startup.py [--skills 1662] [--runs 7]

Times ``teachd --help`` beside ``agentskills --help`` (the skills-ref
package's CLI, from the test extras) as whole processes, ``teachd skills
manifest --json`` over a store holding N imported skills, and ``teachd serve``
until it listens (its CPU time then, read from /proc: a daemon's start is
paid by every test that starts one, and by a person after each restart).
Prints a table of medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from teachd.config import Settings  # noqa: E402
from teachd.store import SkillContent, open_store  # noqa: E402

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def serve_start(env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median seconds until ``teachd serve`` accepts a connection, and the
    CPU seconds it has used by then (its lifespan has run: store, scheduler)."""
    import socket

    times, cpus = [], []
    for _ in range(runs):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([str(BIN / "teachd"), "serve", "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.perf_counter()
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.01)
        times.append(time.perf_counter() - t)
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpus.append((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
        proc.terminate()
        proc.wait(30)
    return statistics.median(times), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=1662)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="teachd-bench-"))
    env = {**os.environ, "TEACHD_HOME": str(home), "TEACHD_OWNER": "bench"}
    store = open_store(Settings(home=home, owner="bench"))
    for i in range(args.skills):
        store.create(f"skill-{i:04d}", SkillContent(
            name=f"Skill {i}", description=f"Does thing number {i}. Use when thing {i} is asked for.",
            instructions=f"# Skill {i}\n\n" + "A line of instructions.\n" * 40,
            files={"references/notes.md": "Notes.\n" * 50}))
    rows = [("teachd --help", timed([str(BIN / "teachd"), "--help"], env, args.runs)),
            ("agentskills --help (reference)", timed([str(BIN / "agentskills"), "--help"], env, args.runs)),
            (f"teachd skills manifest --json ({args.skills} skills)",
             timed([str(BIN / "teachd"), "skills", "manifest", "--json"], env, args.runs))]
    up, used = serve_start(env, args.runs)
    rows += [("teachd serve, until it listens", up), ("teachd serve, CPU s by then", used)]
    print(f"{'command':<48} {'median s':>9}")
    for name, seconds in rows:
        print(f"{name:<48} {seconds:>9.3f}")


if __name__ == "__main__":
    main()
