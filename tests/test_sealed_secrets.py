"""A secret that a run on a worker elsewhere asks for: its person types it on
a daemon's page, the daemon seals it to the key the asking worker made for
that question, and the store holds only what no written key opens."""

from __future__ import annotations

import threading

import pytest

from teachd.core.errors import BadInput, NotFound, TooMany
from teachd.runner.secret_desk import MAX_OPEN, SecretDesk, StoreSource, wait_for_secret
from teachd.store import SkillStore
from teachd.store.runs import RunStore
from teachd.store.sealing import Opener, seal_to
from teachd.store.secret_asks import SecretAsks, bound, purge

VALUE = "Tq7-sealed-to-one-Worker"


def test_a_sealed_value_opens_only_with_its_readers_key_and_for_its_own_question() -> None:
    reader, other = Opener(), Opener()
    sealed = seal_to(reader.public, VALUE, b"question 1")
    assert VALUE.encode() not in sealed
    assert reader.open(sealed, b"question 1") == VALUE
    assert reader.open(sealed, b"question 2") is None  # moved to another question: it does not open
    assert other.open(sealed, b"question 1") is None  # another worker's key: it does not open
    assert seal_to(reader.public, VALUE, b"question 1") != sealed  # a fresh sender key and nonce each time


def _running(store: SkillStore, person: str) -> str:
    runs = RunStore(store if person == store.owner else store.as_person(person))
    run_id = runs.new_run_id()
    runs.start(run_id, {}, queued=True)
    return run_id


def test_a_workers_question_is_typed_at_the_daemon_and_reaches_that_worker_sealed(store: SkillStore) -> None:
    run_id = _running(store, "alice")
    worker = StoreSource(SecretAsks(store.db, "alice", store.cipher), poll=0.05)
    ticket = worker.ask("PASSWORD", run_id, ["taught-pay"])
    desk = SecretDesk()
    alices = desk.for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    bobs = desk.for_person("bob", SecretAsks(store.db, "bob", store.cipher))
    listed = alices.pending()
    assert [(a["id"], a["name"], a["run_id"], a["skills"]) for a in listed] == \
        [(ticket.id, "PASSWORD", run_id, ["taught-pay"])]
    assert alices.get(ticket.id)["url"] == f"/secrets/{ticket.id}"
    assert bobs.pending() == []  # another person neither sees nor types it
    with pytest.raises(NotFound):
        bobs.give(ticket.id, "bob's guess")
    alices.give(ticket.id, VALUE)
    row = store.db.query("SELECT sealed, reader FROM secret_asks WHERE id = ?", (ticket.id,))[0]
    assert VALUE.encode() not in bytes(row["sealed"]) and bytes(row["reader"]) == worker._openers[ticket.id][0].public
    assert alices.pending() == []  # typed: no longer asked
    with pytest.raises(NotFound):
        alices.give(ticket.id, "again")  # typed once
    assert worker.take(ticket, 5, threading.Event()) == VALUE
    assert store.db.query("SELECT 1 FROM secret_asks") == []  # taken: the row is gone


def test_a_cancelled_runs_question_leaves_the_page_and_its_worker_gets_nothing(store: SkillStore) -> None:
    run_id = _running(store, "alice")
    worker = StoreSource(SecretAsks(store.db, "alice", store.cipher), poll=0.05)
    alices = SecretDesk().for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    got: list[str | None] = []
    waiting = threading.Thread(target=lambda: got.append(
        wait_for_secret(worker, "PASSWORD", run_id, ["taught-pay"], 30, threading.Event())[1]))
    waiting.start()
    while not alices.pending():
        threading.Event().wait(0.02)
    assert alices.withdraw(run_id) == 1
    waiting.join(10)
    assert got == [None] and alices.pending() == []
    assert store.db.query("SELECT 1 FROM secret_asks") == []


def test_the_question_of_a_run_that_ended_is_not_shown_nor_typed(store: SkillStore) -> None:
    run_id = _running(store, "alice")
    worker = StoreSource(SecretAsks(store.db, "alice", store.cipher), poll=0.05)
    ticket = worker.ask("PASSWORD", run_id, [])
    RunStore(store).end(run_id, "interrupted", "its worker stopped answering")
    alices = SecretDesk().for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    assert alices.pending() == []
    with pytest.raises(NotFound):
        alices.give(ticket.id, VALUE)
    assert worker.take(ticket, 0.2, threading.Event()) is None
    assert purge(store.db) == 1 and store.db.query("SELECT 1 FROM secret_asks") == []  # the sweep's


def test_a_cancelled_runs_new_question_is_not_shown_nor_typed(store: SkillStore) -> None:
    run_id = _running(store, "alice")
    RunStore(store).cancel(run_id, "alice")  # its worker has not noticed yet: the run is still running
    ticket = StoreSource(SecretAsks(store.db, "alice", store.cipher)).ask("PASSWORD", run_id, [])
    alices = SecretDesk().for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    assert alices.pending() == []
    with pytest.raises(NotFound):
        alices.give(ticket.id, VALUE)


def test_only_a_holder_of_the_stores_key_asks_or_answers_through_the_store(store: SkillStore) -> None:
    """Someone who can write to the database but holds no key can neither
    put a question of theirs before a person (to be handed the secret) nor
    hand a worker a value of their choosing."""
    run_id = _running(store, "alice")
    alices = SecretDesk().for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    theirs = Opener()
    with store.db.atomic() as tx:
        tx.execute("INSERT INTO secret_asks (id, owner, run_id, name, skills, reader, proof, sealed, created_at)"
                   " VALUES ('planted', 'alice', ?, 'PASSWORD', '[]', ?, ?, NULL, '2026-12-05T00:00:00+00:00')",
                   (run_id, theirs.public, b"\0" * 40))
    assert alices.pending() == []  # its proof is no key holder's: never shown
    with pytest.raises(NotFound):
        alices.give("planted", VALUE)
    assert store.db.query("SELECT sealed FROM secret_asks WHERE id = 'planted'")[0]["sealed"] is None
    worker = StoreSource(SecretAsks(store.db, "alice", store.cipher), poll=0.05)
    ticket = worker.ask("PASSWORD", run_id, [])
    reader = worker._openers[ticket.id][0].public
    forged = seal_to(reader, "their-own-value", bound(ticket.id, "alice", run_id, "PASSWORD"))
    with store.db.atomic() as tx:
        tx.execute("UPDATE secret_asks SET sealed = ? WHERE id = ?", (forged, ticket.id))
    assert worker.take(ticket, 0.3, threading.Event()) is None  # not sealed with the store's key: not opened


def test_the_daemons_own_question_is_answered_once_and_the_limit_counts_the_workers_too(
        store: SkillStore) -> None:
    run_id = _running(store, "alice")
    alices = SecretDesk().for_person("alice", SecretAsks(store.db, "alice", store.cipher))
    own = alices.ask("PASSWORD", run_id, [])
    alices.give(own.id, VALUE)
    with pytest.raises(NotFound):
        alices.give(own.id, "a second answer")  # not taken over the first
    with pytest.raises(BadInput):
        alices.give(alices.ask("OTHER", run_id, []).id, "\ud800")
    worker = StoreSource(SecretAsks(store.db, "alice", store.cipher))
    for n in range(MAX_OPEN - 1):  # and OTHER, still open on the desk: 16
        worker.ask(f"W{n}", run_id, [])
    with pytest.raises(TooMany):
        alices.ask("ONE_MORE", run_id, [])
