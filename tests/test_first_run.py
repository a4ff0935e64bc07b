"""A new person's first ten minutes: `teachd demo --home DIR`, then `teachd
serve` on that same home, as the README says — the daemon must show the
demo's skill (one owner for a single-person home), name the person, and the
demo must have asked once for its whole run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_server import serve


def test_demo_then_serve_on_the_same_home_shows_the_demos_skill(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    demo = subprocess.run([sys.executable, "-m", "teachd", "demo", "--home", str(home), "--json"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stderr[-3000:]
    result = json.loads(demo.stdout)
    assert result["effect_ok"] and result["leaks"] == 0
    s = serve({**env, "TEACHD_HOME": str(home)})
    try:
        with s.api() as api:
            skills = [x["slug"] for x in api.get("/api/skills").json()]
            assert result["slug"] in skills
            runs = api.get("/api/runs").json()
            assert runs and runs[0]["skills"].get(result["slug"]) and runs[0]["used"] == [result["slug"]]
        # one answer for the plan; only the steps that drifted on the changed app asked again
        assert 1 <= result["questions"] < 28, result["questions"]
    finally:
        s.stop()
