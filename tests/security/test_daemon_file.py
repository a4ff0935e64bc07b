"""Row 10: ``teachd mcp`` finds the daemon through ``TEACHD_HOME/daemon.json``.
When that file is stale (the daemon was killed) another program may listen
on its port now. Before the owner's token goes anywhere, the pid must be
alive and the server must answer a fresh challenge with HMAC(token, its
address, challenge); otherwise a PolicyStop, and the server there — a real
one, recording every request — never sees the token."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import httpx
import pytest

from teachd.core.errors import PolicyStop
from teachd.mcp.secrets import DaemonSource
from teachd.runner.secret_desk import Ticket
from teachd.server.security import load_token
from tests.security.web_surface import Seen, daemon, other_server


def _home(tmp_path: Path) -> tuple[Path, str]:
    home = tmp_path / "mcp-home"
    home.mkdir(mode=0o700)
    return home, load_token(home)


def _stale(home: Path, url: str, pid: int) -> None:
    (home / "daemon.json").write_text(json.dumps({"url": url, "pid": pid}))


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def _never_got(token: str, seen: list[Seen]) -> None:
    for s in seen:
        assert token not in json.dumps(s.headers) and token.encode() not in s.body, s.path


def test_a_stale_file_whose_pid_is_gone_is_refused_before_any_request(tmp_path: Path) -> None:
    home, token = _home(tmp_path)
    with other_server() as fake:
        _stale(home, fake.url, _dead_pid())
        with pytest.raises(PolicyStop, match="not running"):
            DaemonSource(home).ask("password", "run-1", ["expenses"])
        assert fake.seen == []


@pytest.mark.parametrize("answer", [
    None,  # a server that knows nothing of teachd: 404 to the challenge
    lambda s: (200, {"Content-Type": "application/json"}, b'{"proof": "0000"}'),
    lambda s: (200, {"Content-Type": "application/json"}, b'{"proof": null}'),
    lambda s: (200, {"Content-Type": "text/html"}, b"<html>hello</html>"),
    lambda s: (302, {"Location": "http://127.0.0.1:9/teachd-proof"}, b""),
    lambda s: (401, {"WWW-Authenticate": "Bearer"}, b"send the token"),
], ids=["404", "wrong-proof", "null-proof", "html", "redirect", "asks-for-the-token"])
def test_another_server_on_the_port_never_receives_the_token(tmp_path: Path, answer) -> None:
    home, token = _home(tmp_path)
    sleeper = subprocess.Popen(["sleep", "30"])  # the pid is alive (reused by anything)
    try:
        with other_server(answer=answer) as fake:
            _stale(home, fake.url, sleeper.pid)
            with pytest.raises(PolicyStop, match="not this teachd daemon"):
                DaemonSource(home).ask("password", "run-1", ["expenses"])
            with pytest.raises(PolicyStop, match="not this teachd daemon"):
                DaemonSource(home).take(Ticket("x", "u"), 1, threading.Event())
            DaemonSource(home).forget(Ticket("x", "u"))  # quietly nothing
            assert fake.seen and all(s.path.startswith("/teachd-proof?challenge=") for s in fake.seen)
            _never_got(token, fake.seen)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_server_relaying_the_challenge_to_the_real_daemon_is_refused(tmp_path: Path) -> None:
    """The fake asks the real daemon (same token, another port) and hands its
    answer back: the answer names the real daemon's address, not the fake's."""
    with daemon(tmp_path) as real:
        home, token = real.home, real.token

        def relay(s: Seen) -> tuple[int, dict[str, str], bytes]:
            r = httpx.get(real.url + s.path)
            return r.status_code, {"Content-Type": "application/json"}, r.content

        with other_server(answer=relay) as fake:
            _stale(home, fake.url, os.getpid())
            with pytest.raises(PolicyStop, match="not this teachd daemon"):
                DaemonSource(home).ask("password", "run-1", ["expenses"])
            _never_got(token, fake.seen)
            assert fake.seen
        _stale(home, real.url, real.proc.pid)  # the true file: the real daemon proves itself, the ask goes
        ticket = DaemonSource(home).ask("password", "run-1", ["expenses"])
        with real.api() as api:
            assert [a["id"] for a in api.get("/api/secrets").json()["pending"]] == [ticket.id]


def test_the_proof_needs_a_real_challenge(tmp_path: Path) -> None:
    with daemon(tmp_path) as real, httpx.Client(base_url=real.url) as anon:
        for challenge in ("", "short", "a" * 200, "é" * 40, "../" * 12):
            assert anon.get("/teachd-proof", params={"challenge": challenge}).status_code == 400
        one = anon.get("/teachd-proof", params={"challenge": "a" * 40}).json()["proof"]
        two = anon.get("/teachd-proof", params={"challenge": "b" * 40}).json()["proof"]
        assert one != two and real.token not in one + two
