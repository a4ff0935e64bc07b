"""Every kind of run has a page: one real run of each kind, on one daemon
and one sample app, then its page (``/runs/<id>``) and its API record
(``GET /api/runs/<id>``) opened through the daemon — both answer 200, the
record holds its steps, and the page shows the run's id and every one of them.

Covered: a web UI run allowed with one answer (success); ``teachd run`` on
the command line; a web UI run denied (aborted); an MCP session over the
daemon's ``/mcp`` that acted, and one that was refused; an MCP session over
stdio (``teachd mcp``) that acted; a schedule's *Run now*; a replay whose
process was killed mid-run (left *running*, then ended as a starting daemon
ends it: ``end_orphans``); a health check, which acts on nothing and is a
run of its own all the same.

A repair ("Show me this step") is a recording; its replay up to the step is
a run with its page too, tested where repairs are (``tests/test_repair.py``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ElicitResult

from teachd.config import Settings
from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.orphans import GONE, end_orphans
from tests.people import PersonAtTheDaemon, run_until, wait_for
from tests.sample_task import PASSWORD, SLUG, copy_home, held_at, replay
from tests.test_server import Server, serve

REPLAY = 240  # seconds: a 28-step replay on a busy two-core machine


@dataclass
class At:
    """The daemon, the environment every command line here shares with it, and the app."""

    server: Server
    env: dict[str, str]
    app: SampleApp
    api: httpx.Client


@pytest.fixture(scope="module")
def at(taught_sample, tmp_path_factory: pytest.TempPathFactory) -> Iterator[At]:
    env = {**copy_home(taught_sample, tmp_path_factory.mktemp("run-kinds")), "TEACHD_SECRET_PASSWORD": PASSWORD}
    server = serve(env)
    try:
        with SampleApp(password=PASSWORD, port=taught_sample.port) as app, server.api() as api:
            yield At(server, env, app, api)
    finally:
        server.stop()


def _run_ids(api: httpx.Client) -> set[str]:
    return {r["run_id"] for r in api.get("/api/runs").json()}


def _new_run(api: httpx.Client, before: set[str]) -> str:
    """The one run recorded since ``before`` (the module's tests run one at a time)."""
    new = wait_for(lambda: _run_ids(api) - before, 60, "a new run")
    assert len(new) == 1, new
    return str(next(iter(new)))


def _ended(at: At, run_id: str) -> dict[str, Any]:
    return run_until(at.api, run_id, lambda r: r["status"] != "running", REPLAY)


def _has_its_page(at: At, run_id: str) -> dict[str, Any]:
    """The run's API record and its page, through the daemon: both there, with its steps."""
    shown = at.api.get(f"/api/runs/{run_id}")
    assert shown.status_code == 200, shown.text[-2000:]
    record = shown.json()
    assert record["run_id"] == run_id and record["steps"], record
    page = at.api.get(f"/runs/{run_id}")
    assert page.status_code == 200, page.text[-2000:]
    assert run_id in page.text
    missing = [s["n"] for s in record["steps"] if f'id="step-{s["n"]}"' not in page.text]
    assert missing == [], missing
    return dict(record)


async def _goto(client: Client, url: str) -> Any:
    """An agent's one action: open ``url`` (a skill's gated tool: it asks first)."""
    return await client.call_tool("computer_act", {"action": "goto", "url": url})


def _said(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def _asked(at: At, run_id: str) -> dict[str, Any]:
    """The question the run waits on, once it asks."""
    return dict(run_until(at.api, run_id, lambda r: r["waiting"], REPLAY)["waiting"][0])


def _answer(at: At, question: dict[str, Any], answer: str) -> None:
    answered = at.api.post(f"/api/approvals/{question['id']}", json={"answer": answer})
    assert answered.status_code == 200, answered.text


def test_a_web_ui_run_allowed_with_one_answer_succeeds_and_has_its_page(at: At) -> None:
    filed = len(at.app.state.reports)
    started = at.api.post("/api/runs", json={"slug": SLUG})
    assert started.status_code == 200, started.text
    run_id = started.json()["run_id"]
    _answer(at, _asked(at, run_id), "run")
    assert _ended(at, run_id)["status"] == "success"
    assert len(at.app.state.reports) == filed + 1  # the app's own record: it ran
    record = _has_its_page(at, run_id)
    assert [s["status"] for s in record["steps"]] == ["ok"] * 28


def test_a_command_line_replay_has_its_page_on_the_daemon(at: At) -> None:
    code, out, err = replay(at.env, stdin="run\n")
    assert code == 0 and out["status"] == "success", (out.get("message"), err[-2000:])
    record = _has_its_page(at, out["run_id"])
    assert record["status"] == "success" and len(record["steps"]) == len(out["steps"])


def test_a_web_ui_run_denied_is_aborted_and_has_its_page(at: At) -> None:
    filed = len(at.app.state.reports)
    run_id = at.api.post("/api/runs", json={"slug": SLUG}).json()["run_id"]
    _answer(at, _asked(at, run_id), "deny")
    run = _ended(at, run_id)
    assert run["status"] == "aborted" and "not approved" in run["message"], run["message"]
    assert len(at.app.state.reports) == filed
    record = _has_its_page(at, run_id)
    assert [s["status"] for s in record["steps"]] == ["halted"]  # stopped before its first step


async def _goto_over_http(at: At, url: str) -> Any:
    """An MCP client of the daemon's ``/mcp`` (it declares no elicitation: the
    daemon's Approvals page asks) that opens ``url``, then leaves (legacy
    sessions end with a DELETE: the session's run ends with them)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {at.server.token}"}, timeout=120) as h:
        async with Client(streamable_http_client(at.server.url + "/mcp", http_client=h), mode="legacy") as client:
            return await _goto(client, url)


@pytest.mark.parametrize("allow", [True, False], ids=["acted", "refused"])
def test_an_mcp_session_on_the_daemons_endpoint_has_its_page_whether_it_acted_or_was_refused(
        at: At, allow: bool) -> None:
    before = _run_ids(at.api)
    url = at.app.url + "/login"
    with at.server.api() as api, PersonAtTheDaemon(api, [allow], {}) as person:
        result = asyncio.run(_goto_over_http(at, url))
    assert result.is_error is not allow, _said(result)
    assert person.seen == [f"{'allow' if allow else 'deny'}: open “{url}” | ['{SLUG}']"]
    run_id = _new_run(at.api, before)
    run = _ended(at, run_id)
    assert run["status"] == "ended" and [s["status"] for s in run["steps"]] == ["done" if allow else "refused"]
    _has_its_page(at, run_id)


def test_an_mcp_session_over_stdio_that_acted_has_its_page(at: At) -> None:
    before = _run_ids(at.api)
    asked: list[str] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        """The client's side: each question shown to the person, who accepts."""
        asked.append(params.message)
        return ElicitResult(action="accept", content={})

    async def go() -> Any:
        server = StdioServerParameters(command=sys.executable, args=["-m", "teachd", "mcp", "--headless"],
                                       env=at.env)
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            return await _goto(client, at.app.url + "/login")

    result = asyncio.run(go())
    assert not result.is_error and len(asked) == 1 and SLUG in asked[0], _said(result)
    run_id = _new_run(at.api, before)
    run = _ended(at, run_id)
    assert run["status"] == "ended" and [s["status"] for s in run["steps"]] == ["done"]
    _has_its_page(at, run_id)


def _schedule(at: At, spec: dict[str, Any]) -> int:
    """A schedule added over the API, once the scheduler has its job (Run now needs it)."""
    added = at.api.post("/api/schedules", json={"slug": SLUG, "every": "1d", **spec})
    assert added.status_code == 200, added.text
    sid = int(added.json()["id"])
    wait_for(lambda: _schedule_view(at, sid)["next_run"], 30, f"schedule {sid}'s job")
    return sid


def _schedule_view(at: At, sid: int) -> dict[str, Any]:
    return dict(next(s for s in at.api.get("/api/schedules").json() if s["id"] == sid))


def _run_now(at: At, sid: int) -> None:
    ran = at.api.post(f"/api/schedules/{sid}/run")
    assert ran.status_code == 200, ran.text


def _outcome(at: At, sid: int) -> dict[str, Any]:
    """The schedule's view once its last firing's outcome is recorded."""
    return dict(wait_for(lambda: (v := _schedule_view(at, sid))["last_outcome"] and v, REPLAY,
                         f"schedule {sid}'s outcome"))


def test_a_schedules_run_now_has_its_page(at: At) -> None:
    sid = _schedule(at, {})
    before = _run_ids(at.api)
    _run_now(at, sid)
    run_id = _new_run(at.api, before)
    _answer(at, _asked(at, run_id), "run")  # it waits on the Approvals page like any run
    view = _outcome(at, sid)
    assert view["last_outcome"] == "success" and view["last_run_id"] == run_id, view
    record = _has_its_page(at, run_id)
    assert record["status"] == "success" and record["origin"] == f"schedule {sid}"


def test_a_health_check_is_a_run_with_its_page_and_its_outcome_on_its_schedule(at: At) -> None:
    """A check acts on nothing, and is still a run of its own: each target a
    step (done when found, skipped when a plain visit cannot reach it), its
    verdict its status (unknown: unverified), linked from its schedule; no
    "Did it work?" (it did nothing to judge)."""
    sid = _schedule(at, {"check": True})
    before = _run_ids(at.api)
    _run_now(at, sid)
    view = _outcome(at, sid)
    assert view["last_outcome"] == "unknown", view["last_note"]  # the unchanged app: no alarm
    run_id = view["last_run_id"]
    assert run_id and _run_ids(at.api) - before == {run_id}
    record = _has_its_page(at, run_id)
    assert record["status"] == "unverified" and record["origin"] == f"health check (schedule {sid})"
    statuses = {s["status"] for s in record["steps"]}
    assert "ok" in statuses and statuses <= {"ok", "skipped"}, record["steps"]
    assert "Did it work?" not in at.api.get(f"/runs/{run_id}").text
    skill = at.api.get(f"/skills/{SLUG}")
    assert skill.status_code == 200 and 'id="health"' in skill.text


def _marked(mark: str) -> set[int]:
    """The processes started under the environment marked ``mark``: the
    replay, its Playwright driver, its browser."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and f"TEACHD_TEST_MARK={mark}".encode() in (proc / "environ").read_bytes():
                found.add(int(proc.name))
        except OSError:
            continue
    return found


def test_a_replay_whose_process_was_killed_is_ended_as_a_daemon_starting_ends_it_and_has_its_page(
        at: At) -> None:
    """``teachd run`` SIGKILLed while the app holds step 6: its run says
    *running* for ever (its page says so too) until a daemon starting on the
    store ends it (``end_orphans``): interrupted where it stopped."""
    mark = uuid.uuid4().hex
    before = _run_ids(at.api)
    try:
        with held_at(at.app, "/reports/new") as (reached, _release):
            proc = subprocess.Popen([sys.executable, "-m", "teachd", "run", SLUG, "--headless", "--json"],
                                    env={**at.env, "TEACHD_TEST_MARK": mark}, stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
            assert proc.stdin is not None
            proc.stdin.write("run\n")
            proc.stdin.close()
            assert reached.wait(REPLAY), "the replay never reached the report form"
            run_id = _new_run(at.api, before)
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(30) == -signal.SIGKILL  # reaped: its pid is gone, not a zombie
        left = _has_its_page(at, run_id)
        assert left["status"] == "running" and left["steps"][-1]["status"] == "running", left  # nobody to say otherwise
        assert end_orphans(open_store(Settings(home=at.server.home, owner="alice"))) == [run_id]
        record = _has_its_page(at, run_id)
        assert record["status"] == "interrupted" and GONE in record["message"], record["message"]
        assert [(s["n"], s["status"]) for s in record["steps"]][-1] == (len(left["steps"]), "interrupted")
    finally:
        for pid in _marked(mark):  # a browser the killed replay's driver did not close
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
