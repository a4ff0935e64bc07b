"""A new person's first ten minutes, as the README says: `teachd demo
--serve` runs the whole loop, then keeps the sample app and the web UI up
on the demo's home — the daemon shows the demo's skill (one owner for a
single-person home), the demo asked once for its whole run, and the skill
runs again from the daemon with one answer and no secret to type."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.people import run_until
from tests.ports import free_port


def _line(proc: subprocess.Popen[str], pattern: str, seen: list[str], timeout: float = 600) -> re.Match[str]:
    """The first line of the demo's output matching ``pattern`` (what the person reads)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError("the demo ended: " + "".join(seen)[-3000:]
                                 + (proc.stderr.read() if proc.stderr else "")[-3000:])
        seen.append(line)
        if m := re.search(pattern, line):
            return m
    raise AssertionError(f"no line like {pattern!r} in time: " + "".join(seen)[-3000:])


def test_demo_serve_keeps_the_app_and_the_web_ui_up_and_the_demos_skill_runs_again_from_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "teachd", "demo", "--home", str(home), "--serve",
                             "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    seen: list[str] = []
    try:
        slug = _line(proc, r"^2\. Compiled and stored (taught-[\w-]+) v1", seen).group(1)
        _line(proc, r"^demo complete: state kept in ", seen)
        # one answer for the demo's plan; only the steps that drifted on the changed app asked again
        questions = sum(line.lstrip().startswith("approve?") for line in seen)
        assert 1 <= questions < 28 and "→ run (this run's whole plan)" in "".join(seen), questions
        sample = _line(proc, r"the sample app is up at (http://127\.0\.0\.1:\d+)/login .* the password (\S+);",
                       seen)
        _line(proc, rf"^the login link below works once; to log in again, open http://127\.0\.0\.1:{port}"
                    rf"/login\?token=… with the token in {re.escape(str(home / 'token'))}$", seen)
        _line(proc, rf"^teachd: serving on http://127\.0\.0\.1:{port}/ — log in: ", seen)
        assert httpx.get(sample.group(1) + "/login", timeout=10).status_code == 200  # the app is up
        token = (home / "token").read_text().strip()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                          timeout=30) as api:
            for _ in range(100):  # the line comes before uvicorn binds
                try:
                    skills = [x["slug"] for x in api.get("/api/skills").json()]
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            assert slug in skills
            runs = api.get("/api/runs").json()
            assert runs and runs[0]["skills"].get(slug) and runs[0]["used"] == [slug]
            # the skill again, from the daemon: one answer, the password already known to its runs
            run_id = api.post("/api/runs", json={"slug": slug}).json()["run_id"]
            question = run_until(api, run_id, lambda r: r["waiting"])["waiting"][0]
            assert question["offers_run"]
            api.post(f"/api/approvals/{question['id']}", json={"answer": "run"})
            run = run_until(api, run_id, lambda r: r["status"] != "running")
            assert run["status"] == "success", run["message"]
            assert api.get("/api/waiting").json() == {"approvals": 0, "secrets": 0}
            # the command line on the same home, beside the daemon: both see what either writes
            # (a CLI command once took the daemon's write-ahead log away; what it wrote then was lost)
            cli = {**env, "TEACHD_HOME": str(home)}
            for name in ("made-in-the-ui", "made-after-the-cli"):
                made = api.post("/api/skills", json={"slug": name, "template": "meeting-notes"})
                assert made.status_code == 200, made.text
                listed = subprocess.run([sys.executable, "-m", "teachd", "skills", "list", "--json"], env=cli,
                                        capture_output=True, text=True, timeout=60)
                assert listed.returncode == 0 and name in listed.stdout, listed.stdout + listed.stderr
            fds = Path(f"/proc/{proc.pid}/fd")
            gone = [os.readlink(fd) for fd in fds.iterdir() if os.readlink(fd).endswith("(deleted)")]
            assert not [f for f in gone if "teachd.db" in f], gone
        assert sample.group(2).encode() not in b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    assert code == 0, "".join(seen)[-2000:]
