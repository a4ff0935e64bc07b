"""Where an agent's session gets a secret it must type.

``TEACHD_SECRET_<NAME>`` in the serving process's environment first. Else
the daemon's secret page: the person types it there (the client is sent the
page's address by URL-mode elicitation, when it can open one). Inside the
daemon the desk is at hand; ``teachd mcp`` reaches the running daemon over
loopback with the owner's token (``TEACHD_HOME/daemon.json`` says where).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from teachd.core.errors import PolicyStop
from teachd.core.pids import alive
from teachd.core.proof import PROOF_PATH, daemon_proof
from teachd.runner.secret_desk import Ticket

DAEMON_FILE = "daemon.json"  # written by ``teachd serve`` while it runs: where it listens


@dataclass
class DaemonSource:
    """For ``teachd mcp``: the daemon's desk, through its API (bearer token).

    ``daemon.json`` may be stale (the daemon was killed) and its port taken
    by any other program: before the token goes anywhere, the pid it names
    must be alive and the server there must prove it holds the token —
    it answers a fresh random challenge with HMAC(token, its address,
    challenge) on an open path. Anything else is a PolicyStop, token unsent."""

    home: Path

    def _client(self) -> httpx.Client:
        try:
            where = json.loads((self.home / DAEMON_FILE).read_text(encoding="utf-8"))
            token = (self.home / "token").read_text().strip()
            url, pid = str(where["url"]).rstrip("/"), int(where["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            raise PolicyStop("no teachd daemon is running to type it on (teachd serve)") from None
        if not alive(pid):
            raise PolicyStop(f"the teachd daemon in {DAEMON_FILE} (pid {pid}) is not running: "
                             "start teachd serve")
        self._verify(url, token)
        return httpx.Client(base_url=url, trust_env=False, timeout=40, follow_redirects=False,
                            headers={"Authorization": f"Bearer {token}"})

    @staticmethod
    def _verify(url: str, token: str) -> None:
        """The challenge, without the token; the answer checked in constant time."""
        challenge = secrets.token_hex(32)
        try:
            with httpx.Client(base_url=url, trust_env=False, timeout=10, follow_redirects=False) as probe:
                r = probe.get(PROOF_PATH, params={"challenge": challenge})
                answer = str(r.json().get("proof", "")) if r.status_code == 200 else ""
        except (httpx.HTTPError, ValueError, AttributeError):
            answer = ""
        if not hmac.compare_digest(answer.encode(), daemon_proof(token, url, challenge).encode()):
            raise PolicyStop(f"{url} in {DAEMON_FILE} is not this teachd daemon (it could not prove it holds "
                             "the token): the token was not sent; start teachd serve")

    def approvals_page(self) -> str | None:
        """The running daemon's Approvals page (checked as for a secret: its pid
        alive, its proof right), or None when no daemon could ask the person."""
        try:
            with self._client() as client:
                return f"{str(client.base_url).rstrip('/')}/approvals"
        except PolicyStop:
            return None

    def ask(self, name: str, run_id: str, skills: list[str]) -> Ticket:
        try:
            with self._client() as client:
                r = client.post("/api/secrets", json={"name": name, "run_id": run_id, "skills": skills})
                r.raise_for_status()
                data = r.json()
                return Ticket(str(data["id"]), str(client.base_url).rstrip("/") + str(data["url"]))
        except httpx.HTTPError as exc:
            raise PolicyStop(f"the teachd daemon could not be asked ({type(exc).__name__})") from None

    def take(self, ticket: Ticket, timeout: float, stopping: threading.Event) -> str | None:
        deadline = time.monotonic() + timeout
        with self._client() as client:
            while (left := deadline - time.monotonic()) > 0 and not stopping.is_set():
                try:
                    r = client.get(f"/api/secrets/{ticket.id}/value", params={"wait": min(left, 5)})
                except httpx.HTTPError:
                    return None
                if r.status_code == 200:
                    return str(r.json()["value"])
                if r.status_code != 204:
                    return None
        return None

    def forget(self, ticket: Ticket) -> None:
        try:
            with self._client() as client:
                client.delete(f"/api/secrets/{ticket.id}")
        except (httpx.HTTPError, PolicyStop):
            pass


def write_daemon_file(home: Path, url: str) -> Path:
    """Where the daemon listens, for ``teachd mcp`` (0600; removed at stop)."""
    path = home / DAEMON_FILE
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"url": url, "pid": os.getpid()}, fh)
    os.replace(tmp, path)
    return path


def remove_daemon_file(home: Path) -> None:
    path = home / DAEMON_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
