"""Secret requests are bounded in count, size and age (issue 22, "also
seen"), tried as bob would: any person with a token may ask for secrets on
his own desk, so he tries to fill the daemon's memory with requests, huge
names and values, and requests nobody ever answers or takes; and he tries
to read or answer alice's. Through a real ``teachd serve`` on SQLite and
PostgreSQL (the people and tokens are the store's); the ageing runs on the
desk itself with a clock the test moves.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from teachd.config import Settings
from teachd.core.errors import NotFound
from teachd.runner.secret_desk import GIVEN_TTL, IDLE_TTL, MAX_AGE, MAX_NAME, MAX_OPEN, MAX_VALUE, SecretDesk
from teachd.store import SkillStore
from teachd.store.users import UserStore
from tests.test_teams import _as, _serve


@contextlib.contextmanager
def _alice_and_bob(store: SkillStore, settings: Settings, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A real daemon with its owner and bob (his own token) at its API."""
    bob_token = UserStore(store.db).add("bob")
    server = _serve(settings, tmp_path)
    try:
        with server.api() as alice, _as(server, bob_token) as bob:
            yield alice, bob
    finally:
        assert server.stop() == 0


def _one_line(r: object) -> str:
    said = r.json()["error"]  # type: ignore[attr-defined]
    assert "\n" not in said and "Traceback" not in said
    return str(said)


def test_a_person_cannot_keep_more_than_the_cap_of_secret_requests_open(store: SkillStore, settings: Settings,
                                                                       tmp_path: Path) -> None:
    with _alice_and_bob(store, settings, tmp_path) as (alice, bob):
        ids = []
        for i in range(MAX_OPEN):
            r = bob.post("/api/secrets", json={"name": f"s{i}", "run_id": "run-bob", "skills": []})
            assert r.status_code == 200, r.text
            ids.append(r.json()["id"])
        for spelling in ("s_more", "S", "password"):
            over = bob.post("/api/secrets", json={"name": spelling, "run_id": "run-bob", "skills": []})
            assert over.status_code == 429 and f"at most {MAX_OPEN}" in _one_line(over)
        assert len(bob.get("/api/secrets").json()["pending"]) == MAX_OPEN
        mine = alice.post("/api/secrets", json={"name": "password", "run_id": "run-a", "skills": []})
        assert mine.status_code == 200  # bob's flood is his own: alice can still be asked
        assert bob.delete(f"/api/secrets/{ids[0]}").status_code == 200
        again = bob.post("/api/secrets", json={"name": "s_more", "run_id": "run-bob", "skills": []})
        assert again.status_code == 200
        given = bob.post(f"/api/secrets/{ids[1]}", json={"value": "x"})  # typed, not taken: no longer open
        assert given.status_code == 200
        assert bob.post("/api/secrets", json={"name": "one_more", "run_id": "r", "skills": []}).status_code == 200


def test_oversized_names_values_and_lists_are_refused_in_one_line(store: SkillStore, settings: Settings,
                                                                  tmp_path: Path) -> None:
    with _alice_and_bob(store, settings, tmp_path) as (alice, bob):
        for data, status in (({"name": "n" * (MAX_NAME + 1)}, 413),
                             ({"name": "n" * 100_000}, 413),
                             ({"name": "pässword"}, 400),  # letters of another script: not a variable name
                             ({"name": "pass word"}, 400),
                             ({"name": ""}, 400),
                             ({"name": "password", "run_id": "r" * 129}, 413),
                             ({"name": "password", "skills": ["s"] * 33}, 413),
                             ({"name": "password", "skills": ["s" * 65]}, 413)):
            r = bob.post("/api/secrets", json={"run_id": "run-bob", "skills": [], **data})
            assert r.status_code == status, (data.get("name", "")[:20], r.text)
            _one_line(r)
        sid = bob.post("/api/secrets", json={"name": "password", "run_id": "run-bob", "skills": []}).json()["id"]
        for value in ("v" * (MAX_VALUE + 1), "v" * 1_000_000):
            huge = bob.post(f"/api/secrets/{sid}", json={"value": value})
            assert huge.status_code == 413 and f"at most {MAX_VALUE}" in _one_line(huge)
        assert [p["id"] for p in bob.get("/api/secrets").json()["pending"]] == [sid]  # still asked
        assert bob.post(f"/api/secrets/{sid}", json={"value": "v" * MAX_VALUE}).status_code == 200
        taken = bob.get(f"/api/secrets/{sid}/value")
        assert taken.status_code == 200 and taken.json()["value"] == "v" * MAX_VALUE


def test_bob_can_neither_see_nor_answer_nor_take_alices_request(store: SkillStore, settings: Settings,
                                                                 tmp_path: Path) -> None:
    with _alice_and_bob(store, settings, tmp_path) as (alice, bob):
        sid = alice.post("/api/secrets", json={"name": "password", "run_id": "run-a", "skills": []}).json()["id"]
        assert bob.get("/api/secrets").json()["pending"] == []
        page = bob.get(f"/secrets/{sid}").text
        assert "no secret is asked for there" in page and "Give it to the run" not in page
        assert bob.post(f"/api/secrets/{sid}", json={"value": "bob-chose-this"}).status_code == 404
        alice.post(f"/api/secrets/{sid}", json={"value": "alices-value"})
        assert bob.get(f"/api/secrets/{sid}/value").status_code == 404
        assert bob.delete(f"/api/secrets/{sid}").status_code == 200  # forgetting another's does nothing
        assert alice.get(f"/api/secrets/{sid}/value").json()["value"] == "alices-value"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_unanswered_and_untaken_requests_expire_and_wake_their_waiters() -> None:
    clock = Clock()
    desk = SecretDesk(clock).for_person("bob")
    nobody_waits = desk.ask("password", "run-1", [])
    typed_not_taken = desk.ask("otp", "run-1", [])
    desk.give(typed_not_taken.id, "123456")
    clock.now += max(IDLE_TTL, GIVEN_TTL) + 1
    assert desk.pending() == []
    for attempt in (lambda: desk.get(nobody_waits.id), lambda: desk.give(nobody_waits.id, "late"),
                    lambda: desk.take(typed_not_taken.id, 0)):
        with pytest.raises(NotFound):
            attempt()
    assert typed_not_taken.value is None  # the typed value was dropped from memory

    # A request a run is waiting on lives as long as the run waits (a schedule may wait an hour)...
    waited = desk.ask("password", "run-2", [])
    got: list[str | None] = []
    taker = threading.Thread(target=lambda: got.append(desk.take(waited.id, 30)))
    taker.start()
    for _ in range(100):
        if waited.waiters:
            break
        threading.Event().wait(0.01)
    clock.now += IDLE_TTL * 10
    assert [p["id"] for p in desk.pending()] == [waited.id]
    desk.give(waited.id, "in time")
    taker.join(5)
    assert got == ["in time"]

    # ...but never longer than MAX_AGE: then the waiter is woken with nothing.
    old = desk.ask("password", "run-3", [])
    got.clear()
    taker = threading.Thread(target=lambda: got.append(desk.take(old.id, 30)))
    taker.start()
    for _ in range(100):
        if old.waiters:
            break
        threading.Event().wait(0.01)
    clock.now += MAX_AGE + 1
    desk.pending()  # anyone looking at the desk forgets what expired
    taker.join(5)
    assert got == [None] and not taker.is_alive()
