"""People at the daemon's pages, for tests that need someone to answer."""

from __future__ import annotations

import threading

import httpx


class PersonAtTheDaemon:
    """The person at the daemon's pages, through its API: answers approval
    requests in turn (allowing once the given answers run out) and types
    the secrets asked for."""

    def __init__(self, api: httpx.Client, answers: list[bool], secrets: dict[str, str]) -> None:
        self.api, self.answers, self.secrets = api, list(answers), secrets
        self.seen: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> PersonAtTheDaemon:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)

    def _watch(self) -> None:
        while not self.stop.is_set():
            for s in self.api.get("/api/secrets").json()["pending"]:
                self.api.post(f"/api/secrets/{s['id']}", json={"value": self.secrets[s["name"]]})
                self.seen.append(f"secret {s['name']} for {s['skills']}")
            for p in self.api.get("/api/approvals").json()["pending"]:
                allow = self.answers.pop(0) if self.answers else True
                self.api.post(f"/api/approvals/{p['id']}", json={"allow": allow})
                self.seen.append(f"{'allow' if allow else 'deny'}: {p['action']} | {p['skills']}")
            self.stop.wait(0.05)
