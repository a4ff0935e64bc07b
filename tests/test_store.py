from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from teachd.config import Settings
from teachd.core.approval import Approval
from teachd.core.errors import Conflict, InvalidSkill, KeyProblem, LimitExceeded, NotFound, UnsafePath
from teachd.store import SkillContent, SkillStore, open_store

SECRET_WORDS = ("Quarterly-Zebra-Report", "Explain-Platypus-Steps", "Invisible-Okapi-Body",
                "Hidden-Narwhal-File", "Marmot-Meta-Value")


def content(n: int = 1, **kw) -> SkillContent:
    base = dict(
        name=f"{SECRET_WORDS[0]} {n}",
        description=f"{SECRET_WORDS[1]} {n}",
        instructions=f"# {SECRET_WORDS[2]} {n}\n",
        files={"references/a.md": f"{SECRET_WORDS[3]} {n}"},
        metadata={"metadata": {"k": SECRET_WORDS[4]}},
    )
    base.update(kw)
    return SkillContent(**base)


def test_update_bumps_version_and_keeps_revisions(store: SkillStore) -> None:
    store.create("demo", content(1))
    store.update("demo", content(2), note="second")
    skill = store.get("demo")
    assert skill.current_version == 2
    assert skill.current.name.endswith(" 2")
    history = store.versions("demo")
    assert [v.version for v in history] == [1, 2]
    assert history[0].content.name.endswith(" 1")
    assert history[1].note == "second"


def test_the_version_list_reads_notes_without_opening_contents(store: SkillStore) -> None:
    """What the version list shows (number, time, note) is what the versions say."""
    store.create("demo", content(1))
    store.update("demo", content(2), note="second")
    assert store.notes("demo") == [{"version": v.version, "created_at": v.created_at, "note": v.note}
                                   for v in store.versions("demo")]
    assert [n["note"] for n in store.notes("demo")] == ["created", "second"]


def test_restore_creates_new_version_equal_to_old(store: SkillStore) -> None:
    store.create("demo", content(1, approval=Approval(True, ("computer_act",))))
    store.update("demo", content(2))
    restored = store.restore("demo", 1)
    assert restored.current_version == 3
    assert store.version("demo", 3).content == store.version("demo", 1).content
    assert [v.version for v in store.versions("demo")] == [1, 2, 3]
    with pytest.raises(NotFound, match="no version 9"):
        store.restore("demo", 9)


def test_disabled_skill_refuses_to_load_and_leaves_manifest(store: SkillStore) -> None:
    store.create("demo", content())
    store.set_enabled("demo", False)
    assert store.all(enabled_only=True) == []
    assert [s.slug for s in store.all()] == ["demo"]
    with pytest.raises(Conflict, match="disabled"):
        store.load("demo")
    store.set_enabled("demo", True)
    assert store.load("demo").slug == "demo"


def test_delete_removes_all_versions(store: SkillStore) -> None:
    store.create("demo", content())
    store.update("demo", content(2))
    store.delete("demo")
    assert not store.exists("demo")
    assert store.db.query("SELECT COUNT(*) AS n FROM skill_versions")[0]["n"] == 0
    with pytest.raises(NotFound):
        store.delete("demo")


def test_nothing_readable_is_stored_in_clear(store: SkillStore, written) -> None:
    store.create("demo", content())
    store.update("demo", content(2))
    store.db.close()
    raw = written()
    for word in SECRET_WORDS:
        assert word.encode() not in raw, word
    assert b"demo" in raw  # the slug is clear text by design: proves we read the right files


def test_key_file_is_0600_and_exposed_key_is_refused(settings: Settings) -> None:
    open_store(settings)
    assert (settings.key_path.stat().st_mode & 0o777) == 0o600
    settings.key_path.chmod(0o644)
    with pytest.raises(KeyProblem, match="chmod 600"):
        open_store(settings)


def test_wrong_key_fails_closed(settings: Settings) -> None:
    open_store(settings).create("demo", content())
    settings.key_path.unlink()
    fd = os.open(settings.key_path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, os.urandom(32))
    os.close(fd)
    with pytest.raises(KeyProblem, match="wrong key"):
        open_store(settings)


def test_missing_key_for_existing_store_is_refused(settings: Settings) -> None:
    open_store(settings).create("demo", content())
    settings.key_path.unlink()
    with pytest.raises(KeyProblem, match="missing"):
        open_store(settings)
    assert not settings.key_path.exists()


def test_ciphertexts_cannot_be_swapped_between_versions(store: SkillStore) -> None:
    store.create("demo", content(1))
    store.update("demo", content(2))
    with store.db.atomic() as tx:  # someone with the database but not the key moves a ciphertext
        v1 = tx.execute("SELECT name FROM skill_versions WHERE version = 1")[0]["name"]
        tx.execute("UPDATE skill_versions SET name = ? WHERE version = 2", (v1,))
    with pytest.raises(KeyProblem, match="tampered"):
        store.version("demo", 2)


@pytest.mark.parametrize(
    "files, error",
    [
        ({f"f{i}.md": "x" for i in range(33)}, LimitExceeded),
        ({"big.md": "x" * (200 * 1024 + 1)}, LimitExceeded),
        ({f"f{i}.md": "x" * 150_000 for i in range(7)}, LimitExceeded),
        ({"bin.dat": b"\x89PNG\x00\x01"}, LimitExceeded),
        ({"../escape.md": "x"}, UnsafePath),
        ({"/etc/passwd": "x"}, UnsafePath),
    ],
)
def test_limits_refuse_and_leave_store_unchanged(store: SkillStore, files, error) -> None:
    store.create("demo", content())
    with pytest.raises(error):
        store.update("demo", content(2, files=files))
    with pytest.raises(error):
        store.create("other", content(2, files=files))
    assert store.get("demo").current_version == 1
    assert not store.exists("other")


def test_thirty_two_bundled_files_besides_skill_md_fit(store: SkillStore, tmp_path: Path) -> None:
    from teachd.skills.exchange import read_import_source

    files = {f"references/f{i:02d}.md": f"file {i}" for i in range(32)}
    assert len(store.create("demo", content(files=files)).current.files) == 32
    folder = tmp_path / "folder-skill"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: folder-skill\ndescription: A skill. Use when x.\n---\nBody\n")
    for rel, text in files.items():
        (folder / rel).write_text(text)
    assert len(read_import_source(folder).content.files) == 32
    (folder / "references" / "one-more.md").write_text("33")
    with pytest.raises(LimitExceeded, match="more than 32 bundled files"):
        read_import_source(folder)


def test_bad_slug_and_duplicate_are_refused(store: SkillStore) -> None:
    with pytest.raises(InvalidSkill):
        store.create("Bad Slug", content())
    store.create("demo", content())
    with pytest.raises(Conflict):
        store.create("demo", content())


def _writer(home: str, n: int, db_url: str | None = None) -> None:
    st = open_store(Settings(home=Path(home), owner="alice", db_url=db_url))
    for i in range(n):
        st.update("demo", lambda c, i=i: SkillContent(
            name=c.name, description=c.description,
            instructions=c.instructions + f"- {os.getpid()}:{i}\n"))


def run_in_parallel(target: Any, arg_lists: list[tuple[Any, ...]]) -> None:
    """Each call in a process of its own, all at once; every one must succeed."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=args) for args in arg_lists]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0


def test_parallel_writers_never_lose_a_version(store: SkillStore, settings: Settings) -> None:
    store.create("demo", content())
    run_in_parallel(_writer, [(str(settings.home), 10, settings.db_url)] * 4)
    skill = store.get("demo")
    assert skill.current_version == 41
    assert [v.version for v in store.versions("demo")] == list(range(1, 42))
    # read-modify-write inside the lock: every writer's line survives
    assert skill.current.instructions.count("\n- ") == 40


def test_migrations_are_recorded_once(store: SkillStore, settings: Settings) -> None:
    from teachd.store.migrations import MIGRATIONS

    open_store(settings)  # a second opening applies nothing again
    rows = store.db.query("SELECT name FROM migrations ORDER BY name")
    assert [r["name"] for r in rows] == [name for name, _ in MIGRATIONS]
    assert [name for name, _ in MIGRATIONS][:2] == ["0001_skills", "0002_runs_feedback_rules"]
    assert len({name for name, _ in MIGRATIONS}) == len(MIGRATIONS) >= 4


def _click(home: str, db_url: str | None, run_id: str, outcome: str) -> None:
    from teachd.runner.feedback import give_feedback
    from teachd.store.runs import RunStore

    give_feedback(RunStore(open_store(Settings(home=Path(home), owner="alice", db_url=db_url))), run_id, "demo",
                  outcome)


def test_questions_asked_at_the_same_moment_each_keep_their_own_words_and_the_first_answer_wins(
        store: SkillStore) -> None:
    """On both engines, with a process's transactions side by side (on
    PostgreSQL, several connections): twelve runs asking at once each find
    their own question under their own id, and two answers to one question
    at once settle it once."""
    import threading

    from teachd.store.approvals import ApprovalQueue

    asks = ApprovalQueue(store, timeout=30)
    start = threading.Barrier(12)
    answers: dict[str, str] = {}

    def ask(n: int) -> None:
        start.wait()
        answers[f"run-{n}"] = asks.wait(f"run-{n}", {"tool": "computer_act", "n": n})

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    pending: list[dict[str, Any]] = []
    for _ in range(200):
        pending = asks.pending()
        if len(pending) == 12:
            break
        threading.Event().wait(0.05)
    assert sorted((p["run_id"], p["n"]) for p in pending) == sorted((f"run-{n}", n) for n in range(12))
    settled: list[bool] = []

    def answer(pid: int, word: str) -> None:
        try:
            asks.answer(pid, word)
            settled.append(True)
        except NotFound:  # answered already
            settled.append(False)

    for p in pending:
        both = [threading.Thread(target=answer, args=(p["id"], word)) for word in ("once", "deny")]
        for t in both:
            t.start()
        for t in both:
            t.join(10)
    for t in threads:
        t.join(30)
    assert settled.count(True) == 12 and settled.count(False) == 12  # one answer each, the other refused
    assert len(answers) == 12 and set(answers.values()) <= {"once", "deny"} and asks.pending() == []


def test_twenty_concurrent_feedback_clicks_make_twenty_versions(store: SkillStore, settings: Settings) -> None:
    from teachd.store.runs import RunStore

    store.create("demo", content())
    runs = RunStore(store)
    ids = []
    for _ in range(20):
        ids.append(runs.new_run_id())
        runs.start(ids[-1], {"demo": 1})
        runs.finish(ids[-1], "success", {"used": ["demo"]})  # judged once it ended
    run_in_parallel(_click, [(str(settings.home), settings.db_url, rid, "success" if i % 3 else "failure")
                             for i, rid in enumerate(ids)])
    skill = store.get("demo")
    assert skill.current_version == 21
    assert [v.version for v in store.versions("demo")] == list(range(1, 22))
    history = skill.current.instructions.split("## History", 1)[1]
    assert sorted(rid for rid in ids if rid in history) == sorted(ids)  # no click lost
    assert runs.outcome_counts("demo") == {1: {"success": 13, "failure": 7}}


def test_only_a_run_that_got_to_act_can_be_judged_whatever_path_the_click_takes(store: SkillStore) -> None:
    """give_feedback is the one gate of the CLI, the run page, the API and MCP:
    a run still running, one denied or cancelled, and a replay that ended
    before its first step are refused, saying why, and leave the skill as it
    was; a replay that acted and an agent's session (which may have followed
    the skill by hand, acting on nothing) are judged."""
    from teachd.core.errors import Conflict
    from teachd.runner.feedback import give_feedback
    from teachd.store.runs import RunStore

    store.create("demo", content())
    runs = RunStore(store)
    step = {"n": 1, "action": "goto", "status": "ok"}
    cases = {"running": None, "aborted": {"slug": "demo", "steps": [step]},
             "failure": {"slug": "demo", "steps": []}}
    for status, detail in cases.items():
        rid = runs.new_run_id()
        runs.start(rid, {"demo": 1})
        if detail is not None:
            runs.finish(rid, status, detail)
        with pytest.raises(Conflict, match="still running|stopped|before its first step"):
            give_feedback(runs, rid, "demo", "success")
    assert store.get("demo").current_version == 1
    for detail in ({"slug": "demo", "steps": [step]}, {"origin": "MCP session", "used": ["demo"], "steps": []}):
        rid = runs.new_run_id()
        runs.start(rid, {"demo": 1})
        runs.finish(rid, "failure" if detail.get("slug") else "ended", detail)
        assert give_feedback(runs, rid, "demo", "failure").recorded
    assert store.get("demo").current_version == 3


def test_names_remembered_for_the_manifest_are_one_per_skill_however_often_it_is_written(
        store: SkillStore) -> None:
    """The clear names a process remembers for its manifests are bounded by
    the skills, not by their writes (a daemon taking feedback all day), and
    each write is read anew."""
    store.create("busy", SkillContent(name="Busy", description="Written often.", instructions="# B\n"))
    for i in range(30):
        store.update("busy", SkillContent(name=f"Busy {i}", description="Written often.", instructions="# B\n"))
        assert [m["name"] for m in store.manifest() if m["slug"] == "busy"] == [f"Busy {i}"]
    assert len(store.cipher._memo) == 2 * len(store.manifest())


def test_a_long_history_is_compressed_before_it_is_sealed_and_reads_back_exactly(
        store: SkillStore, settings: Settings) -> None:
    """Every click writes a version whole: sealed as it was, a History of
    thousands of lines was written again in full at each click (a soak's
    PostgreSQL wrote 5 MB of WAL a second). A long value is compressed
    inside the ciphertext; a short one, and an old one sealed whole, read
    as they always did."""
    import zlib

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from teachd.store.crypto import NONCE_BYTES, PACK_FROM

    history = "".join(f"- 2026-12-{1 + i % 28:02d} — success — run run-{i:08x}\n" for i in range(2000))
    body = f"# {SECRET_WORDS[2]}\n\n## History\n\n{history}"
    store.create("demo", content(instructions=body))
    row = store.db.query("SELECT instructions, name FROM skill_versions WHERE slug = 'demo'")[0]
    sealed = bytes(row["instructions"])
    assert len(sealed) * 4 < len(body.encode())  # compressed, then sealed
    assert SECRET_WORDS[2].encode() not in sealed and zlib.compress(body.encode(), 1)[:32] not in sealed
    assert store.version("demo").content.instructions == body
    assert len(bytes(row["name"])) == len(content().name.encode()) + NONCE_BYTES + 16  # short: as it is
    old = "x" * (PACK_FROM * 4)  # sealed whole, before compression came: read as it was
    nonce = os.urandom(NONCE_BYTES)
    whole = nonce + AESGCM(settings.key_path.read_bytes()).encrypt(
        nonce, old.encode(), store.cipher._ad("alice", "demo", 1, "instructions"))
    assert store.cipher.open("alice", "demo", 1, "instructions", whole) == old


def test_a_write_answers_with_the_same_skill_a_read_after_it_gives(store: SkillStore) -> None:
    """A new version's skill is made from the row and content the write itself
    left, in its own transaction: the same as a read after it."""
    from dataclasses import replace

    made = store.create("demo", content(1))
    assert made == store.get("demo")
    updated = store.update("demo", lambda c: replace(c, instructions=c.instructions + "more\n"))
    assert updated == store.get("demo") and updated.current_version == 2
    saved = store.save("demo", lambda c: content(3, metadata={"metadata": {"k": "v", "n": 3}}), "again", "created")
    assert saved == store.get("demo") and saved.current_version == 3
