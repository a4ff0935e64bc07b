"""A real ``teachd serve`` for the attacks that need one: a fresh home, the
owner's API client, stopped after."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.test_server import serve


@contextlib.contextmanager
def running_daemon(tmp_path: Path, _exists_ok: bool = False, **extra: str) -> Iterator[tuple[httpx.Client, str]]:
    """``tmp_path/daemon-home`` is its TEACHD_HOME (made here unless ``_exists_ok``)."""
    home = tmp_path / "daemon-home"
    home.mkdir(mode=0o700, exist_ok=_exists_ok)
    user = tmp_path / "daemon-user"
    user.mkdir(exist_ok=True)  # a test may lay out its files first
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(home), HOME=str(user), TEACHD_OWNER="alice", PYTHONUTF8="1", **extra)
    server = serve(env)
    try:
        with server.api() as api:
            yield api, server.url
    finally:
        server.stop()


def chromiums_under(pid: int) -> int:
    """Chromium browsers running under ``pid`` (the daemon)."""
    parents: dict[int, int] = {}
    argv: dict[int, list[str]] = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
            argv[int(p.name)] = (p / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        parents[int(p.name)] = int(stat.rsplit(")", 1)[1].split()[1])

    def under(q: int) -> bool:
        while q > 1:
            q = parents.get(q, 0)
            if q == pid:
                return True
        return False

    # one browser: many processes (zygotes, renderers, crash handler); its own profile folder names it
    return len({a for q, args in argv.items() if under(q) for a in args if a.startswith("--user-data-dir=")})
