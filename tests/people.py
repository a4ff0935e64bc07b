"""People at the daemon's pages, for tests that need someone to answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx


def wait_for(check: Callable[[], Any], timeout: float = 90, what: str = "it") -> Any:
    """``check()``'s first truthy answer, polled; an AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def run_until(api: httpx.Client, run_id: str, done: Callable[[dict[str, Any]], Any],
              timeout: float = 90) -> dict[str, Any]:
    """The run's API record once ``done(record)`` holds (polled, as its page polls)."""
    found: dict[str, Any] = {}

    def look() -> bool:
        found.clear()
        found.update(api.get(f"/api/runs/{run_id}").json())
        return bool(done(found))

    wait_for(look, timeout, f"run {run_id} to get there")
    return found


class Polling:
    """Someone who looks at the daemon's pages every 50 ms (``look``) while
    the ``with`` block runs, on a thread of their own."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Any:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)

    def _loop(self) -> None:
        while not self.stop.is_set():
            self.look()
            self.stop.wait(0.05)

    def look(self) -> None:
        raise NotImplementedError


class PersonAtTheDaemon(Polling):
    """The person at the daemon's pages, through its API: answers approval
    requests in turn (allowing once the given answers run out) and types
    the secrets asked for."""

    def __init__(self, api: httpx.Client, answers: list[bool], secrets: dict[str, str]) -> None:
        super().__init__()
        self.api, self.answers, self.secrets = api, list(answers), secrets
        self.seen: list[str] = []

    def look(self) -> None:
        secrets, approvals = self.api.get("/api/secrets"), self.api.get("/api/approvals")
        if secrets.status_code == 503 or approvals.status_code == 503:  # the store away: as a person, look again
            return
        for s in secrets.json()["pending"]:
            self.api.post(f"/api/secrets/{s['id']}", json={"value": self.secrets[s["name"]]})
            self.seen.append(f"secret {s['name']} for {s['skills']}")
        for p in approvals.json()["pending"]:
            allow = self.answers.pop(0) if self.answers else True
            self.api.post(f"/api/approvals/{p['id']}", json={"allow": allow})
            self.seen.append(f"{'allow' if allow else 'deny'}: {p['action']} | {p['skills']}")
