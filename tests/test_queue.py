"""Runs on many machines: on the team store a run is a job on procrastinate's
queue in the same PostgreSQL, taken by ``teachd worker`` processes (each in
a home of its own, as on another machine). Tested on a throwaway PostgreSQL
with the real queue functions, real workers and real replays of the sample
task: enqueue, take, finish; a daemon restart while runs wait; SIGTERM
drains; kill -9 mid-run leaves the run interrupted with its writes and
nothing runs it again; one enqueue of a firing however many daemons race;
a desktop run never fetched by a worker without a desktop; another
person's first run before someone's many."""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from teachd.config import Settings
from teachd.demo.sampleapp import SampleApp
from teachd.queue.app import RunQueue
from teachd.queue.jobs import DESKTOP, PER_PERSON, RunJob, queues_for, skill_lanes
from teachd.queue.sweep import STALLED_S, SWEEP_EVERY
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.people import PersonAtTheDaemon, run_until, wait_for
from tests.queue_team import Team, team_on, until_listed, workers_seen
from tests.sample_task import PASSWORD, SLUG, held_at


def _fetch(queue: RunQueue, can: list[str]) -> dict[str, Any] | None:
    """What procrastinate's own fetch gives a worker that can do ``can`` (its queues)."""
    rows = queue.db.query("SELECT id, args FROM procrastinate_fetch_job_v2(?, NULL)", (queues_for(can),))
    return rows[0]["args"] if rows and rows[0]["id"] is not None else None


def test_another_persons_first_run_goes_before_someones_many_and_each_person_keeps_to_their_lanes(
        postgres_url: str) -> None:
    from teachd.store.postgres import PostgresDatabase

    db = PostgresDatabase(postgres_url)
    queue = RunQueue(postgres_url, db)
    try:
        for n in range(5):
            queue.submit(RunJob(f"alice-{n}", "alice", "taught-x"))
        queue.submit(RunJob("bob-0", "bob", "taught-x"))
        queue.submit(RunJob("carol-desk", "carol", "taught-y", needs=(DESKTOP,)))
        assert queue.position("bob-0") == {"job": queue.position("bob-0")["job"], "ahead": 1,  # type: ignore[index]
                                           "queue": "teachd-runs", "per_person": PER_PERSON}
        taken = [(_fetch(queue, []) or {}).get("run_id") for _ in range(6)]
        # alice's first, then bob's (another person's first run before alice's second), then alice's
        # up to her lanes; her 4th and 5th wait while her first three run; carol's desktop run is
        # never given to a worker without a desktop
        assert taken == ["alice-0", "bob-0", "alice-1", "alice-2", None, None], taken
        assert (_fetch(queue, [DESKTOP]) or {}).get("run_id") == "carol-desk"
        assert queue.depth() == {"waiting": 2, "running": 5}
    finally:
        queue.close()


def test_a_waiting_run_that_types_a_secret_goes_to_any_worker_once_its_persons_own_worker_is_gone(
        postgres_url: str, tmp_path: Path) -> None:
    """Any worker can ask a run's secret (sealed to it), so a run that waits
    for its person's own worker (gone), or for a daemon's secret desk (where
    such runs waited before), is moved where every worker takes it."""
    from teachd.queue.sweep import reroute

    store = open_store(Settings(home=tmp_path, owner="alice", db_url=postgres_url))
    queue = RunQueue(postgres_url, store.db)
    try:
        queue.submit(RunJob("for-her-worker", "alice", "taught-x", needs=("secrets@alice",)))
        queue.submit(RunJob("for-a-desk", "bob", "taught-x", needs=("desk", DESKTOP)))
        assert _fetch(queue, []) is None  # a worker of nobody's, with no desktop, takes neither yet
        assert reroute(store) == 2
        assert (_fetch(queue, []) or {}).get("run_id") == "for-her-worker"
        assert _fetch(queue, []) is None
        moved = _fetch(queue, [DESKTOP]) or {}
        assert moved.get("run_id") == "for-a-desk" and moved.get("needs") == [DESKTOP], moved
    finally:
        queue.close()


def test_a_skill_limited_to_one_at_once_runs_one_at_a_time_whoever_queued_it(postgres_url: str) -> None:
    """procrastinate's own fetch, as a worker with free slots asks it: the
    limited skill's second run (alice's) and bob's run of it wait while its
    first runs; alice's other skill goes meanwhile; when the first ends, the
    next of the skill goes, in the order they were queued."""
    from teachd.store.postgres import PostgresDatabase

    db = PostgresDatabase(postgres_url)
    queue = RunQueue(postgres_url, db)
    one = skill_lanes("alice", "taught-x", 1)
    try:
        queue.submit(RunJob("alice-x-0", "alice", "taught-x"), limited=one)
        queue.submit(RunJob("alice-x-1", "alice", "taught-x"), limited=one)
        queue.submit(RunJob("bob-x", "bob", "taught-x"), limited=one)  # shared with him: the same skill
        queue.submit(RunJob("alice-y", "alice", "taught-y"))

        def take() -> tuple[int, str] | None:
            rows = db.query("SELECT id, args FROM procrastinate_fetch_job_v2(?, NULL)", (queues_for([]),))
            return (int(rows[0]["id"]), str(rows[0]["args"]["run_id"])) if rows and rows[0]["id"] else None

        first = take()
        assert first is not None and first[1] == "alice-x-0"
        assert [(t or (0, None))[1] for t in (take(), take())] == ["alice-y", None]
        # bob's run waits for the skill: one of its runs running, one queued before his
        assert (queue.position("bob-x") or {}).get("skill") == {"running": 1, "ahead": 1}
        assert (queue.position("alice-x-1") or {}).get("skill") == {"running": 1, "ahead": 0}
        db.query("SELECT procrastinate_finish_job_v1(?, 'succeeded', false)", (first[0],))
        second = take()
        assert second is not None and second[1] == "alice-x-1" and take() is None
        db.query("SELECT procrastinate_finish_job_v1(?, 'succeeded', false)", (second[0],))
        assert (take() or (0, None))[1] == "bob-x"
    finally:
        queue.close()


def test_two_daemons_firing_one_schedule_at_once_put_one_run_on_the_queue(
        taught: tuple[dict[str, str], int], postgres_url: str, tmp_path: Path, cli_env_runner: Any) -> None:
    from teachd.core.schedules import Spec
    from teachd.queue.submit import queue_firing
    from teachd.store.schedules import ScheduleStore

    team = team_on(taught[0], postgres_url, tmp_path, cli_env_runner)
    settings = Settings(home=tmp_path / "daemon", owner="alice", db_url=postgres_url,
                        key_env=team.env["TEACHD_KEY"])
    stores = [open_store(settings), open_store(settings)]  # two daemons, a connection each
    queues = [RunQueue(postgres_url, s.db) for s in stores]
    try:
        sid = ScheduleStore(stores[0]).add(Spec(SLUG, "run", every_s=3600))
        view = ScheduleStore(stores[0]).get(sid)
        start, got = threading.Barrier(2), [None, None]

        def fire(i: int) -> None:
            start.wait()
            got[i] = queue_firing(queues[i], RunStore(stores[i]), view, "2026-12-04T09:00:00+00:00", None)

        threads = [threading.Thread(target=fire, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        queued = [g for g in got if g is not None and "folded" not in g[2]]
        folded = [g for g in got if g is not None and "folded" in g[2]]
        assert len(queued) == 1 and len(folded) == 1, got
        assert folded[0][1] == queued[0][1]  # the schedule keeps the run that waits
        assert [j["run_id"] for j in queues[0].jobs()] == [queued[0][1]]
        assert [r["run_id"] for r in RunStore(stores[0]).recent()] == [queued[0][1]]  # the loser's record gone
    finally:
        for q in queues:
            q.close()


@dataclass
class Running:
    """A team store with a daemon that takes no runs itself (``--slots 0``): workers do."""

    team: Team
    server: Any
    port: int  # the sample app's

    def restart(self) -> None:
        from tests.test_server import serve

        self.server.stop()
        self.server = serve(self.team.env, "--slots", "0")


@pytest.fixture
def running(taught: tuple[dict[str, str], int], postgres_url: str, tmp_path: Path,
            cli_env_runner: Any) -> Iterator[Running]:
    from tests.test_server import serve

    env, port = taught
    team = team_on(env, postgres_url, tmp_path, cli_env_runner)
    made = Running(team, serve(team.env, "--slots", "0"), port)
    try:
        yield made
    finally:
        team.stop()
        made.server.stop()


def _run(api: Any, placed: list[dict[str, Any]] | None = None, amount: str = "5.00") -> str:
    started = api.post("/api/runs", json={"slug": SLUG, "params": {"amount": amount}})
    assert started.status_code == 200, started.text
    if placed is not None:
        placed.append(started.json().get("place") or {})
    return str(started.json()["run_id"])


def test_the_retention_sweep_is_one_job_however_often_it_fires_and_a_worker_purges_the_teams_old_pictures(
        taught: tuple[dict[str, str], int], postgres_url: str, tmp_path: Path, cli_env_runner: Any) -> None:
    """On the team store a daemon's daily retention purges its own
    recordings and puts the sweep of the team's step pictures on the queue:
    two daemons' firings are one job, taken by a worker, which purges the old
    pictures (a recent run keeps its own)."""
    from datetime import UTC, datetime, timedelta

    from teachd.queue.app import RETENTION
    from teachd.runner.on_page import run_on_the_page
    from teachd.runner.secret_desk import SecretDesk
    from teachd.schedule.service import ScheduleService
    from teachd.store.approvals import ApprovalQueue

    team = team_on(taught[0], postgres_url, tmp_path, cli_env_runner)
    settings = Settings(home=tmp_path / "daemon", owner="alice", db_url=postgres_url,
                        key_env=team.env["TEACHD_KEY"])
    stores = [open_store(settings), open_store(settings)]  # two daemons
    queues = [RunQueue(postgres_url, s.db) for s in stores]
    services = [ScheduleService(s, settings, ApprovalQueue(s), SecretDesk(), run_on_the_page) for s in stores]
    try:
        ran = {}
        for age in (30, 1):  # days ago
            runs = RunStore(stores[0], clock=lambda a=age: datetime.now(UTC) - timedelta(days=a))
            ran[age] = runs.new_run_id()
            runs.start(ran[age], {})
            runs.put_picture(ran[age], 1, "after", b"\xff\xd8\xff\xe0 a step's picture")
            runs.finish(ran[age], "success", {"message": "done"})
        for service, queue in zip(services, queues, strict=True):
            service.queue_retention = queue.retention
            assert service.purge() == []  # no recordings here; the pictures' sweep goes on the queue
        waiting = stores[0].db.query("SELECT status FROM procrastinate_jobs WHERE task_name = ?", (RETENTION,))
        assert [r["status"] for r in waiting] == ["todo"]  # two firings, one job
        runs = RunStore(stores[0])
        assert runs.pictures_of(ran[30]) == {(1, "after")}  # not purged by the daemon itself
        team.worker("sweeper", "--slots", "1")
        wait_for(lambda: not stores[0].db.query("SELECT 1 FROM procrastinate_jobs WHERE task_name = ?",
                                                (RETENTION,)), 60, "the worker to take the sweep")
        assert runs.pictures_of(ran[30]) == set() and runs.pictures_of(ran[1]) == {(1, "after")}
        assert runs.one(ran[30])["message"] == "done"  # the run's record stays
    finally:
        team.stop()
        for q in queues:
            q.close()


def test_runs_wait_through_a_daemon_restart_a_worker_runs_them_and_sigterm_drains_it(
        running: Running, cli_env_runner: Any) -> None:
    team, port = running.team, running.port
    api = running.server.api()
    placed: list[dict[str, Any]] = []
    first = _run(api, placed)
    again = api.post("/api/runs", json={"slug": SLUG, "params": {"amount": "5.00"}})
    assert again.status_code == 409, again.text  # a second click is not a second run
    second = _run(api, placed, amount="7.00")
    # the answer says where each stands: no slot can take them yet (the daemon takes none, no worker)
    assert placed == [{"ahead": 0, "slots": 0, "starts_in_s": None},
                      {"ahead": 1, "slots": 0, "starts_in_s": None}], placed
    record = api.get(f"/api/runs/{first}").json()
    assert record["status"] == "running" and record["queued"], record
    assert record["place"]["ahead"] == 0, record["place"]
    assert workers_seen(cli_env_runner, team.env)["queue"] == {"waiting": 2, "running": 0}
    running.restart()  # the daemon restarts while the runs wait: they stay queued, not ended as orphans
    api = running.server.api()
    assert [api.get(f"/api/runs/{r}").json()["queued"] for r in (first, second)] == [True, True]
    with SampleApp(password=PASSWORD, port=port) as app:
        one = team.worker("one", "--slots", "1")
        listed = until_listed(cli_env_runner, team.env, "one")
        assert listed["slots"] == 1 and listed["can"] == ["secrets@alice"], listed
        # the worker took the first run (moved to its queue: it holds alice's secret), which asks its
        # plan question on the daemon's Approvals page; nobody answers yet
        wait_for(lambda: [p for p in api.get("/api/approvals").json()["pending"] if p["run_id"] == first],
                 120, "the first run's question")
        one.send_signal(signal.SIGTERM)  # drain: the run under way finishes, no new one is taken
        # procrastinate's heartbeat stops as its worker drains; teachd's goes on: a drain that outlasts
        # the time a silent worker is taken for dead (10 s) is not a death — the run is not interrupted
        time.sleep(STALLED_S + 2 * SWEEP_EVERY)
        assert api.get(f"/api/runs/{first}").json()["status"] == "running"
        with PersonAtTheDaemon(api, [], {}):
            assert one.wait(180) == 0, one.stderr.read() if one.stderr else ""
            done = run_until(api, first, lambda r: r["status"] != "running", 60)
            assert done["status"] == "success", done
            assert api.get(f"/api/runs/{second}").json()["queued"]  # not taken by the draining worker
            assert len(app.state.reports) == 1
            assert "one" not in [w["name"] for w in workers_seen(cli_env_runner, team.env)["workers"]]
            team.worker("two", "--slots", "1")
            done = run_until(api, second, lambda r: r["status"] != "running", 180)
            assert done["status"] == "success", done
            assert len(app.state.reports) == 2
    out = one.stderr.read() if one.stderr else ""
    assert "draining" in out and first in out and second not in out, out


def test_a_worker_of_nobodys_asks_the_runs_secret_at_the_daemon_and_it_reaches_the_worker_sealed(
        running: Running, cli_env_runner: Any, postgres_server: Any) -> None:
    """A worker started as no one, with no secret, takes alice's run that
    types her password: the question shows on the daemon's pages, alice types
    it there, and it reaches that worker sealed to a key it made for the
    question — the run succeeds, and nothing the store, the daemon or the
    worker wrote holds the password."""
    team, port, api = running.team, running.port, running.server.api()
    assert "TEACHD_SECRET_PASSWORD" not in team.env
    with SampleApp(password=PASSWORD, port=port) as app, \
            PersonAtTheDaemon(api, [], {"password": PASSWORD}) as person:
        run_id = _run(api)
        home = team.base / "worker-anyone"  # its machine's owner lets runs reach the team's app
        home.mkdir(mode=0o700)
        (home / "config.yaml").write_text(f"team_origins:\n  - http://127.0.0.1:{port}\n", encoding="utf-8")
        anyone = team.worker("anyone", "--slots", "1", secrets=False)
        assert until_listed(cli_env_runner, team.env, "anyone")["can"] == []
        done = run_until(api, run_id, lambda r: r["status"] != "running", 180)
        assert done["status"] == "success", done["message"]
        assert len(app.state.reports) == 1
        assert [s for s in person.seen if s.startswith("secret ")] == [f"secret password for ['{SLUG}']"]
    anyone.send_signal(signal.SIGTERM)
    assert anyone.wait(60) == 0
    store = open_store(Settings(home=team.base / "daemon", owner="alice", db_url=team.env["TEACHD_DB_URL"],
                                key_env=team.env["TEACHD_KEY"]))
    assert store.db.query("SELECT 1 FROM secret_asks") == []  # taken, and gone
    written = postgres_server.written() + b"".join(p.read_bytes() for p in sorted(team.base.rglob("*"))
                                                   if p.is_file())
    out = (anyone.stdout.read() if anyone.stdout else "") + (anyone.stderr.read() if anyone.stderr else "")
    assert PASSWORD.encode() not in written and PASSWORD not in out


def test_an_agents_run_skill_goes_on_the_run_queue_as_a_click_does_and_a_worker_replays_it(
        running: Running) -> None:
    """An MCP client's run_skill on a daemon with a run queue: the run is a
    job a worker takes (its origin the session), its plan question waits on
    the Approvals page, the tool answers with its outcome — and no Chromium
    opens on the daemon's machine for it."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.security.daemon import chromiums_under

    team, port, server = running.team, running.port, running.server
    api = server.api()

    async def call() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=300) as h:
            async with Client(streamable_http_client(server.url + "/mcp", http_client=h)) as client:
                return await client.call_tool("run_skill", {"slug": SLUG, "params": {"amount": "5.00"}})

    browsers: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            browsers.append(chromiums_under(server.proc.pid))
            done.wait(0.2)

    with SampleApp(password=PASSWORD, port=port) as app, PersonAtTheDaemon(api, [], {}) as person:
        team.worker("one", "--slots", "1")
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        result = asyncio.run(call())
        done.set()
        watcher.join(10)
        out = "\n".join(c.text for c in result.content if getattr(c, "text", None))
        assert len(app.state.reports) == 1, out
    assert not result.is_error and out.startswith("run ") and out.splitlines()[0].endswith(
        "success — " + out.splitlines()[0].split(" — ", 1)[1]), out
    run_id = out.split()[1].rstrip(":")
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "success" and run["origin"].startswith("MCP session "), run
    assert [s for s in person.seen if s.startswith("allow")], person.seen  # asked on the Approvals page
    assert browsers and max(browsers) == 0, browsers  # the worker's Chromium, none of the daemon's


def test_an_agent_that_cancels_its_run_skill_takes_the_waiting_run_off_the_queue(
        running: Running, cli_env_runner: Any) -> None:
    """The twin of the Runs page's Cancel: the client cancels its run_skill
    call while the run waits for a worker; the run ends at once, off the
    queue, and the session's next call still works."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    server, api = running.server, running.server.api()

    def agents_runs() -> list[dict[str, Any]]:
        return [r for r in api.get("/api/runs").json()
                if r.get("origin", "").startswith("MCP session ") and r.get("slug") == SLUG]

    async def go() -> tuple[str, Any]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=120) as h:
            async with Client(streamable_http_client(server.url + "/mcp", http_client=h)) as client:
                call = asyncio.create_task(client.call_tool("run_skill", {"slug": SLUG,
                                                                          "params": {"amount": "5.00"}}))
                waiting = await asyncio.to_thread(wait_for, agents_runs, 60, "the agent's run in the queue")
                assert workers_seen(cli_env_runner, running.team.env)["queue"] == {"waiting": 1, "running": 0}
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                return str(waiting[0]["run_id"]), await client.call_tool("read_skill_file",
                                                                          {"slug": SLUG, "path": "SKILL.md"})

    run_id, after = asyncio.run(go())
    ended = run_until(api, run_id, lambda r: r["status"] != "running", 30)
    assert ended["status"] == "aborted", ended
    assert ended["message"] == "cancelled by the agent's client while it waited in the run queue", ended
    assert workers_seen(cli_env_runner, running.team.env)["queue"] == {"waiting": 0, "running": 0}
    assert not after.is_error


def test_a_worker_killed_mid_run_leaves_it_interrupted_with_its_writes_and_nothing_runs_it_again(
        running: Running, cli_env_runner: Any) -> None:
    team, port, api = running.team, running.port, running.server.api()
    with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, _release), \
            PersonAtTheDaemon(api, [], {}):
        run_id = _run(api)
        doomed = team.worker("doomed", "--slots", "1")
        assert reached.wait(120), "the worker's replay never reached the report form"
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(30)
        done = run_until(api, run_id, lambda r: r["status"] != "running", 60)
        assert done["status"] == "interrupted", done
        assert done["message"].startswith("interrupted at step "), done["message"]
        assert "doomed" in done["message"] and "stopped answering" in done["message"], done["message"]
        wrote = done["partial"]["wrote"]
        assert wrote and all(w["method"] == "POST" for w in wrote), done["partial"]
        assert [s["status"] for s in done["steps"]][-1] == "interrupted"
        team.worker("after", "--slots", "1")
        until_listed(cli_env_runner, team.env, "after")
        # nothing runs it again: the queue is empty, the app got no report, the run stays as it ended
        assert workers_seen(cli_env_runner, team.env)["queue"] == {"waiting": 0, "running": 0}
        assert api.get(f"/api/runs/{run_id}").json()["status"] == "interrupted"
        assert len(app.state.reports) == 0


def test_a_run_of_a_skill_marked_safe_to_repeat_is_run_again_once_by_itself_after_its_worker_died(
        running: Running, cli_env_runner: Any) -> None:
    """Its owner's mark (``teachd skills repeatable``) is the one thing that
    lets the sweep queue an interrupted run again: a new run, that names the
    one it repeats, with the same parameters, and the interrupted run's
    message says so. Without the mark, the test above: nothing runs again."""
    team, port, api = running.team, running.port, running.server.api()
    marked = cli_env_runner(team.env, "skills", "repeatable", SLUG, "--json")
    assert marked.returncode == 0 and json.loads(marked.stdout) == {"slug": SLUG, "repeatable": True}, marked
    assert api.get(f"/api/skills/{SLUG}").json()["repeatable"] is True
    with SampleApp(password=PASSWORD, port=port) as app, PersonAtTheDaemon(api, [], {}):
        with held_at(app, "/reports/new") as (reached, _release):
            run_id = _run(api, amount="9.00")
            doomed = team.worker("doomed", "--slots", "1")
            assert reached.wait(120), "the worker's replay never reached the report form"
            doomed.send_signal(signal.SIGKILL)
            doomed.wait(30)
            done = run_until(api, run_id, lambda r: r["status"] != "running", 60)
        assert done["status"] == "interrupted" and done["partial"]["wrote"], done
        found = re.search(r"run again by itself as (run-[\w-]+) \(its skill is marked safe to repeat\)",
                          done["message"])
        assert found, done["message"]
        again = found.group(1)
        # the sweep ends the run (its message naming the repeat) and then queues the repeat: its
        # record follows a moment later (seen in a fresh-clone CI: asked in between, not there yet)
        waiting = wait_for(lambda: (r := api.get(f"/api/runs/{again}")).status_code == 200 and r.json(), 30,
                           f"the repeat {again} queued")
        assert waiting["queued"] and waiting["retry_of"] == run_id and waiting["params"] == {"amount": "9.00"}
        team.worker("after", "--slots", "1")
        redone = run_until(api, again, lambda r: r["status"] != "running", 180)
        assert redone["status"] == "success", redone
        assert [r["amount"] for r in app.state.reports] == ["9.00"]  # the interrupted run filed none
    # once, and only this one: no other run of the skill was started by itself
    assert sorted(r["run_id"] for r in api.get("/api/runs").json()) == sorted([run_id, again])


def test_a_skill_limited_to_one_run_at_once_runs_the_next_after_the_first_with_a_slot_free(
        running: Running, cli_env_runner: Any) -> None:
    """Its owner's limit (``teachd skills at-once SLUG 1``): two runs of it
    queued, two workers with a slot each, and the second waits its turn
    while the first is held mid-run — then runs, once the first has ended."""
    team, port, api = running.team, running.port, running.server.api()
    limited = cli_env_runner(team.env, "skills", "at-once", SLUG, "1", "--json")
    assert limited.returncode == 0 and json.loads(limited.stdout) == {"slug": SLUG, "at_once": 1}, limited
    assert api.get(f"/api/skills/{SLUG}").json()["at_once"] == 1
    with SampleApp(password=PASSWORD, port=port) as app, PersonAtTheDaemon(api, [], {}):
        team.worker("one", "--slots", "1")
        team.worker("two", "--slots", "1")
        until_listed(cli_env_runner, team.env, "one")
        until_listed(cli_env_runner, team.env, "two")
        with held_at(app, "/reports/new") as (reached, release):  # held less than a navigation may take
            first = _run(api, amount="1.00")
            assert reached.wait(120), "the first run never reached the report form"
            second = _run(api, amount="2.00")
            time.sleep(SWEEP_EVERY)  # a free worker hears a job at once (LISTEN/NOTIFY), were it allowed
            assert workers_seen(cli_env_runner, team.env)["queue"] == {"waiting": 1, "running": 1}
            waiting = api.get(f"/api/runs/{second}").json()
            assert waiting["queued"] is True and waiting["place"]["at_once"] == 1, waiting.get("place")
            release.set()
            ends = [run_until(api, r, lambda r: r["status"] != "running", 180) for r in (first, second)]
    assert [e["status"] for e in ends] == ["success", "success"], ends
    assert [r["amount"] for r in app.state.reports] == ["1.00", "2.00"]
    assert cli_env_runner(team.env, "skills", "at-once", SLUG, "--any").returncode == 0
    assert api.get(f"/api/skills/{SLUG}").json()["at_once"] is None


def test_a_postgresql_outage_longer_than_a_workers_silence_ends_no_run_and_runs_none_twice(
        taught: tuple[dict[str, str], int], tmp_path: Path, cli_env_runner: Any) -> None:
    """PostgreSQL goes away for longer than a worker may be silent while a
    worker's run waits for its person's answer: every heartbeat stops, as a
    dead worker's would. When it is back, the daemon's sweep must not take
    the worker for dead, nor the run its question: the person answers, the
    run goes on to its end, once, and its skill (marked safe to repeat) is
    not queued a second time. On a cluster of its own: it is stopped."""
    from tests.postgres import fresh_database, postgres_cluster
    from tests.test_server import serve

    env, port = taught
    with postgres_cluster() as cluster:
        team = team_on(env, fresh_database(cluster, "outage"), tmp_path, cli_env_runner)
        assert cli_env_runner(team.env, "skills", "repeatable", SLUG).returncode == 0
        server = serve(team.env, "--slots", "0")
        try:
            api = server.api()
            with SampleApp(password=PASSWORD, port=port) as app:
                run_id = _run(api, amount="7.00")
                team.worker("through", "--slots", "1")
                wait_for(lambda: api.get("/api/approvals").json()["pending"], 120, "the run's question")
                cluster.stop()
                time.sleep(STALLED_S + SWEEP_EVERY)  # every heartbeat older than a dead worker's
                cluster.start()
                time.sleep(2 * SWEEP_EVERY)  # the sweep looked again, before the worker could beat anew
                with PersonAtTheDaemon(api, [], {}):
                    done = run_until(api, run_id, lambda r: r["status"] != "running", 120)
            assert done["status"] == "success", done
            assert [r["amount"] for r in app.state.reports] == ["7.00"]
            assert [r["run_id"] for r in api.get("/api/runs").json()] == [run_id]  # nothing queued again
        finally:
            team.stop()
            server.stop()


def test_a_schedules_run_and_health_check_go_on_the_queue_and_a_worker_records_their_outcomes(
        running: Running) -> None:
    """The scheduler only decides when: on the team store its firing is a run
    on the queue like any other, and the worker that runs it (a replay, or
    a health check) records the outcome on the schedule."""
    team, port, api = running.team, running.port, running.server.api()
    made = {kind: api.post("/api/schedules", json={"slug": SLUG, "every": "1d", "check": kind == "check"})
            for kind in ("run", "check")}
    assert all(r.status_code == 200 for r in made.values()), {k: r.text for k, r in made.items()}
    sids = {kind: int(r.json()["id"]) for kind, r in made.items()}
    with SampleApp(password=PASSWORD, port=port) as app, PersonAtTheDaemon(api, [], {}):
        for sid in sids.values():  # the leader makes each schedule's job just after it is added
            wait_for(lambda s=sid: api.post(f"/api/schedules/{s}/run").status_code == 200, 60, "Run now")
        queued = wait_for(lambda: all(s.get("last_outcome") == "queued" for s in api.get("/api/schedules").json()
                                      if s["id"] in sids.values()), 60, "both firings queued")
        assert queued
        team.worker("scheduled", "--slots", "1")

        def outcomes() -> dict[int, str] | None:
            got = {s["id"]: s.get("last_outcome") for s in api.get("/api/schedules").json()}
            return got if all(got.get(sid) not in (None, "queued") for sid in sids.values()) else None

        got = wait_for(outcomes, 240, "the worker to record both outcomes")
        assert got[sids["run"]] == "success", got
        assert got[sids["check"]] in ("healthy", "unknown"), got  # the check acted on nothing
        assert len(app.state.reports) == 1  # the replay's report; the check made none
    checks = [r for r in api.get("/api/runs").json() if r.get("origin", "").startswith("health check")]
    assert checks and checks[0]["status"] != "running", checks


def test_a_retention_sweep_whose_worker_died_waits_again_unless_a_later_one_waits_already(
        postgres_url: str, tmp_path: Path) -> None:
    """The database as a worker killed during the retention sweep leaves it:
    the job *doing*, held by a worker whose heartbeats stopped. It stayed so
    for ever; the daemon's sweep now puts it back for the next worker (it
    only deletes what is old: safe to repeat), or ends it when a later
    firing's sweep already waits (one waits at a time)."""
    from teachd.queue.app import RETENTION
    from teachd.queue.sweep import sweep
    from teachd.store.workers import WorkerStore

    store = open_store(Settings(home=tmp_path, owner="alice", db_url=postgres_url))
    queue = RunQueue(postgres_url, store.db)

    def held_by_a_dead_worker() -> int:
        (dead,) = store.db.query("INSERT INTO procrastinate_workers (last_heartbeat)"
                                 " VALUES (NOW() - interval '1 hour') RETURNING id")
        (job,) = store.db.query("UPDATE procrastinate_jobs SET status = 'doing', worker_id = ?"
                                " WHERE task_name = ? AND status = 'todo' RETURNING id", (dead["id"], RETENTION))
        return int(job["id"])

    def status() -> list[tuple[int, str, int]]:
        return [(int(r["id"]), str(r["status"]), int(r["attempts"])) for r in store.db.query(
            "SELECT id, status, attempts FROM procrastinate_jobs WHERE task_name = ? ORDER BY id", (RETENTION,))]

    try:
        assert queue.retention(30)
        first = held_by_a_dead_worker()
        assert sweep(store, STALLED_S, queue) == []  # no run of anyone's ended
        assert status() == [(first, "todo", 1)]  # waits again, its attempt counted
        held_by_a_dead_worker()
        assert queue.retention(30)  # the next firing's, while that one is held
        (_, later) = status()
        sweep(store, STALLED_S, queue)
        assert status() == [later]  # the held one ended (the later one does the same), one waits
        assert not queue.retention(30)  # still one waiting at a time
        for tries in (1, 2):  # its workers keep dying: tried RETENTION_TRIES times in all, then ended
            held_by_a_dead_worker()
            sweep(store, STALLED_S, queue)
            assert status() == [(later[0], "todo", tries)]
        held_by_a_dead_worker()
        sweep(store, STALLED_S, queue)
        assert status() == [] and queue.retention(30)  # the next firing makes another
        # a worker draining: procrastinate's beat stopped, teachd's goes on; which one holds it is not
        # told, so the sweep lets the drain end first
        drained = held_by_a_dead_worker()
        workers = WorkerStore(store.db)
        workers.register("w-draining", "elsewhere", "w-draining:1", 1, [])
        workers.beat("w-draining", [], "draining")
        sweep(store, STALLED_S, queue)
        assert status() == [(drained, "doing", 0)]
        workers.gone("w-draining")
        sweep(store, STALLED_S, queue)
        assert status() == [(drained, "todo", 1)]
    finally:
        queue.close()
