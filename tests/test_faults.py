"""Faults under real work (issue 27): a piece of the machine goes away
while teachd is in the middle of something, and teachd says so and goes on."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp import Client

from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.sample_task import PASSWORD, SLUG, held_at
from tests.test_mcp import Person, settings_of, text, with_secret
from tests.test_mcp_clients import _chromiums


def test_chromium_killed_mid_replay_halts_naming_the_step_and_the_next_call_gets_a_fresh_browser(taught) -> None:
    """The replay is held at the report form (step 6); every Chromium process
    of this session is killed. The run halts naming its step and "the browser
    went away", its record says so, the app kept no report, and the
    session's next call opens a new browser and works."""
    from teachd.mcp.server import TeachdMCP
    from teachd.mcp.session import services_for

    env, port = taught
    mark = uuid.uuid4().hex
    settings = settings_of({**with_secret(env), "TEACHD_TEST_MARK": mark})
    runs = RunStore(open_store(settings))
    server = TeachdMCP(services_for(runs, settings, headless=True, step_timeout=5, approval_timeout=20))

    async def go(app: SampleApp, reached: object) -> tuple[object, object, set[int]]:
        async with Client(server, mode="legacy", elicitation_callback=Person("accept")) as client:
            replay = asyncio.ensure_future(client.call_tool("run_skill", {"slug": SLUG}))
            while not reached.is_set():  # type: ignore[attr-defined]
                await asyncio.sleep(0.1)
            killed = _chromiums(mark)
            for pid in killed:
                with contextlib.suppress(ProcessLookupError):  # gone with its parent, killed just before
                    os.kill(pid, signal.SIGKILL)
            result = await asyncio.wait_for(replay, 60)
            again = await client.call_tool("computer_act", {"action": "goto", "url": f"{app.url}/login"})
            return result, again, killed

    try:
        with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, _hold):
            result, again, killed = asyncio.run(go(app, reached))
            assert killed
            assert app.state.reports == []
    finally:
        server.close()
    said = text(result)
    assert result.is_error and "the browser went away" in said, said  # type: ignore[attr-defined]
    halted = next(line for line in said.splitlines() if line.startswith("halted at step"))
    assert halted.startswith("halted at step 6:"), said
    assert not again.is_error, text(again)  # type: ignore[attr-defined]
    record = runs.one(re.search(r"run (run-[\w-]+):", said).group(1))  # type: ignore[union-attr]
    # signed in before the browser went: a half change (the sign-in's POST), said as one
    assert record["status"] == "partial" and "the browser went away" in record["message"], record
    assert [w["path"] for w in record["partial"]["wrote"]] == ["/login"], record
    time.sleep(0.5)
    assert not _chromiums(mark), "the session's browsers outlived it"


def test_postgresql_restarting_under_the_daemon_answers_503_and_loses_nothing_acknowledged(tmp_path) -> None:
    """The store's server stops while the daemon serves: every request meanwhile
    answers 503 with Retry-After (the API, a page; an agent's /mcp request a
    JSON-RPC error that says so), never a 500 or a traceback; once it is back the daemon reconnects by itself, and every
    skill it said it created is there, none it refused."""
    import httpx

    from tests.postgres import fresh_database, postgres_cluster
    from tests.test_server import serve

    home, user = tmp_path / "home", tmp_path / "user"
    home.mkdir(mode=0o700)
    user.mkdir()
    with postgres_cluster() as cluster:
        url = fresh_database(cluster, "outage")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
        env.update(TEACHD_HOME=str(home), HOME=str(user), TEACHD_OWNER="alice", TEACHD_DB_URL=url)
        server = serve(env)
        made: dict[str, int] = {}
        try:
            api = server.api()

            def create(slug: str) -> httpx.Response:
                r = api.post("/api/skills", json={"slug": slug, "description": "Made under test."})
                made[slug] = r.status_code
                return r

            assert create("before-outage").status_code == 200
            cluster.stop()
            for path in ("/api/skills", "/skills"):
                down = api.get(path)
                assert down.status_code == 503 and down.headers["retry-after"] == "5", (path, down.text)
                assert "PostgreSQL store is unreachable" in down.text
            assert create("during-outage").status_code == 503
            said = _mcp_tools_list(server.url, server.token)  # an agent's request: answered, as an error
            assert "PostgreSQL store is unreachable" in json.dumps(said), said
            cluster.start()
            assert create("after-outage").status_code == 200  # reconnected by itself, no restart
            listed = {s["slug"] for s in api.get("/api/skills").json()}
        finally:
            assert server.stop() == 0
            _out, err = server.proc.communicate()
    assert listed == {slug for slug, status in made.items() if status == 200} == {"before-outage", "after-outage"}
    assert "Traceback" not in err, err[-2000:]


def test_a_daemon_killed_mid_run_ends_that_run_as_interrupted_when_it_starts_again(taught) -> None:
    """``teachd serve`` is SIGKILLed twice: once while a run's plan question
    waits, once while its replay is held at step 6. Each time the stale
    ``daemon.json`` is not trusted (its pid is dead), and the daemon started
    again ends the run as interrupted at the step it reached (1, asking; 6,
    replaying), its question withdrawn; the app never got a report, and a new run is possible."""
    import json

    from teachd.mcp.secrets import DaemonSource
    from tests.people import wait_for
    from tests.test_server import serve

    env, port = taught
    env = with_secret(env)
    home = Path(env["TEACHD_HOME"])
    runs = RunStore(open_store(settings_of(env)))

    def killed_at(hold: bool) -> str:
        server = serve(env)
        api = server.api()
        try:
            started = api.post("/api/runs", json={"slug": SLUG})
            assert started.status_code == 200, started.text
            run_id = started.json()["run_id"]
            asked = wait_for(lambda: api.get("/api/approvals").json()["pending"], 60, "the plan question")
            if hold:
                assert api.post(f"/api/approvals/{asked[0]['id']}", json={"answer": "run"}).status_code == 200
                assert reached.wait(90), "the replay never reached step 6"
            server.proc.kill()  # SIGKILL: nothing of the daemon's own cleanup runs
            server.proc.wait(30)
        finally:
            api.close()
        assert json.loads((home / "daemon.json").read_text())["pid"] == server.proc.pid  # left behind
        assert DaemonSource(home).approvals_page() is None  # its pid is dead: not trusted
        return run_id

    with SampleApp(password=PASSWORD, port=port) as app:
        asking = killed_at(hold=False)
        with held_at(app, "/reports/new") as (reached, _release):
            replaying = killed_at(hold=True)
        server = serve(env)
        try:
            api = server.api()
            assert api.get("/api/approvals").json()["pending"] == []  # withdrawn, not waiting for ever
            first, second = runs.one(asking), runs.one(replaying)
            assert first["status"] == "interrupted" and first["message"].startswith("interrupted at step 1: "), first
            assert second["status"] == "interrupted" and second["message"].startswith("interrupted at step 6: "), second
            assert [s["status"] for s in second["steps"]][-1] == "interrupted"
            assert "went away" in second["message"]
            assert DaemonSource(home).approvals_page() == server.url + "/approvals"  # the new one is trusted
            again = api.post("/api/runs", json={"slug": SLUG})
            assert again.status_code == 200, again.text  # no run "under way" blocks a new one
            api.post(f"/api/runs/{again.json()['run_id']}/cancel")
        finally:
            server.stop()
        assert app.state.reports == []


def _mcp_tools_list(base: str, token: str) -> Any:
    """initialize, then tools/list over the daemon's /mcp: the JSON-RPC answer."""
    import httpx

    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
        r = c.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "outage", "version": "1"}}})
        c.headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"})
        c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = c.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert listed.status_code == 200, listed.text
        data = [line[5:].strip() for line in listed.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else listed.json()


@contextlib.contextmanager
def small_disk(where: Path, kb: int) -> Iterator[Path]:
    """A tmpfs of ``kb`` KB at ``where`` (the suite runs as root on its Debian machine)."""
    where.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs", str(where)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"a small disk needs mount (root): {done.stderr.strip()}"
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path, leave_kb: int) -> Path:
    """Fill the disk but ``leave_kb`` KB."""
    free_kb = shutil.disk_usage(disk).free // 1024
    filler = disk / f"filler-{len(list(disk.glob('filler-*')))}"
    with contextlib.suppress(OSError):  # a disk that fills before the last byte is as full as it gets
        filler.write_bytes(b"\0" * max(0, free_kb - leave_kb) * 1024)
    return filler


def test_a_full_disk_fails_a_store_write_in_one_line_and_keeps_the_database_whole(tmp_path: Path) -> None:
    """TEACHD_HOME on a 1 MB disk: an import that does not fit, and then any
    command once the disk is full, fail with one line that says so (exit 69,
    no traceback); nothing half-written: with space again, the database
    passes SQLite's integrity check and holds exactly what was acknowledged."""
    import sqlite3

    from tests.conftest import write_skill

    # text that does not compress (the store compresses long values before sealing them): 4 × 150 KB stays big
    noise = [base64.b64encode(random.Random(i).randbytes(112_500)).decode() for i in range(4)]
    big = write_skill(tmp_path / "src", "big", "Big.", files={f"references/r{i}.md": noise[i] for i in range(4)})
    with small_disk(tmp_path / "disk", 1024) as disk:
        home = disk / "home"
        home.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TEACHD_")}
        env.update(TEACHD_HOME=str(home), TEACHD_OWNER="alice", HOME=str(tmp_path))

        def teachd(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "teachd", *args], capture_output=True, text=True, env=env,
                                  timeout=60)

        assert teachd("skills", "create", "first", "--name", "First", "--description", "One.").returncode == 0
        fill(disk, 60)  # room for a small write, not for this import
        failures = [teachd("skills", "import", str(big))]
        fill(disk, 0)  # nothing left: even opening the store needs room for its write-ahead log
        failures.append(teachd("skills", "list"))
        for failed in failures:
            assert failed.returncode == 69, failed.stderr
            assert failed.stderr.strip().count("\n") == 0 and "Traceback" not in failed.stderr
            assert "is full" in failed.stderr and "nothing was saved" in failed.stderr
        for filler in disk.glob("filler-*"):
            filler.unlink()
        with sqlite3.connect(home / "teachd.db") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        listed = teachd("skills", "list", "--json")
        assert listed.returncode == 0 and [s["slug"] for s in json.loads(listed.stdout)] == ["first"]


def test_a_disk_that_fills_during_a_recording_stops_it_in_one_line_and_keeps_it_compilable(tmp_path: Path) -> None:
    """TEACHD_HOME (the recording, Chromium's profile beside it) on a 96 MB
    disk: the person signs in, then the disk fills and they go on clicking.
    ``teachd teach`` stops with one line that says so and where the
    recording is (exit 69, no traceback); the events file ends on a whole
    line; with room again the recording compiles."""
    from playwright.sync_api import sync_playwright

    from teachd.demo.sampleapp.judge import teachd_env
    from tests.desktop import Teach, free_port

    port = free_port()
    with small_disk(tmp_path / "disk", 96 * 1024) as disk, SampleApp(password=PASSWORD, port=port) as app:
        home = disk / "home"
        home.mkdir(mode=0o700)
        teach = Teach({**teachd_env(home, tmp_path), "TEACHD_DEBUG": "1"}, "File a report", app.url + "/login", "--headless",
                             "--no-os-input")
        with sync_playwright() as pw:
            page = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{teach.cdp_port}").contexts[0].pages[0]
            page.wait_for_selector("#email")
            page.locator("#email").click()
            page.keyboard.type("alice@example.com")
            page.get_by_role("button", name="Sign in").click()
            teach.wait_for(lambda evs: any(e["type"] == "click" for e in evs))
            fill(disk, 0)
            for _ in range(40):  # the person goes on; the recorder stops as soon as a write fails
                if teach.proc.poll() is not None:
                    break
                with contextlib.suppress(Exception):
                    page.locator("#password").click(timeout=500)
                    page.keyboard.type("x")
                time.sleep(0.25)
        code, _out, err = teach.finish(60)
        said = [line for line in err.splitlines() if line.startswith("teachd: error:")]
        assert code == 69 and len(said) == 1, err[-1500:]
        assert "is full" in said[0] and str(teach.recording_dir) in said[0] and "Traceback" not in err
        for filler in disk.glob("filler-*"):
            filler.unlink()
        raw = (teach.recording_dir / "events.jsonl").read_bytes()
        assert raw.endswith(b"\n") and all(json.loads(line) for line in raw.splitlines())
        compiled = subprocess.run([sys.executable, "-m", "teachd", "compile", str(teach.recording_dir), "--json",
                                   "--out", str(tmp_path / "skills")],  # never into the checkout
                                  capture_output=True, text=True, env=teachd_env(home, tmp_path), timeout=120)
        assert compiled.returncode == 0, compiled.stderr[-800:]
        assert (tmp_path / "skills" / json.loads(compiled.stdout)["slug"] / "SKILL.md").is_file()


def test_only_runs_whose_process_is_gone_are_ended_as_orphans(store) -> None:
    """A run of a process still alive (this one, whatever its command line),
    of another host, or recorded before runs named their machine (it proves
    nothing about this one) is left alone; a dead pid, or a live pid whose
    start time differs (reused), ends the run as aborted."""
    import socket

    from teachd.store.orphans import end_orphans
    from teachd.store.processes import runner_id

    runs = RunStore(store)
    host, mine = socket.gethostname(), runner_id()
    given = {"alive": mine, "dead": mine.replace(f":{os.getpid()}:", ":999999999:", 1).rsplit(":", 1)[0] + ":1",
             "reused": mine.rsplit(":", 1)[0] + ":1", "elsewhere": "another-host:1:1",
             "old-format": f"{host}:999999999:1"}
    for name, runner in given.items():
        runs.start(f"run-{name}", {})
        with store.db.atomic() as tx:
            tx.execute("UPDATE runs SET runner = ? WHERE id = ?", (runner, f"run-{name}"))
    assert sorted(end_orphans(store)) == ["run-dead", "run-reused"]
    assert {n: runs.one(f"run-{n}")["status"] for n in given} == {
        "alive": "running", "dead": "interrupted", "reused": "interrupted", "elsewhere": "running",
        "old-format": "running"}
