"""The store on PostgreSQL: the same code as on SQLite, and the scheduler's
"exactly one daemon runs the jobs" across daemons sharing one database."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

from teachd.config import Settings
from teachd.demo.sampleapp import SampleApp
from teachd.runner.feedback import give_feedback
from teachd.store import SkillContent, open_store
from teachd.store.approvals import ApprovalQueue
from teachd.store.runs import RunStore
from teachd.store.schedules import ScheduleStore
from tests.conftest import all_bytes_under
from tests.people import PersonAtTheDaemon
from tests.sample_task import PASSWORD, SLUG
from tests.test_schedule import wait_for


def test_the_store_keeps_skills_runs_feedback_and_schedules_on_postgresql(postgres_url: str,
                                                                           tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, owner="alice", db_url=postgres_url)
    store = open_store(settings)
    store.create("receipts", SkillContent(name="receipts", description="Files receipts. Use when asked.",
                                          instructions="# Receipts\n", files={"references/a.md": "A"}))
    runs = RunStore(store)
    run_id = runs.new_run_id()
    runs.start(run_id, {"receipts": 1})
    runs.finish(run_id, "success", {"message": "done"})
    give_feedback(runs, run_id, "receipts", "success", "on PostgreSQL")
    again = open_store(settings)  # a second process's view: the same rows, opened with the same key
    skill = again.get("receipts")
    assert skill.current_version == 2 and "on PostgreSQL" in skill.current.instructions
    assert RunStore(again).outcome_counts("receipts") == {1: {"success": 1, "failure": 0}}
    assert RunStore(again).recent()[0]["message"] == "done"
    assert ApprovalQueue(again, timeout=0.2).wait(run_id, {"action": "click Save"}) == "deny"
    assert ScheduleStore(again).all() == []
    (tmp_path / "key").unlink()
    try:
        open_store(settings)
        raise AssertionError("a store with data must not get a new key")
    except Exception as exc:
        assert "key file" in str(exc)


def ended(store: Any, n: int) -> list[dict[str, Any]]:
    """The store's runs once there are ``n`` and none is still running (newest first)."""
    return wait_for(lambda: len(rs := RunStore(store).recent()) == n
                    and all(r["status"] != "running" for r in rs) and rs, 180, f"run {n} to end")


def test_two_daemons_on_one_postgresql_run_each_job_once_and_one_takes_over(
        taught, postgres_url: str, tmp_path: Path, cli_env_runner) -> None:
    from tests.test_server import serve

    env, port = taught
    envelope = cli_env_runner(env, "skills", "export", SLUG, "--format", "json").stdout
    homes = []
    for name in ("a", "b"):
        home = tmp_path / name
        home.mkdir(mode=0o700)
        shutil.copy2(Path(env["TEACHD_HOME"]) / "key", home / "key")  # a team shares the store's key
        homes.append({**env, "TEACHD_HOME": str(home), "TEACHD_DB_URL": postgres_url,
                      "TEACHD_SECRET_PASSWORD": PASSWORD})
    (tmp_path / "skill.json").write_text(envelope)
    assert cli_env_runner(homes[0], "skills", "import", str(tmp_path / "skill.json")).returncode == 0
    added = cli_env_runner(homes[0], "schedule", "add", SLUG, "--every", "1d", "--json")
    sid = json.loads(added.stdout)["id"]
    daemons = [serve(h) for h in homes]
    store = open_store(Settings(home=Path(homes[0]["TEACHD_HOME"]), owner="alice", db_url=postgres_url))
    try:
        apis = [d.api() for d in daemons]
        wait_for(lambda: sum(a.get("/api/scheduler").json()["leading"] for a in apis) == 1, 30)
        leader = next(i for i, a in enumerate(apis) if a.get("/api/scheduler").json()["leading"])
        with SampleApp(password=PASSWORD, port=port) as app, PersonAtTheDaemon(apis[1 - leader], [], {}):
            for n, api in enumerate(apis, 1):  # "run now" through each daemon: the leader runs it, once
                assert api.post(f"/api/schedules/{sid}/run").status_code == 200
                # A schedule runs one at a time: the next Run now waits for this run's end.
                runs = ended(store, n)
                assert runs[0]["status"] == "success", runs[0]  # a halted run says where and why
                assert len(app.state.reports) == n
            assert len(app.state.reports) == 2 and len(RunStore(store).recent()) == 2
            daemons[leader].proc.send_signal(signal.SIGKILL)  # the leader dies without a word
            daemons[leader].proc.wait(30)
            other = apis[1 - leader]
            wait_for(lambda: other.get("/api/scheduler").json()["leading"], 30)
            assert other.post(f"/api/schedules/{sid}/run").status_code == 200
            runs = ended(store, 3)
            assert len(app.state.reports) == 3, runs[0]
        assert len(runs) == 3 and all(r["status"] == "success" for r in runs), runs
    finally:
        for d in daemons:
            if d.proc.poll() is None:
                d.stop()
    for h in homes:
        assert PASSWORD.encode() not in all_bytes_under(Path(h["TEACHD_HOME"]))
