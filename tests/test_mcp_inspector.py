"""teachd driven by the MCP Inspector (npm), a client nobody here wrote: its
CLI checks every tool schema with ``--strict``; ``mcpdo`` — the connection
tool an agent's shell uses, parking a question until ``elicitation/respond``
— works through ``teachd mcp`` on both protocol generations and through the
daemon's ``/mcp``. Every question is asked in the client; leaving (which
mcpdo does without ``DELETE``) frees the browser, withdraws what waits, and
stops a replay between steps. The sample app's records judge every effect."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from teachd.demo.sampleapp import SampleApp
from teachd.store import open_store
from teachd.store.runs import RunStore
from tests.inspector import Mcpdo, inspector_cli, text_of
from tests.sample_task import PASSWORD, SLUG, held_at
from tests.test_mcp import EXPECTED, settings_of, with_secret
from tests.test_mcp_clients import _chromiums

TOOLS = {"load_skill", "read_skill_file", "computer_act", "run_skill", "feedback"}


def stdio_entry(env: dict[str, str], mark: str) -> dict[str, Any]:
    """``teachd mcp`` as a client's ``mcpServers`` entry (the README's shape)."""
    wanted = {k: v for k, v in with_secret(env).items() if k.startswith("TEACHD_")}
    return {"teachd": {"command": sys.executable, "args": ["-m", "teachd", "mcp", "--headless"],
                       "env": {**wanted, "TEACHD_TEST_MARK": mark}}}


def until(what: Callable[[], Any], seconds: float = 30) -> Any:
    end = time.monotonic() + seconds
    while not (found := what()) and time.monotonic() < end:
        time.sleep(0.2)
    return found


def replays(env: dict[str, str]) -> list[dict[str, Any]]:
    return [r for r in RunStore(open_store(settings_of(env))).recent() if r["slug"] == SLUG]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_cli_finds_every_tool_schema_portable(taught, tmp_path: Path, era: str) -> None:
    env, _port = taught
    home = tmp_path / "inspector"
    home.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": stdio_entry(env, "strict")}), encoding="utf-8")
    done = inspector_cli(home, "--server", "teachd", "--method", "tools/list", "--strict",
                         "--protocol-era", era, "--format", "json")
    assert done.returncode == 0, done.stderr  # 6: a schema problem of error severity
    tools = json.loads(done.stdout)["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    for tool in tools:
        for name, prop in tool["inputSchema"]["properties"].items():
            assert prop.get("description"), (tool["name"], name)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_mcpdo_is_asked_every_approval_in_its_client_and_leaving_frees_the_browser(taught, tmp_path: Path,
                                                                                    era: str) -> None:
    env, port = taught
    mark = uuid.uuid4().hex
    do = Mcpdo(tmp_path / "mcpdo")
    with SampleApp(password=PASSWORD, port=port) as app:
        try:
            assert do.connect(stdio_entry(env, mark), era)["protocolEra"] == era
            assert "## History" in text_of(do.call("load_skill", slug=SLUG))
            asked = do.call("computer_act", action="goto", url=f"{app.url}/login")
            question = asked["elicitationPending"]["message"]
            assert question.startswith("teachd asks: allow this once?") and SLUG in question
            denied = do.respond(asked, "--decline")
            assert denied["isError"] and "not approved" in text_of(denied)
            assert not app.state.sessions and app.state.clicked() == []
            plan = do.call("run_skill", slug=SLUG)
            question = plan["elicitationPending"]["message"]
            assert question.startswith("teachd asks: allow this run?") and "28 steps" in question
            said = text_of(do.respond(plan))  # one answer for the 28 steps
            assert ": success — every step and the success check held" in said, said
            assert len(app.state.reports) == 1 and {k: app.state.reports[0][k] for k in EXPECTED} == EXPECTED
            assert [g["name"] for g in app.state.groups] == ["Approvers"]
            assert _chromiums(mark)  # the session's browser, while connected
            do.disconnect()
            assert until(lambda: not _chromiums(mark), 15), "the browser outlived the session"
        finally:
            do.stop()
    session = next(r for r in RunStore(open_store(settings_of(env))).recent() if r["slug"] is None)
    assert session["status"] == "ended"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_mcpdo_leaving_the_daemon_mid_replay_stops_it_and_frees_the_browser(taught, tmp_path: Path,
                                                                            era: str) -> None:
    """Over the daemon's ``/mcp``: the replay is held on its sixth step (the
    app does not answer), mcpdo disconnects — no DELETE, its connections just
    close — and what it started ends: the replay is cancelled, stops before
    step seven, the app records no report, no question waits; on 2025-11-25
    the session ends and no browser is left."""
    from tests.test_server import serve

    env, port = taught
    mark = uuid.uuid4().hex
    server = serve({**with_secret(env), "TEACHD_TEST_MARK": mark})
    do = Mcpdo(tmp_path / "mcpdo")
    try:
        with SampleApp(password=PASSWORD, port=port) as app, held_at(app, "/reports/new") as (reached, hold):
            entry = {"teachd": {"type": "streamable-http", "url": f"{server.url}/mcp",
                                "headers": {"Authorization": f"Bearer {server.token}"}}}
            assert do.connect(entry, era)["protocolEra"] == era
            plan = do.call("run_skill", slug=SLUG)
            assert "28 steps" in plan["elicitationPending"]["message"]
            answering = subprocess.Popen(do.command("--conn", do.name, "elicitation/respond",
                                                    plan["elicitationPending"]["elicitationId"], "{}"),
                                         env=do.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                assert reached.wait(60), "the replay never reached step six"
                assert _chromiums(mark)
                do.disconnect()
                [replay] = until(lambda: [r for r in replays(env) if r["status"] == "running"]) or [None]
                store = RunStore(open_store(settings_of(env)))
                cancelled = until(lambda: store.cancelled_by(replay["run_id"]), 40)
            finally:
                hold.set()  # the page answers now: the step in flight ends, nothing after it runs
                answering.wait(60)
            assert cancelled, "the session's replay was never cancelled"
            done = until(lambda: [r for r in replays(env) if r["status"] != "running"], 30)
            assert done and done[0]["status"] == "aborted", done
            if era == "legacy":  # the session ended: its browser with it
                assert until(lambda: not _chromiums(mark), 30), "the browser outlived the session"
            # (calls on the sessionless protocol share one run per person, which nothing but time
            # ends: its browser waits for their next call, SESSIONLESS_IDLE at most; see test_mcp_sessions)
            time.sleep(1)  # were anything still to act, it would have by now
            assert app.state.reports == [] and app.state.groups == []
            assert server.api().get("/api/approvals").json()["pending"] == []
    finally:
        do.stop()
        server.stop()

