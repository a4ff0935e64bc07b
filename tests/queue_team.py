"""A team on one PostgreSQL for the run queue's tests and bench/fleet.py:
the sample skill imported into the team store, a daemon that takes no runs
itself (``--slots 0``), and workers as separate processes with homes of
their own — standing in for other machines: the store's DSN and the key
are all they share."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.people import wait_for
from tests.sample_task import PASSWORD, SLUG


@dataclass
class Team:
    env: dict[str, str]  # the daemon's (and the CLI's) environment on the team store
    base: Path
    workers: list[subprocess.Popen[str]] = field(default_factory=list)

    def worker(self, name: str, *args: str, secrets: bool = True,
               env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """``teachd worker`` in a home of its own (another machine: DSN and key
        only); ``secrets``: started as alice with her secret (``--can
        secrets``), else as nobody's — no TEACHD_OWNER, no secret."""
        home = self.base / f"worker-{name}"
        home.mkdir(mode=0o700, exist_ok=True)
        env = {**self.env, "TEACHD_HOME": str(home), **(env or {})}
        if secrets:
            env["TEACHD_SECRET_PASSWORD"] = PASSWORD
        else:
            env.pop("TEACHD_OWNER", None)
        can = ("--can", "secrets") if secrets else ()
        proc = subprocess.Popen([sys.executable, "-m", "teachd", "worker", "--name", name, *can, *args],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.workers.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)


def team_on(taught_env: dict[str, str], postgres_url: str, base: Path, cli: Any, slug: str = SLUG) -> Team:
    """The taught sample skill (or ``slug``), exported from its home and imported into the team store."""
    from teachd.store.crypto import read_key

    envelope = cli(taught_env, "skills", "export", slug, "--format", "json").stdout
    home = base / "daemon"
    home.mkdir(mode=0o700)
    key = read_key(Path(taught_env["TEACHD_HOME"]) / "key").hex()
    env = {**taught_env, "TEACHD_HOME": str(home), "TEACHD_DB_URL": postgres_url, "TEACHD_KEY": key}
    (base / "skill.json").write_text(envelope)
    made = cli(env, "skills", "import", str(base / "skill.json"))
    assert made.returncode == 0, made.stderr
    return Team(env, base)


def workers_seen(cli: Any, env: dict[str, str]) -> dict[str, Any]:
    done = cli(env, "workers", "--json")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def until_listed(cli: Any, env: dict[str, str], name: str) -> dict[str, Any]:
    return dict(wait_for(lambda: next((w for w in workers_seen(cli, env)["workers"] if w["name"] == name), None),
                         60, f"worker {name} listed"))
