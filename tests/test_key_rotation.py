"""``teachd key rotate`` on both engines: every sealed value under the new
key in one transaction; a kill in the middle changes nothing and the next
rotation resumes; a kill after the commit is finished by the next opening."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from teachd.config import Settings
from teachd.core.errors import KeyProblem
from teachd.store import SkillContent, SkillStore, open_store
from teachd.store.crypto import Cipher, read_key
from teachd.store.rotation import pending_key, rotate
from teachd.store.runs import RunStore

SECRET = "Pelican-Ledger-Notes"


def fill(store: SkillStore, skills: int = 3, versions: int = 4) -> None:
    for i in range(skills):
        store.create(f"s{i}", SkillContent(name=f"S {i}", description=f"{SECRET} {i}", instructions="# x\n",
                                           files={"references/a.md": SECRET}))
        for v in range(versions - 1):
            store.update(f"s{i}", lambda c, v=v: SkillContent(name=c.name, description=c.description, files=c.files,
                                                               instructions=c.instructions + f"- {v}\n"))
    runs = RunStore(store)
    rid = runs.new_run_id()
    runs.start(rid, {"s0": 1})
    runs.finish(rid, "success", {"message": SECRET})


@contextlib.contextmanager
def held_run_row(settings: Settings) -> Iterator[None]:
    """On PostgreSQL, the run's row locked by another connection until the
    block ends: a rotation re-encrypts every skill version (its progress
    lines), then waits there, inside its transaction, however fast the
    machine — so a kill after its first progress line always lands before
    its commit. (SQLite locks the whole file: nothing to hold mid-way.)"""
    if not settings.db_url:
        yield
        return
    import psycopg

    with psycopg.connect(settings.db_url) as conn:
        conn.execute("SELECT id FROM runs FOR UPDATE").fetchall()
        yield
        conn.rollback()


def env_for(settings: Settings) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
    env.update(TEACHD_HOME=str(settings.home), TEACHD_OWNER=settings.owner)
    if settings.db_url:
        env["TEACHD_DB_URL"] = settings.db_url
    return env


def test_rotation_reencrypts_everything_and_the_old_key_no_longer_opens(store: SkillStore,
                                                                       settings: Settings) -> None:
    fill(store)
    old_key = read_key(settings.key_path)
    r = subprocess.run([sys.executable, "-m", "teachd", "key", "rotate", "--json"], env=env_for(settings),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert read_key(settings.key_path) != old_key and not pending_key(settings.key_path).exists()
    again = open_store(settings)
    assert again.get("s2").current.description == f"{SECRET} 2" and again.get("s1").current_version == 4
    assert RunStore(again).recent()[0]["message"] == SECRET
    with pytest.raises(KeyProblem):
        SkillStore(again.db, Cipher(old_key), "alice")


def test_a_rotation_killed_in_its_transaction_changes_nothing_and_resumes(store: SkillStore,
                                                                           settings: Settings) -> None:
    fill(store, skills=60, versions=5)  # enough rows that the kill lands inside the transaction
    old_key = read_key(settings.key_path)
    with held_run_row(settings):  # on PostgreSQL the rotation waits at the runs, after every version
        proc = subprocess.Popen([sys.executable, "-m", "teachd", "key", "rotate"], env=env_for(settings),
                                stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the first progress line: the transaction is under way
        assert line.startswith("teachd: re-encrypted 50/"), line
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    time.sleep(0.2)
    assert read_key(settings.key_path) == old_key and pending_key(settings.key_path).exists()
    before = open_store(settings)  # still the old key: nothing was committed
    assert before.get("s59").current.description == f"{SECRET} 59"
    new_key = read_key(pending_key(settings.key_path))
    assert rotate(before.db, settings.key_path) > 300
    assert read_key(settings.key_path) == new_key  # resumed with the same new key
    assert open_store(settings).get("s0").current.files == {"references/a.md": SECRET}


def test_a_rotation_killed_after_its_commit_is_finished_by_the_next_opening(store: SkillStore,
                                                                             settings: Settings) -> None:
    fill(store)
    old_key = read_key(settings.key_path)
    rotate(store.db, settings.key_path, swap=False)  # as if killed right after the commit
    assert read_key(settings.key_path) == old_key
    reopened = open_store(settings)
    assert reopened.get("s1").current.description == f"{SECRET} 1"
    assert read_key(settings.key_path) != old_key and not pending_key(settings.key_path).exists()


def test_the_key_can_come_from_the_environment_never_from_the_database(settings: Settings, written) -> None:
    from dataclasses import replace

    store = open_store(settings)
    fill(store, skills=1, versions=1)
    hex_key = read_key(settings.key_path).hex()
    settings.key_path.unlink()
    by_env = open_store(replace(settings, key_env=hex_key))
    assert by_env.get("s0").current.description == f"{SECRET} 0"
    assert hex_key.encode() not in written() and bytes.fromhex(hex_key) not in written()
    with pytest.raises(KeyProblem, match="TEACHD_KEY"):
        open_store(replace(settings, key_env="not-a-key"))

